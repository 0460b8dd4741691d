"""The hand-written fast path for tool events accepts only what the JSON Schema accepts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reviewapp.services import documents

values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                   st.text(max_size=3), st.just(" "), st.text(min_size=158, max_size=202),
                   st.sampled_from(["started", "completed", "failed", "delta", "done", "2026-05-01T12:00:00Z"]),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
keys = st.sampled_from(["id", "run_id", "event", "tool_name", "arguments", "output", "error", "timestamp",
                        "step_id", "retrieval", "extra"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, max_size=8))
def test_fast_path_never_accepts_what_the_schema_rejects(event):
    if documents._plainly_valid_event(event):
        assert documents._validator("tool_event").is_valid(event)


def test_fast_path_accepts_the_usual_event():
    event = {"id": "c1", "run_id": "r1", "event": "started", "tool_name": "kb", "arguments": {"q": 1},
             "timestamp": "2026-05-01T12:00:00Z"}
    assert documents._plainly_valid_event(event)
    assert documents._validator("tool_event").is_valid(event)


def _refusal(document):
    import pytest

    from reviewapp.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as refused:
        documents.check("run_document", document)
    return refused.value.field, refused.value.reason


def test_of_many_bad_items_the_first_in_document_order_is_named():
    """User walk: 300 tool calls each with an unknown field answered
    ``tool_calls[299].result: unknown field``, the last one (jsonschema's relevance
    prefers the greater path among siblings)."""
    calls = [{"id": f"c{i}", "tool_name": "kb", "result": "x"} for i in range(300)]
    assert _refusal({"query": "q", "tool_calls": calls}) == ("tool_calls[0].result", "unknown field")
    calls[:7] = [{"id": f"c{i}", "tool_name": "kb"} for i in range(7)]
    calls[9] = {"id": "c9"}  # later than tool_calls[7]: still the first bad one is named
    assert _refusal({"query": "q", "tool_calls": calls}) == ("tool_calls[7].result", "unknown field")


def test_first_bad_key_in_document_order_and_a_shallower_problem_first():
    """Siblings that are keys go by the document's own key order; a problem nearer the
    root is named before deeper ones, as before."""
    assert _refusal({"query": "q", "status": "NOPE", "kind": "NOPE"})[0] == "status"
    assert _refusal({"query": "q", "kind": "NOPE", "status": "NOPE"})[0] == "kind"
    calls = [{"id": "c1", "tool_name": "kb", "result": "x"}]
    assert _refusal({"tool_calls": calls, "status": "NOPE", "query": "q"})[0] == "status"
