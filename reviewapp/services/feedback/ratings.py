"""Ratings of a run's parts (SPEC 6.1): upsert and delete with their history; the reads
behind the thumbs (own ratings, everybody's summary, history, reason codes) are ``reads``.

Every feedback create / update / delete appends a ``FeedbackEvent`` with the rating
fields before and after. A re-submit that changes nothing records no event (the history
says how often a rating *changed*); it still refreshes ``updated_at``, which therefore
means "last submitted", and counts as the latest answer-level rating. What a rating
changes beyond itself (the run verdict, a triage item) is ``verdict.follow_rating``.
"""


from __future__ import annotations

from datetime import UTC
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, make_transient_to_detached

from ...actors import Actor, Role
from ...domain.feedback import (
    rating_state,
    switched,
)
from ...domain.reasons import workspace_reasons
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import (
    Feedback,
    FeedbackEvent,
    Run,
    TargetType,
)
from ...models.base import MAX_ID, utcnow
from ...prepared import Prepared
from ...queries import insert_for, lock_run, scope_to_actor
from .. import rated_runs, rollups
from ..queue_completion import refresh_run
from ._targets import Target, author_of, resolve_target, validated
from .verdict import follow_rating, rederive_verdict

_UPSERT_ATTEMPTS = 3
_KEY_COLUMNS = ["author_id", "target_type", "target_id", "subject_key"]


_KEY_PARAMS = {name: bindparam(name) for name in _KEY_COLUMNS}
_EXISTING = Prepared(
    select(Feedback.id, Feedback.rating, Feedback.reason, Feedback.comment, Feedback.correction,
           Feedback.updated_at)
    .where(*(getattr(Feedback, name) == param for name, param in _KEY_PARAMS.items()))
    .with_for_update()
)
_ROW_COLUMNS = ("workspace_id", "run_pk", "rating", "reason", "comment", "correction",
                "created_at", "updated_at")
_EVENT_COLUMNS = ["feedback_id", "actor_id", "workspace_id", "run_pk", "target_type", "target_id",
                  "subject_key", "action", "before", "after", "created_at", "updated_at"]
_EVENT_INSERT = Prepared(FeedbackEvent.__table__.insert(), column_keys=_EVENT_COLUMNS)
_UPSERTS: dict[str, tuple[Prepared, Prepared]] = {}
_NEW_FEEDBACK = Feedback.__mapper__.class_manager.new_instance


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


