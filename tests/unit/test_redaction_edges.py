"""Redaction, the decisions each handler takes at its edges (SPEC 4, module doc of
``domain.redaction``), with exact outputs worked out by hand: what a mutation run of
``domain.redaction`` (issue 20) showed no test held. Limits come from the schemas and the
module doc, never from the code's constants. Runs the pipeline the services use
(``services.secret_scan``: the domain rules on RE2)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from pathlib import Path

import pytest

from reviewapp.domain import redaction
from reviewapp.domain.redaction import Redactor, is_secret_name
from reviewapp.services import secret_scan
from reviewapp.services.secret_scan import (
    redact,
    redact_run_document,
    redact_text,
    redact_tool_event,
)
from tests.secret_corpus import PEM_PKCS8_BODY

R = "[redacted]"  # SPEC 4: "It says [redacted] in their place"
SCHEMAS = Path(__file__).resolve().parents[2] / "reviewapp" / "schemas"
_DOC = json.loads((SCHEMAS / "run_document.schema.json").read_text())
_EVENT = json.loads((SCHEMAS / "tool_event.schema.json").read_text())
OUTCOME_MAX = _DOC["properties"]["external_outcome"]["maxLength"]  # 32
STEP_NAME_MAX = _DOC["$defs"]["step"]["properties"]["name"]["maxLength"]  # 300
STEP_STATUS_MAX = _DOC["$defs"]["step"]["properties"]["status"]["maxLength"]  # 32
ID_MAX = _DOC["$defs"]["id"]["maxLength"]  # 160
TOOL_NAME_MAX = _EVENT["properties"]["tool_name"]["maxLength"]  # 200
GH_TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # a GitHub personal token shape


def test_the_limits_read_from_the_schemas_are_the_documented_ones():
    assert (OUTCOME_MAX, STEP_NAME_MAX, STEP_STATUS_MAX, ID_MAX, TOOL_NAME_MAX) == (32, 300, 32, 160, 200)


# --- a password-looking value: 8+ characters, a letter and a digit, not a path -------------

@pytest.mark.parametrize(("text", "expected"), [
    ("token abcd1234", f"token {R}"),          # 8 characters, letters and digits
    ("token abc1234", "token abc1234"),        # 7: too short
    ("token /abcd1234", "token /abcd1234"),    # a path
    ("token ~abcd1234", "token ~abcd1234"),    # a home path
    ("token 12345678", "token 12345678"),      # no letter
    ("token $TOKEN_1", "token $TOKEN_1"),      # a variable reference
    ("token ${TOKEN_1}", "token ${TOKEN_1}"),
    ("pass abcd1234", f"pass {R}"),            # "pass" and "pwd" count as secret words here
    ("pwd abcd1234", f"pwd {R}"),
    ("key abcd1234", "key abcd1234"),          # other short words do not ("key rotation")
    ("auth abcd1234", "auth abcd1234"),
    ("u:abcd1234@host", f"u:{R}@host"),        # userinfo without a scheme: same value rule
    ("u:abcdefghij@host", "u:abcdefghij@host"),  # no digit
    ("u:XYLOPHONES@host", "u:XYLOPHONES@host"),  # capitals only, no digit
    ("token Xylophones", "token Xylophones"),
    ("u:12345678@host", "u:12345678@host"),    # no letter
    ("u:abc1234@host", "u:abc1234@host"),      # 7 characters
])
def test_a_value_after_a_blank_or_in_userinfo_must_look_like_a_password(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "u:abcd1234@sha256", "u:abcd1234@Sha1", "u:abcd1234@md5x", "u:abcd1234@blake2b",
    "mailto:abcd1234@example.com", "MAILTO:abcd1234@example.com",
])
def test_userinfo_before_a_digest_algorithm_or_after_mailto_is_kept(text):
    assert redact_text(text) == text


# --- bearer / basic / -u user:password -----------------------------------------------------

def test_a_bare_bearer_word_of_23_letters_is_prose_and_24_letters_or_a_digit_a_token():
    letters = "abcdefghijklmnopqrstuvwx"
    assert redact_text(f"bearer {letters[:23]}") == f"bearer {letters[:23]}"
    assert redact_text(f"bearer {letters}") == f"bearer {R}"
    assert redact_text("bearer abcdefghijk1") == f"bearer {R}"  # 12 characters, one a digit


@pytest.mark.parametrize(("text", "expected"), [
    ("sent basic dXNlcjpwdw== here", f"sent basic {R} here"),   # base64("user:pw")
    ("sent basic dXNlcjpwdw here", f"sent basic {R} here"),     # the same, padding lost
    ("sent basic dXNlcnBhc3N3b3Jk here", "sent basic dXNlcnBhc3N3b3Jk here"),  # "userpassword": no colon
    ("sent basic abcdefghi here", "sent basic abcdefghi here"),  # no base64 at all
])
def test_basic_credentials_are_base64_of_a_pair(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("curl -u 1000:1000 x", "curl -u 1000:1000 x"),  # uid:gid
    ("curl -u 1000:abc x", f"curl -u 1000:{R} x"),
    ("curl -u abc:1000 x", f"curl -u abc:{R} x"),
])
def test_a_user_option_of_two_numbers_is_a_uid_and_gid(text, expected):
    assert redact_text(text) == expected


# --- assignments: the value's quoting, the short words, signatures, the working directory ---

@pytest.mark.parametrize(("text", "expected"), [
    ('password="abc"', f'password="{R}"'),
    ("password='abc'", f"password='{R}'"),
    ('{\\"password\\": \\"abc\\"}', f'{{\\"password\\": \\"{R}\\"}}'),  # JSON inside JSON text
    ('password="abc', f'password="{R}'),  # an unterminated quote
    ('password=""', 'password=""'),       # nothing to hide
    ("password=''", "password=''"),
])
def test_an_assignment_replaces_the_value_inside_its_quotes(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("pass: abc", "pass: abc"),              # a short word before a colon: prose / a table
    ("pass: abcd1234", f"pass: {R}"),        # ... unless the value looks like a password
    ("pass=abc", f"pass={R}"),               # with "=" it is an assignment
    ("'pass': abc", f"'pass': {R}"),         # as a quoted key too
    ('"key": abc', f'"key": {R}'),
    ("key%3Dabc", f"key%3D{R}"),             # a percent-encoded "="
    ("pass=/x1", f"pass={R}"),               # only pwd's value may be a directory
    ("db_pwd=/x", f"db_pwd={R}"),
    ("pwd=/x", "pwd=/x"), ("PWD=~/x", "PWD=~/x"), ("PWD=abc", f"PWD={R}"),
])
def test_a_short_secret_word_needs_an_equals_sign_a_quote_or_a_password(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("f(signature=abc)", "f(signature=abc)"),          # a function's signature
    ("x Signature=abc", "x Signature=abc"),
    ('"signature": "abc"', '"signature": "abc"'),
    ("?Signature=abc", f"?Signature={R}"),             # a signed URL's
    ("&Signature=abc", f"&Signature={R}"),
    ("?signature%3Dabc", f"?signature%3D{R}"),
])
def test_a_signature_is_a_secret_only_as_a_query_parameter(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("\\xpwd=hunter2", "\\xpwd=hunter2"),    # \x is no JSON escape: the name is "xpwd"
    ("npwd=hunter2\\", "npwd=hunter2\\"),    # the name starts the text: nothing is glued to it
    ("3Fkey=hunter2 50%", "3Fkey=hunter2 50%"),
    ("\\npwd=hunter2", f"\\npwd={R}"),
])
def test_only_an_escape_right_before_a_name_is_taken_off_it(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(("name", "secret"), [
    ("db2Key", True), ("db2key", False), ("dbKey", True), ("dbkey", False),
    ('"password"', True), ("  password  ", True), ("--password", True),
])
def test_a_short_word_counts_after_a_lower_case_letter_or_a_digit_only_in_camel_case(name, secret):
    assert is_secret_name(name) is secret


# --- an element, a flag, an entry ----------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("<Password> abc1 </Password>", f"<Password>{R}</Password>"),
    ("<Password>true</Password>", "<Password>true</Password>"),
    ("<Name>abc</Name>", "<Name>abc</Name>"),
    ("--password abc", f"--password {R}"),
    ("--password true", "--password true"),
    ("{'name': 'DB_PASSWORD', 'value': 'abc'}", f"{{'name': 'DB_PASSWORD', 'value': '{R}'}}"),
    ("- name: DB_PASSWORD\n  value: abc def\n", f"- name: DB_PASSWORD\n  value: {R}\n"),
    ('{"name": "DB_PASSWORD", "value": "null"}', '{"name": "DB_PASSWORD", "value": "null"}'),
    ('{"name": "LOG", "value": "abc"}', '{"name": "LOG", "value": "abc"}'),
])
def test_an_element_a_flag_and_a_name_value_entry(text, expected):
    assert redact_text(text) == expected


def test_a_data_uri_is_kept_whole_even_when_it_holds_a_key_shape():
    text = "data:image/png;base64,AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
    assert redact_text(text) == text
    assert redact_text("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY") == R


# --- structures -----------------------------------------------------------------------------

def test_a_structure_keeps_numbers_nulls_and_makes_keys_strings_and_tuples_lists():
    assert redact({1: "x", "t": ("a",), "password": None, "n": 5, "b": True}) == {
        "1": "x", "t": ["a"], "password": None, "n": 5, "b": True}
    assert redact({"name": 5, "value": "abc"}) == {"name": 5, "value": "abc"}  # no name to read
    assert redact({"name": "DB_PASSWORD"}) == {"name": "DB_PASSWORD"}
    assert redact("") == "" and redact([]) == []


def test_a_text_without_a_secret_comes_back_as_the_same_object():
    text = "nothing to hide here " * 3
    assert redact_text(text) is text
    texts = ["a", "b"]
    assert secret_scan._redactor.many(texts) == ["a", "b"] and secret_scan._redactor.many([]) == []


def _digest(original: str) -> str:
    """The module doc's key digest with no app secret: a 16-hex keyed BLAKE2b."""
    return hashlib.blake2b(original.encode(), key=b"", digest_size=8).hexdigest()


