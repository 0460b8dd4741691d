"""The search excerpt of the runs list (issue 17, item 15): escaped, match marked."""

from __future__ import annotations

from reviewapp.web.filters import highlight


def test_marks_the_first_match_case_insensitively_and_escapes():
    got = highlight("<b>Pool</b> EXHAUSTED on db-1", "exhausted")
    assert str(got) == "&lt;b&gt;Pool&lt;/b&gt; <mark>EXHAUSTED</mark> on db-1"


def test_cuts_around_the_match_and_says_so():
    text = "a" * 300 + "needle" + "b" * 300
    got = str(highlight(text, "needle", width=26))
    assert got == "…" + "a" * 10 + "<mark>needle</mark>" + "b" * 10 + "…"


def test_no_match_or_no_needle_is_none():
    assert highlight("text", "zzz") is None and highlight("text", "  ") is None
    assert highlight(None, "x") is None


def test_soft_wrap_escapes_and_offers_breaks_between_the_words_of_an_identifier():
    from reviewapp.web.filters import soft_wrap

    assert str(soft_wrap("get_reservation_details")) == "get_<wbr>reservation_<wbr>details"
    assert str(soft_wrap("<b>_x.y/z_")) == "&lt;b&gt;_<wbr>x.<wbr>y/<wbr>z_"
    assert str(soft_wrap("plain")) == "plain"
