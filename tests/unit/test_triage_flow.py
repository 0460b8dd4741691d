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


def test_the_states_are_the_four_of_the_spec_in_order():
    assert flow.STATES == ("new", "triaged", "resolved", "wont_fix")
    assert (flow.OPEN_STATES, flow.CLOSED_STATES) == (("new", "triaged"), ("resolved", "wont_fix"))
    assert flow.OPENED_REASONS == ("not_useful", "negative_target")


def test_state_labels():
    assert flow.STATE_LABELS == {
        "new": "New", "triaged": "Triaged", "resolved": "Resolved", "wont_fix": "Won't fix"}


@pytest.mark.parametrize("current, target, label", [
    ("new", "triaged", "Mark triaged"), ("new", "resolved", "Resolve"),
    ("new", "wont_fix", "Won't fix"), ("triaged", "resolved", "Resolve"),
    ("triaged", "wont_fix", "Won't fix"), ("resolved", "triaged", "Reopen"),
    ("wont_fix", "triaged", "Reopen"), ("triaged", "triaged", "Mark triaged"),
    ("new", "archived", "archived"),
])
def test_every_button_label(current, target, label):
    assert flow.action_label(current, target) == label


def test_an_unknown_state_has_no_move():
    assert not flow.can_move("archived", "triaged")
    assert not flow.can_move("new", "new")


def test_history_actions_and_their_labels():
    # stored in triage_event.action: the codes are data, the labels what the page shows
    assert flow.EVENT_LABELS == {
        "auto_resolved": "Resolved automatically", "auto_reopened": "Reopened automatically",
        "moved": "State changed", "assigned": "Assignee changed",
        "categorised": "Fault category changed", "note": "Note changed"}
    assert (flow.EVENT_AUTO_RESOLVED, flow.EVENT_AUTO_REOPENED, flow.EVENT_MOVED,
            flow.EVENT_ASSIGNED, flow.EVENT_CATEGORISED, flow.EVENT_NOTE) == (
        "auto_resolved", "auto_reopened", "moved", "assigned", "categorised", "note")


def test_the_sentences_of_automatic_changes():
    assert flow.RESOLVED_USEFUL == "the run's verdict became useful"
    assert flow.RESOLVED_NO_NEGATIVE == (
        "the run's last negative rating was withdrawn, so nothing is left to triage")
    assert flow.REOPENED_NOT_USEFUL == "the run was judged not useful again"


@pytest.mark.parametrize("current, target, label", [
    ("new", "triaged", "Triaged"), ("new", "resolved", "Resolve"), ("new", "wont_fix", "Won't fix"),
    ("triaged", "resolved", "Resolve"), ("resolved", "triaged", "Reopen"),
    ("wont_fix", "triaged", "Reopen"),
])
def test_the_compact_rows_short_button_labels(current, target, label):
    assert flow.action_label(current, target, short=True) == label


def test_state_choices_and_move_targets_for_the_pages():
    assert flow.state_choices() == [("new", "New"), ("triaged", "Triaged"),
                                    ("resolved", "Resolved"), ("wont_fix", "Won't fix")]
    assert flow.MOVE_TARGETS == ("triaged", "resolved", "wont_fix")  # nothing moves back to new


def test_why_an_item_was_opened_is_one_registry():
    from reviewapp.domain.vocabulary import UnknownValue

    assert flow.OPENED_REASONS == flow.OPENED.codes() == ("not_useful", "negative_target")
    assert [(o.label, o.row_note) for o in flow.OPENED] == [
        ("not useful verdict", None),
        ("negative rating of a part", "opened because a part was rated not helpful")]
    # how the item page says why (templates/triage/detail.html shows ``why``)
    assert [o.why for o in flow.OPENED] == ["the run was judged not useful",
                                            "a part of the run was rated not helpful"]
    with pytest.raises(UnknownValue) as raised:
        flow.OPENED.get("negative")
    assert str(raised.value) == "opened: 'negative' is not one of not_useful, negative_target"


def test_an_opened_reason_cannot_be_changed():
    # one registry serves every request: a reason changed by one page would change them all
    import dataclasses

    reason = flow.OPENED.get("not_useful")
    with pytest.raises(dataclasses.FrozenInstanceError):
        reason.label = "x"
    assert reason.label == "not useful verdict"


def test_the_dispute_note_says_what_the_item_waits_for():
    """The history note of an item resolved because its run became disputed (pinned:
    the mutation run of triage_flow found the wording unpinned by the unit tests)."""
    assert flow.RESOLVED_DISPUTED == "the run is disputed: waiting for a lead's decision"


def test_every_automatic_resolve_carries_a_label_from_one_registry():
    """What the state badge adds after "Resolved — " (second new-user walk): the item the
    app resolved because its run became disputed reads "run disputed"; the other automatic
    resolves (useful verdict, last negative rating withdrawn) read a bare "Resolved" before,
    and now say why too, each from the one registry of automatic reasons."""
    from reviewapp.domain.vocabulary import UnknownValue

    assert [(r.code, r.label) for r in flow.AUTO_RESOLVE_REASONS] == [
        ("the run's verdict became useful", "run judged useful"),
        ("the run's last negative rating was withdrawn, so nothing is left to triage", "no negative rating left"),
        ("the run is disputed: waiting for a lead's decision", "run disputed")]
    assert flow.AUTO_RESOLVED_NOTES == {flow.RESOLVED_USEFUL: "run judged useful",
                                        flow.RESOLVED_NO_NEGATIVE: "no negative rating left",
                                        flow.RESOLVED_DISPUTED: "run disputed"}
    with pytest.raises(UnknownValue):
        flow.AUTO_RESOLVE_REASONS.get("the moon is full")
    assert flow.STATE_EVENTS == (flow.EVENT_MOVED, flow.EVENT_AUTO_RESOLVED, flow.EVENT_AUTO_REOPENED)