def test_a_key_whose_limit_leaves_no_room_is_the_digest_alone():
    plain = Redactor(secret_scan._Pattern)
    key = f"id-{GH_TOKEN}"
    assert plain.key(key) == f"id-{R}~{_digest(key)}"
    assert plain.key(key, 17) == f"~{_digest(key)}"
    assert plain.key(key, 10) == f"~{_digest(key)}"
    assert plain.key(key, 20) == f"id-~{_digest(key)}"
    assert plain.key("plain-id", 3) == "plain-id"  # unchanged ids are not cut


def test_bounded_texts_are_redacted_then_cut_to_their_schema_limit():
    pad = "x" * 20
    doc = {"run_id": "r1", "external_outcome": f"{pad} pwd=abc",
           "steps": [{"id": "s1", "name": "n" * (STEP_NAME_MAX - 8) + " pwd=abc",
                      "status": f"{pad} pwd=abc", "summary": "y" * 400 + " pwd=abc"}]}
    out = redact_run_document(doc)
    assert out["external_outcome"] == f"{pad} pwd={R}"[:OUTCOME_MAX] == f"{pad} pwd=[redact"
    step = out["steps"][0]
    assert step["name"] == ("n" * (STEP_NAME_MAX - 8) + f" pwd={R}")[:STEP_NAME_MAX]
    assert len(step["name"]) == STEP_NAME_MAX
    assert step["status"] == f"{pad} pwd={R}"[:STEP_STATUS_MAX]
    assert step["summary"] == "y" * 400 + f" pwd={R}"  # a summary is not a bounded text


