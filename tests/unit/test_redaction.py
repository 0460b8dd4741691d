"""Secret redaction before truncation (SPEC 4): a corpus of secret shapes must all come
out redacted, ordinary text must come out unchanged. Runs the same pipeline the tool-call
service uses (domain span patterns + detect-secrets detectors)."""

from __future__ import annotations

import json

import pytest

from reviewapp.domain import redaction
from reviewapp.services.secret_scan import redact, summarize

PEM_RSA = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
PEM_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDk3Qm9XnEZVHCDsBpIQsB8EaBhH3mDNsfLkWQkAbCdRgAAAJgY2Lq1GNi6\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
       "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")

# (name, text holding the secret, fragments of the secret that must not survive)
CORPUS: list[tuple[str, str, list[str]]] = [
    ("openai legacy key", "export OPENAI_API_KEY=sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
     ["abcdefghij0123456789T3Blbk", "T3BlbkFJabcdefghij0123456789"]),
    ("openai project key", "key sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s in use",
     ["Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s"]),
    ("anthropic key", "x-api-key: sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-Zx9Yw8Vu7Ts6Rq5-AA",
     ["Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA"]),
    ("github classic token", "git clone https://ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com/x/y",
     ["a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"]),
    ("github fine-grained token",
     "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
     ["11ABCDEFG0123456789_abcdefghijklmnop", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456"]),
    ("gitlab token", "GITLAB_TOKEN glpat-xY9zA8bC7dE6fG5hI4jK", ["xY9zA8bC7dE6fG5hI4jK"]),
    ("slack bot token", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     ["1234567890123-AbCdEfGh", "AbCdEfGhIjKlMnOpQrStUvWx"]),
    ("slack webhook", "POST https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdEFGHijklMNOPqrstUVWX",
     ["T01ABCDEF/B02GHIJKL", "abcdEFGHijklMNOPqrstUVWX"]),
    ("google api key", "maps?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x",
     ["SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"]),
    ("google oauth token", "access ya29.a0AfH6SMBx3kL9mN2pQ4rS6tU8vW0xY2zA4bC6dE8fG", ["a0AfH6SMBx3kL9mN2pQ4rS6"]),
    ("stripe live secret key (long)",
     "stripe sk_live_51HqLyjWDarjtT1zdp7dcXYZabcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789abcdefghijKLMN",
     ["51HqLyjWDarjtT1zdp7dcXYZ", "ABCDEFGHIJ0123456789abcdefghijKLMN"]),
    ("stripe restricted key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc4eC39HqLyjWDarjt", ["4eC39HqLyjWDarjtT1zdp7dc"]),
    ("aws access key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", ["IOSFODNN7EXAMPLE"]),
    ("aws secret access key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     ["wJalrXUtnFEMI/K7MDENG", "bPxRfiCYEXAMPLEKEY"]),
    ("authorization bearer header", "Authorization: Bearer abc123.def456-ghi789_jklmno0pqr",
     ["abc123.def456-ghi789_jklmno0pqr"]),
    ("bare bearer token", "curl -H 'bearer 0123456789abcdefABCDEF0123' https://api", ["0123456789abcdefABCDEF0123"]),
    ("basic auth header", 'headers={"Authorization": "Basic dXNlcjpodW50ZXIyaHVudGVyMg=="}',
     ["dXNlcjpodW50ZXIyaHVudGVyMg"]),
    ("jwt", f"session cookie {JWT} expired", ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJzdWIiOiIxMjM0NTY3ODkw"]),
    ("pem rsa private key", f"key file:\n{PEM_RSA}\nend", ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lg", "VTLw7onLRnrq0"]),
    ("pem openssh private key", PEM_OPENSSH, ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "QyNTUxOQAAACDk3Qm9XnEZVHCDsBpIQsB8EaBhH3mDNsfLkWQkAbCdRgAAAJgY2Lq1GNi6"]),
    ("pem key cut before its END line", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CsL4zXdUz",
     ["MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CsL4zXdUz"]),
    ("password in postgres url", "connect postgres://admin:S3cr3tPassw0rd@db.internal:5432/app",
     ["S3cr3tPassw0rd"]),
    ("password in redis url without user", "REDIS_URL=redis://:hunter2hunter2@cache:6379/0", ["hunter2hunter2"]),
    ("password in query string", "GET https://example.com/login?user=bob&password=Tr0ub4dor3x&next=/",
     ["Tr0ub4dor3x"]),
    ("password assignment", 'db.connect(password="correct-horse-42")', ["correct-horse-42"]),
    ("sendgrid key", "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",
     ["ngeVfQFYQlKU0ufo8x5d1A", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc"]),
    ("hugging face token", "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12", ["abcdefghijklmnopqrstuvwxyzABCDEF12"]),
    ("azure storage connection string",
     "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Ab1+" * 22 + ";EndpointSuffix=core",
     ["Ab1+Ab1+Ab1+Ab1+"]),
    # Shapes only the detect-secrets layer knows.
    ("twilio api key (detect-secrets)", "twilio key SK0123456789abcdef0123456789abcdef ok",
     ["0123456789abcdef0123456789abcdef"]),
    ("mailchimp key (detect-secrets)", "mc: 0123456789abcdef0123456789abcdef-us12",
     ["0123456789abcdef0123456789abcdef"]),
    ("telegram bot token (detect-secrets)", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ x",
     ["AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"]),
]

ORDINARY = [
    "Request 3f2b8c1e-9a4d-4e7b-b6c2-1d5e8f9a0b3c failed; retry scheduled.",
    "The regression was fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday (a1b2c3d).",
    "Error: flight HAT030 not available on 2024-05-20",
    "Reservation ZFA04Y for user mia_li_3668 was cancelled; refund to gift_card_7219486.",
    "pod recommendation-74fd485779-mlzfx is Pending on node 10.0.3.17:9100",
    "The basic plan covers one passenger; the secret of good support is patience.",
    "max_tokens=512, temperature=0.2, top_p=1",
    "sha256:6f1ed002ab5595859014ebf0951522d9f1e46e3c0bb3c9a0c5e2a8f2b5a8c8f7",
    "Price: $1,234.56 — 飞机票 ✈️ مرحبا",
]


@pytest.mark.parametrize(("name", "text", "fragments"), CORPUS, ids=[c[0] for c in CORPUS])
def test_secret_corpus_is_redacted_in_arguments_results_and_errors(name, text, fragments):
    as_argument = redact({"command": text, "nested": [{"value": text}]})
    as_result = summarize({"stdout": text})
    as_error = summarize(text)
    for stored in (json.dumps(as_argument), as_result, as_error):
        assert redaction.REDACTED in stored
        for fragment in fragments:
            assert fragment not in stored, (name, stored)


def test_secret_corpus_has_at_least_twenty_shapes():
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text):
    assert redact(text) == text
    assert summarize({"text": text}) == json.dumps({"text": text}, ensure_ascii=False)


def test_key_straddling_the_cut_is_redacted_before_truncation():
    """SPEC 4: redact first, then cut; no part of a key crossing position 2,000 survives."""
    key = "sk-proj-Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9"
    text = "x" * (redaction.SUMMARY_LIMIT - 20) + " " + key + " tail"
    assert key[:15] in text[: redaction.SUMMARY_LIMIT]  # the cut alone would leak half of it
    stored = summarize(text)
    assert stored == ("x" * (redaction.SUMMARY_LIMIT - 20) + " [redacted] tail")[: redaction.SUMMARY_LIMIT]
    assert "Q1w2" not in stored


def test_values_under_secret_keys_are_redacted_whole():
    clean = redact({"password": "letmein", "db_password": "p", "api_key": "abc", "token_type": "Bearer",
                    "max_tokens": 512, "query": "flights to SEA"})
    assert clean == {"password": "[redacted]", "db_password": "[redacted]", "api_key": "[redacted]",
                     "token_type": "Bearer", "max_tokens": 512, "query": "flights to SEA"}


def test_summarize_serialises_then_cuts_and_keeps_none():
    assert summarize(None) is None
    assert summarize({"a": "é"}) == '{"a": "é"}'
    assert len(summarize("y" * 5000)) == redaction.SUMMARY_LIMIT


def test_domain_layer_alone_is_pure_and_catches_provider_keys():
    """Without the library the domain patterns still redact the common shapes."""
    assert redaction.redact_text("AKIAIOSFODNN7EXAMPLE") == "[redacted]"
    assert "0123456789abcdef0123456789abcdef" in redaction.redact_text(
        "mc: 0123456789abcdef0123456789abcdef-us12")
