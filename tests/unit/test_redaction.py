"""Secret redaction (SPEC 4): every shape of the corpus comes out redacted wherever it
sits, ordinary text comes out unchanged, keys stay unique, and summaries are cut after
redaction. Runs the pipeline the services use (``services.secret_scan``: the domain
rules on RE2). Limits come from the specification, not from the code's constants."""

from __future__ import annotations

import json

import pytest
import re2

from reviewapp.domain import redaction
from reviewapp.domain.redaction import RULES, SPAN_PATTERNS, Redactor, Rule, is_secret_name
from reviewapp.services import secret_scan
from reviewapp.services.secret_scan import (
    redact,
    redact_key,
    redact_run_document,
    redact_text,
    redact_tool_event,
    summarize,
)
from tests.secret_corpus import IMAGE_B64, ORDINARY, SECRETS

SUMMARY_LIMIT = 2000  # SPEC 4: summaries are cut to 2,000 characters
REDACTED = "[redacted]"  # SPEC 4: "It says [redacted] in their place"


def _leaks(stored: str, fragments: list[str]) -> list[str]:
    return [f for f in fragments if f in stored]


def test_every_corpus_sample_leaks_without_redaction():
    """The corpus checks can fail: with no rule at all, every sample leaks every one of its
    fragments (a sample whose fragments are not in its text would check nothing). This
    replaces a count of the corpus (issue 20: a test that counts its own data cannot fail);
    the count of distinct shapes (at least 80) stays as a side condition."""
    bare = Redactor(secret_scan._Pattern, rules=())
    for name, text, fragments in SECRETS:
        assert fragments and _leaks(bare.text(text), fragments) == fragments, name
    assert len({name for name, _, _ in SECRETS}) == len({t for _, t, _ in SECRETS}) == len(
        SECRETS) >= 80


@pytest.mark.parametrize(("name", "text", "fragments"), SECRETS, ids=[c[0] for c in SECRETS])
def test_secret_is_redacted_in_text_arguments_results_and_errors(name, text, fragments):
    as_text = redact_text(text)
    as_argument = json.dumps(redact({"command": text, "nested": [{"value": text}]}))
    as_result = summarize({"stdout": text})
    as_escaped = summarize(json.dumps({"stdout": text}))  # a result that is JSON text
    as_error = summarize(text)
    for stored in (as_text, as_argument, as_result, as_escaped, as_error):
        assert REDACTED in stored, (name, stored)
        assert _leaks(stored, fragments) == [], (name, stored)


@pytest.mark.parametrize(("name", "text", "fragments"), SECRETS, ids=[c[0] for c in SECRETS])
def test_secret_glued_after_text_is_redacted(name, text, fragments):
    """After a letter, a digit, ``_``, an escaped newline or ``%3D`` (SPEC 4: "also when
    glued to the text before them")."""
    for glue in ("x", "7", "_", "\\n", "%3D"):
        stored = redact_text(glue + text)
        assert _leaks(stored, fragments) == [], (name, glue, stored)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text):
    assert redact_text(text) == text
    assert redact({"text": text}) == {"text": text}
    assert summarize({"text": text}) == json.dumps({"text": text}, ensure_ascii=False)


def test_base64_image_data_under_a_plain_key_is_unchanged():
    value = {"screenshot": IMAGE_B64, "img": "data:image/png;base64," + IMAGE_B64}
    assert redact(value) == value


def test_redaction_is_idempotent():
    for _, text, _ in SECRETS:
        once = redact_text(text)
        assert redact_text(once) == once


def test_one_pass_over_many_texts_equals_each_text_alone():
    texts = [text for _, text, _ in SECRETS] + ORDINARY + ["", "a", "pwd=x"]
    assert secret_scan._redactor.many(texts) == [redact_text(t) for t in texts]


def test_a_text_holding_nul_is_redacted_on_its_own():
    texts = ["a\x00DB_PASSWORD=Nu1lPw", "token=Tk9Wx7Ec6Rv5Tb4"]
    assert secret_scan._redactor.many(texts) == ["a\x00DB_PASSWORD=[redacted]", "token=[redacted]"]


@pytest.mark.parametrize("value", [84736251, 3.5, {"user": "a", "pass": "b"}, ["x", "y"]])
@pytest.mark.parametrize("key", ["password", "dbPassword", "sessionToken", "refresh_token", "pwd",
                                 "pass", "api_key", "X-Api-Key", "credentials", "Authorization"])
