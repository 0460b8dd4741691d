"""Everything a verdict changes (SPEC 3, 6.2, 7): the run's ``feedback``, its case, its
triage item and the automatic notes — one file for the whole rule.

Two entry points write a verdict, through one code path (``apply_verdict``):

- ``upsert_feedback`` / ``delete_feedback`` on an **answer-level** target — the answer
  message of a chat run (its last assistant message with text), or the diagnostic report
  of an AIOps run (subject ""; ``services/answer.py``, the one definition) — set the run's ``feedback`` to the verdict of the latest answer-level rating
  (positive -> useful, negative -> not_useful), and a delete re-derives it from the
  answer-level ratings that remain (none left -> null);
- ``set_run_verdict`` is ``POST /api/feedback`` (SPEC 6.2).

``useful`` gets or creates the run's case and resolves a triage item that a not_useful
verdict had opened; ``not_useful`` opens (or reopens) the run's triage item. The run's
``status`` is never touched.

A negative rating of another part opens the run's triage item when the workspace asks
(``triage_negative_targets``). Finishing a run that is already ``useful`` promotes it
(``promote_on_finish``).

The building blocks (``promote_useful`` & co. in ``verdict_case``, ``open_item_for_run``,
``close_item_on_useful`` in ``verdict_triage``; importable from here too) check no access (the caller resolved the run through the actor's scope) and do not
commit (the caller's transaction does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import not_, select
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.consensus import DECIDED, DISPUTED, consensus
from ...domain.feedback import (
    VERDICTS,
    InvalidFeedback,
    check_choice,
    latest_verdict,
    verdict_for_rating,
)
from ...domain.triage_flow import (
    OPENED_NEGATIVE_TARGET,
    RESOLVED_DISPUTED,
    RESOLVED_NO_NEGATIVE,
)
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import (
    DiagnosisSession,
    Feedback,
    ReviewQueue,
    Run,
    VerdictDecision,
    Workspace,
)
from ...queries import scope_to_actor
from .. import rollups
from ..answer import answer_rating_condition
from ..queue_completion import counted_rating
from ..queue_governing import governing_queue_id
from ..secret_scan import redact_session_id
from .verdict_case import (
    AUTO_CASE_AUTHOR,
    AUTO_CASE_CATEGORY,
    TITLE_MAX_CHARS,
    case_edited,
    case_left_useful,
    get_or_create_auto_case,
    promote_useful,
    promotion_blocker,
    restore_case,
)
from .verdict_triage import close_item_automatically, close_item_on_useful, open_item_for_run

__all__ = [  # the building blocks stay importable from here
    "AUTO_CASE_AUTHOR", "AUTO_CASE_CATEGORY", "TITLE_MAX_CHARS", "VerdictResult", "apply_verdict",
    "case_edited", "case_left_useful", "close_item_automatically", "close_item_on_useful",
    "follow_rating", "get_or_create_auto_case", "governing_queue", "latest_decision",
    "open_item_for_run", "promote_on_finish", "promote_useful", "promotion_blocker",
    "rederive_verdict", "restore_case", "set_run_verdict", "settle_from_ratings",
    "store_verdict",
]



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


# --- the verdict -----------------------------------------------------------------------


def store_verdict(session: Session, run: Run, verdict: str | None) -> str | None:
    """The one write of ``run.feedback`` (every path that sets or clears a verdict goes
    through here); returns the verdict before. The dashboard's roll-ups count verdicts:
    the run is locked and tracked first (``rollups.track``). No commit, no consequences
    (``apply_verdict`` has them)."""
    rollups.track(session, [run.id], rollups.Part.RUN, lock=True)
    previous, run.feedback = run.feedback, verdict
    return previous


def apply_verdict(session: Session, run: Run, verdict: str | None,
                  author: str = AUTO_CASE_AUTHOR, why: str = RESOLVED_NO_NEGATIVE) -> str | None:
    """Set ``run.feedback`` (useful | not_useful | ``None``) and its consequences; returns
    the case id of a useful run (``None`` while the run cannot be promoted: RUNNING or no
    answer, SPEC 7). The one code path of every verdict change: the verdict API,
    answer-level ratings, a rating taken back, a queue's pair agreeing or disputing, a
    lead's decision (SPEC 6.2). ``author``: the ``created_by`` of a case made now (a
    lead's decision names the lead).

    Leaving ``useful`` withdraws or flags the run's case (``case_left_useful``); coming
    back restores it (``restore_case``). ``not_useful`` opens or reopens the run's triage
    item; ``useful`` resolves it. ``None`` after ``not_useful`` (the last answer-level
    rating taken back, or the queue's reviewers now disagree) resolves the item opened
    for that verdict, noting ``why`` in its history (``RESOLVED_NO_NEGATIVE``,
    ``RESOLVED_DISPUTED``), unless a negative rating of another part of the run is left
    behind it; a later not_useful verdict or decision reopens it."""
    previous = store_verdict(session, run, verdict)
    if verdict == "useful":
        restore_case(session, run)
        case = promote_useful(session, run, author)
        close_item_on_useful(session, run)
        return case.case_id if case is not None else None
    if previous == "useful":
        case_left_useful(session, run)
    if verdict is not None:
        open_item_for_run(session, run)
    elif previous == "not_useful" and not _negative_part_rating_left(session, run):
        close_item_automatically(session, run, why)
    return None


def _negative_part_rating_left(session: Session, run: Run) -> bool:
    """True when a negative rating of a part of the run other than its answer is left
    (a citation, a step ...): something still to triage once the verdict is gone."""
    return session.scalar(select(Feedback.id).join(Run, Run.id == Feedback.run_pk).where(
        Feedback.run_pk == run.id, Feedback.rating == "negative",
        not_(answer_rating_condition())).limit(1)) is not None


def _recorded(session: Session, message: str, target: Run | DiagnosisSession, verdict: str,
              case_id: str | None) -> str:
    """The answer's message; a useful verdict that made no case says why."""
    if verdict != "useful" or case_id is not None:
        return message + "."
    return f"{message}; no case: {promotion_blocker(session, target) or 'not promoted'}."


def governing_queue(session: Session, run: Run) -> ReviewQueue | None:
    """The review queue whose reviewers decide the run's verdict together (issue 16,
    ``queue_governing``: the most ``reviewers_per_run`` > 1, the oldest on a tie);
    ``None`` when there is none — then the latest answer-level rating is the verdict, as
    ever (SPEC 6.2)."""
    return session.scalars(select(ReviewQueue).where(
        ReviewQueue.id == governing_queue_id(run.id, run.workspace_id))).first()


def latest_decision(session: Session, run_pk: int) -> VerdictDecision | None:
    """The run's latest lead decision (``verdict_decision``), or ``None``."""
    return session.scalars(select(VerdictDecision).where(VerdictDecision.run_pk == run_pk)
                           .order_by(VerdictDecision.id.desc()).limit(1)).first()


def answer_ratings_of(session: Session, run: Run, queue: ReviewQueue | None = None
                      ) -> list[str]:
    """The current answer-level ratings of the run, one per reviewer (SPEC 6.2); with
    ``queue``, only those of the reviewers who count for it
    (``queue_completion.counted_rating``: a named queue's own reviewers)."""
    session.flush()
    conds = [] if queue is None else [counted_rating(queue.id, queue.reviewers, Feedback.run_pk,
                                                     Feedback.author_id)]
    return list(session.scalars(select(Feedback.rating).join(Run, Run.id == Feedback.run_pk)
                                .where(Feedback.run_pk == run.id, answer_rating_condition(),
                                       *conds)))


def settle_from_ratings(session: Session, run: Run, queue: ReviewQueue) -> None:
    """The verdict of a run that ``queue`` (N = ``reviewers_per_run`` > 1) governs, after
    its answer-level ratings changed (issue 16, ``domain.consensus``); no commit.

    Only the ratings of those who count for the queue decide (``answer_ratings_of``: in a
    queue that names its reviewers, theirs; an admin's or a lead's rating from the run
    page is none of them). A lead's decision, once given, stands: ratings no longer move
    the verdict. Otherwise, with fewer than N ratings the verdict stays as it is (the item is not complete);
    with N or more, the majority's verdict is applied (``apply_verdict``: case, triage),
    and a dispute (a tie, or any split under the queue's ``any_split`` rule) leaves the
    run without a verdict until a lead decides (a verdict it had is withdrawn as when
    the last rating is taken back)."""
    if latest_decision(session, run.id) is not None:
        return
    result = consensus(answer_ratings_of(session, run, queue), queue.reviewers_per_run,
                       queue.dispute_rule)
    if result.outcome == DECIDED and result.verdict != run.feedback:
        assert result.verdict is not None
        apply_verdict(session, run, result.verdict)
    elif result.outcome == DISPUTED and run.feedback is not None:
        apply_verdict(session, run, None, why=RESOLVED_DISPUTED)  # the item's note says so


def rederive_verdict(session: Session, run: Run) -> None:
    """After a delete: the verdict of the latest remaining answer-level rating, or null.

    Consequences (case, triage) follow only when the verdict actually changes, so
    deleting a duplicate rating never reopens an item a lead has resolved. A verdict that
    becomes null after ``useful`` withdraws or flags the case like any verdict leaving
    useful (SPEC 7); after ``not_useful``, an open item opened for that verdict is
    resolved automatically when no negative rating of another part of the run is left
    (nothing behind it), noted in the item's history (issue 17; ``apply_verdict``).
    """
    session.flush()
    queue = governing_queue(session, run)
    if queue is not None:  # several reviewers per run decide together (issue 16)
        settle_from_ratings(session, run, queue)
        return
    rows = session.execute(
        select(Feedback.updated_at, Feedback.id, Feedback.rating)
        .join(Run, Run.id == Feedback.run_pk)
        .where(Feedback.run_pk == run.id, answer_rating_condition())
    ).all()
    verdict = latest_verdict(rows)
    if verdict != run.feedback:
        apply_verdict(session, run, verdict)


def follow_rating(session: Session, run_pk: int, rating: str, *, is_answer: bool,
                  changed: bool, settings: dict[str, Any]) -> None:
    """What a saved rating of run ``run_pk`` changes beyond itself; no commit (SPEC 6.2).

    An answer-level rating sets the run's verdict (positive -> useful + case, negative ->
    not_useful + triage item) when the rating ``changed`` or the verdict differs — unless
    the run is in a review queue with N > 1 reviewers per run (``governing_queue``):
    then the N ratings decide together (``settle_from_ratings``); a
    negative rating of another part opens a triage item when the workspace's
    ``triage_negative_targets`` setting is on. The run's ``status`` never changes.
    """
    if is_answer:
        run = session.get(Run, run_pk)
        assert run is not None  # resolved in this transaction; runs are not deleted here
        queue = governing_queue(session, run)
        if queue is not None:  # N > 1 reviewers decide together (issue 16)
            settle_from_ratings(session, run, queue)
            return
        verdict = verdict_for_rating(rating)
        if changed or run.feedback != verdict:
            apply_verdict(session, run, verdict)
    elif rating == "negative" and settings.get("triage_negative_targets") is True:
        run = session.get(Run, run_pk)
        assert run is not None
        open_item_for_run(session, run, OPENED_NEGATIVE_TARGET)


def promote_on_finish(session: Session, run: Run) -> None:
    """A useful verdict given while the run was RUNNING or had no answer made no case
    (SPEC 7); the run becomes a case once it is finished with an answer. No commit."""
    if run.feedback == "useful":
        promote_useful(session, run)


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
    ``Conflict`` (409) naming them in the message and in ``details["workspaces"]``. A run
    that a review queue with N > 1 reviewers per run governs: ``Conflict`` (409) naming
    the queue (``details`` ``{"queue", "reviewersPerRun"}``), nothing written: its
    verdict is the N ratings' majority or a lead's decision (SPEC 6.2).
    """
    try:
        verdict = check_choice(verdict, "feedback", VERDICTS)
    except InvalidFeedback as exc:
        raise ValidationFailed(exc.field, exc.message) from None
    # Stored redacted (runs.upsert_run); the id as the agent sent it finds its session.
    session_id = redact_session_id(_check_external_id(session_id, "sessionId", required=True))
    run_id = _check_external_id(run_id, "runId", required=False)

    if run_id is not None:
        run = _named_run(session, actor, session_id, run_id)
        _refuse_governed(session, run)
        case_id = apply_verdict(session, run, verdict)
        session.commit()
        return VerdictResult(True, _recorded(session, "Feedback recorded", run, verdict, case_id),
                             run.run_id, False, case_id)
    diagnosis_session = _only_visible_session(session, actor, session_id)
    latest = _latest_run(session, diagnosis_session)
    if latest is not None:
        _refuse_governed(session, latest)
        case_id = apply_verdict(session, latest, verdict)
        session.commit()
        return VerdictResult(
            True, _recorded(session, "Feedback recorded on the latest run of the session", latest, verdict, case_id),
            latest.run_id, True, case_id,
        )
    return _legacy_session_verdict(session, diagnosis_session, verdict)


def _refuse_governed(session: Session, run: Run) -> None:
    """Raise ``Conflict`` (details ``{"queue", "reviewersPerRun"}``) when a review queue
    with N > 1 reviewers per run governs ``run``: its verdict is the N ratings' majority
    or a lead's decision (SPEC 6.2), which the verdict API must not overrule."""
    queue = governing_queue(session, run)
    if queue is not None:
        raise Conflict(
            f"run {run.run_id}'s verdict is decided by the review queue '{queue.name}' "
            f"({queue.reviewers_per_run} reviewers per run, or a lead's decision): rate its answer there",
            details={"queue": queue.name, "reviewersPerRun": queue.reviewers_per_run})


def _named_run(session: Session, actor: Actor, session_id: str, run_id: str) -> Run:
    """The run ``run_id`` of the session ``session_id`` the actor reviews. Raises
    ``Conflict`` (it is in two of the actor's workspaces), ``ValidationFailed`` (field
    ``runId``: a visible run of another session), ``Forbidden`` (no such visible run)."""
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
    if matches:
        return matches[0]
    elsewhere = session.scalar(scope_to_actor(
        select(Run.id).where(Run.run_id == run_id), actor, Run.workspace_id, Role.REVIEWER
    ).limit(1))
    if elsewhere is not None:
        raise ValidationFailed("runId", "the run does not belong to sessionId")
    raise Forbidden()


def _only_visible_session(session: Session, actor: Actor, session_id: str) -> DiagnosisSession:
    """The session ``session_id`` the actor reviews. Raises ``Forbidden`` (none visible),
    ``Conflict`` (it is in two of the actor's workspaces)."""
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
    return sessions[0]


def _latest_run(session: Session, diagnosis_session: DiagnosisSession) -> Run | None:
    """The session's latest run (by created_at, then id), or None."""
    return session.scalars(
        select(Run)
        .where(Run.diagnosis_session_id == diagnosis_session.id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(1)
    ).first()


def _legacy_session_verdict(session: Session, diagnosis_session: DiagnosisSession,
                            verdict: str) -> VerdictResult:
    """The verdict of a session without runs: kept on a legacy session itself (a useful
    one promoted to a case), committed; ``ValidationFailed`` (field ``sessionId``) else."""
    if not diagnosis_session.is_legacy:
        raise ValidationFailed("sessionId", "the session has no runs to give feedback on")
    diagnosis_session.feedback = verdict
    case = promote_useful(session, diagnosis_session) if verdict == "useful" else None
    case_id = case.case_id if case is not None else None
    session.commit()
    return VerdictResult(
        True, _recorded(session, "Feedback recorded on the legacy session", diagnosis_session, verdict, case_id),
        None, False, case_id)
