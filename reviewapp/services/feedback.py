"""Feedback (SPEC 6): owner-checked target feedback with its history, and the run verdict.

Two entry points write a verdict, through one private code path (``_apply_verdict``):

- ``upsert_feedback`` / ``delete_feedback`` on an **answer-level** target — the final
  assistant message of a chat run, or the diagnostic report of an AIOps run (subject
  "") — set the run's ``feedback`` to the verdict of the latest answer-level rating
  (positive -> useful, negative -> not_useful), and a delete re-derives it from the
  answer-level ratings that remain (none left -> null);
- ``set_run_verdict`` is ``POST /api/feedback`` (SPEC 6.2).

``useful`` gets or creates the run's case and resolves a triage item that a not_useful
verdict had opened; ``not_useful`` opens (or reopens) the run's triage item. The run's
``status`` is never touched.

Every feedback create / update / delete appends a ``FeedbackEvent`` with the rating
fields before and after. A re-submit that changes nothing records no event (the history
says how often a rating *changed*); it still refreshes ``updated_at``, which therefore
means "last submitted", and counts as the latest answer-level rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Integer, Select, and_, bindparam, false, select
from sqlalchemy.orm import Session, make_transient_to_detached, selectinload

from ..actors import Actor, Role
from ..domain.feedback import (
    COMMENT_MAX,
    CORRECTION_MAX,
    RATINGS,
    REASON_MAX,
    SUBJECT_MAX,
    TARGET_TYPES,
    VERDICTS,
    InvalidFeedback,
    check_choice,
    clean_text,
    has_answer_text,
    initials,
    latest_verdict,
    rating_state,
    reasons_from_settings,
    verdict_for_rating,
)
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Feedback,
    FeedbackEvent,
    Message,
    MessageRole,
    Run,
    RunKind,
    TargetType,
    User,
    Workspace,
)
from ..models.base import MAX_ID, utcnow
from ..queries import insert_for, scope_to_actor, scope_to_member
from .cases import promote_useful, promotion_blocker
from .triage import OPENED_NEGATIVE_TARGET, close_item_on_useful, open_item_for_run

# Target ids are INTEGER columns; anything outside cannot exist (and must not reach
# PostgreSQL, which would refuse to compare it).
_MAX_ID = MAX_ID
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


@dataclass(frozen=True)
class VerdictResult:
    """The answer of ``POST /api/feedback`` (SPEC 6.2), in snake case.

    ``run_id``: the run that got the verdict (``None`` for a legacy session);
    ``fallback_to_latest_run``: no ``runId`` was sent and the session's latest run was
    used; ``case_id``: the case of a ``useful`` verdict, ``None`` for ``not_useful``.
    """

    success: bool
    message: str
    run_id: str | None
    fallback_to_latest_run: bool
    case_id: str | None


@dataclass(frozen=True)
class _Target:
    """A resolved, access-checked feedback target."""

    run_pk: int
    workspace_id: int
    settings: dict[str, Any]
    subject_key: str
    is_answer: bool


# --- validation ------------------------------------------------------------------------


def _validated(
    target_type: Any, target_id: Any, subject_id: Any, rating: Any = None, *,
    reason: Any = None, comment: Any = None, correction: Any = None, check_rating: bool = True,
    citation_needs_subject: bool = True,
) -> tuple[str, int, str | None, dict[str, Any]]:
    """Check everything that needs no database (SPEC 6.1 "validation first")."""
    try:
        target_type = check_choice(target_type, "target_type", TARGET_TYPES)
        values: dict[str, Any] = {}
        if check_rating:
            values["rating"] = check_choice(rating, "rating", RATINGS)
            values["reason"] = clean_text(reason, "reason", REASON_MAX, strip=True)
            values["comment"] = clean_text(comment, "comment", COMMENT_MAX)
            values["correction"] = clean_text(correction, "correction", CORRECTION_MAX)
        subject = clean_text(subject_id, "subject_id", SUBJECT_MAX, strip=True)
    except InvalidFeedback as exc:
        raise ValidationFailed(exc.field, exc.message) from None
    if isinstance(target_id, bool) or not isinstance(target_id, int):
        raise ValidationFailed("target_id", "must be an integer")
    if target_id > _MAX_ID:  # no row can have it, and the database integer would overflow
        raise ValidationFailed("target_id", f"out of range (at most {_MAX_ID})")
    if target_type == TargetType.CITATION.value and subject is None and citation_needs_subject:
        raise ValidationFailed("subject_id", "a citation rating needs the citation id")
    if target_type != TargetType.CITATION.value and subject is not None:
        raise ValidationFailed("subject_id", "only citation ratings have a subject")
    return target_type, target_id, subject, values


def _author_id(actor: Actor) -> int:
    """Feedback belongs to a person: ingest tokens and the system cannot rate."""
    if actor.user_id is None:
        raise Forbidden()
    return actor.user_id


# --- owner check -----------------------------------------------------------------------


@cache
def _target_statement(target_type: str) -> Select[Any]:
    """The owner-check query of one target type, built once with bound parameters
    ``:target_id`` and ``:actor_user_id`` (membership, same query: SPEC 2)."""
    columns = (Run.id, Run.workspace_id, Run.kind, Workspace.settings)
    target_id = bindparam("target_id", type_=Integer)
    if target_type in (TargetType.CHAT_MESSAGE.value, TargetType.CITATION.value):
        extra: tuple[Any, ...] = (Message.run_pk, Message.ordinal, Message.content)
        if target_type == TargetType.CITATION.value:
            extra += (Message.meta.label("meta"),)
        stmt = (
            select(*columns, *extra)
            .select_from(Run)
            .join(Message, Message.run_pk == Run.id)
            .where(Message.id == target_id, Message.role == MessageRole.ASSISTANT.value)
        )
    else:
        part = DiagnosticStep if target_type == TargetType.DIAGNOSTIC_STEP.value else DiagnosticReport
        stmt = select(*columns).select_from(Run).join(part, part.run_pk == Run.id).where(
            part.id == target_id
        )
    stmt = stmt.join(Workspace, Workspace.id == Run.workspace_id)
    return scope_to_member(stmt, Run.workspace_id, Role.REVIEWER)


def _has_report(session: Session, run_pk: int) -> bool:
    return session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == run_pk)) is not None


def _is_answer_message(session: Session, row: Any) -> bool:
    """Whether the resolved message is its run's answer: it has text and no later
    assistant message has (``has_answer_text``, the run page's own definition)."""
    if not has_answer_text(row.content):
        return False
    later = session.scalars(
        select(Message.content).where(
            Message.run_pk == row.run_pk,
            Message.role == MessageRole.ASSISTANT.value,
            Message.ordinal > row.ordinal,
        )
    )
    return not any(has_answer_text(content) for content in later)


def _resolve_target(
    session: Session, author_id: int, target_type: str, target_id: int, subject: str | None
) -> _Target:
    """The target's run, workspace settings and answer-level flag, in one query scoped to
    the user's workspaces (SPEC 2). Missing, foreign, a non-assistant message, or a
    citation id absent from the message's ``metadata.citations``: ``Forbidden``."""
    if not 1 <= target_id <= _MAX_ID:
        raise Forbidden()
    # On the session's connection: a plain row read, no ORM result processing.
    row = session.connection().execute(
        _target_statement(target_type), {"target_id": target_id, "actor_user_id": author_id}
    ).one_or_none()
    if row is None:
        raise Forbidden()

    if target_type == TargetType.CITATION.value:
        citations = (row.meta or {}).get("citations") if isinstance(row.meta, dict) else None
        ids = {
            str(c.get("id")) for c in citations or [] if isinstance(c, dict) and c.get("id") is not None
        }
        if subject not in ids:
            raise Forbidden()
        is_answer = False
    elif target_type == TargetType.CHAT_MESSAGE.value:
        # A chat run's answer message; an AIOps run's only when it has no report (its
        # conclusion then exists only as the answer text, SPEC 6.2).
        is_answer = (row.kind == RunKind.CHAT.value or not _has_report(session, row.run_pk)) \
            and _is_answer_message(session, row)
    elif target_type == TargetType.DIAGNOSTIC_REPORT.value:
        is_answer = row.kind == RunKind.AIOPS.value
    else:
        is_answer = False
    return _Target(
        run_pk=row.id,
        workspace_id=row.workspace_id,
        settings=row.settings or {},
        subject_key=subject or "",
        is_answer=is_answer,
    )


def _visible_run(session: Session, actor: Actor, run_pk: Any) -> tuple[int, int]:
    """(run id, workspace id) of a run the actor may see, else ``Forbidden``."""
    if isinstance(run_pk, bool) or not isinstance(run_pk, int) or not 1 <= run_pk <= _MAX_ID:
        raise Forbidden()
    stmt = scope_to_actor(
        select(Run.id, Run.workspace_id).where(Run.id == run_pk), actor, Run.workspace_id,
        Role.REVIEWER,
    )
    row = session.execute(stmt).one_or_none()
    if row is None:
        raise Forbidden()
    return row.id, row.workspace_id


# --- the verdict -----------------------------------------------------------------------


def _apply_verdict(session: Session, run: Run, verdict: str) -> str | None:
    """Set ``run.feedback`` and its consequences; returns the case id of a useful run
    (``None`` while the run cannot be promoted: RUNNING or no answer, SPEC 7).
    The one code path of both the verdict API and answer-level ratings (SPEC 6.2)."""
    run.feedback = verdict
    if verdict == "useful":
        case = promote_useful(session, run)
        close_item_on_useful(session, run)
        return case.case_id if case is not None else None
    open_item_for_run(session, run)
    return None


def _recorded(message: str, target: Run | DiagnosisSession, verdict: str, case_id: str | None) -> str:
    """The answer's message; a useful verdict that made no case says why."""
    if verdict != "useful" or case_id is not None:
        return message + "."
    return f"{message}; no case: {promotion_blocker(target) or 'not promoted'}."


def _answer_condition(session: Session, run: Run) -> Any:
    """SQL condition selecting the run's answer-level feedback rows."""
    if run.kind == RunKind.CHAT.value:
        final_message = session.scalar(
            select(Message.id)
            .where(Message.run_pk == run.id, Message.role == MessageRole.ASSISTANT.value)
            .order_by(Message.ordinal.desc())
            .limit(1)
        )
        if final_message is None:
            return false()
        return and_(
            Feedback.target_type == TargetType.CHAT_MESSAGE.value,
            Feedback.target_id == final_message,
            Feedback.subject_key == "",
        )
    report = session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == run.id))
    if report is None:
        return false()
    return and_(
        Feedback.target_type == TargetType.DIAGNOSTIC_REPORT.value,
        Feedback.target_id == report,
        Feedback.subject_key == "",
    )


