"""Ratings of a run's parts (SPEC 6.1): upsert and delete with their history, and the
reads behind the thumbs (own ratings, everybody's summary, history, reason codes).

Every feedback create / update / delete appends a ``FeedbackEvent`` with the rating
fields before and after. A re-submit that changes nothing records no event (the history
says how often a rating *changed*); it still refreshes ``updated_at``, which therefore
means "last submitted", and counts as the latest answer-level rating. What a rating
changes beyond itself (the run verdict, a triage item) is ``verdict.follow_rating``.
"""


from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, make_transient_to_detached, selectinload

from ...actors import Actor, Role
from ...domain.feedback import (
    initials,
    rating_state,
    reasons_from_settings,
    switched,
)
from ...domain.reasons import workspace_reasons
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import (
    Feedback,
    FeedbackEvent,
    Run,
    TargetType,
    User,
    Workspace,
)
from ...models.base import MAX_ID, utcnow
from ...queries import insert_for, on_earlier_version, scope_to_actor
from .. import rollups
from ..queue_completion import refresh_run
from ._targets import Target, author_of, resolve_target, validated, visible_run
from .verdict import follow_rating, rederive_verdict

_UPSERT_ATTEMPTS = 3
_KEY_COLUMNS = ["author_id", "target_type", "target_id", "subject_key"]


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


def _lock_run(session: Session, run_pk: int) -> bool:
    """PostgreSQL: lock the run row (``FOR NO KEY UPDATE``) before a feedback write, the
    lock every writer of the run and its children takes first (``runs.upsert_run``,
    tool events): a re-ingest then either sees this rating and keeps its target, or has
    removed the target before the rating is written. Returns whether it locked (SQLite
    needs no row lock: its writers are serialised by ``BEGIN IMMEDIATE``)."""
    if session.get_bind().dialect.name != "postgresql":
        return False
    session.execute(select(Run.id).where(Run.id == run_pk).with_for_update(key_share=True))
    return True



_KEY_PARAMS = {name: bindparam(name) for name in _KEY_COLUMNS}
_EXISTING = (
    select(Feedback.id, Feedback.rating, Feedback.reason, Feedback.comment, Feedback.correction,
           Feedback.updated_at)
    .where(*(getattr(Feedback, name) == param for name, param in _KEY_PARAMS.items()))
    .with_for_update()
)
_ROW_COLUMNS = ("workspace_id", "run_pk", "rating", "reason", "comment", "correction",
                "created_at", "updated_at")
_EVENT_INSERT = FeedbackEvent.__table__.insert()
_UPSERTS: dict[str, tuple[Any, Any]] = {}


NO_RATING = "none"  # ``based_on`` of a form shown while there was no rating yet


def rating_version(row: Any) -> str:
    """What a form showing ``row`` (a ``Feedback``, or ``None``) was based on: its
    ``updated_at`` (UTC, microseconds) as text, ``"none"`` without a row. Sent back as
    ``upsert_feedback(based_on=...)``."""
    if row is None or row.updated_at is None:
        return NO_RATING
    return row.updated_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


STALE_MESSAGE = ("Not saved: this rating was changed in another tab or window since this "
                 "form was shown. Here is its current state; edit and save again.")


def _kept(existing: Any, values: dict[str, Any]) -> bool:
    """Whether the save keeps the stored rating's reason as it is (same rating, same
    reason): then a reason an admin has since retired stays, it was valid when given."""
    return (existing is not None and values["reason"] is not None
            and (existing.rating, existing.reason) == (values["rating"], values["reason"]))


def _check_reason(reason: str | None, rating: str, settings: dict[str, Any]) -> None:
    """The reason must be one of the workspace's (``reasons.workspace_reasons``) and may
    accompany the rating (its ``polarity``, SPEC 6.1). Raises ``ValidationFailed``."""
    if reason is None:
        return
    reasons = workspace_reasons(settings)
    if reason not in reasons:
        raise ValidationFailed("reason", "must be one of "
                               + ", ".join(f"{row.label} ({row.code})" for row in reasons))
    if not reasons.get(reason).allows(rating):
        allowed = [row.code for row in reasons if row.allows(rating)]
        raise ValidationFailed("reason", f"'{reason}' does not go with a {rating} rating"
                               + (f"; one of {', '.join(allowed)} does" if allowed else ""))


