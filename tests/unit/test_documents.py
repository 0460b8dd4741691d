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
