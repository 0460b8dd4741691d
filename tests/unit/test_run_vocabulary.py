"""A run's two vocabularies (domain/run_vocabulary.py, SPEC 3): ``kind`` (what started the
run) and the execution ``status``; codes as stored, labels as pages and filters show them."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.run_vocabulary import RUN_KINDS, RUN_STATUSES
from reviewapp.domain.vocabulary import UnknownValue


def test_the_kinds_are_chat_and_aiops_read_as_spec_3_names_them():
    assert RUN_KINDS.choices() == (("chat", "Chat"), ("aiops", "AIOps"))
    assert RUN_KINDS.label("aiops") == "AIOps"
    assert RUN_KINDS.sql_in() == "('chat', 'aiops')"


def test_the_statuses_are_the_three_execution_states_of_spec_3():
    assert RUN_STATUSES.choices() == (
        ("RUNNING", "Running"), ("SUCCESS", "Success"), ("FAILED", "Failed"))
    assert RUN_STATUSES.sql_in() == "('RUNNING', 'SUCCESS', 'FAILED')"


@pytest.mark.parametrize(("registry", "field", "value"), [
    (RUN_KINDS, "kind", "Chat"), (RUN_KINDS, "kind", "alert"),
    (RUN_STATUSES, "status", "running"), (RUN_STATUSES, "status", "DONE")])
def test_an_unknown_value_names_the_field_it_is_stored_in(registry, field, value):
    """A code differs from its label and is case-sensitive; the 4xx names the column."""
    with pytest.raises(UnknownValue) as error:
        registry.get(value)
    assert error.value.name == field
    assert str(error.value).startswith(f"{field}: {value!r} is not one of ")


@pytest.mark.parametrize("registry", [RUN_KINDS, RUN_STATUSES])
def test_the_rows_cannot_be_changed(registry):
    for row in registry:
        with pytest.raises(dataclasses.FrozenInstanceError):
            row.label = "changed"
        with pytest.raises(dataclasses.FrozenInstanceError):
            row.code = "changed"