def _upserts(session: Session) -> tuple[Any, Any]:
    """(create, update) statements for the session's database: ``INSERT … ON CONFLICT DO
    NOTHING`` and ``INSERT … ON CONFLICT DO UPDATE`` (``queries.insert_for``), both
    returning the whole row; built once per dialect with bound parameters, so their
    compiled form is reused."""
    dialect = session.get_bind().dialect.name
    if dialect not in _UPSERTS:
        table = Feedback.__table__
        insert = insert_for(session, table).values(
            **_KEY_PARAMS, **{name: bindparam(name) for name in _ROW_COLUMNS}
        )
        create = insert.on_conflict_do_nothing(index_elements=_KEY_COLUMNS).returning(*table.c)
        update = insert.on_conflict_do_update(
            index_elements=_KEY_COLUMNS,
            set_={name: getattr(insert.excluded, name)
                  for name in ("rating", "reason", "comment", "correction", "updated_at")},
        ).returning(*table.c)
        _UPSERTS[dialect] = (create, update)
    return _UPSERTS[dialect]


def _write_row(
    session: Session, author_id: int, target: Target, target_type: str, target_id: int,
    values: dict[str, Any], *, switch: bool = False, based_on: str | None = None,
) -> tuple[Feedback, dict[str, Any] | None]:
    """Create or update the row; returns it (detached, every column loaded) with its
    rating fields before the write.

    ``switch``: only the thumb was clicked (``upsert_feedback(switch=True)``): an existing
    row keeps its comment and correction, and its reason when it fits the new rating
    (``domain.feedback.switched``, read under the row lock).

    ``based_on``: the ``rating_version`` the caller's form showed; when the row read under
    the lock is another one, ``Conflict`` (409) with its current state, nothing written.

    A first submit is ``INSERT … ON CONFLICT DO NOTHING``: when it inserts, there was no
    row before. When it does not, a racing first submit won and committed; the row is
    then read under a row lock (``FOR UPDATE``; SQLite serialises writers anyway) and
    written with ``INSERT … ON CONFLICT DO UPDATE``, which keeps id and created_at. So two
    first submits end as one row, no error, and the history knows what each replaced.
    Core statements on the session's connection: this is the hot path of the page.
    """
    key = {"author_id": author_id, "target_type": target_type, "target_id": target_id,
           "subject_key": target.subject_key}
    create, update = _upserts(session)
    connection = session.connection()
    for _attempt in range(_UPSERT_ATTEMPTS):
        existing = connection.execute(_EXISTING, key).one_or_none()
        if based_on is not None and rating_version(existing) != based_on:
            current = None if existing is None else {
                name: existing._mapping[name] for name in ("rating", "reason", "comment",
                                                           "correction")}
            raise Conflict(STALE_MESSAGE, details={**(current or {"rating": None}),
                                                   "based_on": rating_version(existing)})
        if not _kept(existing, values):
            _check_reason(values["reason"], values["rating"], target.settings)
        now = utcnow()
        params = {**key, **values, "workspace_id": target.workspace_id, "run_pk": target.run_pk,
                  "created_at": now, "updated_at": now}
        if existing is None:
            written = connection.execute(create, params).one_or_none()
            if written is not None:
                return _detached(written), None
            continue  # lost the race to a concurrent first submit: update its row
        if switch:
            params.update(switched(existing._mapping, values["rating"],
                                   workspace_reasons(target.settings)))
        written = connection.execute(update, params).one()
        return _detached(written), rating_state(existing._mapping)
    # Only reachable when the row is created and deleted again between every attempt.
    raise ValidationFailed("target_id", "the rating changed concurrently; submit again")


def _detached(written: Any) -> Feedback:
    """A ``Feedback`` holding the values just written: attributes loaded, no session
    (so committing does not expire it and reading it costs no round-trip)."""
    row = Feedback(**written._mapping)
    make_transient_to_detached(row)
    return row


