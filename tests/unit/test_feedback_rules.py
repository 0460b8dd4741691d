"""Pure feedback rules (SPEC 6.1, 6.2): text clean-up, limits, reasons, verdicts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewapp.config import Config
from reviewapp.domain.feedback import (
    COMMENT_MAX,
    CORRECTION_MAX,
    DEFAULT_FEEDBACK_REASONS,
    RATING_FIELDS,
    RATINGS,
    REASON_MAX,
    SUBJECT_MAX,
    TARGET_TYPES,
    VERDICTS,
    InvalidFeedback,
    answer_message_index,
    answer_text,
    check_choice,
    clean_text,
    has_answer_text,
    initials,
    latest_verdict,
    rating_state,
    reasons_from_settings,
    reviewer_badges,
    switched,
    verdict_for_rating,
)
from reviewapp.domain.reasons import workspace_reasons


@pytest.mark.parametrize("value", [None, "", " ", "\t\n ", "\u3000\u3000", "\u00a0"])
def test_clean_text_turns_blank_into_none(value):
    assert clean_text(value, "comment", 10) is None


def test_clean_text_counts_characters_not_bytes():
    cjk = "界" * 10  # 30 bytes in UTF-8
    emoji = "😀" * 10  # 40 bytes in UTF-8, 20 UTF-16 units
    assert clean_text(cjk, "comment", 10) == cjk
    assert clean_text(emoji, "comment", 10) == emoji
    with pytest.raises(InvalidFeedback) as error:
        clean_text(emoji + "x", "comment", 10)
    assert error.value.field == "comment" and "11" in error.value.message


def test_clean_text_keeps_free_text_verbatim_and_strips_codes():
    assert clean_text("  indented\n", "correction", 100) == "  indented\n"
    assert clean_text("  other ", "reason", 100, strip=True) == "other"


@pytest.mark.parametrize("value", [5, ["a"], {"a": 1}, True])
def test_clean_text_refuses_non_strings(value):
    with pytest.raises(InvalidFeedback):
        clean_text(value, "comment", 10)


@pytest.mark.parametrize("value", ["a\x00b", "a\ud800b"])
def test_clean_text_refuses_nul_and_lone_surrogates(value):
    with pytest.raises(InvalidFeedback):
        clean_text(value, "comment", 10)


def test_check_choice_names_the_allowed_values():
    assert check_choice("positive", "rating", ("positive", "negative")) == "positive"
    with pytest.raises(InvalidFeedback) as error:
        check_choice("meh", "feedback", ("useful", "not_useful"))
    assert error.value.field == "feedback" and "useful, not_useful" in error.value.message


def test_reasons_default_and_workspace_override():
    assert DEFAULT_FEEDBACK_REASONS == ("incorrect", "incomplete", "citation", "unsafe", "other")
    assert Config.FEEDBACK_REASONS == list(DEFAULT_FEEDBACK_REASONS)
    assert reasons_from_settings(None) == DEFAULT_FEEDBACK_REASONS
    assert reasons_from_settings({"feedback_reasons": []}) == DEFAULT_FEEDBACK_REASONS
    assert reasons_from_settings({"feedback_reasons": [1, 2]}) == DEFAULT_FEEDBACK_REASONS
    assert reasons_from_settings({"feedback_reasons": ["wrong", "slow"]}) == ("wrong", "slow")


def test_verdict_follows_the_latest_rating():
    t1 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    t2 = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)
    assert verdict_for_rating("positive") == "useful"
    assert verdict_for_rating("negative") == "not_useful"
    assert latest_verdict([]) is None
    assert latest_verdict([(t2, 1, "negative"), (t1, 2, "positive")]) == "not_useful"
    # Same time: the later row (higher id) wins.
    assert latest_verdict([(t1, 7, "negative"), (t1, 9, "positive")]) == "useful"


def test_rating_state_keeps_only_the_rating_fields():
    assert rating_state(None) is None
    assert rating_state({"rating": "positive", "id": 3, "comment": "ok"}) == {
        "rating": "positive", "reason": None, "comment": "ok", "correction": None}


@pytest.mark.parametrize("name, expected", [
    ("ada.lovelace", "AL"), ("grace", "GR"), ("x", "X"), ("jo_smith-2", "JS"), ("", "?"),
    ("李.雷", "李雷"),
])
def test_initials(name, expected):
    assert initials(name) == expected


def test_the_lengths_are_the_specs():
    # SPEC 6.1: subject <= 160, reason <= 80, comment <= 2,000, correction <= 4,000.
    assert (SUBJECT_MAX, REASON_MAX, COMMENT_MAX, CORRECTION_MAX) == (160, 80, 2000, 4000)


def test_clean_text_accepts_exactly_the_limit_and_says_how_far_over():
    assert clean_text("x" * 2000, "comment", 2000) == "x" * 2000
    with pytest.raises(InvalidFeedback) as error:
        clean_text("x" * 2001, "comment", 2000)
    assert str(error.value) == "comment: at most 2000 characters (got 2001)"
    # the limit applies to the stripped code, not to its padding
    assert clean_text("  " + "r" * 80 + "  ", "reason", 80, strip=True) == "r" * 80


@pytest.mark.parametrize("ch, ok", [
    ("\ud7ff", True), ("\ud800", False), ("\udbff", False), ("\udc00", False), ("\udfff", False),
    ("\ue000", True), ("\U0001f600", True),
])
def test_clean_text_surrogate_range_is_exactly_d800_to_dfff(ch, ok):
    if ok:
        assert clean_text("a" + ch, "comment", 10) == "a" + ch
    else:
        with pytest.raises(InvalidFeedback) as error:
            clean_text("a" + ch, "comment", 10)
        assert str(error.value) == (
            "comment: contains a lone surrogate; text must be valid Unicode")


def test_clean_text_messages_name_the_field():
    with pytest.raises(InvalidFeedback) as error:
        clean_text(5, "subject_id", 10)
    assert (error.value.field, error.value.message) == ("subject_id", "must be a string")
    with pytest.raises(InvalidFeedback) as error:
        clean_text("a\x00", "comment", 10)
    assert str(error.value) == "comment: must not contain NUL characters"
    with pytest.raises(InvalidFeedback) as error:
        check_choice(None, "rating", ("positive", "negative"))
    assert str(error.value) == "rating: must be one of positive, negative"


def test_latest_verdict_tie_break_does_not_depend_on_order():
    t1 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert latest_verdict([(t1, 9, "negative"), (t1, 7, "positive")]) == "not_useful"
    assert latest_verdict([(t1, 7, "positive"), (t1, 9, "negative")]) == "not_useful"
    assert latest_verdict(iter([(t1, 3, "positive")])) == "useful"


@pytest.mark.parametrize("messages, index", [
    ([], None),
    ([("assistant", "the answer"), ("user", "thanks")], 0),
    ([("user", "q"), ("assistant", "a1"), ("assistant", "a2")], 2),
    ([("user", "q"), ("assistant", "a1"), ("assistant", "  \n"), ("assistant", None)], 1),
    ([("user", "q"), ("tool", "result"), ("system", "s")], None),
])
def test_answer_message_is_the_last_assistant_message_with_text(messages, index):
    assert answer_message_index(messages) == index


def test_has_answer_text():
    assert [has_answer_text(t) for t in [None, "", " \t", "\u3000", "ok", " x "]] == [
        False, False, False, False, True, True]


@pytest.mark.parametrize("name, expected", [
    ("Xavier", "XA"), ("ada lovelace", "AL"), ("@ops", "OP"), ("a.b.c", "AB"), ("..", "?"),
    ("mary-jane@example.com", "MJ"), ("jo.", "JO"),
])
def test_initials_more_shapes(name, expected):
    assert initials(name) == expected


def test_vocabularies_for_validation():
    assert TARGET_TYPES[:4] == ("chat_message", "citation", "diagnostic_step",
                                "diagnostic_report")
    assert RATINGS == ("positive", "negative")
    assert VERDICTS == ("useful", "not_useful")
    assert RATING_FIELDS == ("rating", "reason", "comment", "correction")


@pytest.mark.parametrize("before, rating, expected_reason", [
    ({"rating": "negative", "reason": "incorrect"}, "positive", None),   # negative-only reason
    ({"rating": "negative", "reason": "other"}, "positive", "other"),    # "other": either
    ({"rating": "positive", "reason": "other"}, "negative", "other"),
    ({"rating": "negative", "reason": "gone"}, "positive", None),        # not in the list
    ({"rating": "negative", "reason": None}, "positive", None),
])
def test_a_switched_thumb_keeps_comment_and_correction_and_a_reason_that_fits(
        before, rating, expected_reason):
    kept = {"comment": "see the logs", "correction": "  indented fix"}
    assert switched({**before, **kept}, rating, workspace_reasons(None)) == {
        "rating": rating, "reason": expected_reason, **kept}


def test_answer_blanks_are_what_strip_removes():
    """The SQL trim and Python agree only if the blank set is exactly ``str.isspace``."""
    from reviewapp.domain.feedback import ANSWER_BLANKS

    assert sorted(ANSWER_BLANKS) == [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert len(set(ANSWER_BLANKS)) == len(ANSWER_BLANKS)


def test_answer_text_is_the_answer_field_else_the_last_assistant_message_with_text():
    """SPEC 7: the case holds the answer the run page shows (worked by hand)."""
    assert answer_text("The fix.", [("assistant", "Other")]) == "The fix."
    messages = [("user", "Why?"), ("assistant", "First"), ("assistant", "Last"), ("assistant", "  ")]
    assert answer_text(None, messages) == "Last"
    assert answer_text(" \u3000", [("assistant", "From the message")]) == "From the message"
    assert answer_text(None, [("user", "Only a question")]) == ""
    assert answer_text("", []) == ""


@pytest.mark.parametrize("names, expected", [
    # First new-user walk: 'reviewer' and 'reviewer2' both read "RE" beside one thumb.
    (["reviewer", "reviewer2"], ("reviewer", "reviewer2")),
    (["ada.lovelace", "bob"], ("AL", "BO")),
    (["ada.lovelace", "al", "bob"], ("ada.lovelace", "al", "BO")),
    (["a-very-long-username-indeed", "a.v"], ("a-very-long-…", "a.v")),
    ([], ()),
])
def test_reviewer_badges_are_initials_unless_two_names_share_them(names, expected):
    assert reviewer_badges(names) == expected
