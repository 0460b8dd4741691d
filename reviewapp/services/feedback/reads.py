"""Ratings as the pages read them (SPEC 6.1): the actor's own ratings of a run or of one
target, everybody's summary per target, the history, the reason codes, the ratings given
on an earlier version of their target. The writes are ``ratings``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, selectinload

from ...actors import Actor
from ...domain.feedback import reasons_from_settings, reviewer_badges
from ...models import Feedback, FeedbackEvent, TargetType, User, Workspace
from ...prepared import Prepared
from ...queries import on_earlier_version
from ._targets import author_of, resolve_target, validated, visible_run


@dataclass(frozen=True)
class TargetSummary:
    """Everybody's ratings of one target (the run page's counts and badges).

    ``positive`` / ``negative``: how many reviewers rated it so; ``*_initials`` and
    ``*_reviewers``: who (badge letters and usernames), by username; ``disagree``: both
    ratings are present.
    """

    positive: int
    negative: int
    positive_initials: tuple[str, ...]
    negative_initials: tuple[str, ...]
    positive_reviewers: tuple[str, ...]
    negative_reviewers: tuple[str, ...]
    disagree: bool


# --- target feedback -------------------------------------------------------------------


def list_my_feedback(session: Session, actor: Actor, run_pk: int) -> list[Feedback]:
    """The actor's own ratings on every target of run ``run_pk`` (to restore the thumbs
    when a run page opens), by target type, target id and subject. Raises ``Forbidden``
    when the run is missing or foreign, or the actor is not a user."""
    author_id = author_of(actor)
    visible_pk, _ = visible_run(session, actor, run_pk)
    return my_feedback_of_visible_run(session, author_id, visible_pk)


def my_feedback_of_visible_run(session: Session, author_id: int, run_pk: int) -> list[Feedback]:
    """``list_my_feedback`` without its access check, for a read model that has just
    checked run ``run_pk`` itself in the same transaction (the run page): user
    ``author_id``'s ratings of the run. Never call it with an unchecked ``run_pk``."""
    return list(session.scalars(_mine_statement(), {"run_pk": run_pk, "author_id": author_id}))


def my_ratings_of_visible_run(session: Session, author_id: int, run_pk: int
                              ) -> list[tuple[Any, bool]]:
    """User ``author_id``'s ratings of run ``run_pk`` as plain read-only rows (``Feedback``'s
    columns by name: ``id``, ``rating``, ``reason``, ``comment``, ``correction``,
    ``updated_at`` UTC ...; no ORM object), each with whether it was given on an earlier
    version of its target's text (as ``earlier_version_ids``), in one statement run on the
    DBAPI cursor (``prepared.Prepared``; the run page and its timeline only read them,
    issue 18). Never call it with an unchecked ``run_pk``."""
    session.flush()  # as the ORM's autoflush would before a read
    rows = _run_page_reads()["mine"].rows(session.connection(),
                                          {"run_pk": run_pk, "author_id": author_id})
    return [(row, bool(row.earlier)) for row in rows]


# Reads of a run's ratings built once with bound parameters (building one costs about
# 0.1 ms of CPU, more than running it; issue 18).
@cache
def _mine_statement() -> Any:
    return (select(Feedback)
            .where(Feedback.run_pk == bindparam("run_pk"),
                   Feedback.author_id == bindparam("author_id"))
            .order_by(Feedback.target_type, Feedback.target_id, Feedback.subject_key))


@cache
def _run_page_reads() -> dict[str, Prepared]:
    """The run page's reads of its ratings on the DBAPI cursor (``prepared.Prepared``):
    ``mine`` (``:run_pk``, ``:author_id``; ``Feedback``'s columns and ``earlier``) and
    ``everyone`` (``:run_pk``; target, rating, username). The ORM's per-statement work and
    entity loading cost more than the reads themselves (issue 18)."""
    users = User.__table__
    f, u = Feedback.__table__.c, users.c
    mine = (select(*f, on_earlier_version(f).label("earlier"))
            .where(f.run_pk == bindparam("run_pk"), f.author_id == bindparam("author_id"))
            .order_by(f.target_type, f.target_id, f.subject_key))
    everyone = (select(f.target_type, f.target_id, f.subject_key, f.rating, u.username)
                .join(users, u.id == f.author_id)
                .where(f.run_pk == bindparam("run_pk"))
                .order_by(u.username))
    return {"mine": Prepared(mine), "everyone": Prepared(everyone)}


@cache
def _earlier_statement() -> Any:
    return select(Feedback.id).where(Feedback.run_pk == bindparam("run_pk"),
                                     on_earlier_version(Feedback))