def _rederive_verdict(session: Session, run: Run) -> None:
    """After a delete: the verdict of the latest remaining answer-level rating, or null.

    Consequences (case, triage) follow only when the verdict actually changes, so
    deleting a duplicate rating never reopens an item a lead has resolved. A verdict that
    becomes null leaves an existing case and triage item as they are: both are curated
    records, and a withdrawn rating says nothing about the run's quality.
    """
    session.flush()
    rows = session.execute(
        select(Feedback.updated_at, Feedback.id, Feedback.rating).where(
            Feedback.run_pk == run.id, _answer_condition(session, run)
        )
    ).all()
    verdict = latest_verdict(rows)
    if verdict == run.feedback:
        return
    if verdict is None:
        run.feedback = None
    else:
        _apply_verdict(session, run, verdict)


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
    select(Feedback.id, Feedback.rating, Feedback.reason, Feedback.comment, Feedback.correction)
    .where(*(getattr(Feedback, name) == param for name, param in _KEY_PARAMS.items()))
    .with_for_update()
)
_ROW_COLUMNS = ("workspace_id", "run_pk", "rating", "reason", "comment", "correction",
                "created_at", "updated_at")
_EVENT_INSERT = FeedbackEvent.__table__.insert()
_UPSERTS: dict[str, tuple[Any, Any]] = {}


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
    session: Session, author_id: int, target: _Target, target_type: str, target_id: int,
    values: dict[str, Any],
) -> tuple[Feedback, dict[str, Any] | None]:
    """Create or update the row; returns it (detached, every column loaded) with its
    rating fields before the write.

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
        now = utcnow()
        params = {**key, **values, "workspace_id": target.workspace_id, "run_pk": target.run_pk,
                  "created_at": now, "updated_at": now}
        if existing is None:
            written = connection.execute(create, params).one_or_none()
            if written is not None:
                return _detached(written), None
            continue  # lost the race to a concurrent first submit: update its row
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
) -> Feedback:
    """Create or replace the actor's rating of one target; commit (SPEC 6.1, 6.2).

    ``target_type``: chat_message | citation | diagnostic_step | diagnostic_report;
    ``target_id``: the message / step / report id (a citation's target is its assistant
    message); ``subject_id``: the citation id for citations, else None. ``rating``:
    positive | negative. Texts: subject <= 160, reason <= 80, comment <= 2,000,
    correction <= 4,000 characters; whitespace-only -> None.

    Order: validation (type, rating, lengths) -> owner check through the target's run
    (same query as the membership) -> the reason against the workspace's reason list
    (``settings["feedback_reasons"]``, default incorrect / incomplete / citation / unsafe
    / other; checked only once the workspace is known to be the actor's, so a foreign
    workspace's list cannot be probed) -> the upsert on (author, target_type, target_id,
    subject_key). Each submit replaces rating, reason, comment and correction as a
    whole. A changed row appends a create / update ``FeedbackEvent``.

    An answer-level target also sets the run's verdict (positive -> useful + case,
    negative -> not_useful + triage item); a negative rating of another target opens a
    triage item when the workspace's ``triage_negative_targets`` setting is on. The run's
    ``status`` never changes.

    Returns the stored row, detached from the session with every column loaded (id,
    created_at, updated_at ...; relationships such as ``author`` are not loaded).

    Raises ``ValidationFailed`` (400, naming the field), ``Forbidden`` (403: missing,
    foreign, a non-assistant message, a citation id not in the message's metadata, or an
    actor that is not a user).
    """
    target_type, target_id, subject, values = _validated(
        target_type, target_id, subject_id, rating,
        reason=reason, comment=comment, correction=correction,
    )
    author_id = _author_id(actor)
    target = _resolve_target(session, author_id, target_type, target_id, subject)
    if _lock_run(session, target.run_pk):
        # Checked again under the lock: a re-ingest that committed meanwhile may have
        # removed the target (SPEC 10 keeps only children that already carry feedback).
        target = _resolve_target(session, author_id, target_type, target_id, subject)
    allowed = reasons_from_settings(target.settings)
    if values["reason"] is not None and values["reason"] not in allowed:
        raise ValidationFailed("reason", f"must be one of {', '.join(allowed)}")

    row, before = _write_row(session, author_id, target, target_type, target_id, values)
    after = rating_state(values)
    if before != after:
        session.connection().execute(_EVENT_INSERT, {
            "feedback_id": row.id, "actor_id": author_id, "workspace_id": target.workspace_id,
            "run_pk": target.run_pk, "target_type": target_type, "target_id": target_id,
            "subject_key": target.subject_key,
            "action": "create" if before is None else "update", "before": before, "after": after,
        })

    if target.is_answer:
        run = session.get(Run, target.run_pk)
        assert run is not None  # resolved in this transaction; runs are not deleted here
        verdict = verdict_for_rating(values["rating"])
        if before != after or run.feedback != verdict:
            _apply_verdict(session, run, verdict)
    elif values["rating"] == "negative" and target.settings.get("triage_negative_targets") is True:
        run = session.get(Run, target.run_pk)
        assert run is not None
        open_item_for_run(session, run, OPENED_NEGATIVE_TARGET)
    session.commit()
    return row


def delete_feedback(session: Session, actor: Actor, feedback_id: int) -> None:
    """Delete one of the actor's own ratings; commit (SPEC 6.1).

    Appends a ``delete`` event holding the rating fields before. Deleting an answer-level
    rating re-derives the run's verdict from the answer-level ratings that remain (latest
    wins; none left -> null). Anything but one's own row in a workspace one belongs to —
    missing, someone else's, a foreign workspace — raises the same ``Forbidden``.
    """
    author_id = _author_id(actor)
    if isinstance(feedback_id, bool) or not isinstance(feedback_id, int) \
            or not 1 <= feedback_id <= _MAX_ID:
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
    session.add(FeedbackEvent(
        feedback_id=row.id, actor_id=author_id, workspace_id=row.workspace_id,
        run_pk=row.run_pk, target_type=row.target_type, target_id=row.target_id,
        subject_key=row.subject_key, action="delete",
        before=rating_state({name: getattr(row, name) for name in ("rating", "reason", "comment", "correction")}),
        after=None,
    ))
    session.delete(row)
    _rederive_verdict(session, run)
    session.commit()


def list_my_feedback(session: Session, actor: Actor, run_pk: int) -> list[Feedback]:
    """The actor's own ratings on every target of run ``run_pk`` (to restore the thumbs
    when a run page opens), by target type, target id and subject. Raises ``Forbidden``
    when the run is missing or foreign, or the actor is not a user."""
    author_id = _author_id(actor)
    visible_pk, _ = _visible_run(session, actor, run_pk)
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
    target, the ratings of all citations of that message; a citation id returns at most
    that one. Same validation and owner check as ``upsert_feedback`` except that a
    citation may omit its subject. Raises ``ValidationFailed``, ``Forbidden``.
    """
    target_type, target_id, subject, _ = _validated(
        target_type, target_id, subject_id, check_rating=False, citation_needs_subject=False
    )
    author_id = _author_id(actor)
    if subject is None and target_type == TargetType.CITATION.value:
        # Any citation of the message: check the message itself.
        _resolve_target(session, author_id, TargetType.CHAT_MESSAGE.value, target_id, None)
    else:
        _resolve_target(session, author_id, target_type, target_id, subject)
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
    visible_pk, _ = _visible_run(session, actor, run_pk)
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
    visible_pk, _ = _visible_run(session, actor, run_pk)
    return list(session.scalars(
        select(FeedbackEvent)
        .where(FeedbackEvent.run_pk == visible_pk)
        .options(selectinload(FeedbackEvent.actor))
        .order_by(FeedbackEvent.id)
    ))


