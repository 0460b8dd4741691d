"""Pins for a survivor of the sampled mutation run of ``domain.redaction`` (session 13,
``tools/mutate.py redaction --every 50``): ``_bearer`` keeps a letters-only token after
"Bearer" as prose only when it reads as a capitalised word (a capital, then lower case);
a second capital makes it a credential."""

from __future__ import annotations

from reviewapp.services.secret_scan import redact_text


def test_a_bearer_token_with_a_second_capital_is_not_taken_for_a_word():
    # Mutant ``token[2:].islower()`` kept it: only the first two letters were looked past.
    assert redact_text("use Bearer ABcdefghijklm now") == "use Bearer [redacted] now"
    assert redact_text("use Bearer Abcdefghijklm now") == "use Bearer Abcdefghijklm now"
