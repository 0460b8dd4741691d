"""The triage state machine (SPEC 3, 8)."""

from __future__ import annotations

import pytest

from reviewapp.domain import triage_flow as flow

ALLOWED = {
    ("new", "triaged"), ("new", "resolved"), ("new", "wont_fix"),
    ("triaged", "resolved"), ("triaged", "wont_fix"),
    ("resolved", "triaged"), ("wont_fix", "triaged"),
}


@pytest.mark.parametrize("current", flow.STATES)
@pytest.mark.parametrize("target", flow.STATES)
def test_can_move_follows_the_table(current, target):
    assert flow.can_move(current, target) == ((current, target) in ALLOWED)


def test_reopen_is_labelled_reopen():
    assert flow.action_label("resolved", "triaged") == "Reopen"
    assert flow.action_label("wont_fix", "triaged") == "Reopen"
    assert flow.action_label("new", "triaged") == "Mark triaged"
