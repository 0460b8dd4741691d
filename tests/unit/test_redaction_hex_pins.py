"""Pins of ``Redactor._hex_runs`` (hex of a secret, ``domain.hex_text``) that
``tools/mutate.py`` runs against: a run at either end of the text, runs beside base64
runs, hex of text of every even length from the floor. Expected texts written by hand."""

from __future__ import annotations

import base64

import pytest

from reviewapp.services.secret_scan import redact_text

R = "[redacted]"
GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token of the documented shape


def _hex(text: str) -> str:
    return text.encode().hex()


@pytest.mark.parametrize(("text", "expected"), [
    (f"x {_hex(GH)}", f"x {R}"),  # the run ends the text
    (f"{_hex(GH)} y", f"{R} y"),  # ... starts it
    (_hex(GH), R),  # ... is all of it
    (f"a {_hex(GH)} b {_hex(GH)} c", f"a {R} b {R} c"),  # two runs
    # a base64 run and a hex run of the token, either order
    (f"{base64.b64encode(GH.encode()).decode()} {_hex(GH)}", f"{R} {R}"),
    (f"{_hex(GH)} {base64.b64encode(GH.encode()).decode()}", f"{R} {R}"),
])
def test_hex_of_a_token_is_redacted_wherever_it_sits(text, expected):
    assert redact_text(text) == expected


def test_a_dense_text_of_hex_runs_is_cut_at_the_dense_bound():
    # DENSE_LIMIT (20,000) runs are decoded; from the next one on the text is redacted whole.
    ordinary = _hex("just a note about the weather")  # 58 digits: decodes to prose, stays
    assert redact_text(" ".join([ordinary] * 20_000)) == " ".join([ordinary] * 20_000)
    assert redact_text(" ".join([ordinary] * 20_001)) == " ".join([ordinary] * 20_000) + " " + R
    token = " ".join([ordinary] * 20_000 + [_hex(GH)])
    assert redact_text(token) == " ".join([ordinary] * 20_000) + " " + R
