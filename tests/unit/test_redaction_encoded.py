"""Secrets percent-encoded or split by zero-width characters are redacted too (SPEC 4;
module doc of ``domain.encoded_text``): every corpus shape URL-encoded (once, twice, or
every character escaped), form-encoded, or with a zero-width character inside its
secret; the label in front stays readable; ordinary encoded text (URLs, ``50%25 off``,
base64 data, hashes) stays as it is. Runs the pipeline the services use
(``services.secret_scan``: the rules on RE2)."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import pytest

from reviewapp.services import secret_scan
from reviewapp.services.secret_scan import redact, redact_text
from tests.secret_corpus import IMAGE_B64, ORDINARY, SECRETS

R = "[redacted]"  # SPEC 4: "It says [redacted] in their place"
GH_BODY = "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # 36 letters and digits: a GitHub token's body
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _every_character(text: str) -> str:
    """Every character but ASCII letters and digits escaped (``_`` as ``%5F`` too)."""
    return "".join(c if c.isascii() and c.isalnum() else "".join(f"%{b:02X}" for b in c.encode())
                   for c in text)


ENCODINGS = {
    "quote": lambda t: quote(t, safe=""),
    "quote twice": lambda t: quote(quote(t, safe=""), safe=""),
    "every character": _every_character,
    "every character twice": lambda t: quote(_every_character(t), safe=""),
    "quote with / kept": quote,
}


def _leaks(stored: str, fragments: list[str]) -> list[str]:
    """Fragments readable in what is stored, or in it decoded once or twice (as a reader
    would decode it), zero-width characters dropped."""
    views = {stored, unquote(stored), unquote(unquote(stored))}
    views |= {v.translate({ord(z): None for z in ZERO_WIDTH}) for v in views}
    return [f for f in fragments if any(f in v for v in views)]


def test_the_encoded_corpus_leaks_without_redaction():
    """The encoded checks can fail: the raw encoded samples hold every fragment."""
    bare = secret_scan.Redactor(secret_scan._Pattern, rules=())
    for name, text, fragments in SECRETS:
        for encode in ENCODINGS.values():
            assert _leaks(bare.text(encode(text)), fragments) == fragments, name


def test_no_encoded_corpus_shape_leaks():
    """Before the decoded view, of the 142 shapes 55 leaked quote()-encoded (54 with "/"
    kept), 80 encoded twice, 109 with every character escaped, 132 so escaped twice (a
    fragment read in what was stored or in it decoded); now none."""
    leaked = {kind: [name for name, text, fragments in SECRETS
                     if _leaks(redact_text(encode(text)), fragments)]
              for kind, encode in ENCODINGS.items()}
    assert leaked == {kind: [] for kind in ENCODINGS}


@pytest.mark.parametrize(("name", "text", "fragments"), SECRETS, ids=[c[0] for c in SECRETS])
def test_a_form_encoded_shape_holding_a_percent_escape_is_redacted(name, text, fragments):
    """``quote_plus`` (HTML forms, ``urlencode``): "+" is a space in a text holding a "%"."""
    encoded = quote_plus(text, safe="")
    if "%" not in encoded:
        encoded = "q=a%20b&x=" + encoded
    stored = redact_text(encoded)
    views = {stored, unquote_plus(stored)}
    assert [f for f in fragments if any(f in v for v in views)] == [], stored


@pytest.mark.parametrize(("name", "text", "fragments"), SECRETS, ids=[c[0] for c in SECRETS])
@pytest.mark.parametrize("zero_width", ZERO_WIDTH, ids=[f"U+{ord(z):04X}" for z in ZERO_WIDTH])
def test_a_zero_width_character_inside_a_secret_hides_nothing(name, text, fragments, zero_width):
    spliced = text
    for fragment in fragments:
        half = len(fragment) // 2
        spliced = spliced.replace(fragment, fragment[:half] + zero_width + fragment[half:])
    assert _leaks(redact_text(spliced), fragments) == [], spliced


@pytest.mark.parametrize(("text", "expected"), [
    (f"ghp%5F{GH_BODY}", R),
    (f"clone ghp%5F{GH_BODY}%20now", f"clone {R}%20now"),
    (f"ghp%255F{GH_BODY}", R),                                    # encoded twice
    (f"ghp%25255F{GH_BODY}", f"ghp%25255F{GH_BODY}"),             # three times: not decoded
    ("Authorization%3A%20Bearer%20abc123def456ghi789", f"Authorization%3A%20Bearer%20{R}"),
    ("h=Authorization%253A%2520Bearer%2520abc123def456ghi789", f"h=Authorization%253A%2520Bearer%2520{R}"),
    ("Authorization:+Bearer+abc123def456ghi789", f"Authorization:{R}"),  # no "%": read as it is
    ("Authorization%3A+Bearer+abc123def456ghi789", f"Authorization%3A+Bearer+{R}"),
    ("password%3Dhunter2hunter2&next=%2F", f"password%3D{R}&next=%2F"),
    ("%70assword%3Dhunter2hunter2", f"%70assword%3D{R}"),          # the name escaped too
    ("password%3Dcorrect+horse+battery9", f"password%3D{R}"),       # "+" in the value: all of it
    ("q=%22x%22&c=aws_secret_access_key+wJalrXUtnFEMI%2FK7MDENG%2FbPx",
     f"q=%22x%22&c=aws_secret_access_key+{R}"),
    (f"ghp_\u200b{GH_BODY}", R),
    (f"key ghp\u200d_{GH_BODY[:10]}\ufeff{GH_BODY[10:]} end", f"key {R} end"),
    (f"ghp%E2%80%8B_{GH_BODY}", R),                                # an encoded zero-width space
    ("AKIA\u2060Q7F2LM9XZR4TY8WP\u200c!", f"{R}!"),             # with the zero-width after it
    (f"%XX%G1%FX%2 ghp%5F{GH_BODY} end", f"%XX%G1%FX%2 {R} end"),  # no escapes before it: no shift
    ("PWD%3D%2Fhome%2Fapp PWD%3D%7e%2Fx PWD%3D%2fy", "PWD%3D%2Fhome%2Fapp PWD%3D%7e%2Fx PWD%3D%2fy"),
    ("PWD%3D%252Fhome", f"PWD%3D{R}"),                              # no directory as it stands
])
def test_an_encoded_secret_becomes_redacted_and_its_label_stays(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "https://example.com/a%20b?q=hello%20world",
    "50%25 off",
    "100% sure, 5%-10% more, %zz and %2 and a lone % at the end %",
    "https://en.wikipedia.org/wiki/C%2B%2B and C++ and a+b=c",
    "search?q=token+bucket+rate%3A+10%2Fs&page=2",               # "token bucket" is prose
    "https://example.com/%E2%9C%88/%E9%A3%9E%E6%9C%BA?x=1+2",
    "redirect=https%3A%2F%2Fgrafana.example.com%2Fd%2Fabc%3ForgId%3D1",
    "zero\u200bwidth\u200cjoiners\u200d and a word\u2060joiner and a \ufeffBOM",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 %20",
    "etag 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= %20",       # base64 of a sha256
    *ORDINARY,
    *(quote(t, safe="") for t in ORDINARY),
])
def test_ordinary_encoded_text_is_unchanged(text):
    assert redact_text(text) == text


def test_base64_image_data_beside_a_percent_escape_is_unchanged():
    text = f"GET /img?name=a%20b {IMAGE_B64}"
    assert redact_text(text) == text
    value = {"url": "https://x.example/a%20b", "screenshot": IMAGE_B64,
             "thumb": "data:image/png;base64," + base64.b64encode(hashlib.sha512(b"x").digest() * 9).decode()}
    assert redact(value) == value


def test_a_document_reads_each_text_as_it_would_alone():
    """A "+" reads as a space only in a text holding a "%" (module doc of encoded_text),
    so a document joins those apart: each text comes out as it would alone."""
    texts = ["token+hunter2hunter3", "a%20b token+hunter2hunter3", "C++ and base64 a+b/c==",
             f"ghp%5F{GH_BODY}", "plain", "50%25 off"]
    many = secret_scan._redactor.many(texts)
    assert many == [redact_text(t) for t in texts]
    assert many == ["token+hunter2hunter3", f"a%20b token+{R}", "C++ and base64 a+b/c==", R,
                    "plain", "50%25 off"]


def test_redaction_of_encoded_text_is_idempotent():
    for _, text, _ in SECRETS:
        for encode in ENCODINGS.values():
            once = redact_text(encode(text))
            assert redact_text(once) == once


def test_past_a_thousand_secrets_found_only_decoded_the_rest_is_redacted_whole():
    """``redaction.ENCODED_LIMIT``: each costs a walk to its place; past the bound the rest
    of the text from the next one on is replaced, nothing leaks."""
    tokens = [f"ghp%5F{GH_BODY[:-4]}{i:04d}" for i in range(1001)]
    assert redact_text(" ".join(tokens[:1000])) == " ".join([R] * 1000)
    assert redact_text(" ".join(tokens) + " tail") == " ".join([R] * 1000) + " " + R


def test_plain_secrets_beside_one_escape_do_not_count_toward_the_bound():
    """Only secrets where decoding changed the text cost a walk (``ENCODED_LIMIT``)."""
    text = "a%20b " + "x" * 2000 + " pwd=hunter2 " * 3000 + " tail"
    assert redact_text(text) == "a%20b " + "x" * 2000 + f" pwd={R} " * 3000 + " tail"


def test_two_encoded_secrets_glued_together_are_two():
    assert redact_text(f"AIza%53yD-9tSrke72PouQMnMX-a7eZSW0jkFMBWYghp%5F{GH_BODY}") == R + R  # AIza: 35 exactly


def test_past_the_dense_bound_a_text_with_an_escape_is_cut_the_same_way():
    """``DENSE_LIMIT`` in the scan of the text as it came, with an escape in it."""
    assert redact_text("a%20b " + "pwd=x " * 20_001) == "a%20b " + "pwd=[redacted] " * 20_000 + R
    assert redact_text("a\u200bb " + "pwd=x " * 20_000) == "a\u200bb " + "pwd=[redacted] " * 20_000
