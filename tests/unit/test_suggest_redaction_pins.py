"""Pins of ``suggest._without_redactions`` (a redacted secret and the label the redactor
left in front of it are no evidence, SPEC 7) and of one heading rule of ``remediation``:
exact outputs worked out by hand, each one the mutation run of ``domain/suggest.py``
found unpinned (a bound, a step, the separator, the joiner)."""

from __future__ import annotations

import pytest

from reviewapp.domain.suggest import _without_redactions, remediation

M = "[redacted]"


@pytest.mark.parametrize("text,expected", [
    # label "password", separator "=": both go with the marker, one space in their place
    ("a password=" + M + " b", "a   b"),
    # 8 separators, then a label letter: all 8 walked, the label taken too
    ("k" + " " * 8 + M, " "),
    # 9 separators: only 8 are walked, so no label is reached and the text before stays
    ("k" + " " * 9 + M, "k" + " " * 9 + " "),
    # a label of 80 characters is taken whole; of 81, the first stays
    ("x" * 80 + "=" + M, " "),
    ("x" * 81 + "=" + M, "x "),
    # the label is the word right before the separators, one character at a time
    ("x ab=" + M, "x  "),
    ("x abc=" + M, "x  "),
    # "X" is a label character, not a separator: the space before it ends the label
    ("a X" + M, "a  "),
    # two markers: the text between them kept, each replaced by one space
    ("p=" + M + " and q=" + M + ".", "  and  ."),
    # no marker: the text as it is
    ("password reset failed", "password reset failed"),
])
def test_a_redacted_secret_and_its_label_become_one_space(text, expected):
    assert _without_redactions(text) == expected


def test_a_heading_is_read_after_its_hashes_only():
    """``#Xfix`` is no ``Fix`` heading: only the ``#`` characters are taken off."""
    assert remediation("#Xfix\nrestart the pod") == ""
    assert remediation("#fix\nrestart the pod") == "restart the pod"