def test_any_value_under_a_secret_named_key_is_replaced_whole(key, value):
    assert redact({key: value, "other": 1}) == {key: REDACTED, "other": 1}


@pytest.mark.parametrize(("entry", "value_key"), [
    ({"name": "DB_PASSWORD", "value": 84736251}, "value"),
    ({"Name": "/prod/db/password", "Value": "SsmPw9Wx7"}, "Value"),
    ({"key": "X-Api-Key", "value": {"k": "PmHdr9Wx7Ec6"}}, "value"),
    ({"ParameterKey": "DbPassword", "ParameterValue": "CfnPw9Wx7"}, "ParameterValue"),
])
def test_a_value_beside_a_secret_name_is_replaced_whole(entry, value_key):
    """An entry naming a secret in one field and holding it in another (Kubernetes / ECS
    env lists, SSM parameters, Postman headers, CloudFormation parameters)."""
    clean = redact({"env": [entry, {"name": "PORT", "value": "5432"}]})
    assert clean["env"][0][value_key] == REDACTED
    assert clean["env"][1] == {"name": "PORT", "value": "5432"}


def test_a_value_beside_a_plain_name_is_kept():
    entries = [{"name": "LOG_LEVEL", "value": "debug"}, {"name": "max_tokens", "value": 512},
               {"Name": "/prod/db/host", "Value": "db.internal"}, {"name": "DB_PASSWORD", "value": None}]
    assert redact(entries) == entries


@pytest.mark.parametrize("key", ["max_tokens", "token_type", "public_key", "next_token", "monkey",
                                 "bypass", "primary_key", "password_hint", "keys", "tokens"])
def test_a_key_that_only_looks_secret_keeps_its_value(key):
    assert redact({key: "plain-value-1"}) == {key: "plain-value-1"}


@pytest.mark.parametrize("value", [True, False, None])
def test_booleans_and_null_under_a_secret_key_stay(value):
    assert redact({"password": value}) == {"password": value}


@pytest.mark.parametrize(("name", "secret"), [
    ("DB_PASSWORD", True), ("dbPassword", True), ("db-pass", True), ("apiKey", True),
    ("APIKEY", True), ("x-api-key", True), ("SharedAccessKey", True), ("sig", True), ("pwd", True),
    ("MYSQL_PWD", True), ("authToken", True), ("set-cookie", True), ("JSESSIONID", True),
    ("monkey", False), ("bypass", False), ("compass", False), ("PASSWORD_HINT", False),
    ("public_key", False), ("NextToken", False), ("keyboard", False), ("config", False), ("", False),
    # "key" as a word of its own; a public name however it is spelled; a flag's dashes
    ("db_key", True), ("Key", True), ("sshKey", True), ("XKEY", False), ("--db-key", True),
    ("public key", False), ("page.token", False), ("next-token", False),
])
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def test_object_keys_are_redacted_and_stay_distinct():
    key_a = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    key_b = "ghp_b1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    clean = redact({key_a: 1, key_b: 2})
    assert len(clean) == 2 and sorted(clean.values()) == [1, 2]
    assert all(k.startswith(REDACTED + "~") and "a1B2" not in k and "b1B2" not in k for k in clean)


def test_redacted_ids_are_stable_unique_and_bounded():
    """Two call ids that redact to the same text keep apart (a digest of the original is
    appended); the same id always gives the same key; the result fits the column."""
    first = "call_sk-proj-" + "A" * 40
    second = "call_sk-proj-" + "B" * 40
    assert redact_key(first, 160) == redact_key(first, 160)
    assert redact_key(first, 160) != redact_key(second, 160)
    assert redact_key(first, 160).startswith("call_[redacted]~")
    assert len(redact_key("x" * 150 + " token=" + "s" * 30, 160)) <= 160
    assert redact_key("call_plain_42", 160) == "call_plain_42"


def test_the_digest_of_a_redacted_id_is_keyed():
    """Without the app's key, nobody can recompute the digest to test a guessed secret."""
    plain = Redactor(secret_scan._Pattern)
    one, two = plain.with_id_key(b"one"), plain.with_id_key(b"two")
    secret_id = "id-AKIAQ7F2LM9XZR4TY8WP"
    assert one.key(secret_id) != two.key(secret_id) != plain.key(secret_id)
    assert one.key(secret_id) == one.key(secret_id)


