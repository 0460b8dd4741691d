"""The set-up the redaction tables share (test_redaction_leaks.py, test_redaction_reported.py):
each helper turns a table into one parametrised test, so a section of those files is its
table. Texts run through the pipeline the services use (``services.secret_scan``: the
domain rules on RE2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from reviewapp.services.secret_scan import redact_run_document, redact_text

R = "[redacted]"  # SPEC 4: "It says [redacted] in their place"


def stored_query_and_result(text: str) -> tuple[str, str]:
    """``text`` as a run's query and as a tool call's result, after redaction."""
    doc = redact_run_document({"run_id": "r1", "query": text, "tool_calls": [
        {"id": "c1", "tool_name": "shell", "output": text}]})
    return doc["query"], doc["tool_calls"][0]["output"]


def redacts_where_stored(cases: Sequence[tuple[str, str]]) -> Callable[[str, str], None]:
    """A test over ``(text, expected)``: stored as a run's query and as a tool call's
    result, ``text`` reads ``expected`` in both."""
    @pytest.mark.parametrize(("text", "expected"), cases)
    def test(text: str, expected: str) -> None:
        assert stored_query_and_result(text) == (expected, expected)

    return test


def redacts(cases: Sequence[tuple[str, str]]) -> Callable[[str, str], None]:
    """A test over ``(text, expected)``: ``redact_text(text)`` is ``expected``."""
    @pytest.mark.parametrize(("text", "expected"), cases)
    def test(text: str, expected: str) -> None:
        assert redact_text(text) == expected

    return test


def keeps(texts: Sequence[str]) -> Callable[[str], None]:
    """A test over ``text``: ``redact_text(text)`` is ``text``, unchanged."""
    @pytest.mark.parametrize("text", texts)
    def test(text: str) -> None:
        assert redact_text(text) == text

    return test