def upsert_feedback(
    session: Session,
    actor: Actor,
    target_type: str,
    target_id: int,
    subject_id: str | None,
    rating: str,
    reason: str | None = None,
    comment: str | None = None,
    correction: str | None = None,
    *,
    switch: bool = False,
    based_on: str | None = None,
) -> Feedback:
    """Create or replace the actor's rating of one target; commit (SPEC 6.1, 6.2).

    ``target_type``: chat_message | citation | diagnostic_step | diagnostic_report |
    tool_call | conversation_turn; ``target_id``: the message / step / report id (a
    citation's target is its assistant message, a conversation turn's an assistant message
    that is not the answer), for a tool call its run's id; ``subject_id``: the citation
    id for citations, the agent's call id for tool calls, else None. ``rating``:
    positive | negative. Texts: subject <= 160, reason <= 80, comment <= 2,000,
    correction <= 4,000 characters; whitespace-only -> None.

    Order: validation (type, rating, lengths) -> owner check through the target's run
    (same query as the membership) -> the reason against the workspace's reason list
    (``settings["feedback_reasons"]``, default incorrect / incomplete / citation / unsafe
    / other; a reason since retired stays when the save keeps rating and reason as they
    are; the refusal lists "Label (code)"; checked only once the workspace is known to be the actor's, so a foreign
    workspace's list cannot be probed) -> the upsert on (author, target_type, target_id,
    subject_key). Each submit replaces rating, reason, comment and correction as a
    whole — except a thumb switch (``switch=True``, the page's thumbs buttons, which carry
    no texts): then ``reason`` / ``comment`` / ``correction`` are ignored, the existing
    comment and correction are kept and the existing reason is kept only when it fits the
    new rating, else dropped (``domain.feedback.switched``). An explicit reason of the
    wrong polarity (a full submit) is refused with 400: the caller asked for it; a stale
    reason carried over by a switch is dropped: the reviewer asked only for the thumb.
    A changed row appends a create / update ``FeedbackEvent``.

    ``based_on``: what the caller's form showed (``rating_version`` of the rating then,
    ``"none"`` for no rating); when the stored rating is another one (a newer save from
    another tab), ``Conflict`` (409, ``details``: the current rating, reason, comment,
    correction and its ``based_on``) and nothing is written. ``None`` (the JSON API):
    no check, the last writer wins.

    An answer-level target also sets the run's verdict (positive -> useful + case,
    negative -> not_useful + triage item); a negative rating of another target opens a
    triage item when the workspace's ``triage_negative_targets`` setting is on. The run's
    ``status`` never changes.

    Returns the stored row, detached from the session with every column loaded (id,
    created_at, updated_at ...; relationships such as ``author`` are not loaded).

    Raises ``ValidationFailed`` (400, naming the field), ``Conflict`` (409, stale
    ``based_on``), ``Forbidden`` (403: missing, foreign, a non-assistant message, a citation id not in the message's metadata, a call
    id that is not of the run, the answer rated as a conversation turn, or an actor that
    is not a user).
    """
    target_type, target_id, subject, values = validated(
        target_type, target_id, subject_id, rating,
        reason=reason, comment=comment, correction=correction,
    )
    author_id = author_of(actor)
    target = resolve_target(session, author_id, target_type, target_id, subject)
    if _lock_run(session, target.run_pk):
        # Checked again under the lock: a re-ingest that committed meanwhile may have
        # removed the target (SPEC 10 keeps only children that already carry feedback).
        target = resolve_target(session, author_id, target_type, target_id, subject)
    if target_type == TargetType.TOOL_CALL.value:
        # The dashboard counts tool calls' ratings (rollups; the run is locked above).
        rollups.track(session, [target.run_pk], rollups.Part.TOOL_FEEDBACK)
    if switch:
        values = {**values, "reason": None, "comment": None, "correction": None}
    row, before = _write_row(session, author_id, target, target_type, target_id, values,
                             switch=switch, based_on=based_on)
    after = rating_state({name: getattr(row, name) for name in ("rating", "reason", "comment",
                                                                "correction")})
    if before != after:
        session.connection().execute(_EVENT_INSERT, {
            "feedback_id": row.id, "actor_id": author_id, "workspace_id": target.workspace_id,
            "run_pk": target.run_pk, "target_type": target_type, "target_id": target_id,
            "subject_key": target.subject_key,
            "action": "create" if before is None else "update", "before": before, "after": after,
        })

    follow_rating(session, target.run_pk, values["rating"], is_answer=target.is_answer,
                  changed=before != after, settings=target.settings)
    if target.is_answer:
        refresh_run(session, target.run_pk)  # review-queue completion (issue 16)
    session.commit()
    return row