def test_tool_event_ids_names_and_texts_are_redacted():
    event = {"id": "c-AKIAQ7F2LM9XZR4TY8WP", "run_id": "r1", "event": "completed",
             "tool_name": "fetch token=Tk9Wx7Ec6Rv5Tb4", "arguments": {"password": "p"},
             "output": "ok AKIAQ7F2LM9XZR4TY8WQ", "error": None, "step_id": "s-AKIAQ7F2LM9XZR4TY8WR",
             "retrieval": {"evidence_refs": [{"ref": "r", "excerpt": "key AKIAQ7F2LM9XZR4TY8WS"}]}}
    clean = redact_tool_event(event)
    assert "Q7F2LM9XZR4TY8W" not in json.dumps(clean) and "Tk9Wx7" not in json.dumps(clean)
    assert clean["run_id"] == "r1" and clean["event"] == "completed"
    assert clean["tool_name"].startswith("fetch token=[redacted]~")


def test_run_document_texts_are_all_redacted():
    key = "AKIAQ7F2LM9XZR4TY8WP"
    doc = {
        "run_id": "r1", "session_id": "s1", "query": key, "answer": key, "alert": {"k": key},
        "external_outcome_detail": {"d": key}, "orchestration_trace": [{"t": key}],
        "verifier_evaluation": {"rationale": key}, "aiops_rule_evaluation": {"x": key},
        "self_evaluation": {"y": key}, "report": {"content": key},
        "messages": [{"id": "m-" + key, "role": "tool", "content": key, "metadata": {
            "citations": [{"id": "c-" + key, "title": key, "source": key, "excerpt": key,
                           "evidence_ref": key}],
            "tool_call_ids": ["t-" + key], "extra": {"e": key}}}],
        "steps": [{"id": "s-" + key, "name": key, "summary": key}],
        "tool_calls": [{"id": "t-" + key, "tool_name": key, "arguments": {"a": key},
                        "output": key, "error": key, "step_id": "s-" + key,
                        "retrieval": {"evidence_refs": [{"ref": key, "excerpt": key}]}}],
    }
    clean = redact_run_document(doc)
    assert "Q7F2LM9XZR4TY8WP" not in json.dumps(clean)
    assert clean["run_id"] == "r1" and clean["session_id"] == "s1"
    # The same id redacts to the same key wherever it appears (links stay intact).
    assert clean["messages"][0]["metadata"]["tool_call_ids"] == [clean["tool_calls"][0]["id"]]
    assert clean["steps"][0]["id"] == clean["tool_calls"][0]["step_id"]
    assert redact_run_document({"run_id": "r2"}) == {"run_id": "r2"}


@pytest.mark.parametrize("offset", range(SUMMARY_LIMIT - 45, SUMMARY_LIMIT + 5))
def test_key_at_any_offset_around_the_cut_leaves_no_fragment(offset):
    """SPEC 4: redact first, then cut at 2,000 characters."""
    secret = "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9"
    key = "sk-proj-" + secret
    stored = summarize("x" * offset + key + " tail")
    assert len(stored) <= SUMMARY_LIMIT
    for size in range(6, len(secret) + 1):  # no 6-character piece of the secret survives
        for start in range(0, len(secret) - size + 1, 3):
            assert secret[start:start + size] not in stored


def test_summary_keeps_the_length_before_the_cut():
    summary = redaction.cut("y" * 5731)
    assert (len(summary.text), summary.length, summary.cut) == (SUMMARY_LIMIT, 5731, True)
    assert redaction.cut(None) == redaction.Summary(None, None)
    assert redaction.cut({"a": "é"}) == redaction.Summary('{"a": "é"}', 10)
    assert not redaction.cut("short").cut


def test_each_span_pattern_is_needed():
    """Switching off any provider pattern lets a corpus secret through (issue 20)."""
    for index, (name, _) in enumerate(SPAN_PATTERNS):
        patterns = SPAN_PATTERNS[:index] + SPAN_PATTERNS[index + 1:]
        first = Rule(RULES[0].name, RULES[0].pattern.split("|(?:")[0] + "|" + "|".join(
            f"(?:{p})" for _, p in patterns), RULES[0].handle)
        weaker = Redactor(secret_scan._Pattern, rules=(first, *RULES[1:]))
        leaked = [n for n, text, frags in SECRETS if _leaks(weaker.text(text), frags)]
        assert leaked, f"no corpus sample needs the {name!r} pattern"


