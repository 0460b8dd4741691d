"""Where a case came from (domain/case_sources.py, SPEC 7): ``source_type`` ``AUTO`` (made
by a useful verdict, SPEC 7.1) or ``MANUAL``; labels as the case and export filters show."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.case_sources import CASE_SOURCES
from reviewapp.domain.vocabulary import UnknownValue


def test_the_sources_are_auto_and_manual_read_in_words():
    assert CASE_SOURCES.choices() == (
        ("AUTO", "Automatic (a useful verdict)"), ("MANUAL", "Added by a person"))
    assert CASE_SOURCES.sql_in() == "('AUTO', 'MANUAL')"


@pytest.mark.parametrize("value", ["auto", "Manual", "IMPORT", ""])
def test_an_unknown_source_names_the_source_type_field(value):
    with pytest.raises(UnknownValue) as error:
        CASE_SOURCES.get(value)
    assert error.value.name == "source_type"
    assert error.value.allowed == ("AUTO", "MANUAL")


def test_the_rows_cannot_be_changed():
    for row in CASE_SOURCES:
        with pytest.raises(dataclasses.FrozenInstanceError):
            row.label = "changed"
