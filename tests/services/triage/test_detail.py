"""One triage item's page, and what the queue shows after real verdicts (SPEC 3, 6.2, 8)."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import TriageItem
from reviewapp.services import triage
from reviewapp.services.triage import TriageFilters


def test_item_detail_shows_every_rating_and_the_history(session, make, queue):
    run = queue.runs[0]
    r1, r2 = make.user(queue.ws, username="alice"), make.user(queue.ws, username="bruno")
    make.feedback_row(run, r1, reason="incorrect", comment="wrong pod", correction="It was the DB.")
    make.feedback_row(run, r2, rating="positive", comment="fine by me")
    make.feedback_row(run, r2, target_type="citation", subject_key="c2", reason="citation")
    detail = triage.get_item(session, make.actor(queue.admin), queue.items[0].id)
    assert detail.run.id == run.id and detail.row.disagreement
    got = {(r.reviewer, r.target_label, r.rating, r.reason, r.comment, r.correction)
           for r in detail.ratings}
    assert got == {
        ("alice", "answer", "negative", "incorrect", "wrong pod", "It was the DB."),
        ("bruno", "answer", "positive", None, "fine by me", None),
        ("bruno", "citation c2: Doc two", "negative", "citation", None, None),
    }
    assert [(e.actor, e.action) for e in detail.history] == [
        ("alice", "create"), ("bruno", "create"), ("bruno", "create")]
    assert detail.case is None


def test_item_detail_proposes_a_triage_category_from_the_run(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)  # the factory's run has no tool calls
    item = make.triage_item(run)
    assert triage.get_item(session, make.actor(lead), item.id).suggestion.value == "NO_EVIDENCE"


def test_the_proposal_is_offered_only_from_the_workspaces_categories_under_its_label(session, make):
    """The item page offered "Accept the proposal “WRONG_ROOT_CAUSE”" for a category the
    workspace had dropped (accepting it was refused) and showed raw codes although the
    workspace names them. The read model offers a proposal only from the workspace's
    list, under the workspace's label; a code the list no longer holds reads as itself."""
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    item = make.triage_item(make.run(ws))  # no tool calls: the rules propose NO_EVIDENCE

    def detail_with(categories):
        ws.settings = {"fault_categories": categories} if categories is not None else {}
        session.commit()
        return triage.get_item(session, lead, item.id)

    default = detail_with(None)
    assert (default.proposal.value, default.category_label("NO_EVIDENCE")) == ("NO_EVIDENCE", "No evidence")
    assert default.offer_proposal
    named = detail_with(["GENERAL", {"code": "NO_EVIDENCE", "label": "Looked nothing up", "group": "agent"}])
    assert named.proposal.value == "NO_EVIDENCE" and named.category_label("NO_EVIDENCE") == "Looked nothing up"
    assert named.category_choices == (("GENERAL", "General / other"), ("NO_EVIDENCE", "Looked nothing up"))
    dropped = detail_with(["GENERAL", {"code": "PAYMENTS", "label": "Payments"}])
    assert dropped.suggestion.value == "NO_EVIDENCE"  # what the rules found, kept
    assert dropped.proposal is None and not dropped.offer_proposal
    assert dropped.category_label("NO_EVIDENCE") == "NO_EVIDENCE"
    assert dropped.category_label("PAYMENTS") == "Payments"
    # Already categorised as proposed: nothing to accept, the proposal still shown.
    session.get(TriageItem, item.id).fault_category = "NO_EVIDENCE"
    accepted = detail_with(None)
    assert accepted.proposal.value == "NO_EVIDENCE" and not accepted.offer_proposal


# --- through the real feedback services (issue 5): what the queue shows after verdicts


def _answer_id(run):
    return next(m.id for m in run.messages if m.role == "assistant")


