"""``Redactor.many`` joins a batch's texts in groups (``redaction._groups``): texts with
nothing to decode are scanned apart from those with a decoded view, so one "&" or one
non-ASCII character in a batch of stored texts (``flask runs redact``) does not make
every text of it pay the decoding. Each text still comes out as it would alone."""

from __future__ import annotations

import pytest

from reviewapp.domain import redaction
from reviewapp.services import secret_scan
from reviewapp.services.secret_scan import redact_text

R = "[redacted]"
GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token of the documented shape


@pytest.mark.parametrize(("text", "plain"), [
    ("", True),
    ("token ghp_x and C++", True),
    ("\x7f", True),  # the last ASCII character
    ("\x80", False),  # the first that is not
    ("it\u2019s", False),
    ("50%25 off", False),
    ("fish & chips", False),
    ("a\\b", False),
])
def test_a_text_is_plain_when_ascii_without_percent_ampersand_or_backslash(text, plain):
    assert redaction._plain(text) is plain


def test_groups_are_plain_then_percent_then_the_others_each_in_order():
    texts = ["a", "b%20c", "caf\u00e9", "d", "e&amp;", "f%", "g\\_h", "i"]
    assert redaction._groups(texts) == [[0, 3, 7], [1, 5], [2, 4, 6]]
    assert redaction._groups(["a", "b"]) == [[0, 1]]
    assert redaction._groups(["\u2019"]) == [[0]]
    # a non-ASCII text holding a "%" goes with the "%" texts ("+" reads as a space there)
    assert redaction._groups(["x", "\u00e9%41"]) == [[0], [1]]


def test_plain_texts_of_a_batch_are_not_decoded(monkeypatch):
    """The character level (``str.translate`` of every character) reads the texts with a
    view only: joined with them, the plain ones were translated too."""
    decoded: list[bytes] = []
    characters = redaction.encoded_text._characters
    monkeypatch.setattr(redaction.encoded_text, "_characters",
                        lambda data, joined=False: decoded.append(data) or characters(data, joined))
    texts = [f"token {GH}", "it\u2019s a ghp\u200b_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "plain words",
             "fish &amp; chips"]
    out = secret_scan._redactor.many(texts)
    assert out == [f"token {R}", f"it\u2019s a {R}", "plain words", "fish &amp; chips"]
    assert decoded and b"".join(decoded).startswith("it\u2019s a ghp".encode())
    assert b"plain words" not in b"".join(decoded) and b"token" not in b"".join(decoded)


def test_a_batch_mixing_every_group_reads_each_text_as_it_would_alone():
    texts = ["DB_PASSWORD=hunter2hunter2X", "a%20b token+hunter2hunter3", "token+hunter2hunter3",
             "ghp&#95;A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "caf\u00e9 password=abc", "ghp\\_" + GH[4:],
             "", "50%25 off", "it\u2019s fine", f"{GH}"]
    out = secret_scan._redactor.many(texts)
    assert out == [redact_text(t) for t in texts]
    assert out == ["DB_PASSWORD=[redacted]", f"a%20b token+{R}", "token+hunter2hunter3", R,
                   f"caf\u00e9 password={R}", R, "", "50%25 off", "it\u2019s fine", R]