def test_ids_and_tool_names_are_keys_bounded_by_their_schema_limit():
    plain = Redactor(secret_scan._Pattern)
    long_id = "c" * 300 + f" {GH_TOKEN}"
    event = {"id": long_id, "run_id": "r1", "event": "started", "tool_name": long_id,
             "step_id": long_id}
    out = plain.tool_event(event)
    assert out["id"] == long_id[:ID_MAX - 17] + "~" + _digest(long_id) == out["step_id"]
    assert out["tool_name"] == long_id[:TOOL_NAME_MAX - 17] + "~" + _digest(long_id)
    assert (len(out["id"]), len(out["tool_name"])) == (ID_MAX, TOOL_NAME_MAX)


def test_a_run_document_with_odd_shapes_keeps_them():
    doc = {"run_id": "r1", "report": f"r {GH_TOKEN}", "messages": "not a list",
           "steps": ["not an object", {"id": "s1"}], "tool_calls": None}
    assert redact_run_document(doc) == {"run_id": "r1", "report": f"r {R}", "messages": "not a list",
                                        "steps": ["not an object", {"id": "s1"}], "tool_calls": None}
    doc = {"run_id": "r1", "messages": [
        {"id": "m1", "metadata": "plain"},
        {"id": "m2", "metadata": {"citations": "none", "tool_call_ids": "t1"}},
        {"id": "m3", "metadata": {"tool_call_ids": ["t1", 7]}},
    ], "report": 5}
    assert redact_run_document(doc) == {"run_id": "r1", "messages": [
        {"id": "m1", "metadata": "plain"},
        {"id": "m2", "metadata": {"citations": "none", "tool_call_ids": "t1"}},
        {"id": "m3", "metadata": {"tool_call_ids": ["t1", 7]}},
    ], "report": 5}