def feedback_reasons(session: Session, actor: Actor, run_pk: int) -> tuple[str, ...]:
    """The reason codes offered for ratings on run ``run_pk``: its workspace's
    ``settings["feedback_reasons"]``, else the default list. Raises ``Forbidden``."""
    _, workspace_id = _visible_run(session, actor, run_pk)
    settings = session.scalar(select(Workspace.settings).where(Workspace.id == workspace_id))
    return reasons_from_settings(settings)


# --- the run verdict API ---------------------------------------------------------------


def _check_external_id(value: Any, field: str, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 160:
        raise ValidationFailed(field, "must be a string of 1-160 characters")
    return value


def _workspace_slugs(session: Session, workspace_ids: list[int]) -> list[str]:
    return sorted(session.scalars(select(Workspace.slug).where(Workspace.id.in_(workspace_ids))))


def set_run_verdict(
    session: Session, actor: Actor, session_id: str, run_id: str | None, verdict: str
) -> VerdictResult:
    """``POST /api/feedback``: set a run's verdict; commit (SPEC 6.2, S001 7).

    - ``verdict`` other than useful / not_useful: ``ValidationFailed`` (400, field
      ``feedback``), nothing written.
    - With ``run_id``: the run must belong to the session ``session_id``. A run that is
      missing or foreign: ``Forbidden``; a visible run of another session:
      ``ValidationFailed`` (field ``runId``). No write in either case.
    - Without ``run_id``: the session's latest run (by created_at, then id) and
      ``fallback_to_latest_run`` True. A session without runs that is a legacy session:
      the session's own ``feedback`` is set (``fallback_to_latest_run`` False; a useful
      verdict gets the case with ``diagnosis_id`` = session_id; a legacy session has no
      run, hence no triage item). A session without runs that is not legacy:
      ``ValidationFailed`` (field ``sessionId``).
    - ``useful``: ``run.feedback`` = useful, the case is created or reused, its id
      returned — only for a finished run with an answer (SPEC 7, ``cases.promote_useful``):
      a RUNNING run or one without answer keeps the verdict, gets no case (``case_id``
      None, the message says why) and is promoted when it finishes with an answer. ``not_useful``: ``run.feedback`` = not_useful, a triage item is opened,
      ``case_id`` None. The run's ``status`` never changes.

    Callers: logged-in users with a reviewer role in the run's workspace, or an ingest
    token of that workspace. A session the actor cannot see: ``Forbidden``. A ``run_id``
    (with ``run_id``) or a ``session_id`` (without) that the actor sees in two workspaces:
    ``Conflict`` (409) naming them in the message and in ``details["workspaces"]``.
    """
    try:
        verdict = check_choice(verdict, "feedback", VERDICTS)
    except InvalidFeedback as exc:
        raise ValidationFailed(exc.field, exc.message) from None
    session_id = _check_external_id(session_id, "sessionId", required=True)
    run_id = _check_external_id(run_id, "runId", required=False)

    if run_id is not None:
        matches = session.scalars(
            scope_to_actor(
                select(Run)
                .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
                .where(Run.run_id == run_id, DiagnosisSession.session_id == session_id),
                actor, Run.workspace_id, Role.REVIEWER,
            ).order_by(Run.created_at.desc(), Run.id.desc()).limit(2)
        ).all()
        if len(matches) > 1:  # the same ids in two of the user's workspaces: never guess
            slugs = _workspace_slugs(session, [m.workspace_id for m in matches])
            raise Conflict(f"runId: '{run_id}' of session '{session_id}' exists in more than one "
                           f"of your workspaces ({', '.join(slugs)}); give the verdict on the run's page",
                           details={"run_id": run_id, "session_id": session_id, "workspaces": slugs})
        run = matches[0] if matches else None
        if run is None:
            elsewhere = session.scalar(scope_to_actor(
                select(Run.id).where(Run.run_id == run_id), actor, Run.workspace_id, Role.REVIEWER
            ).limit(1))
            if elsewhere is not None:
                raise ValidationFailed("runId", "the run does not belong to sessionId")
            raise Forbidden()
        case_id = _apply_verdict(session, run, verdict)
        session.commit()
        return VerdictResult(True, _recorded("Feedback recorded", run, verdict, case_id),
                             run.run_id, False, case_id)

    sessions = session.scalars(
        scope_to_actor(
            select(DiagnosisSession).where(DiagnosisSession.session_id == session_id),
            actor, DiagnosisSession.workspace_id, Role.REVIEWER,
        ).order_by(DiagnosisSession.created_at.desc(), DiagnosisSession.id.desc()).limit(2)
    ).all()
    if not sessions:
        raise Forbidden()
    if len(sessions) > 1:  # the same session id in two of the user's workspaces: never guess
        slugs = _workspace_slugs(session, [s.workspace_id for s in sessions])
        raise Conflict(f"sessionId: '{session_id}' exists in more than one of your workspaces "
                       f"({', '.join(slugs)}); send its runId too, or give the verdict on the run's page",
                       details={"session_id": session_id, "workspaces": slugs})
    diagnosis_session = sessions[0]
    latest = session.scalars(
        select(Run)
        .where(Run.diagnosis_session_id == diagnosis_session.id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(1)
    ).first()
    if latest is not None:
        case_id = _apply_verdict(session, latest, verdict)
        session.commit()
        return VerdictResult(
            True, _recorded("Feedback recorded on the latest run of the session", latest, verdict, case_id),
            latest.run_id, True, case_id,
        )
    if not diagnosis_session.is_legacy:
        raise ValidationFailed("sessionId", "the session has no runs to give feedback on")
    diagnosis_session.feedback = verdict
    case = promote_useful(session, diagnosis_session) if verdict == "useful" else None
    case_id = case.case_id if case is not None else None
    session.commit()
    return VerdictResult(
        True, _recorded("Feedback recorded on the legacy session", diagnosis_session, verdict, case_id),
        None, False, case_id)


__all__ = [
    "TargetSummary", "VerdictResult", "delete_feedback", "feedback_history", "feedback_reasons",
    "feedback_summary", "list_my_feedback", "list_my_feedback_for_target", "set_run_verdict",
    "upsert_feedback",
]