def test_each_rule_is_needed():
    for index, rule in enumerate(RULES):
        weaker = Redactor(secret_scan._Pattern, rules=RULES[:index] + RULES[index + 1:])
        leaked = [n for n, text, frags in SECRETS if _leaks(weaker.text(text), frags)]
        assert leaked, f"no corpus sample needs the rule {rule.name!r}"


def test_the_engine_adapter_finds_what_re2_finds():
    """``secret_scan._Pattern`` calls RE2's binding directly; it must agree with the
    module's own ``finditer`` (a google-re2 upgrade that changes the binding fails here)."""
    text = " ".join(t for _, t, _ in SECRETS).encode()
    for rule in RULES:
        expected = [m.span() for m in re2.compile(rule.pattern.encode(), secret_scan._OPTIONS).finditer(text)]
        pattern, found, pos = secret_scan._Pattern(rule.pattern.encode()), [], 0
        while (spans := pattern.search(text, pos)) is not None:
            found.append(spans[0])
            pos = max(spans[0][1], spans[0][0] + 1)
        assert found == expected, rule.name


def test_no_rule_matches_across_the_separator_of_many():
    for rule in RULES:
        for _, text, _ in SECRETS[:20]:
            pattern = secret_scan._Pattern(rule.pattern.encode())
            data = (text + "\x00" + text).encode()
            pos = 0
            while (spans := pattern.search(data, pos)) is not None:
                start, end = spans[0]
                assert b"\x00" not in data[start:end], rule.name
                pos = max(end, start + 1)


def test_the_dense_bound_is_exactly_twenty_thousand_candidates_of_one_rule():
    """Past 20,000 candidates of one rule in one text (the documented bound of
    ``domain.redaction``), the rest of the text is replaced whole; up to it, nothing is."""
    assert redact_text("pwd=x " * 20_000) == "pwd=[redacted] " * 20_000
    assert redact_text("pwd=x " * 20_001) == "pwd=[redacted] " * 20_000 + REDACTED


@pytest.mark.parametrize("value", ["true", "FALSE", "null", "None", "nil", "undefined",
                                   "$DB_PASS", "${DB_PASS}", "$DBPASS"])
def test_a_value_that_holds_no_secret_is_kept(value):
    """Booleans, null and variable references name no secret (module doc of redaction)."""
    assert redact_text(f"password={value}") == f"password={value}"


@pytest.mark.parametrize("value", ["$(whoami)", "$x!y", "nothing", "nullify"])
def test_a_value_that_only_starts_like_one_is_redacted(value):
    assert redact_text(f"password={value}") == f"password={REDACTED}"


@pytest.mark.parametrize(("text", "expected"), [
    ("\\npwd=hunter2", "\\npwd=[redacted]"),    # a JSON-escaped newline glued in front
    ("\\tpwd=hunter2", "\\tpwd=[redacted]"), ("\\rpwd=hunter2", "\\rpwd=[redacted]"),
    ("%3Fkey=hunter2", "%3Fkey=[redacted]"),    # a percent escape glued in front
])
def test_an_escape_glued_in_front_at_the_start_of_a_text(text, expected):
    assert redact_text(text) == expected


GH_TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # a GitHub personal token shape


def test_typed_text_is_redacted_then_cut_and_none_stays_none():
    assert secret_scan.redact_typed(None, 10) is None
    typed = secret_scan.redact_typed(f"my token {GH_TOKEN} leaked", 500)
    assert GH_TOKEN[4:] not in typed and REDACTED in typed and typed.startswith("my token ")
    assert secret_scan.redact_typed("plain words", 5) == "plain"


def test_an_outcome_and_a_finish_body_are_redacted():
    outcome = secret_scan.redact_outcome({"external_outcome": "pass",
                                          "external_outcome_detail": {"note": f"k {GH_TOKEN}"}})
    assert outcome["external_outcome"] == "pass"
    assert GH_TOKEN[4:] not in json.dumps(outcome) and REDACTED in json.dumps(outcome)
    finish = secret_scan.redact_finish({"answer": f"use {GH_TOKEN} here"})
    assert GH_TOKEN[4:] not in finish["answer"] and finish["answer"].startswith("use ")


