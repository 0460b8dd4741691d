"""Pins for survivors of the sampled mutation runs of ``domain.redaction``
(``tools/mutate.py redaction --every 50`` in session 13, then ``--every 27``).

``_bearer`` keeps a letters-only token after "Bearer" as prose only when it reads as a
capitalised word (a capital, then lower case); a second capital makes it a credential.

``_assignment`` reads a bare word after ``pwd:`` followed by more words as the message of
the shell's ``pwd`` ("pwd: command not found"), unless the word is a well-known password."""

from __future__ import annotations

from reviewapp.services.secret_scan import redact_text


def test_a_bearer_token_with_a_second_capital_is_not_taken_for_a_word():
    # Mutant ``token[2:].islower()`` kept it: only the first two letters were looked past.
    assert redact_text("use Bearer ABcdefghijklm now") == "use Bearer [redacted] now"
    assert redact_text("use Bearer Abcdefghijklm now") == "use Bearer Abcdefghijklm now"


def test_a_well_known_password_after_pwd_is_redacted_when_words_follow():
    # Mutant ``_squash(name) in ("pass", "pwdXX")`` kept it: with words after it, "letmein"
    # read as the first word of a pwd message. "pwd: letmein" alone on its line is a value
    # either way (tests/unit/test_redaction_leaks.py); "login" is no well-known password.
    assert redact_text("pwd: letmein then ssh in") == "pwd: [redacted] then ssh in"
    assert redact_text("pwd: login failed") == "pwd: login failed"
