"""Redaction rule by rule (SPEC 4): the edges each rule decides on, pinned with exact
outputs worked out by hand (what the mutation run of ``domain.redaction`` showed no test
held). Runs the pipeline the services use (``services.secret_scan``: the rules on RE2)."""

from __future__ import annotations

import pytest

from reviewapp.domain.redaction import is_secret_name
from reviewapp.services.secret_scan import redact_key, redact_text

REDACTED = "[redacted]"  # SPEC 4: "It says [redacted] in their place"
GH_TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # a GitHub personal token shape


# --- a name glued after "%": only a percent escape (two hex digits) is dropped -------------

@pytest.mark.parametrize(("text", "expected"), [
    ("%3Fkey=hunter2", "%3Fkey=[redacted]"),          # %3F is an escape: the name is "key"
    ("discount 50%key=hunter2", "discount 50%key=[redacted]"),  # "ke" is no escape
    ("100%pwd=hunter2", "100%pwd=[redacted]"),
    ("%dPwd=hunter2", "%dPwd=[redacted]"),            # "dP": d is hex, P is not
])
def test_only_a_percent_escape_is_taken_off_the_front_of_a_name(text, expected):
    assert redact_text(text) == expected


# --- names: every secret word, every public name, the short words on their own -------------
# Spelled in capitals glued together (no word break, no camelCase), so only the word at the
# end decides: "AWSACCESSKEY" is a secret as "...accesskey", not as the short word "key".

@pytest.mark.parametrize("name", [
    "DB_PASSWORD", "DBPASSWD", "GPGPASSPHRASE", "CLIENTSECRET", "AUTHTOKEN", "GCPCREDENTIALS",
    "DBCREDENTIAL", "MYAPIKEY", "AWSACCESSKEY", "AWSSECRETKEY", "SSHPRIVATEKEY", "AZUREACCOUNTKEY",
    "VAULTMASTERKEY", "PROXYAUTHORIZATION", "SETCOOKIE", "JSESSIONID", "PHPSESSID",
    "X-Amz-Signature", "X-Goog-Signature", "key", "pwd", "pass", "auth", "sig",
])
def test_a_name_ending_in_a_secret_word_names_a_secret(name):
    assert is_secret_name(name) is True
    assert redact_text(f"{name}=Zq8Wx7Ec6Rv5") == f"{name}=[redacted]"


@pytest.mark.parametrize("name", [
    "PUBLIC_KEY", "primary_key", "foreign_key", "sort_key", "partition_key", "hash_key",
    "range_key", "cache_key", "idempotency_key", "next_token", "page_token",
    "continuation_token", "pagination_token",
])
def test_a_public_name_that_ends_like_a_secret_is_none(name):
    assert is_secret_name(name) is False
    assert redact_text(f"{name}=Zq8Wx7Ec6Rv5") == f"{name}=Zq8Wx7Ec6Rv5"


def test_a_redacted_key_ends_in_a_tilde_and_16_hex_and_fills_its_limit_exactly():
    """Module doc of redaction: ``~`` and a 16-hex digest are appended; the limit (160, the
    schemas' id length) bounds the whole key, so a long id comes out at exactly 160."""
    long_id = "call_" + "x" * 300 + f" {GH_TOKEN}"
    bounded = redact_key(long_id, 160)
    assert len(bounded) == 160
    assert bounded[-17] == "~" and all(c in "0123456789abcdef" for c in bounded[-16:])
    assert bounded[:143] == long_id[:143]
    unbounded = redact_key(f"id-{GH_TOKEN}")
    assert unbounded[:len("id-[redacted]~")] == "id-[redacted]~" and len(unbounded) == len("id-[redacted]~") + 16


# --- a provider prefix in other casings: the body decides ----------------------------------

BODY = "c1D2e3F4g5H6i7J8k9L0m1N2o3P4q5R6s7T8"  # 36 base62 characters, as a GitHub token's


@pytest.mark.parametrize(("text", "expected"), [
    (f"GHP_{BODY}", REDACTED), (f"Ghp_{BODY}", REDACTED), (f"gHS_{BODY}", REDACTED),
    (f"GHO_{BODY}", REDACTED), (f"GHU_{BODY}", REDACTED), (f"GHR_{BODY}", REDACTED),
    (f"x GITHUB_PAT_11ABCDEFG0{BODY} y", f"x {REDACTED} y"),
    (f"GLPAT-{BODY[:20]}", REDACTED), (f"HF_{BODY[:30]}", REDACTED), (f"NPM_{BODY}", REDACTED),
    (f"GHP_{BODY.upper()}", f"GHP_{BODY.upper()}"),            # capitals and digits: no token body
    (f"GHS_{'A' * 40}", f"GHS_{'A' * 40}"),
    (f"GITHUB_PAT_{'X1' * 12}", f"GITHUB_PAT_{'X1' * 12}"),
    (f"GLPAT-{'Q' * 20}", f"GLPAT-{'Q' * 20}"), (f"HF_{'Z' * 30}", f"HF_{'Z' * 30}"),
    (f"NPM_{'N9' * 18}", f"NPM_{'N9' * 18}"),
    (f"GHP_{BODY[:35]}", f"GHP_{BODY[:35]}"),                  # one character short of a token
    ("GHP_SETTINGS_FILE and HF_HOME and NPM_CONFIG_PREFIX", "GHP_SETTINGS_FILE and HF_HOME and NPM_CONFIG_PREFIX"),
])
def test_a_provider_prefix_in_capitals_is_a_token_when_its_body_holds_a_lower_case_letter(text, expected):
    assert redact_text(text) == expected


def test_the_real_lower_case_prefix_is_a_token_whatever_its_body():
    assert redact_text(f"ghp_{BODY.upper()}") == REDACTED
    assert redact_text(f"hf_{'Z' * 30}") == REDACTED
