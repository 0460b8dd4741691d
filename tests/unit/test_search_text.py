"""The runs list's text search, its pure rules (SPEC 8; module doc of
``domain.search_text``): folding, short terms, the "other" text of a run, the rank and the
snippet around a match. Every expected value is worked out by hand from the text."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.search_text import (
    RANK_ANSWER,
    RANK_OTHER,
    RANK_QUERY,
    Snippet,
    arguments_text,
    call_text,
    fold,
    is_short,
    other_text,
    rank,
    search_term,
    snippet,
)

US = "\x1f"  # the unit separator between the fields of a run's "other" text


@pytest.mark.parametrize(("text", "folded"), [
    (None, ""), ("", ""), ("STRASSE", "strasse"), ("Straße", "strasse"), ("ÉTÉ", "été"),
    ("a\x1fB", "a b"), ("Run-42", "run-42"),
])
def test_fold_casefolds_and_turns_the_separator_into_a_space(text, folded):
    assert fold(text) == folded


@pytest.mark.parametrize(("q", "term"), [(None, ""), ("", ""), ("   ", ""), ("  Foo Bar ", "foo bar"),
                                         ("\tMAẞE\n", "masse")])
def test_search_term_is_the_stripped_folded_box_value(q, term):
    assert search_term(q) == term


@pytest.mark.parametrize(("term", "short"), [("", False), ("a", True), ("ab", True), ("abc", False),
                                             ("abcd", False)])
def test_a_term_under_three_characters_has_no_trigram(term, short):
    """A trigram index needs three characters: one or two are short, none is no term."""
    assert is_short(term) is short


@pytest.mark.parametrize(("arguments", "text"), [
    (None, ""), ({}, "{}"), ([], "[]"), (0, "0"), ({"q": "東京"}, '{"q": "東京"}'),
    ({"a": [1, "x"]}, '{"a": [1, "x"]}'),
])
def test_arguments_are_searched_as_their_json_text_with_non_ascii_kept(arguments, text):
    assert arguments_text(arguments) == text


def test_other_text_is_ids_then_each_call_folded_and_joined_by_the_separator():
    calls = [("Search", {"Q": "Ünïcode"}, "Found IT", None), (None, None, "", "Time\x1fOut")]
    assert other_text("Run-1", None, calls) == (
        "run-1" + US + "search" + US + '{"q": "ünïcode"}' + US + "found it" + US + "time out")
    assert other_text(None, "S-9", []) == "s-9"
    assert other_text(None, None, []) == ""


def test_a_call_text_is_its_name_arguments_result_and_error_folded_and_joined():
    """One tool call as the index holds it (issue 18): empty parts left out."""
    assert call_text("Search", {"Q": "Ünïcode"}, "Found IT", None) == (
        "search" + US + '{"q": "ünïcode"}' + US + "found it")
    assert call_text(None, None, "", "Time\x1fOut") == "time out"
    assert call_text("ls", [], None, "E") == "ls" + US + "[]" + US + "e"
    assert call_text(None, None, None, None) == ""


def test_the_question_ranks_above_the_answer_above_anything_else():
    assert rank("How do I RESET it?", "reset here", "reset") == RANK_QUERY
    assert rank("How do I restart?", "Then RESET it", "reset") == RANK_ANSWER
    assert rank("How?", None, "reset") == RANK_OTHER
    assert rank(None, None, "reset") == RANK_OTHER
    # Only their order counts (the list sorts by it); 0 is "no match" in the SQL twin.
    assert RANK_QUERY > RANK_ANSWER > RANK_OTHER > 0


def test_snippet_of_nothing_is_none():
    assert snippet("query", None, "fox") is None
    assert snippet("query", "", "fox") is None
    assert snippet("query", "a fox", "") is None
    assert snippet("query", "a dog", "fox") is None


def test_snippet_cuts_at_a_space_on_each_side():
    text = "The quick brown fox jumps over the lazy dog"
    # context 10: text[6:16] = "ick brown " and text[19:29] = " jumps ove", each cut back to
    # the nearest space so no word is shown in part.
    assert snippet("query", text, "fox", 10) == Snippet("query", "brown ", "fox", " jumps", True, True)


def test_snippet_at_the_start_and_end_of_a_text_is_not_cut():
    assert snippet("answer", "fox at start", "fox") == Snippet("answer", "", "fox", " at start", False, False)
    assert snippet("answer", "the fox", "fox") == Snippet("answer", "the ", "fox", "", False, False)


def test_snippet_keeps_a_side_that_starts_or_ends_with_a_space_whole():
    # context 3 before "fox" in "xx yy fox": "yy " has no inner space, so it stays.
    assert snippet("q", "xx yy fox", "fox", 3) == Snippet("q", "yy ", "fox", "", True, False)
    # " bb cc " starts with a space: nothing of a word is cut off, it is shown whole.
    assert snippet("q", "aaa bb cc fox", "fox", 7) == Snippet("q", "bb cc ", "fox", "", True, False)
    assert snippet("q", "fox aa bb cc", "fox", 7) == Snippet("q", "", "fox", " aa bb", False, True)


def test_snippet_shows_whitespace_runs_as_one_space():
    assert snippet("q", "a  b\n\nfox\t\tc", "fox") == Snippet("q", "a b ", "fox", " c", False, False)
    assert snippet("q", "x a  b y", "a  b") == Snippet("q", "x ", "a b", " y", False, False)
    assert snippet("q", "a b", " ") == Snippet("q", "a", " ", "b", False, False)


def test_snippet_maps_a_folded_match_back_to_the_original_characters():
    """"ß" folds to two characters ("ss"): the match and its context are cut from the
    original text, widened to whole characters."""
    text = "Straße und STRASSE"
    assert snippet("q", text, "strasse") == Snippet("q", "", "Straße", " und STRASSE", False, False)
    assert snippet("q", text, "und") == Snippet("q", "Straße ", "und", " STRASSE", False, False)
    assert snippet("q", "Maß", "ss") == Snippet("q", "Ma", "ß", "", False, False)
    assert snippet("q", "Maß", "as") == Snippet("q", "M", "aß", "", False, False)


def test_snippet_shows_sixty_characters_each_side_by_default_exactly():
    """Module doc: 60 characters on each side (a side without a space is shown whole)."""
    text = "a" * 100 + "fox" + "b" * 100
    assert snippet("q", text, "fox") == Snippet("q", "a" * 60, "fox", "b" * 60, True, True)


def test_snippet_cut_one_character_from_the_start():
    # context 6 in "xab cd fox": the excerpt starts at 1, so it is cut, back to "cd ".
    assert snippet("q", "xab cd fox", "fox", 6) == Snippet("q", "cd ", "fox", "", True, False)


def test_snippet_shows_sixty_characters_each_side_by_default():
    """Module doc: 60 characters on each side, then cut back to a space."""
    text = "w " * 50 + "fox" + " w" * 50
    # text[40:100] starts with "w": its first word is dropped, 29 whole words stay; text[103:163]
    # ends with "w" (" w" * 30): its last word is dropped, 29 stay.
    words = " ".join(["w"] * 29)
    assert snippet("q", text, "fox") == Snippet("q", words + " ", "fox", " " + words, True, True)


def test_a_snippet_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Snippet("q", "", "x", "", False, False).match = "y"


class _Session:
    def connection(self):
        return "connection"


@pytest.mark.parametrize(("found", "flags"), [
    (0, (False, False)), (1000, (False, False)), (1001, (True, False)), (20_000, (True, False)),
    (20_001, (True, True)),
])
def test_match_load_flags_more_than_1000_and_more_than_20000_matches(monkeypatch, found, flags):
    """The page says "More than 1,000 runs hold this term" (listed newest first); past
    20,000 the term is tested run by run; the count reads at most 20,001 entries."""
    from reviewapp.services import run_text

    asked = []

    def count_matches(connection, term, limit):
        asked.append((connection, term, limit))
        return found

    monkeypatch.setattr(run_text.search_index, "count_matches", count_matches)
    assert run_text.match_load(_Session(), "pool") == flags
    assert asked == [("connection", "pool", 20_001)]
    assert run_text.match_load(_Session(), "po") == (False, False)  # short: not counted
    assert len(asked) == 1


def test_the_page_notes_on_short_terms_and_many_matches():
    from reviewapp.services.runs import listing
    from reviewapp.services.runs.filters import RunFilters

    assert listing._search_note(RunFilters(q="ab")) == (
        "Terms shorter than 3 characters are looked for in the newest 10,000 runs of this list "
        "only; type 3 or more to search every run.")
    assert listing._search_note(RunFilters(q="pool", many_matches=True, sort=listing.RELEVANCE)) == (
        "More than 1,000 runs hold this term: newest first instead of best match.")
