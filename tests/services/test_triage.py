"""Opening and auto-closing the run's triage item (SPEC 3 "triage item", 6.2)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from reviewapp.models import TriageItem
from reviewapp.services.triage import AUTO_RESOLVED_NOTE, close_item_on_useful, open_item_for_run


def test_open_is_idempotent(session, make):
    run = make.run(make.workspace(), status="SUCCESS")
    first = open_item_for_run(session, run, "not_useful")
    session.commit()
    second = open_item_for_run(session, run, "not_useful")
    session.commit()
    assert first.id == second.id and second.version == 1
    assert (second.state, second.opened_reason, second.workspace_id) == (
        "new", "not_useful", run.workspace_id)
    assert session.scalar(select(func.count()).select_from(TriageItem)) == 1
    assert run.status == "SUCCESS"


def test_resolved_item_is_reopened_and_wont_fix_is_kept(session, make):
    ws = make.workspace()
    resolved_run, ignored_run = make.run(ws), make.run(ws)
    resolved = open_item_for_run(session, resolved_run)
    ignored = open_item_for_run(session, ignored_run)
    resolved.state, resolved.note = "resolved", "fixed in agent v2"
    ignored.state = "wont_fix"
    session.commit()
    again = open_item_for_run(session, resolved_run)
    kept = open_item_for_run(session, ignored_run)
    session.commit()
    assert (again.state, again.resolved_at, again.note, again.version) == (
        "new", None, "fixed in agent v2", 2)
    assert (kept.state, kept.version) == ("wont_fix", 1)


def test_not_useful_upgrades_an_item_opened_for_a_part(session, make):
    run = make.run(make.workspace())
    item = open_item_for_run(session, run, "negative_target")
    session.commit()
    item = open_item_for_run(session, run, "not_useful")
    assert (item.opened_reason, item.version) == ("not_useful", 2)


@pytest.mark.parametrize("state", ["new", "triaged"])
def test_useful_resolves_an_open_not_useful_item_with_a_note(session, make, state):
    run = make.run(make.workspace())
    item = open_item_for_run(session, run)
    item.state, item.note = state, "looking at it"
    session.commit()
    closed = close_item_on_useful(session, run)
    session.commit()
    assert closed.state == "resolved" and closed.resolved_at is not None
    assert closed.note == f"looking at it\n{AUTO_RESOLVED_NOTE}"


def test_useful_leaves_part_items_and_lead_decisions_alone(session, make):
    ws = make.workspace()
    part_run, wont_run, bare_run = make.run(ws), make.run(ws), make.run(ws)
    open_item_for_run(session, part_run, "negative_target")
    open_item_for_run(session, wont_run).state = "wont_fix"
    session.commit()
    assert close_item_on_useful(session, part_run).state == "new"
    assert close_item_on_useful(session, wont_run).state == "wont_fix"
    assert close_item_on_useful(session, bare_run) is None
