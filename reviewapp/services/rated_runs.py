"""Which runs each user has rated: per workspace, how many (``user_rated_runs``, issue 18)
— the review queue's progress ("reviewed" of the list, SPEC 8) and the runs list's
"reviewed by me" count read one row per workspace instead of every rating of the user
— and which ones, in the runs list's time order (``rated_run``): the list's "reviewed
by me" page reads its rows from there, newest (or oldest) first, instead of testing
the workspace's runs one by one for a rating.

A run counts for a user once it holds at least one of their ratings (of any part): it
has a ``rated_run`` row and is in ``runs``; in ``rateable_runs`` too while the run is
rateable (``diagnosis_run.rateable``, ``runs/rateable.py``). **How it is kept**, in the
transaction of the write, under the run's lock (PostgreSQL ``queries.lock_run``; SQLite
serialises writers), so concurrent writers of the same run take turns and the "first" /
"last" tests below see each other's committed rows:

- a rating created (``feedback.ratings``): ``rated`` — one ``INSERT ... ON CONFLICT DO
  NOTHING`` of the (run, author) row, and when it was new (their first rating of the
  run) one ``INSERT ... ON CONFLICT DO UPDATE`` adding the run to the count;
- a rating deleted (``feedback.ratings.delete_feedback``): ``unrated`` — one ``DELETE``
  of the (run, author) row when no rating of the author is left on it, and when it went
  one ``UPDATE`` taking the run out of the count;
- a run's rateability changed (``runs/rateable.refresh``): ``rateability_changed`` —
  the run's raters read, then their rows updated in author order;
- users, workspaces, runs (and with them ratings) removed: their rows go by cascade.

A run's workspace and ``created_at`` never change after it is stored (``runs.ingest``
sets them once), so a ``rated_run`` row never needs updating. Nothing else writes
ratings or removes runs. ``rebuild`` recomputes the rows from the ratings (``flask
dashboard rebuild``; bulk loads that bypass the services), as the migrations that added
the tables (``b3f1c7d9e254``, ``f4c2a8e1d937``) filled them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Integer, bindparam, case, cast, delete, distinct, exists, func, select
from sqlalchemy.orm import Session

from ..models import Feedback, RatedRun, RatedRunCount, Run
from ..queries import insert_for

_TABLE = RatedRunCount.__table__
_LIST = RatedRun.__table__
_AUTHOR = bindparam("b_author", type_=Integer)
_WORKSPACE = bindparam("b_workspace", type_=Integer)
_RUN = bindparam("b_run", type_=Integer)
_RATEABLE_ONE = case((Run.rateable, 1), else_=0)
# No rating of the author left on the run: the (author_id, workspace_id, run_pk) index.
_NONE_LEFT = ~exists().where(Feedback.author_id == _AUTHOR, Feedback.workspace_id == _WORKSPACE,
                             Feedback.run_pk == _RUN)
_UNLISTED = _LIST.delete().where(_LIST.c.run_pk == _RUN, _LIST.c.author_id == _AUTHOR, _NONE_LEFT)
_UNRATED = (
    _TABLE.update()
    .where(_TABLE.c.author_id == _AUTHOR, _TABLE.c.workspace_id == _WORKSPACE)
    .values(runs=_TABLE.c.runs - 1, rateable_runs=_TABLE.c.rateable_runs - select(
        _RATEABLE_ONE).where(Run.id == _RUN).scalar_subquery()))
_RATERS = (select(Feedback.author_id).where(Feedback.run_pk == _RUN).distinct()
           .order_by(Feedback.author_id))
_RATEABILITY = (
    _TABLE.update()
    .where(_TABLE.c.workspace_id == _WORKSPACE, _TABLE.c.author_id == _AUTHOR)
    .values(rateable_runs=_TABLE.c.rateable_runs + bindparam("b_delta", type_=Integer)))
# Built once per dialect (the inserts' ON CONFLICT clauses are the dialect's).
_RATED: dict[str, tuple[Any, Any]] = {}


def _rated_statements(session: Session) -> tuple[Any, Any]:
    """(the list row's insert, the count's upsert) of ``rated``."""
    dialect = session.get_bind().dialect.name
    if dialect not in _RATED:
        listed = (insert_for(session, _LIST).from_select(
            ["run_pk", "author_id", "workspace_id", "run_created_at"],
            select(Run.id, cast(_AUTHOR, Integer), Run.workspace_id, Run.created_at)
            .where(Run.id == _RUN))
            .on_conflict_do_nothing(index_elements=["run_pk", "author_id"])
            # ``rated`` reads its row count: without this an INSERT's is -1 (PostgreSQL).
            .execution_options(preserve_rowcount=True))
        source = select(cast(_AUTHOR, Integer), cast(_WORKSPACE, Integer),
                        cast(1, Integer), _RATEABLE_ONE).where(Run.id == _RUN)
        stmt = insert_for(session, _TABLE).from_select(
            ["author_id", "workspace_id", "runs", "rateable_runs"], source)
        _RATED[dialect] = (listed, stmt.on_conflict_do_update(
            index_elements=["author_id", "workspace_id"],
            set_={"runs": _TABLE.c.runs + stmt.excluded.runs,
                  "rateable_runs": _TABLE.c.rateable_runs + stmt.excluded.rateable_runs}))
    return _RATED[dialect]


def rated(session: Session, author_id: int, workspace_id: int, run_pk: int) -> None:
    """A rating of ``author_id`` on run ``run_pk`` (of ``workspace_id``) was just created
    (flushed): list the run for the author, and when it was not listed yet (their first
    rating of it) count it. One statement, two for a first rating; call it under the
    run's lock, only when a rating row was created (an update changes nothing here). No
    commit."""
    listed, counted_ = _rated_statements(session)
    params = {"b_author": author_id, "b_workspace": workspace_id, "b_run": run_pk}
    connection = session.connection()
    if connection.execute(listed, params).rowcount:
        connection.execute(counted_, params)


def unrated(session: Session, author_id: int, workspace_id: int, run_pk: int) -> None:
    """A rating of ``author_id`` on run ``run_pk`` was just deleted (flushed): when none
    of their ratings is left on it, take the run out of their list and their count. One
    statement, two when it was their last rating of the run; under the run's lock. No
    commit."""
    params = {"b_author": author_id, "b_workspace": workspace_id, "b_run": run_pk}
    connection = session.connection()
    if connection.execute(_UNLISTED, params).rowcount:
        connection.execute(_UNRATED, params)


def rateability_changed(session: Session, run_pk: int, workspace_id: int, now: bool) -> None:
    """Run ``run_pk`` became rateable (``now``) or stopped being: move it in or out of the
    ``rateable_runs`` of every author who rated it. Under the run's lock (``runs.ingest``):
    one SELECT of the raters, and when there are any one UPDATE of their rows in author
    order (two such writers lock rows in the same order: no deadlock). No commit."""
    connection = session.connection()
    authors = connection.execute(_RATERS, {"b_run": run_pk}).scalars().all()
    if authors:
        delta = 1 if now else -1
        connection.execute(_RATEABILITY, [
            {"b_workspace": workspace_id, "b_author": author, "b_delta": delta}
            for author in authors])


def counted(session: Session, author_id: int, workspace_ids: Iterable[int], *,
            rateable: bool) -> int:
    """The runs of ``workspace_ids`` holding a rating of ``author_id`` (``rateable``: only
    the rateable ones), from the kept rows: one indexed read of at most one row per
    workspace. The caller checks the workspaces are the author's to see."""
    ids = list(workspace_ids)
    if not ids:
        return 0
    column = _TABLE.c.rateable_runs if rateable else _TABLE.c.runs
    return int(session.scalar(select(func.coalesce(func.sum(column), 0)).where(
        _TABLE.c.author_id == author_id, _TABLE.c.workspace_id.in_(ids))) or 0)


