"""Redaction rule by rule (SPEC 4): the edges each rule decides on, pinned with exact
outputs worked out by hand (what the mutation run of ``domain.redaction`` showed no test
held). Runs the pipeline the services use (``services.secret_scan``: the rules on RE2)."""

from __future__ import annotations

import pytest

from reviewapp.services.secret_scan import redact_text

REDACTED = "[redacted]"  # SPEC 4: "It says [redacted] in their place"


# --- a name glued after "%": only a percent escape (two hex digits) is dropped -------------

@pytest.mark.parametrize(("text", "expected"), [
    ("%3Fkey=hunter2", "%3Fkey=[redacted]"),          # %3F is an escape: the name is "key"
    ("discount 50%key=hunter2", "discount 50%key=[redacted]"),  # "ke" is no escape
    ("100%pwd=hunter2", "100%pwd=[redacted]"),
    ("%dPwd=hunter2", "%dPwd=[redacted]"),            # "dP": d is hex, P is not
])
def test_only_a_percent_escape_is_taken_off_the_front_of_a_name(text, expected):
    assert redact_text(text) == expected