def test_verdict_flip_opens_then_auto_closes_the_item_in_the_queue(session, make):
    """SPEC 3 / 6.2: not_useful opens an item; useful resolves it (said in its history,
    not in the lead's note: issue 17); the run's
    status never changes; the queue and the item page show it all."""
    from reviewapp.services import feedback

    ws = make.workspace()
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    session_id = run.session.session_id
    feedback.set_run_verdict(session, make.actor(reviewer), session_id, run.run_id, "not_useful")
    page = triage.list_items(session, make.actor(lead), TriageFilters(state="open"))
    assert [(r.run_id, r.state, r.verdict) for r in page.rows] == [(run.run_id, "new", "not_useful")]
    item_id = page.rows[0].id
    triage.move(session, make.actor(lead), item_id, page.rows[0].version, "triaged")

    feedback.set_run_verdict(session, make.actor(reviewer), session_id, run.run_id, "useful")
    session.expire_all()
    assert triage.list_items(session, make.actor(lead), TriageFilters(state="open")).rows == []
    row = triage.get_item(session, make.actor(lead), item_id).row
    assert row.state == "resolved" and row.resolved_at is not None
    assert row.note is None and row.verdict == "useful"
    events = triage.get_item(session, make.actor(lead), item_id).item_events
    assert [(e.action, e.automatic) for e in events] == [("moved", False), ("auto_resolved", True)]
    assert events[1].detail == "the run's verdict became useful"
    assert session.get(type(run), run.id).status == "SUCCESS"


def test_reviewer_ratings_through_the_service_show_on_the_item(session, make):
    from reviewapp.services import feedback

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    alice, bruno = make.user(ws, username="alice-rt"), make.user(ws, username="bruno-rt")
    run = make.run(ws)
    feedback.upsert_feedback(session, make.actor(alice), "chat_message", _answer_id(run), None,
                             "negative", reason="incorrect", correction="Use the runbook.")
    feedback.upsert_feedback(session, make.actor(bruno), "chat_message", _answer_id(run), None,
                             "positive")
    feedback.upsert_feedback(session, make.actor(alice), "chat_message", _answer_id(run), None,
                             "negative", reason="incomplete", correction="Use the runbook.")
    # Answer-level thumbs are the verdict (SPEC 6.2): alice's latest rating is negative.
    item = session.scalars(select(TriageItem).where(TriageItem.run_pk == run.id)).one()
    assert session.get(type(run), run.id).feedback == "not_useful"
    detail = triage.get_item(session, make.actor(lead), item.id)
    assert {(r.reviewer, r.rating, r.reason) for r in detail.ratings} == {
        ("alice-rt", "negative", "incomplete"), ("bruno-rt", "positive", None)}
    assert [(e.actor, e.action) for e in detail.history] == [
        ("alice-rt", "create"), ("bruno-rt", "create"), ("alice-rt", "update")]
    assert detail.history[-1].before["reason"] == "incorrect"
    assert detail.row.disagreement
    assert triage.list_items(session, make.actor(lead),
                             TriageFilters(disagreement=True)).rows[0].id == item.id


def test_item_detail_names_steps_and_the_report_as_their_rows_read(session, make):
    """The triage page names each rated part from its type's ``part_label`` (issue 12):
    a step by its ordinal and name, the report as "report"; a part gone from the run by
    its type and id."""
    from reviewapp.models import DiagnosticReport, DiagnosticStep

    ws = make.workspace()
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws, username="carla")
    run = make.run(ws, kind="aiops", alert={"alertname": "HighErrorRate"},
                   steps=[{"id": "s1", "name": "Collect logs", "status": "completed"},
                          {"id": "s2", "name": "Check pool", "status": "completed"}],
                   report={"content": "## Pool exhausted"})
    steps = {s.step_id: s for s in session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id))}
    report_id = session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == run.id))
    make.feedback_row(run, reviewer, target_type="diagnostic_step", target_id=steps["s2"].id)
    make.feedback_row(run, reviewer, target_type="diagnostic_report", target_id=report_id,
                      rating="positive")
    make.feedback_row(run, reviewer, target_type="diagnostic_step", target_id=987654)
    item = make.triage_item(run)
    detail = triage.get_item(session, make.actor(lead), item.id)
    assert sorted(r.target_label for r in detail.ratings) == sorted([
        f"step {steps['s2'].ordinal}: Check pool", "report",
        "diagnostic step #987654 (no longer in the run)"])