def rebuild(session: Session, workspace_id: int | None = None) -> int:
    """Recompute the counts and the list rows (of ``workspace_id``; ``None``: all) from
    the ratings and the runs, replacing them: a DELETE and an INSERT ... SELECT each.
    Returns the count rows written. No commit (``rollups_rebuild.rebuild`` commits, after
    its locks)."""
    scope: list[Any] = []
    if workspace_id is not None:
        scope = [Feedback.workspace_id == workspace_id]
    listed = delete(_LIST)
    stmt = delete(_TABLE)
    if workspace_id is not None:
        listed = listed.where(_LIST.c.workspace_id == workspace_id)
        stmt = stmt.where(_TABLE.c.workspace_id == workspace_id)
    session.execute(listed)
    session.execute(stmt)
    pairs = select(Feedback.author_id, Feedback.run_pk).where(*scope).distinct().subquery()
    session.execute(_LIST.insert().from_select(
        ["run_pk", "author_id", "workspace_id", "run_created_at"],
        select(Run.id, pairs.c.author_id, Run.workspace_id, Run.created_at)
        .select_from(pairs).join(Run, Run.id == pairs.c.run_pk)))
    per_run = (select(Feedback.author_id, Feedback.workspace_id, Feedback.run_pk)
               .where(*scope).distinct().subquery())
    session.execute(_TABLE.insert().from_select(
        ["author_id", "workspace_id", "runs", "rateable_runs"],
        select(per_run.c.author_id, per_run.c.workspace_id, func.count(distinct(per_run.c.run_pk)),
               func.sum(_RATEABLE_ONE))
        .select_from(per_run).join(Run, Run.id == per_run.c.run_pk)
        .group_by(per_run.c.author_id, per_run.c.workspace_id)))
    return int(session.scalar(select(func.count()).select_from(_TABLE).where(
        *([] if workspace_id is None else [_TABLE.c.workspace_id == workspace_id]))) or 0)
