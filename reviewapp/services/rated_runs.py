"""How many runs each user has rated, per workspace (``user_rated_runs``, issue 18): the
review queue's progress ("reviewed" of the list, SPEC 8) and the runs list's "reviewed
by me" count read one row per workspace instead of every rating of the user.

A run counts for a user once it holds at least one of their ratings (of any part), in
``runs``; in ``rateable_runs`` too while the run is rateable (``diagnosis_run.rateable``,
``runs/rateable.py``). **How it is kept**, in the transaction of the write, under the
run's lock (PostgreSQL ``queries.lock_run``; SQLite serialises writers), so concurrent
writers of the same run take turns and the "first" / "last" tests below see each
other's committed rows:

- a rating created (``feedback.ratings``): ``rated`` — one ``INSERT ... SELECT ... ON
  CONFLICT DO UPDATE`` adding the run when it holds no other rating of the author;
- a rating deleted (``feedback.ratings.delete_feedback``): ``unrated`` — one ``UPDATE``
  taking the run away when no rating of the author is left on it;
- a run's rateability changed (``runs/rateable.refresh``): ``rateability_changed`` —
  the run's raters read, then their rows updated in author order;
- users, workspaces (and with them runs and ratings) removed: their rows go by cascade.

Nothing else writes ratings or removes runs. ``rebuild`` recomputes the rows from the
ratings (``flask dashboard rebuild``; bulk loads that bypass the services), as the
migration that added the table (``b3f1c7d9e254``) filled them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Integer, bindparam, case, cast, delete, distinct, exists, func, select
from sqlalchemy.orm import Session

from ..models import Feedback, RatedRunCount, Run
from ..queries import insert_for

_TABLE = RatedRunCount.__table__
_AUTHOR = bindparam("b_author", type_=Integer)
_WORKSPACE = bindparam("b_workspace", type_=Integer)
_RUN = bindparam("b_run", type_=Integer)
_RATEABLE_ONE = case((Run.rateable, 1), else_=0)
# No rating of the author on the run (but the one just written, ``feedback_id``): the
# (author_id, workspace_id, run_pk) index answers it.
_NO_OTHER = ~exists().where(Feedback.author_id == _AUTHOR, Feedback.workspace_id == _WORKSPACE,
                            Feedback.run_pk == _RUN,
                            Feedback.id != bindparam("b_feedback", type_=Integer))
_NONE_LEFT = ~exists().where(Feedback.author_id == _AUTHOR, Feedback.workspace_id == _WORKSPACE,
                             Feedback.run_pk == _RUN)
_UNRATED = (
    _TABLE.update()
    .where(_TABLE.c.author_id == _AUTHOR, _TABLE.c.workspace_id == _WORKSPACE, _NONE_LEFT)
    .values(runs=_TABLE.c.runs - 1, rateable_runs=_TABLE.c.rateable_runs - select(
        _RATEABLE_ONE).where(Run.id == _RUN).scalar_subquery()))
_RATERS = (select(Feedback.author_id).where(Feedback.run_pk == _RUN).distinct()
           .order_by(Feedback.author_id))
_RATEABILITY = (
    _TABLE.update()
    .where(_TABLE.c.workspace_id == _WORKSPACE, _TABLE.c.author_id == _AUTHOR)
    .values(rateable_runs=_TABLE.c.rateable_runs + bindparam("b_delta", type_=Integer)))
# Built once per dialect (the insert's ON CONFLICT clause is the dialect's).
_RATED: dict[str, Any] = {}


def _rated_statement(session: Session) -> Any:
    dialect = session.get_bind().dialect.name
    if dialect not in _RATED:
        source = select(cast(_AUTHOR, Integer), cast(_WORKSPACE, Integer),
                        cast(1, Integer), _RATEABLE_ONE).where(Run.id == _RUN, _NO_OTHER)
        stmt = insert_for(session, _TABLE).from_select(
            ["author_id", "workspace_id", "runs", "rateable_runs"], source)
        _RATED[dialect] = stmt.on_conflict_do_update(
            index_elements=["author_id", "workspace_id"],
            set_={"runs": _TABLE.c.runs + stmt.excluded.runs,
                  "rateable_runs": _TABLE.c.rateable_runs + stmt.excluded.rateable_runs})
    return _RATED[dialect]


def rated(session: Session, author_id: int, workspace_id: int, run_pk: int,
          feedback_id: int) -> None:
    """Rating ``feedback_id`` of ``author_id`` on run ``run_pk`` (of ``workspace_id``) was
    just created (flushed): count the run for the author when it is their only rating of
    it. One statement; call it under the run's lock, only when a rating row was created
    (an update changes no count). No commit."""
    session.connection().execute(_rated_statement(session), {
        "b_author": author_id, "b_workspace": workspace_id, "b_run": run_pk,
        "b_feedback": feedback_id})


def unrated(session: Session, author_id: int, workspace_id: int, run_pk: int) -> None:
    """A rating of ``author_id`` on run ``run_pk`` was just deleted (flushed): stop
    counting the run for the author when none of their ratings is left on it. One
    statement, under the run's lock. No commit."""
    session.connection().execute(_UNRATED, {
        "b_author": author_id, "b_workspace": workspace_id, "b_run": run_pk})


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
    """Recompute the rows (of ``workspace_id``; ``None``: all) from the ratings and the
    runs' ``rateable``, replacing them: one DELETE and one INSERT ... SELECT. Returns the
    rows written. No commit (``rollups_rebuild.rebuild`` commits, after its locks)."""
    stmt = delete(_TABLE)
    scope: list[Any] = []
    if workspace_id is not None:
        stmt = stmt.where(_TABLE.c.workspace_id == workspace_id)
        scope = [Feedback.workspace_id == workspace_id]
    session.execute(stmt)
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