def test_a_tool_event_without_its_optional_fields_stays_as_sent():
    event = {"id": "c1", "run_id": "r1", "event": "failed", "tool_name": None, "error": "boom"}
    assert redact_tool_event(event) == event


# --- summaries ------------------------------------------------------------------------------

def test_a_summary_is_cut_only_when_shorter_than_its_value():
    assert redaction.Summary("abc", 3).cut is False
    assert redaction.Summary("abc", 4).cut is True
    assert redaction.Summary(None, 4).cut is False and redaction.Summary("abc", None).cut is False
    assert redaction.cut("abcdef", 6) == redaction.Summary("abcdef", 6)
    assert redaction.cut("abcdef", 5) == redaction.Summary("abcde", 6)


def test_serialise_writes_json_with_characters_kept_and_other_objects_as_text():
    when = datetime.date(2026, 12, 2)
    assert redaction.serialise({"d": when, "s": "飞"}) == '{"d": "2026-12-02", "s": "飞"}'
    assert redaction.serialise("as is") == "as is" and redaction.serialise(None) is None
    assert redaction.serialise(0) == "0" and redaction.serialise([]) == "[]"


def test_two_keys_glued_together_are_both_found():
    """The next search starts where a match ended, not one character later."""
    assert redact_text("AKIAQ7F2LM9XZR4TY8WPAKIAQ7F2LM9XZR4TY8WQ") == R + R


def test_a_capitalised_key_value_entry_pairs_its_value():
    assert redact({"Key": "DbPassword", "Value": "CfnPw9Wx7"})["Value"] == R
    assert redact({"Key": "LogLevel", "Value": "debug"})["Value"] == "debug"


def test_the_dense_bound_counts_the_candidates_of_a_whole_document():
    """Module doc of redaction: past 20,000 candidates of one rule in one document (the
    texts ``many`` joins), the rest of that text and every later text become
    ``[redacted]``; each text keeps its place. Two texts of 10,000 and 10,001 candidates
    cross the bound at the last one, though neither does alone."""
    many = secret_scan._redactor.many
    first, second, third = many(["pwd=x " * 10_000, "pwd=x " * 10_001, "plain"])
    assert first == "pwd=[redacted] " * 10_000
    assert second == "pwd=[redacted] " * 10_000 + R
    assert third == R
    assert many(["pwd=x " * 20_001, "plain", "x"]) == ["pwd=[redacted] " * 20_000 + R, R, R]


def _base64_wrapped(pem: str, width: int) -> str:
    encoded = base64.b64encode(pem.encode()).decode()
    return "\n  ".join(encoded[i:i + width] for i in range(0, len(encoded), width))


@pytest.mark.parametrize("width", [76, 64])  # what `base64` and `openssl base64` print
def test_a_base64_private_key_wrapped_over_lines_is_redacted_and_a_certificate_kept(width):
    key = f"-----BEGIN PRIVATE KEY-----\n{PEM_PKCS8_BODY}\n-----END PRIVATE KEY-----\n"
    cert = f"-----BEGIN CERTIFICATE-----\n{PEM_PKCS8_BODY}\n-----END CERTIFICATE-----\n"
    assert redact_text(f"blob: |\n  {_base64_wrapped(key, width)}\n# end") == f"blob: |\n  {R}\n# end"
    kept = f"blob: |\n  {_base64_wrapped(cert, width)}\n# end"
    assert redact_text(kept) == kept


@pytest.mark.parametrize("pair", [b"user:pw", b"user:pw1", b"user:pw12", b"user:pw123", b"user:pw1234"])
def test_basic_credentials_are_found_with_or_without_their_padding(pair):
    """Every length of base64 (its last group of 2, 3 or 4 characters), sent with its
    '=' padding or without it."""
    padded = base64.b64encode(pair).decode()
    for token in {padded, padded.rstrip("=")}:
        assert redact_text(f"sent basic {token} here") == f"sent basic {R} here", token


@pytest.mark.parametrize(("text", "expected"), [
    ("password=$X", "password=$X"),            # a one-letter variable reference
    ("password=${X}", "password=${X}"),
    ("password=$", f"password={R}"),           # a dollar sign alone names no variable
    ("?Xsignature=abc", "?Xsignature=abc"),    # "Xsignature" is no signature parameter
    ("?-signature=abc", f"?-signature={R}"),   # a flag's dashes are not part of the name
    ("adpwd=hunter2", "adpwd=hunter2"),        # "ad" looks hex but no "%" is in front
])
def test_variable_references_signature_names_and_hex_looking_prefixes(text, expected):
    assert redact_text(text) == expected