def test_summary_cuts_an_already_redacted_value_and_keeps_its_length():
    cut = secret_scan.summary("x" * (SUMMARY_LIMIT + 5))
    assert (cut.text, cut.length) == ("x" * SUMMARY_LIMIT, SUMMARY_LIMIT + 5)
    assert secret_scan.summary({"a": 1}, 3).text == '{"a'


def test_the_app_secret_keys_the_digest_of_a_redacted_id(monkeypatch):
    import hashlib

    monkeypatch.setattr(secret_scan, "_redactor", secret_scan._redactor)  # restored after
    key = f"call-{GH_TOKEN}"

    def digest(secret: bytes) -> str:  # module doc of redaction: a 16-hex keyed BLAKE2b
        id_key = hashlib.blake2b(secret, digest_size=32).digest() if secret else b""
        return hashlib.blake2b(key.encode(), key=id_key, digest_size=8).hexdigest()

    secret_scan.configure({"SECRET_KEY": "one"})
    assert redact_key(key).endswith("~" + digest(b"one"))
    secret_scan.configure({"SECRET_KEY": "two"})
    assert redact_key(key).endswith("~" + digest(b"two"))
    secret_scan.configure({})
    assert redact_key(key).endswith("~" + digest(b""))


def test_a_bearer_token_of_24_letters_is_a_token_and_a_shorter_word_prose():
    letters24 = "abcdefghijklmnopqrstuvwx"
    assert redact_text(f"Authorization: Bearer {letters24}") == f"Authorization: Bearer {REDACTED}"
    assert redact_text("uses Bearer authentication") == "uses Bearer authentication"


def test_basic_credentials_whose_base64_lost_its_padding_are_found():
    # base64("user:pw") = "dXNlcjpwdw==": sent without its "==" it still decodes.
    assert redact_text("Authorization: Basic dXNlcjpwdw") == f"Authorization: Basic {REDACTED}"


def test_lone_surrogates_and_nul_separated_texts_pass_through():
    assert redact_text("a\ud800b") == "a\ud800b"
    assert redact(["x\x00y", f"k {GH_TOKEN}", ["plain"], ("t",)]) == [
        "x\x00y", f"k {REDACTED}", ["plain"], ["t"]]


def test_every_evaluation_of_a_run_document_is_redacted():
    doc = {"run_id": "r1", **{name: {"note": f"see {GH_TOKEN}"} for name in (
        "alert", "external_outcome_detail", "verifier_evaluation", "aiops_rule_evaluation",
        "self_evaluation", "orchestration_trace")}}
    out = redact_run_document(doc)
    assert GH_TOKEN[4:] not in json.dumps(out)
    assert out["aiops_rule_evaluation"] == {"note": f"see {REDACTED}"}


def test_iter_strings_yields_every_string_and_key():
    assert list(redaction.iter_strings({"a": ["b", ("c", 1)], 2: {"d": None}})) == [
        "a", "b", "c", "2", "d"]


def test_a_redactor_built_with_a_key_digests_like_one_keyed_later():
    plain = Redactor(secret_scan._Pattern)
    assert Redactor(secret_scan._Pattern, id_key=b"k").key(f"id-{GH_TOKEN}") == (
        plain.with_id_key(b"k").key(f"id-{GH_TOKEN}"))
    assert plain.key(f"id-{GH_TOKEN}") != plain.with_id_key(b"k").key(f"id-{GH_TOKEN}")


def test_rules_and_summaries_cannot_be_changed():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        RULES[0].pattern = "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        redaction.cut("x").text = "y"


def test_a_header_value_starts_at_its_first_non_blank_character():
    """Blanks after ``Cookie:`` / ``Authorization:`` are no value: kept as sent (the rule
    once took the last blank as the value, and read megabytes of blanks as one match at
    the slow, capturing pace: 2.8 s CPU at the body limit)."""
    assert redact_text("Cookie:    \nnext line") == "Cookie:    \nnext line"
    assert redact_text("authorization: \t ") == "authorization: \t "
    assert redact_text("Cookie:   sid=abc123; theme=dark") == "Cookie:   [redacted]"
    assert redact_text("Authorization:  Bearer  abcdefghijklmnop") == (
        "Authorization:  Bearer  [redacted]")