def delete_feedback(session: Session, actor: Actor, feedback_id: int) -> None:
    """Delete one of the actor's own ratings; commit (SPEC 6.1).

    Appends a ``delete`` event holding the rating fields before. Deleting an answer-level
    rating re-derives the run's verdict from the answer-level ratings that remain (latest
    wins; none left -> null). Anything but one's own row in a workspace one belongs to —
    missing, someone else's, a foreign workspace — raises the same ``Forbidden``.
    """
    author_id = author_of(actor)
    if isinstance(feedback_id, bool) or not isinstance(feedback_id, int) \
            or not 1 <= feedback_id <= MAX_ID:
        raise Forbidden()
    stmt = scope_to_actor(
        select(Feedback).where(Feedback.id == feedback_id, Feedback.author_id == author_id),
        actor, Feedback.workspace_id, Role.REVIEWER,
    )
    run_pk = session.scalar(stmt.with_only_columns(Feedback.run_pk))
    if run_pk is None:
        raise Forbidden()
    # The run first, then the row: the same lock order as upsert_feedback (no deadlock).
    _lock_run(session, run_pk)
    row = session.scalars(stmt.with_for_update().execution_options(populate_existing=True)
                          ).one_or_none()
    if row is None:
        raise Forbidden()
    run = session.get(Run, row.run_pk)
    assert run is not None  # the row's run_pk is a cascading foreign key
    if row.target_type == TargetType.TOOL_CALL.value:
        rollups.track(session, [run.id], rollups.Part.TOOL_FEEDBACK)
    session.add(FeedbackEvent(
        feedback_id=row.id, actor_id=author_id, workspace_id=row.workspace_id,
        run_pk=row.run_pk, target_type=row.target_type, target_id=row.target_id,
        subject_key=row.subject_key, action="delete",
        before=rating_state({name: getattr(row, name) for name in ("rating", "reason", "comment", "correction")}),
        after=None,
    ))
    session.delete(row)
    rederive_verdict(session, run)
    session.flush()
    refresh_run(session, run.id)  # review-queue completion (issue 16)
    session.commit()


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
    return list(session.scalars(
        select(Feedback)
        .where(Feedback.run_pk == run_pk, Feedback.author_id == author_id)
        .order_by(Feedback.target_type, Feedback.target_id, Feedback.subject_key)
    ))


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
    rows = session.execute(
        select(Feedback.target_type, Feedback.target_id, Feedback.subject_key,
               Feedback.rating, User.username)
        .join(User, User.id == Feedback.author_id)
        .where(Feedback.run_pk == run_pk)
        .order_by(User.username)
    ).all()
    grouped: dict[tuple[str, int, str], dict[str, list[str]]] = {}
    for target_type, target_id, subject_key, rating, username in rows:
        by_rating = grouped.setdefault((target_type, target_id, subject_key),
                                       {"positive": [], "negative": []})
        by_rating[rating].append(username)
    return {key: _summary(names["positive"], names["negative"]) for key, names in grouped.items()}


def _summary(positive: Sequence[str], negative: Sequence[str]) -> TargetSummary:
    return TargetSummary(
        positive=len(positive),
        negative=len(negative),
        positive_initials=tuple(initials(n) for n in positive),
        negative_initials=tuple(initials(n) for n in negative),
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
    return set(session.scalars(select(Feedback.id).where(
        Feedback.run_pk == run_pk, on_earlier_version(Feedback))))
