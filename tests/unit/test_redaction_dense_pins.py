"""Pins of ``Redactor._hex_runs`` where the hex runs meet the base64 runs' dense bound
(``DENSE_LIMIT`` runs decoded to text, then the rest of the text is redacted whole) and
where a hex run and a base64 run overlap. Expected texts worked out by hand."""

from __future__ import annotations

import base64

from reviewapp.services.secret_scan import redact_text

R = "[redacted]"
GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token of the documented shape
PROSE = base64.b64encode(b"just a note about the weather").decode()  # base64 of prose: stays
B64_GH = base64.b64encode(GH.encode()).decode()
HEX_GH = GH.encode().hex()


def test_base64_prose_and_the_token_in_base64_and_hex_are_what_the_pins_assume():
    assert redact_text(PROSE) == PROSE
    assert redact_text(B64_GH) == R and redact_text(HEX_GH) == R
    assert redact_text(f"{PROSE} {HEX_GH} {B64_GH}") == f"{PROSE} {R} {R}"


def test_a_hex_run_before_the_base64_bound_moves_the_bound_and_nothing_after_it_is_kept():
    """20,001 base64 runs of text: 20,000 are decoded, the bound at the last one. A hex
    run before it (the 20,001st run in all) moves the bound there: from it on the text is
    redacted whole, the base64 run of the token after it too. The hex run was written
    back in clear before the tail when no hex run decoded to text (a leak)."""
    text = " ".join([PROSE] * 10_000 + [HEX_GH, B64_GH] + [PROSE] * 9_999)
    assert redact_text(text) == " ".join([PROSE] * 10_000) + " " + R


def test_a_hex_run_past_the_base64_bound_is_not_decoded():
    # The bound at the 20,001st base64 run; the hex run after it goes with the rest.
    text = " ".join([PROSE] * 20_001 + [HEX_GH])
    assert redact_text(text) == " ".join([PROSE] * 20_000) + " " + R


def test_a_base64_run_the_moved_bound_falls_inside_goes_with_the_rest_whole():
    """The bound moves to the start of the hex match that would be the 20,000th run in
    all, before it is decoded; a base64 run can hold such a match ("www" is "d3d3" in
    base64: 48 hex digits in a row). Here: one hex run of prose, 19,998 base64 runs of
    prose, then the base64 of "token ghp_..." ending in "www" * 12. The bound falls inside
    that last run: it goes with the rest of the text whole. The part before the bound
    was kept in clear (the base64 of the token: a leak)."""
    hex_prose = b"just a note about the weather".hex()
    assert redact_text(hex_prose) == hex_prose
    leak = base64.b64encode(f"token {GH}  ".encode() + b"www" * 12).decode()
    assert "d3d3" * 12 in leak and redact_text(leak) == R
    text = " ".join([hex_prose] + [PROSE] * 19_998 + [leak])
    assert redact_text(text) == " ".join([hex_prose] + [PROSE] * 19_998) + " " + R


def test_the_bound_moved_inside_a_base64_run_with_no_hex_run_decoded_takes_that_run_whole():
    """20,001 base64 runs of text, the 20,000th the base64 of the token ending in
    "d3d3...": its hex match moves the bound (no hex run decoded), the bound moves to the
    run's start, and from there the text is redacted whole."""
    leak = base64.b64encode(f"token {GH}  ".encode() + b"www" * 12).decode()
    text = " ".join([PROSE] * 19_999 + [leak, PROSE])
    assert redact_text(text) == " ".join([PROSE] * 19_999) + " " + R
