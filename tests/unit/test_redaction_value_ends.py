"""Where an unquoted value after a secret's name ends (SPEC 4; session 16, a new user's walk):
a password holding ``& ; , ' < >`` was cut at the first of them (``password: Tr0ub4dor&3``
stored as ``[redacted]&3``), while in structured text the same characters end the value
before the next field (``Server=x;Password=abc;Database=y``, ``?password=abc&user=x``,
``password: abc, user: bob``). Both sides come from ``tests/secret_corpus.py``; the
expected outputs there are worked out by hand."""

from __future__ import annotations

import pytest

from reviewapp.services.secret_scan import redact_text, redact_texts
from tests.secret_corpus import SECRETS, STRUCTURED_VALUES

from .redaction_cases import R, redacts_where_stored

test_the_fields_after_a_value_are_kept = redacts_where_stored(STRUCTURED_VALUES)

LEAKS = {name: (text, fragments) for name, text, fragments in SECRETS if name.startswith("password holding")}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_a_password_holding_a_separator_is_redacted_whole(name):
    text, _ = LEAKS[name]
    label = text.split("=")[0] + "=" if "=" in text else text.split(": ")[0] + ": "
    assert redact_text(text) == label + R
    assert redact_text(f"{text} next") == f"{label}{R} next"
    assert redact_texts([text, "x"]) == [label + R, "x"]  # ends at the NUL of one pass over many