def _upserts(session: Session) -> tuple[Prepared, Prepared]:
    """(create, update) statements for the session's database: ``INSERT … ON CONFLICT DO
    NOTHING`` and ``INSERT … ON CONFLICT DO UPDATE`` (``queries.insert_for``), both
    returning the whole row; built once per dialect with bound parameters and run as
    ``Prepared`` statements."""
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
        _UPSERTS[dialect] = (Prepared(create), Prepared(update))
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
    ``Prepared`` statements on the session's connection: this is the hot path of the page.
    """
    key = {"author_id": author_id, "target_type": target_type, "target_id": target_id,
           "subject_key": target.subject_key}
    create, update = _upserts(session)
    connection = session.connection()
    for attempt in range(_UPSERT_ATTEMPTS):
        if attempt == 0 and target.stored_read:  # read with the owner check (SQLite)
            existing = target.stored
        else:
            existing = _EXISTING.one_or_none(connection, key)
        if based_on is not None and rating_version(existing) != based_on:
            current = None if existing is None else {
                name: getattr(existing, name) for name in ("rating", "reason", "comment",
                                                           "correction")}
            raise Conflict(STALE_MESSAGE, details={**(current or {"rating": None}),
                                                   "based_on": rating_version(existing)})
        if not _kept(existing, values):
            _check_reason(values["reason"], values["rating"], target.settings)
        now = utcnow()
        params = {**key, **values, "workspace_id": target.workspace_id, "run_pk": target.run_pk,
                  "created_at": now, "updated_at": now}
        if existing is None:
            written = create.one_or_none(connection, params)
            if written is not None:
                return _detached(written), None
            continue  # lost the race to a concurrent first submit: update its row
        if switch:
            params.update(switched(existing._asdict(), values["rating"],
                                   workspace_reasons(target.settings)))
        written = update.one_or_none(connection, params)
        assert written is not None  # DO UPDATE returns the row it wrote
        return _detached(written), rating_state(existing._asdict())
    # Only reachable when the row is created and deleted again between every attempt.
    raise ValidationFailed("target_id", "the rating changed concurrently; submit again")


def _detached(written: Any) -> Feedback:
    """A ``Feedback`` holding the values just written: attributes loaded, no session
    (so committing does not expire it and reading it costs no round-trip)."""
    row = _NEW_FEEDBACK()  # no __init__: no attribute events for values already stored
    row.__dict__.update(written._asdict())
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
    target = _locked_target(session, author_id, target_type, target_id, subject)
    if switch:
        values = {**values, "reason": None, "comment": None, "correction": None}
    row, before = _write_row(session, author_id, target, target_type, target_id, values,
                             switch=switch, based_on=based_on)
    after = rating_state({name: getattr(row, name) for name in ("rating", "reason", "comment",
                                                                "correction")})
    if before is None:  # created: the run may be a newly rated one (progress, issue 18)
        rated_runs.rated(session, author_id, target.workspace_id, target.run_pk)
    if before != after:
        _append_event(session, row, author_id, target, target_type, target_id, before, after)
    follow_rating(session, target.run_pk, values["rating"], is_answer=target.is_answer,
                  changed=before != after, settings=target.settings)
    if target.is_answer:
        refresh_run(session, target.run_pk)  # review-queue completion (issue 16)
    session.commit()
    return row


def _locked_target(session: Session, author_id: int, target_type: str, target_id: int,
                   subject: str | None) -> Target:
    """The rated target (``resolve_target``) with its run locked: resolved again under
    the lock when one was taken (a re-ingest that committed meanwhile may have removed
    it; SPEC 10 keeps only children that already carry feedback). A tool call's rating
    marks the run's tool-feedback roll-up for the dashboard (under the same lock)."""
    if session.get_bind().dialect.name == "sqlite":
        # Writers are serialised (BEGIN IMMEDIATE): no lock to take, and the stored rating
        # is read in the owner check's own query instead of a statement of its own.
        target = resolve_target(session, author_id, target_type, target_id, subject,
                                with_rating=True)
    else:
        target = resolve_target(session, author_id, target_type, target_id, subject)
        if lock_run(session, target.run_pk):
            target = resolve_target(session, author_id, target_type, target_id, subject)
    if target_type == TargetType.TOOL_CALL.value:
        rollups.track(session, [target.run_pk], rollups.Part.TOOL_FEEDBACK)
    return target


def _append_event(session: Session, row: Feedback, author_id: int, target: Target, target_type: str,
                  target_id: int, before: dict | None, after: dict) -> None:
    """The ``FeedbackEvent`` of a changed rating: create (no ``before``) or update; its
    time is the write's (the row's ``updated_at``), given with the values so the insert
    runs no column default of its own."""
    _EVENT_INSERT.execute(session.connection(), {
        "feedback_id": row.id, "actor_id": author_id, "workspace_id": target.workspace_id,
        "run_pk": target.run_pk, "target_type": target_type, "target_id": target_id,
        "subject_key": target.subject_key,
        "action": "create" if before is None else "update", "before": before, "after": after,
        "created_at": row.updated_at, "updated_at": row.updated_at,
    })


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
    lock_run(session, run_pk)
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
    rated_runs.unrated(session, author_id, run.workspace_id, run.id)  # its last rating?
    refresh_run(session, run.id)  # review-queue completion (issue 16)
    session.commit()
