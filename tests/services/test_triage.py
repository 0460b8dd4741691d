"""The not-useful queue service (SPEC 2, 3, 8, 10), and opening / auto-closing an item
(SPEC 3 "triage item", 6.2)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.models import TriageItem
from reviewapp.services import triage
from reviewapp.services.feedback.verdict import AUTO_RESOLVED_NOTE
from reviewapp.services.triage import TriageFilters

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def queue(make):
    """A workspace with a lead, a second lead, an admin, a reviewer and three items."""
    ws = make.workspace()
    lead, lead2 = make.user(ws, Role.LEAD), make.user(ws, Role.LEAD)
    admin, reviewer = make.user(ws, Role.ADMIN), make.user(ws, Role.REVIEWER)
    runs = [make.run(ws) for _ in range(3)]
    items = [make.triage_item(r, created_at=T0 + timedelta(hours=i)) for i, r in enumerate(runs)]
    return type("Queue", (), dict(ws=ws, lead=lead, lead2=lead2, admin=admin, reviewer=reviewer,
                                  runs=runs, items=items))


def _ids(page):
    return [row.id for row in page.rows]


def test_lead_sees_the_queue_newest_first_with_counts(session, make, queue):
    page = triage.list_items(session, make.actor(queue.lead))
    assert _ids(page) == [i.id for i in reversed(queue.items)]
    assert page.counts == {"new": 3, "triaged": 0, "resolved": 0, "wont_fix": 0}
    assert page.total == 3
    assert page.rows[0].run_id == queue.runs[2].run_id
    assert {name for _, name in page.rows[0].assignable} == {
        queue.lead.username, queue.lead2.username, queue.admin.username}


@pytest.mark.parametrize("call", [
    lambda s, a, item: triage.list_items(s, a),
    lambda s, a, item: triage.get_item(s, a, item.id),
    lambda s, a, item: triage.assign(s, a, item.id, item.version, None),
    lambda s, a, item: triage.move(s, a, item.id, item.version, "triaged"),
    lambda s, a, item: triage.set_note(s, a, item.id, item.version, "x"),
    lambda s, a, item: triage.set_fault_category(s, a, item.id, item.version, "OTHER"),
    lambda s, a, item: triage.bulk_move(s, a, [(item.id, item.version)], "triaged"),
])
def test_reviewer_is_forbidden_everything(session, make, queue, call):
    with pytest.raises(Forbidden):
        call(session, make.actor(queue.reviewer), queue.items[0])


def test_lead_of_a_sees_nothing_of_b(session, make, queue):
    other = make.workspace()
    foreign = make.triage_item(make.run(other))
    make.user(other, Role.LEAD)
    actor = make.actor(queue.lead)
    assert foreign.id not in _ids(triage.list_items(session, actor))
    for call in (
        lambda: triage.get_item(session, actor, foreign.id),
        lambda: triage.move(session, actor, foreign.id, 1, "triaged"),
        lambda: triage.assign(session, actor, foreign.id, 1, queue.lead.id),
    ):
        with pytest.raises(Forbidden) as foreign_error:
            call()
        with pytest.raises(Forbidden) as missing_error:
            triage.get_item(session, actor, 10_000_000)
        assert foreign_error.value.to_dict() == missing_error.value.to_dict()
    outcomes = triage.bulk_move(session, actor, [(foreign.id, 1)], "triaged")
    assert [(o.status, o.row) for o in outcomes] == [("forbidden", None)]
    assert session.get(TriageItem, foreign.id).state == "new"


def test_keyset_pagination_is_stable_under_equal_timestamps(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    items = [make.triage_item(make.run(ws), created_at=T0) for _ in range(7)]
    seen, cursor = [], None
    while True:
        page = triage.list_items(session, make.actor(lead), limit=3, cursor=cursor)
        seen.extend(_ids(page))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted((i.id for i in items), reverse=True)


def test_malformed_cursor_is_a_validation_error(session, make, queue):
    with pytest.raises(ValidationFailed) as error:
        triage.list_items(session, make.actor(queue.lead), cursor="not-a-cursor!")
    assert error.value.field == "cursor"


def test_filters_state_assignee_kind_opened_score_date(session, make):
    ws = make.workspace()
    lead, other_lead = make.user(ws, Role.LEAD), make.user(ws, Role.LEAD)
    chat = make.run(ws)
    aiops = make.run(ws, kind="aiops")
    low = make.run(ws)
    a = make.triage_item(chat, state="triaged", assignee=lead, created_at=T0)
    b = make.triage_item(aiops, created_at=T0 + timedelta(days=1))
    c = make.triage_item(low, opened_reason="negative_target", assignee=other_lead,
                         created_at=T0 + timedelta(days=2), verdict=False)
    chat.evidence_score, aiops.evidence_score, low.evidence_score = 65, 30, 0
    session.commit()
    actor = make.actor(lead)

    def ids(**params):
        return set(_ids(triage.list_items(session, actor, TriageFilters.from_params(params))))

    assert ids(state="triaged") == {a.id}
    assert ids(state="open") == {a.id, b.id, c.id}
    assert ids(state="resolved") == set()
    assert ids(assignee="me") == {a.id}
    assert ids(assignee="none") == {b.id}
    assert ids(assignee=str(other_lead.id)) == {c.id}
    assert ids(kind="aiops") == {b.id}
    assert ids(opened="negative_target") == {c.id}
    assert ids(score_min="30") == {a.id, b.id}
    assert ids(score_min="1", score_max="40") == {b.id}
    assert ids(date_from="2026-11-21") == {b.id, c.id}
    assert ids(date_from="2026-11-21", date_to="2026-11-21") == {b.id}
    # counts ignore the state filter but honour the others
    page = triage.list_items(session, actor, TriageFilters.from_params({"kind": "chat", "state": "new"}))
    assert page.counts == {"new": 1, "triaged": 1, "resolved": 0, "wont_fix": 0}
    assert _ids(page) == [c.id] and page.total == 1


def test_filter_by_reviewer_reason_and_disagreement(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    r1, r2 = make.user(ws), make.user(ws)
    agreed, disputed, cited = make.run(ws), make.run(ws), make.run(ws)
    items = {name: make.triage_item(run) for name, run in
             (("agreed", agreed), ("disputed", disputed), ("cited", cited))}
    make.feedback_row(agreed, r1, reason="incorrect")
    make.feedback_row(agreed, r2, reason="incomplete")
    make.feedback_row(disputed, r1, reason="incorrect")
    make.feedback_row(disputed, r2, rating="positive")
    # Up on one citation and down on another is no disagreement: different parts.
    msg_id = make.feedback_row(cited, r1, target_type="citation", subject_key="c1",
                               rating="positive").target_id
    make.feedback_row(cited, r2, target_type="citation", target_id=msg_id, subject_key="c2",
                      reason="citation")
    actor = make.actor(lead)

    def ids(**params):
        return set(_ids(triage.list_items(session, actor, TriageFilters.from_params(params))))

    assert ids(disagreement="1") == {items["disputed"].id}
    assert ids(reason="incorrect") == {items["agreed"].id, items["disputed"].id}
    assert ids(reason="citation") == {items["cited"].id}
    rows = {row.id: row for row in triage.list_items(session, actor).rows}
    disputed_row = rows[items["disputed"].id]
    assert (disputed_row.positive, disputed_row.negative, disputed_row.reviewers) == (1, 1, 2)
    assert disputed_row.disagreement and not rows[items["agreed"].id].disagreement
    assert rows[items["agreed"].id].reasons == ("incomplete", "incorrect")


@pytest.mark.parametrize("params, field", [
    ({"state": "open-ish"}, "state"), ({"kind": "batch"}, "kind"), ({"score_min": "x"}, "score_min"),
    ({"score_max": "101"}, "score_max"), ({"score_min": "50", "score_max": "10"}, "score_min"),
    ({"date_from": "30/11/2026"}, "date_from"), ({"assignee": "bob"}, "assignee"),
    ({"date_from": "2026-11-30", "date_to": "2026-11-01"}, "date_from"),
    ({"opened": "whim"}, "opened"), ({"workspace": "abc"}, "workspace"),
])
def test_bad_filters_name_the_field(params, field):
    with pytest.raises(ValidationFailed) as error:
        TriageFilters.from_params(params)
    assert error.value.field == field


def test_assign_move_note_category_each_bump_the_version(session, make, queue):
    actor = make.actor(queue.lead)
    item = queue.items[0]
    row = triage.assign(session, actor, item.id, 1, queue.lead2.id)
    assert (row.assignee, row.version) == (queue.lead2.username, 2)
    row = triage.set_fault_category(session, actor, item.id, 2, "retrieval miss")
    assert (row.fault_category, row.version) == ("RETRIEVAL_MISS", 3)
    row = triage.set_note(session, actor, item.id, 3, "KB article is missing 中文 ✅")
    assert (row.note, row.version) == ("KB article is missing 中文 ✅", 4)
    row = triage.move(session, actor, item.id, 4, "triaged")
    assert (row.state, row.version, row.resolved_at) == ("triaged", 5, None)
    row = triage.move(session, actor, item.id, 5, "resolved")
    assert row.state == "resolved" and row.resolved_at is not None
    row = triage.move(session, actor, item.id, 6, "triaged")  # reopen
    assert (row.state, row.resolved_at, row.version) == ("triaged", None, 7)
    row = triage.assign(session, actor, item.id, 7, None)
    assert row.assignee_id is None


def test_a_triage_action_never_touches_the_run_status(session, make, queue):
    run = queue.runs[0]
    before = (run.status, run.feedback)
    triage.move(session, make.actor(queue.lead), queue.items[0].id, 1, "wont_fix")
    session.refresh(run)
    assert (run.status, run.feedback) == before == ("SUCCESS", "not_useful")


def test_stale_version_is_a_conflict_with_the_current_state(session, make, queue):
    item = queue.items[0]
    triage.assign(session, make.actor(queue.lead2), item.id, 1, queue.lead2.id)
    with pytest.raises(Conflict) as error:
        triage.move(session, make.actor(queue.lead), item.id, 1, "resolved")
    assert error.value.status == 409
    current = error.value.details
    assert (current["id"], current["version"], current["state"], current["assignee"]) == (
        item.id, 2, "new", queue.lead2.username)
    session.rollback()
    assert session.get(TriageItem, item.id).state == "new"
    # The JSON form of the details rebuilds the same row.
    assert triage.TriageRow.from_dict(current).to_dict() == current


def test_stale_version_wins_over_an_invalid_move(session, make, queue):
    """Someone resolved it meanwhile: resolving again from the old page is a 409, not a 400."""
    item = queue.items[0]
    triage.move(session, make.actor(queue.lead2), item.id, 1, "resolved")
    with pytest.raises(Conflict):
        triage.move(session, make.actor(queue.lead), item.id, 1, "resolved")


@pytest.mark.parametrize("state, target", [("new", "new"), ("resolved", "wont_fix"),
                                           ("triaged", "new"), ("new", "closed")])
def test_disallowed_moves_are_validation_errors(session, make, state, target):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws), state=state)
    with pytest.raises(ValidationFailed) as error:
        triage.move(session, make.actor(lead), item.id, 1, target)
    assert error.value.field == "state"


def test_assignee_must_be_a_lead_of_the_items_workspace(session, make, queue):
    outsider = make.user(make.workspace(), Role.ADMIN)
    actor = make.actor(queue.lead)
    for bad in (queue.reviewer.id, outsider.id, 10_000_000):
        with pytest.raises(ValidationFailed) as error:
            triage.assign(session, actor, queue.items[0].id, 1, bad)
        assert error.value.field == "assignee_id"
    with pytest.raises(ValidationFailed):
        triage.assign(session, actor, queue.items[0].id, 1, "bob")
    assert session.get(TriageItem, queue.items[0].id).version == 1


@pytest.mark.parametrize("call, field", [
    (lambda s, a, i: triage.set_note(s, a, i, 1, "x" * 4001), "note"),
    (lambda s, a, i: triage.set_fault_category(s, a, i, 1, "no/slashes"), "fault_category"),
    (lambda s, a, i: triage.move(s, a, i, "one", "triaged"), "version"),
    (lambda s, a, i: triage.move(s, a, i, None, "triaged"), "version"),
])
def test_bad_action_input_names_the_field(session, make, queue, call, field):
    with pytest.raises(ValidationFailed) as error:
        call(session, make.actor(queue.lead), queue.items[0].id)
    assert error.value.field == field


def test_blank_note_and_category_clear_them(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws), note="old", fault_category="OTHER")
    assert triage.set_note(session, make.actor(lead), item.id, 1, "   ").note is None
    assert triage.set_fault_category(session, make.actor(lead), item.id, 2, "").fault_category is None


def test_bulk_with_one_stale_item_applies_the_others_and_reports_it(session, make, queue):
    a, b, c = queue.items
    triage.set_note(session, make.actor(queue.lead2), b.id, 1, "someone else was here")
    outcomes = triage.bulk_assign(
        session, make.actor(queue.lead), [(a.id, 1), (b.id, 1), (c.id, 1)], queue.lead.id)
    assert [(o.item_id, o.status) for o in outcomes] == [
        (a.id, "applied"), (b.id, "conflict"), (c.id, "applied")]
    by_id = {o.item_id: o for o in outcomes}
    assert by_id[b.id].row.assignee_id is None and by_id[b.id].row.version == 2
    assert by_id[a.id].row.assignee_id == queue.lead.id and by_id[a.id].row.version == 2
    session.expire_all()
    assert [session.get(TriageItem, i.id).assignee_id for i in (a, b, c)] == [
        queue.lead.id, None, queue.lead.id]


def test_bulk_move_reports_items_the_move_does_not_apply_to(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    new = make.triage_item(make.run(ws))
    done = make.triage_item(make.run(ws), state="resolved")
    outcomes = triage.bulk_move(session, make.actor(lead), [(new.id, 1), (done.id, 1)], "wont_fix")
    assert [(o.status, o.row.state) for o in outcomes] == [("applied", "wont_fix"), ("invalid", "resolved")]


@pytest.mark.parametrize("items, state", [([], "triaged"), ([("x", 1)], "triaged"),
                                          ([(1, 1)], "gone"), ([(1, 1), (2, 1), (1, 0)], "triaged")])
def test_bulk_rejects_bad_input(session, make, queue, items, state):
    with pytest.raises(ValidationFailed):
        triage.bulk_move(session, make.actor(queue.lead), items, state)


def test_bulk_item_listed_twice_with_different_versions_changes_nothing(session, make, queue):
    item = make.triage_item(make.run(make.workspace()))
    with pytest.raises(ValidationFailed) as refused:
        triage.bulk_move(session, make.actor(queue.lead), [(item.id, 1), (item.id, 0)], "triaged")
    assert "listed twice" in refused.value.message
    session.expire_all()
    assert session.get(type(item), item.id).state == "new"


def test_parse_item_tokens():
    assert triage.parse_item_tokens(["3:1", "10:22"]) == [(3, 1), (10, 22)]
    for bad in (["3"], ["a:1"], ["3:-1"], ["3:1:2"]):
        with pytest.raises(ValidationFailed):
            triage.parse_item_tokens(bad)


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
        ("alice", "answer (message 2)", "negative", "incorrect", "wrong pod", "It was the DB."),
        ("bruno", "answer (message 2)", "positive", None, "fine by me", None),
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


def test_admin_of_one_workspace_and_lead_of_another_sees_both(session, make):
    a, b = make.workspace(), make.workspace()
    user = make.user(a, Role.ADMIN)
    from reviewapp.models import Membership

    session.add(Membership(user_id=user.id, workspace_id=b.id, role="lead"))
    session.commit()
    ia, ib = make.triage_item(make.run(a)), make.triage_item(make.run(b))
    page = triage.list_items(session, make.actor(user))
    assert set(_ids(page)) == {ia.id, ib.id}
    only_b = triage.list_items(session, make.actor(user), TriageFilters(workspace_id=b.id))
    assert _ids(only_b) == [ib.id]


def test_day_range_is_inclusive_utc_days():
    start, end = triage.day_range(date(2026, 11, 1), date(2026, 11, 2))
    assert start == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert end == datetime(2026, 11, 3, tzinfo=timezone.utc)


def test_two_leads_racing_on_the_same_version_one_wins_one_gets_409(app, session, make, queue):
    """Both pages show version 1; the guarded UPDATE lets exactly one write through."""
    import threading

    from reviewapp.db_setup import write_intent
    from reviewapp.extensions import db

    item_id = queue.items[0].id
    actors = [(make.actor(queue.lead), "resolved"), (make.actor(queue.lead2), "wont_fix")]
    session.commit()
    barrier = threading.Barrier(len(actors))
    results: list[str] = []

    def work(actor, state):
        with app.app_context(), write_intent():
            barrier.wait()
            try:
                triage.move(db.session, actor, item_id, 1, state)
                results.append(state)
            except Conflict as stale:
                results.append(f"conflict:{stale.details['state']}")
            finally:
                db.session.remove()

    threads = [threading.Thread(target=work, args=pair) for pair in actors]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    winners = [r for r in results if not r.startswith("conflict")]
    assert len(results) == 2 and len(winners) == 1
    assert results.count(f"conflict:{winners[0]}") == 1
    session.expire_all()
    stored = session.get(TriageItem, item_id)
    assert (stored.state, stored.version) == (winners[0], 2)


# --- through the real feedback services (issue 5): what the queue shows after verdicts


def _answer_id(run):
    return next(m.id for m in run.messages if m.role == "assistant")


def test_verdict_flip_opens_then_auto_closes_the_item_in_the_queue(session, make):
    """SPEC 3 / 6.2: not_useful opens an item; useful resolves it with a note; the run's
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
    assert row.note == AUTO_RESOLVED_NOTE and row.verdict == "useful"
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
