"""Leaks a new user reported in session 11 (SPEC 4), each sent as a run's query or a tool
result: a bare ``Bearer`` credential (no ``Authorization:`` in front), ``pwd: value``,
Chinese secret names (密码 / 密钥 / 口令 / 令牌), a CLI password flag followed by a blank
(``mysql -p hunter2``), and AWS secret access keys (named forms only: a bare 40-character
key is not redacted, see the last section). Each leak sits beside the ordinary text that
must stay as it is. Outputs are worked out by hand; runs the pipeline the services use
(``services.secret_scan``: the domain rules on RE2)."""

from __future__ import annotations

import pytest

from reviewapp.services.secret_scan import redact_run_document, redact_text

R = "[redacted]"  # SPEC 4: "It says [redacted] in their place"


def _stored_query_and_result(text: str) -> tuple[str, str]:
    """``text`` as a run's query and as a tool call's result, after redaction."""
    doc = redact_run_document({"run_id": "r1", "query": text, "tool_calls": [
        {"id": "c1", "tool_name": "shell", "output": text}]})
    return doc["query"], doc["tool_calls"][0]["output"]


# --- 1. a bare Bearer credential ------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("Bearer abc.def.ghi", f"Bearer {R}"),                 # three dotted parts, 11 characters
    ("Bearer abcdefghijkl", f"Bearer {R}"),                # 12 letters after the scheme's casing
    ("BEARER abcdefghijkl", f"BEARER {R}"),
    ("curl -H 'Bearer abc.def.ghi' https://api", f"curl -H 'Bearer {R}' https://api"),
    ("it sent Bearer abc.def.ghi.", f"it sent Bearer {R}."),  # the full stop ends the sentence
    ("bearer ab-cd_ef", f"bearer {R}"),                    # 8 characters, not only letters
    ("bearer ab-cd_e", "bearer ab-cd_e"),                  # 7: too short to tell
])
def test_a_bare_bearer_credential_is_redacted(text, expected):
    assert _stored_query_and_result(text) == (expected, expected)


@pytest.mark.parametrize("text", [
    "the bearer of this letter",
    "uses Bearer authentication.",                        # a full stop is no part of a token
    "Bearer Authentication is configured; Bearer authorization, Bearer authorisation",
    "Bearer tokens are short-lived; bearer instruments; the standard bearer",
    "bearer abcdefghijkl",                                # lower case: a word (24 letters: a token)
    "Bearer Responsibilities",                            # a capitalised word: a title
    "Bearer e.g. a JWT; Bearer $TOKEN; Bearer <token>",
])
def test_bearer_in_prose_stays(text):
    assert redact_text(text) == text


# --- 2. pwd: value -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("pwd: hunter2", f"pwd: {R}"),
    ("PWD: hunter2", f"PWD: {R}"),
    ("user: admin, pwd: 123456", f"user: admin, pwd: {R}"),
    ("pwd: s3cr3t!", f"pwd: {R}"),
])
def test_pwd_colon_value_is_redacted(text, expected):
    assert _stored_query_and_result(text) == (expected, expected)


@pytest.mark.parametrize("text", [
    "pwd: /home/user",                    # the working directory
    "pwd: ~/src", "pwd: ./build", "pwd: ../up", "PWD: C:/Users/me", "PWD: C:\\Users\\me",
    "pwd: %2Fhome%2Fuser",
    "bash: pwd: command not found",       # the command's own messages: words, not values
    "pwd: too many arguments",
    "pwd: -x: invalid option",
    "pwd: usage: pwd [-LP]",
])
def test_pwd_colon_path_or_message_stays(text):
    assert redact_text(text) == text


# --- 5. AWS secret access keys --------------------------------------------------------------

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example shape


@pytest.mark.parametrize(("text", "expected"), [
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {R}"),
    (f"[default]\naws_secret_access_key={AWS_SECRET}\n", f"[default]\naws_secret_access_key={R}\n"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", f"AWS_SECRET_ACCESS_KEY={R}"),
    (f'export AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', f'export AWS_SECRET_ACCESS_KEY="{R}"'),
    (f'"SecretAccessKey": "{AWS_SECRET}"', f'"SecretAccessKey": "{R}"'),
    (f'{{"Credentials": {{"SecretAccessKey": "{AWS_SECRET}"}}}}', None),
    (f"<SecretAccessKey>{AWS_SECRET}</SecretAccessKey>", f"<SecretAccessKey>{R}</SecretAccessKey>"),
    (f"SecretAccessKey: {AWS_SECRET}", f"SecretAccessKey: {R}"),
    (f"aws configure set aws_secret_access_key {AWS_SECRET}", f"aws configure set aws_secret_access_key {R}"),
    (f"--aws-secret-access-key {AWS_SECRET}", f"--aws-secret-access-key {R}"),
    (f'"secretAccessKey":"{AWS_SECRET}"', f'"secretAccessKey":"{R}"'),
])
def test_a_named_aws_secret_access_key_is_redacted(text, expected):
    query, result = _stored_query_and_result(text)
    assert AWS_SECRET not in query and AWS_SECRET[:20] not in result and "EXAMPLEKEY" not in result
    if expected is not None:
        assert query == result == expected


@pytest.mark.parametrize("text", [
    "9fceb02d0ae598e95dc970b74767f19372d61af8",          # a git commit: 40 hex
    "etag W2tvbmdxZW5nYmFvZ2FvL3JlcG9ydC0yMDI0LnBkZg",   # base64 of a path
    "sha1 2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
])
def test_a_bare_40_character_run_without_a_name_stays(text):
    """Decided, not redacted: with no name, an AWS secret access key is 40 characters of
    base64, like a git hash (40 hex), a SHA-1 in base64, an etag, a slice of any base64
    blob. A rule for the bare shape would redact those everywhere; a named key (above) and
    the key id beside it (``AKIA...``, a span rule) are redacted."""
    assert redact_text(text) == text
