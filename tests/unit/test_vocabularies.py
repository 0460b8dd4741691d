"""The vocabulary registries (domain/vocabulary.py and its tables): unknown values raise,
the default reasons carry their polarity, a workspace's list derives from the default,
and the models' CHECK constraints and enums are built from the registries."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.reasons import DEFAULT_REASONS, workspace_reasons
from reviewapp.domain.target_types import TARGET_TYPES, control_label, part_noun, subject_types
from reviewapp.domain.verdicts import VERDICTS, VERIFIER_VERDICTS, verdict_for_rating
from reviewapp.domain.vocabulary import Registry, UnknownValue
from reviewapp.models import Feedback, Run, TargetType, target_model
from reviewapp.models import Message as MessageModel
from reviewapp.models import ToolCall as ToolCallModel


@pytest.mark.parametrize("registry", [TARGET_TYPES, VERDICTS, VERIFIER_VERDICTS, DEFAULT_REASONS])
@pytest.mark.parametrize("value", ["tool_span", "", None, 3, "USEFUL"])
def test_an_unknown_value_raises_naming_the_allowed_codes(registry, value):
    with pytest.raises(UnknownValue) as error:
        registry.get(value)
    assert error.value.allowed == registry.codes()
    assert ", ".join(registry.codes()) in str(error.value)
    assert value not in registry


def test_a_code_listed_twice_is_refused_at_import():
    with pytest.raises(ValueError, match="listed twice"):
        Registry("x", [VERDICTS.get("useful"), VERDICTS.get("useful")])


def test_the_tables_hold_the_spec_codes():
    """SPEC 6.1 / 6.2 / 5: the codes as stored, in the order everything lists them."""
    assert TARGET_TYPES.codes() == ("chat_message", "citation", "diagnostic_step", "diagnostic_report",
                                    "tool_call", "conversation_turn")
    assert VERDICTS.codes() == ("useful", "not_useful")
    assert VERIFIER_VERDICTS.codes() == ("PASS", "LOW_CONFID", "REJECT")
    assert DEFAULT_REASONS.codes() == ("incorrect", "incomplete", "citation", "unsafe", "other")
    assert subject_types() == ("citation", "tool_call")
    assert [TARGET_TYPES.label(c) for c in TARGET_TYPES.codes()] == [
        "the answer", "this citation", "this step", "the report", "this tool call", "this turn"]


def test_default_reasons_carry_their_polarity():
    negative_only = {r.code for r in DEFAULT_REASONS if r.polarity == ("negative",)}
    assert negative_only == {"incorrect", "incomplete", "citation", "unsafe"}
    other = DEFAULT_REASONS.get("other")
    assert other.allows("positive") and other.allows("negative")
    assert not DEFAULT_REASONS.get("unsafe").allows("positive")


def test_a_workspace_list_derives_from_the_default():
    assert workspace_reasons(None) is DEFAULT_REASONS
    assert workspace_reasons({"feedback_reasons": []}) is DEFAULT_REASONS
    assert workspace_reasons({"feedback_reasons": ["unsafe", 7]}) is DEFAULT_REASONS
    own = workspace_reasons({"feedback_reasons": [
        "unsafe", "slow_answer", {"code": "tone", "label": "Wrong tone", "polarity": "negative"},
        "slow_answer"]})
    assert own.codes() == ("unsafe", "slow_answer", "tone")
    assert own.get("unsafe") == DEFAULT_REASONS.get("unsafe")  # a default code keeps its row
    assert (own.label("slow_answer"), own.get("slow_answer").polarity) == (
        "Slow answer", ("positive", "negative"))
    assert (own.label("tone"), own.get("tone").allows("positive")) == ("Wrong tone", False)


def test_verdict_for_rating_refuses_what_no_verdict_stands_for():
    assert [verdict_for_rating(r) for r in ("positive", "negative")] == ["useful", "not_useful"]
    with pytest.raises(UnknownValue):
        verdict_for_rating("meh")


def test_models_derive_their_constraints_and_enums_from_the_registries():
    checks = {str(c.sqltext) for t in (Feedback.__table__, Run.__table__)
              for c in t.constraints if hasattr(c, "sqltext")}
    assert ("target_type IN ('chat_message', 'citation', 'diagnostic_step', 'diagnostic_report', "
            "'tool_call', 'conversation_turn')") in checks
    assert "feedback IS NULL OR feedback IN ('useful', 'not_useful')" in checks
    assert [m.value for m in TargetType] == list(TARGET_TYPES.codes())
    assert target_model("citation") is MessageModel
    assert target_model("conversation_turn") is MessageModel
    assert target_model("tool_call") is ToolCallModel
    with pytest.raises(UnknownValue):
        target_model("tool_span")


def test_a_registry_of_one_code_gives_valid_sql():
    # ``IN ('a',)`` is not SQL: a single code is written ``('a')``.
    one = Registry("x", [VERDICTS.get("useful")])
    assert (len(one), one.sql_in()) == (1, "('useful')")
    assert VERDICTS.sql_in() == "('useful', 'not_useful')"
    assert (len(VERDICTS), len(VERIFIER_VERDICTS), len(TARGET_TYPES)) == (2, 3, 6)


def test_the_verdicts_read_as_the_pages_show_them():
    # SPEC 6.2: a run's verdict useful / not useful; SPEC 5.2: the verifier's verdict is
    # imported as-is (the codes) and read in words (LOW_CONFID looked cut off).
    assert VERDICTS.choices() == (("useful", "Useful"), ("not_useful", "Not useful"))
    assert VERIFIER_VERDICTS.choices() == (
        ("PASS", "Pass"), ("LOW_CONFID", "Low confidence"), ("REJECT", "Reject"))


@pytest.mark.parametrize(("registry", "field"), [
    (VERDICTS, "feedback"), (VERIFIER_VERDICTS, "verdict"), (TARGET_TYPES, "target_type"),
    (DEFAULT_REASONS, "reason")])
def test_an_unknown_value_names_the_field_it_came_in(registry, field):
    """SPEC 6.1 / 6.2 / 5.2 field names: the 4xx names the field."""
    with pytest.raises(UnknownValue) as error:
        registry.get("nope")
    assert error.value.name == field
    assert str(error.value).startswith(f"{field}: 'nope' is not one of ")


def test_verdict_for_rating_names_the_rating_field():
    with pytest.raises(UnknownValue) as error:
        verdict_for_rating("meh")
    assert (error.value.name, error.value.allowed) == ("rating", ("positive", "negative"))


@pytest.mark.parametrize("registry", [TARGET_TYPES, VERDICTS, VERIFIER_VERDICTS, DEFAULT_REASONS])
def test_the_rows_of_a_registry_cannot_be_changed(registry):
    row = next(iter(registry))
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.label = "changed"


# SPEC 6.1, by hand: what each type rates (model, only assistant messages for the three
# message types), how the owner check reaches the run (the model's run column, the column
# target_id matches, the column the subject matches), what the subject names, whether a
# rating of it is answer-level (SPEC 6.2: the chat answer and the AIOps report), and the
# noun lists and filters show.
SPEC_6_1 = {
    # code: (model, role, parent, key, subject, subject_column, answer_level, noun)
    "chat_message": ("Message", "assistant", "run_pk", "id", None, None, True, "Answer"),
    "citation": ("Message", "assistant", "run_pk", "id", "citation id", None, False, "Citation"),
    "diagnostic_step": ("DiagnosticStep", None, "run_pk", "id", None, None, False, "Step"),
    "diagnostic_report": ("DiagnosticReport", None, "run_pk", "id", None, None, True, "Report"),
    "tool_call": ("ToolCall", None, "run_pk", "run_pk", "tool call id", "id", False, "Tool call"),
    "conversation_turn": ("Message", "assistant", "run_pk", "id", None, None, False, "Turn"),
}


def test_each_target_type_rates_what_spec_6_1_says():
    got = {r.code: (r.model, r.role, r.parent, r.key, r.subject, r.subject_column,
                    r.answer_level, r.noun) for r in TARGET_TYPES}
    assert got == SPEC_6_1
    for row in TARGET_TYPES:  # the columns named exist on the model
        columns = target_model(row.code).__table__.c
        assert {row.parent, row.key, row.subject_column or row.key} <= set(columns.keys())


def test_the_default_reasons_read_as_spec_6_1_names_them():
    assert DEFAULT_REASONS.choices() == (
        ("incorrect", "Incorrect"), ("incomplete", "Incomplete"), ("citation", "Citation"),
        ("unsafe", "Unsafe"), ("other", "Other"))


def test_a_workspace_row_takes_its_polarity_and_falls_back_to_a_label_from_its_code():
    own = workspace_reasons({"feedback_reasons": [
        {"code": "fast_answer", "polarity": "positive"},
        {"code": "any_thing", "label": "", "polarity": "either"},
        {"code": "bad_tone", "label": "Tone", "polarity": "negative"},
        {"code": "odd", "polarity": "sideways"}]})
    assert [(r.code, r.label, r.polarity) for r in own] == [
        ("fast_answer", "Fast answer", ("positive",)),
        ("any_thing", "Any thing", ("positive", "negative")),
        ("bad_tone", "Tone", ("negative",)),
        ("odd", "Odd", ("positive", "negative"))]  # an unknown polarity: either
    assert own.get("fast_answer").allows("positive") and not own.get("fast_answer").allows("negative")
    with pytest.raises(UnknownValue) as error:
        own.get("nope")
    assert error.value.name == "reason"


def test_label_or_code_reads_a_known_code_as_its_label_and_keeps_any_other():
    assert VERDICTS.label_or_code("not_useful") == "Not useful"
    assert VERDICTS.label_or_code("GENERAL") == "GENERAL"  # a code from an older vocabulary
    assert VERDICTS.label_or_code("") == ""
    assert VERDICTS.label_or_code(None) == ""


def test_a_reingest_keeps_the_rows_every_type_of_their_model_rates():
    """SPEC 10: a re-ingest keeps a message rated as the answer, a citation of it or a
    turn (and the earlier text of a message rated whole); a step rated as a step."""
    from reviewapp.domain.target_types import codes_of_model

    assert codes_of_model("Message") == ("chat_message", "citation", "conversation_turn")
    assert codes_of_model("Message", whole_row=True) == ("chat_message", "conversation_turn")
    assert codes_of_model("DiagnosticStep") == ("diagnostic_step",)
    assert codes_of_model("DiagnosticReport", whole_row=True) == ("diagnostic_report",)
    for model in ("ToolCall", "Mesage", ""):  # a tool call's target_id is its run, not its row
        with pytest.raises(UnknownValue) as error:
            codes_of_model(model)
        assert error.value.name == "model"


def test_a_table_of_one_behaviour_per_code_must_cover_the_registry_exactly():
    VERDICTS.check_covered({"useful": 1, "not_useful": 2}, "t")  # every code: fine
    with pytest.raises(ValueError) as missing:
        VERDICTS.check_covered({"useful": 1}, "verdict badges")
    assert str(missing.value) == "verdict badges: feedback codes missing ['not_useful'], unknown []"
    with pytest.raises(ValueError) as extra:
        VERDICTS.check_covered(["useful", "not_useful", "meh"], "t")
    assert str(extra.value) == "t: feedback codes missing [], unknown ['meh']"


def test_a_table_of_the_codes_that_differ_may_leave_codes_out_but_not_misspell_one():
    VERDICTS.check_covered({"useful": 1}, "t", every=False)
    VERDICTS.check_covered({}, "t", every=False)
    with pytest.raises(ValueError) as error:
        VERDICTS.check_covered({"useful": 1, "usefull": 2}, "owner checks", every=False)
    assert str(error.value) == "owner checks: feedback codes missing [], unknown ['usefull']"


def test_the_triage_state_enum_and_constraint_derive_from_the_state_machine():
    from reviewapp.models import TriageItem, TriageState

    assert [(m.name, m.value) for m in TriageState] == [
        ("NEW", "new"), ("TRIAGED", "triaged"), ("RESOLVED", "resolved"), ("WONT_FIX", "wont_fix")]
    assert TriageState.WONT_FIX == "wont_fix" and TriageState("triaged") is TriageState.TRIAGED
    checks = {str(c.sqltext) for c in TriageItem.__table__.constraints if hasattr(c, "sqltext")}
    assert "state IN ('new', 'triaged', 'resolved', 'wont_fix')" in checks


def test_the_web_forms_choices_are_the_vocabularies():
    """Issue 12: the runs filter's and the thumbs form's accepted values are the codes of
    the enums and registries the services check (a code added there is accepted here)."""
    from wtforms.validators import AnyOf

    from reviewapp.models import RunKind, RunStatus
    from reviewapp.web import forms

    assert [v for v, _ in forms.KIND_CHOICES] == [k.value for k in RunKind] == ["chat", "aiops"]
    assert [v for v, _ in forms.STATUS_CHOICES] == [s.value for s in RunStatus] == [
        "RUNNING", "SUCCESS", "FAILED"]
    assert forms.VERDICT_CHOICES[:-1] == VERIFIER_VERDICTS.choices()
    assert forms.FEEDBACK_CHOICES[:-1] == VERDICTS.choices()
    (rating,) = [v for v in forms.FeedbackForm.rating.kwargs["validators"] if isinstance(v, AnyOf)]
    assert list(rating.values) == ["positive", "negative"]


def test_the_triage_item_page_names_a_rated_part_by_its_type():
    """A subject-less type names one rated row from the row (issue 12); the two subject
    types name it by their subject instead, so they have no part label."""
    from types import SimpleNamespace

    part = SimpleNamespace(ordinal=3, name="check disk")
    labels = {r.code: r.part_label and r.part_label.format(part=part, noun=part_noun(r.code, "chat"))
              for r in TARGET_TYPES}
    assert labels == {
        "chat_message": "answer", "citation": None,
        "diagnostic_step": "step 3: check disk", "diagnostic_report": "report",
        "tool_call": None, "conversation_turn": "conversation turn (message 3)"}
    # An AIOps run's answer is its conclusion, as its run page heads it (new-user walk).
    assert (part_noun("chat_message", "aiops"), control_label("chat_message", "aiops")) \
        == ("conclusion", "the conclusion")
    assert control_label("chat_message", "chat") == "the answer"