def list_my_feedback_for_target(
    session: Session, actor: Actor, target_type: str, target_id: int, subject_id: str | None = None,
) -> list[Feedback]:
    """The actor's own ratings of one target (SPEC 6.1 "list").

    ``subject_id`` None returns every row of (target_type, target_id) — for a citation
    target, the ratings of all citations of that message; for a tool_call target (whose
    ``target_id`` is the run), the ratings of all the run's tool calls; a subject returns
    at most that one. Same validation and owner check as ``upsert_feedback`` except that
    the subject may be omitted. Raises ``ValidationFailed``, ``Forbidden``.
    """
    target_type, target_id, subject, _ = validated(
        target_type, target_id, subject_id, check_rating=False, needs_subject=False
    )
    author_id = author_of(actor)
    if subject is None and target_type == TargetType.CITATION.value:
        # Any citation of the message: check the message itself.
        resolve_target(session, author_id, TargetType.CHAT_MESSAGE.value, target_id, None)
    elif subject is None and target_type == TargetType.TOOL_CALL.value:
        # Any tool call of the run: check the run itself.
        visible_run(session, actor, target_id)
    else:
        resolve_target(session, author_id, target_type, target_id, subject)
    stmt = select(Feedback).where(
        Feedback.author_id == author_id,
        Feedback.target_type == target_type,
        Feedback.target_id == target_id,
    )
    if subject is not None:
        stmt = stmt.where(Feedback.subject_key == subject)
    return list(session.scalars(stmt.order_by(Feedback.subject_key)))


def feedback_summary(
    session: Session, actor: Actor, run_pk: int
) -> dict[tuple[str, int, str], TargetSummary]:
    """Everybody's ratings of run ``run_pk``, per (target_type, target_id, subject_key):
    counts, reviewers and the ``disagree`` flag. Two queries (the run's access check and
    one grouped read), whatever the number of targets. Raises ``Forbidden``."""
    visible_pk, _ = visible_run(session, actor, run_pk)
    return summary_of_visible_run(session, visible_pk)


def summary_of_visible_run(
    session: Session, run_pk: int
) -> dict[tuple[str, int, str], TargetSummary]:
    """``feedback_summary`` without its access check (one grouped read), for a read model
    that has just checked run ``run_pk`` itself in the same transaction (the run page).
    Never call it with an unchecked ``run_pk``."""
    session.flush()  # as the ORM's autoflush would before a read
    rows = _run_page_reads()["everyone"].rows(session.connection(), {"run_pk": run_pk})
    grouped: dict[tuple[str, int, str], dict[str, list[str]]] = {}
    for target_type, target_id, subject_key, rating, username in rows:
        by_rating = grouped.setdefault((target_type, target_id, subject_key),
                                       {"positive": [], "negative": []})
        by_rating[rating].append(username)
    # One badge per reviewer across the whole run page: 'reviewer' on one part and
    # 'reviewer2' on another read "RE" both (second new-user walk).
    names = sorted({username for *_, username in rows})
    badges = dict(zip(names, reviewer_badges(names), strict=True))
    return {key: _summary(names["positive"], names["negative"], badges)
            for key, names in grouped.items()}


def _summary(positive: Sequence[str], negative: Sequence[str],
             badges: Mapping[str, str]) -> TargetSummary:
    return TargetSummary(
        positive=len(positive),
        negative=len(negative),
        positive_initials=tuple(badges[name] for name in positive),
        negative_initials=tuple(badges[name] for name in negative),
        positive_reviewers=tuple(positive),
        negative_reviewers=tuple(negative),
        disagree=bool(positive) and bool(negative),
    )


def feedback_history(session: Session, actor: Actor, run_pk: int) -> list[FeedbackEvent]:
    """Every feedback create / update / delete on run ``run_pk``, oldest first, with the
    acting user loaded (``event.actor``). Raises ``Forbidden``."""
    visible_pk, _ = visible_run(session, actor, run_pk)
    return list(session.scalars(
        select(FeedbackEvent)
        .where(FeedbackEvent.run_pk == visible_pk)
        .options(selectinload(FeedbackEvent.actor))
        .order_by(FeedbackEvent.id)
    ))


def feedback_reasons(session: Session, actor: Actor, run_pk: int) -> tuple[str, ...]:
    """The reason codes offered for ratings on run ``run_pk``: its workspace's
    ``settings["feedback_reasons"]``, else the default list. Raises ``Forbidden``."""
    _, workspace_id = visible_run(session, actor, run_pk)
    settings = session.scalar(select(Workspace.settings).where(Workspace.id == workspace_id))
    return reasons_from_settings(settings)


def earlier_version_ids(session: Session, run_pk: int) -> set[int]:
    """Ids of run ``run_pk``'s ratings that were given on an earlier version of their
    target's text (a re-ingest changed it since, SPEC 10; ``queries.on_earlier_version``).
    No access check: for read models that have just checked the run."""
    return set(session.scalars(_earlier_statement(), {"run_pk": run_pk}))
