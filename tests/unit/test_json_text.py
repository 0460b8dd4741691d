"""Checks on decoded JSON before it is stored (domain/json_text.py, SPEC 10): a lone
surrogate or NUL is refused naming the field path, a number that is not finite too, and
nesting is bounded at 64 containers; CJK, emoji and RTL text pass."""

from __future__ import annotations

import pytest

from reviewapp.domain.json_text import find_problem, join_path, short_path

NUL = "contains a NUL character, which cannot be stored"
SURROGATE = "contains a lone surrogate; text must be valid Unicode"
INFINITE = "number out of range (not finite)"


def _nested(levels: int, leaf=1, make=lambda inner: [inner]):
    value = leaf
    for _ in range(levels):
        value = make(value)
    return value


def test_join_path_writes_keys_and_indexes():
    assert join_path("a", 0) == "a[0]"
    assert join_path("a", "b") == "a.b"
    assert join_path("", "b") == "b"
    assert join_path("", 3) == "[3]"


@pytest.mark.parametrize("fine", [
    None, 0, 1.5, -2, True, "", "ascii", "数据库 🚀 עברית", {"a": [1, "ü", {"b": None}]}, [],
    {"\U0001F600": "emoji key"}, _nested(64), _nested(64, make=lambda inner: {"k": inner})])
def test_valid_documents_have_no_problem(fine):
    assert find_problem(fine) is None


def test_the_first_problem_is_named_with_its_path():
    doc = {"run_id": "r", "messages": [{"content": "ok"}, {"content": "bad\x00"}],
           "later": "\ud800"}
    assert find_problem(doc) == ("messages[1].content", NUL)
    assert find_problem({"a": "ok", "b": ["x", "lone \udfff"]}) == ("b[1]", SURROGATE)
    assert find_problem({"score": float("inf")}) == ("score", INFINITE)
    assert find_problem([1.0, float("-inf")]) == ("[1]", INFINITE)
    assert find_problem({"x": float("nan")}) == ("x", INFINITE)


def test_problems_at_the_root_are_named_dollar():
    assert find_problem("a\x00b") == ("$", NUL)
    assert find_problem("\ud83d") == ("$", SURROGATE)
    assert find_problem(float("inf")) == ("$", INFINITE)


def test_a_bad_key_is_named_after_its_parent():
    assert find_problem({"meta": {"ok": 1, "b\x00": 2}}) == ("meta.<key>", NUL)
    assert find_problem({"\udc00": 1}) == ("<key>", SURROGATE)


def test_the_first_in_document_order_is_reported():
    assert find_problem(["\x00", "\udc00"]) == ("[0]", NUL)
    assert find_problem({"a": "\udc00", "b": "\x00"}) == ("a", SURROGATE)
    assert find_problem([[1, 2, "x\x00"], "\x00"]) == ("[0][2]", NUL)


def test_nesting_deeper_than_64_containers_is_refused():
    # 65 lists: the innermost is the 65th container, at path [0] x 64.
    assert find_problem(_nested(65)) == ("[0]" * 64, "nested more than 64 levels deep")
    deep_dicts = _nested(65, make=lambda inner: {"k": inner})
    assert find_problem(deep_dicts) == (".".join(["k"] * 64), "nested more than 64 levels deep")
    assert find_problem(_nested(4), max_depth=3) == ("[0][0][0]", "nested more than 3 levels deep")
    assert find_problem(_nested(3), max_depth=3) is None
    assert find_problem({"a": [[], [[["x"]]]]}, max_depth=4) == ("a[1][0][0]",
                                                                "nested more than 4 levels deep")


def test_without_the_text_check_only_depth_counts():
    assert find_problem({"a": "\x00", "b": "\udc00", "c": float("inf")}, check_text=False) is None
    assert find_problem({"\x00": 1}, check_text=False) is None
    assert find_problem(_nested(65), check_text=False) == ("[0]" * 64,
                                                           "nested more than 64 levels deep")


def test_text_that_only_looks_like_a_nul_escape_is_fine():
    assert find_problem({"a": "\\u0000 is how JSON writes NUL"}) is None


def test_a_root_container_beyond_the_depth_is_named_dollar():
    assert find_problem([1], max_depth=0) == ("$", "nested more than 0 levels deep")
    assert find_problem({"a": 1}, max_depth=0) == ("$", "nested more than 0 levels deep")


def test_short_path_keeps_the_ends_and_counts_the_middle():
    assert short_path("a.b[0].c") == "a.b[0].c"
    ten = "a.b.c.d.e.f.g.h.i.j"  # 10 segments: kept whole (6 + 2 + 2)
    assert short_path(ten) == ten
    assert short_path(ten + ".k") == "a.b.c.d.e.f…(3 levels)…j.k"
    assert short_path("[0]" * 64) == "[0]" * 6 + "…(56 levels)…" + "[0]" * 2
    assert short_path("x.y" + "[1].z" * 8, head=2, tail=1) == "x.y…(15 levels)…z"
