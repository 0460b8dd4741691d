"""Triage actions: assign, categorise, note, moves, bulk, versions (SPEC 3, 8, 10)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.errors import Conflict, ValidationFailed
from reviewapp.models import TriageItem
from reviewapp.services import triage
from reviewapp.services.feedback.verdict_triage import close_item_on_useful


def test_assign_move_note_category_each_bump_the_version(session, make, queue):
    actor = make.actor(queue.lead)
    item = queue.items[0]
    row = triage.assign(session, actor, item.id, 1, queue.lead2.id)
    assert (row.assignee, row.version) == (queue.lead2.username, 2)
    row = triage.set_fault_category(session, actor, item.id, 2, " RETRIEVAL_MISS ")
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


def test_a_stale_version_says_who_changed_the_item(session, make, queue):
    """The 409 said "changed by someone else" even when the change was the actor's own,
    made in another tab. It names who made the item's latest change: the actor ("you, in
    another tab or window"), another lead (their username) or the app itself."""
    mine, theirs, auto = queue.items
    lead = make.actor(queue.lead)
    triage.set_note(session, lead, mine.id, 1, "from my other tab")
    with pytest.raises(Conflict) as error:
        triage.move(session, lead, mine.id, 1, "resolved")
    assert error.value.message == (
        "This item was changed by you, in another tab or window, since your page was loaded; "
        "nothing was saved. Here is its current state.")
    session.rollback()
    triage.assign(session, make.actor(queue.lead2), theirs.id, 1, queue.lead2.id)
    with pytest.raises(Conflict) as error:
        triage.set_note(session, lead, theirs.id, 1, "mine")
    assert error.value.message == (
        f"This item was changed by {queue.lead2.username} since your page was loaded; "
        "nothing was saved. Here is its current state.")
    session.rollback()
    # lead2 changed it first, then the actor: the latest change is the actor's own
    triage.move(session, lead, theirs.id, 2, "triaged")
    with pytest.raises(Conflict) as error:
        triage.set_note(session, lead, theirs.id, 2, "mine")
    assert "changed by you, in another tab or window, since" in error.value.message
    session.rollback()
    close_item_on_useful(session, queue.runs[2])  # the run's verdict became useful
    session.commit()
    with pytest.raises(Conflict) as error:
        triage.set_note(session, lead, auto.id, 1, "mine")
    assert error.value.message == (
        "This item was changed automatically (the run's verdict became useful) since your page "
        "was loaded; nothing was saved. Here is its current state.")


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