def test_only_pass_itself_counts_as_a_short_word_before_blanks():
    """``pass V`` is a secret word, blanks and a value; ``Xpass`` is no secret name."""
    assert redact_text("Xpass abcd1234") == "Xpass abcd1234"
    assert redact_text("--pass abcd1234") == f"--pass {R}"


def test_a_base64_run_with_a_slash_and_255_characters_after_it_is_kept_whole():
    """Module doc of redaction: a run of base64 with a ``+`` or ``/`` and 255 more
    characters after it is image data, kept whole even where a key's shape turns up in
    it; one character shorter, the key shape inside is redacted."""
    key = "AIza" + "SyB" + "c1D2e3F4g5H6i7J8k9L0m1N2o3P4q5R6"  # a Google API key's shape
    assert len(key) == 39 and redact_text(key) == R
    kept = "img /" + "Q" * 200 + key + "Q" * 16 + " end"        # 255 after the slash
    assert redact_text(kept) == kept
    short = "img /" + "Q" * 200 + key + "Q" * 15 + " end"       # 254 after the slash
    assert redact_text(short) == "img /" + "Q" * 200 + R + "Q" * 15 + " end"


@pytest.mark.parametrize(("text", "expected"), [
    ("connect postgres://admin:S3cr3tPassw0rd@db.internal:5432/app",
     f"connect postgres://admin:{R}@db.internal:5432/app"),
    ('Authorization: Digest username="ops", response="6629fae4"', f"Authorization: Digest {R}"),
    ("Proxy-Authorization: Basic b3BzOnMzY3IzdFByMHh5", f"Proxy-Authorization: Basic {R}"),
    ("Set-Cookie: JSESSIONID=9F8E; Path=/", f"Set-Cookie: {R}"),
    ("mysql -h db -uroot -pMy5qlPw app < dump.sql", f"mysql -h db -uroot -p{R} app < dump.sql"),
    ("sshpass -p Ss9hPw ssh ops@host", f"sshpass -p {R} ssh ops@host"),
    ("redis-cli -h cache -a R3d1sPw ping", f"redis-cli -h cache -a {R} ping"),
    ("docker login -u bot -p D0ck3rPw registry.example.com",
     f"docker login -u bot -p {R} registry.example.com"),
    ("curl -u deploy:Cu9lPw77 https://api.example.com", f"curl -u deploy:{R} https://api.example.com"),
])
def test_the_label_in_front_of_a_secret_stays_readable(text, expected):
    """Module doc of redaction: only the secret becomes ``[redacted]``; the scheme, user
    and host of a URL, a header's name and scheme, a command and its flag stay."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("\u212aey=abc123", f"\u212aey={R}"),                # KELVIN SIGN, which RE2's (?i:k) matches
    ("pa\u017f\u017f=abc123", f"pa\u017f\u017f={R}"),   # LATIN SMALL LETTER LONG S for (?i:s)
    ("<pa\u017f\u017fword>abc1</pa\u017f\u017fword>", f"<pa\u017f\u017fword>{R}</pa\u017f\u017fword>"),
    ("--\u212aey abc1", f"--\u212aey {R}"),
    ("name: DB_\u212aEY\nvalue: abc1", f"name: DB_\u212aEY\nvalue: {R}"),
])
def test_a_name_spelled_with_case_folded_unicode_letters_is_read_without_failing(text, expected):
    """RE2 folds case over Unicode, so a secret word's pattern also matches the Kelvin sign
    or a long s; such a name is no ASCII secret name, and reading it must not fail. The
    decoded view reads it as NFKC does (K, s: ``encoded_text``), where it names a secret,
    so the value is redacted; the name stays as sent."""
    assert redact_text(text) == expected


def test_a_text_or_key_holding_a_lone_surrogate_is_still_redacted():
    # Imported logs can carry lone surrogates (JSON "\ud800"); the text round-trips them
    # and the key's digest is over the original's UTF-8 with the surrogate passed through
    # (ED A0 80), worked out here by hand.
    plain = Redactor(secret_scan._Pattern)
    assert plain.text(f"\ud800 key {GH_TOKEN}") == f"\ud800 key {R}"
    key = f"id\ud800-{GH_TOKEN}"
    raw = b"id\xed\xa0\x80-" + GH_TOKEN.encode()
    digest = hashlib.blake2b(raw, key=b"", digest_size=8).hexdigest()
    assert plain.key(key) == f"id\ud800-{R}~{digest}"
