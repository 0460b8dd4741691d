"""The import formats of ``flask runs import --format`` (domain/import_formats.py): the
codes and which of them read a whole file as one run, as the README lists them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reviewapp.domain.import_formats import FORMAT_CHOICES, IMPORT_FORMATS
from reviewapp.domain.vocabulary import UnknownValue
from reviewapp.services.importers.reading import WHOLE_FILE_FORMATS, unsupported

# README "flask runs import": per-record formats, then the whole-file event logs (each one
# AIOps run), then the SREGym verdict file.
PER_RECORD = ("native", "openai-messages", "tau-bench")
WHOLE_FILE = ("claude-code", "codex", "copilot", "gemini", "opencode", "stratus")


def test_the_choices_are_auto_and_every_format_in_order():
    assert FORMAT_CHOICES == ("auto", *PER_RECORD, *WHOLE_FILE, "sregym-result")


def test_the_event_logs_and_only_they_are_read_as_one_run_per_file():
    assert WHOLE_FILE_FORMATS == WHOLE_FILE
    assert [f.code for f in IMPORT_FORMATS if not f.whole_file] == [*PER_RECORD, "sregym-result"]


def test_an_unsupported_file_names_the_formats_and_an_unknown_one_the_field():
    message = str(unsupported(Path("x.json")))
    assert message == ("x.json: unsupported format; supported: native, openai-messages, "
                       "tau-bench, claude-code, codex, copilot, gemini, opencode, stratus, "
                       "sregym-result (pass --format to force one)")
    with pytest.raises(UnknownValue) as error:
        IMPORT_FORMATS.get("csv")
    assert error.value.name == "format"


def test_a_format_row_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        IMPORT_FORMATS.get("native").whole_file = True
