"""The admin audit log's rules (domain/audit.py, SPEC 8 "an audit log of admin actions"):
the actions and how the log page names them, no secret ever recorded, what changed."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.audit import AUDIT_ACTIONS, changed_keys, scrub
from reviewapp.domain.vocabulary import UnknownValue

HIDDEN = "[not recorded]"


def test_the_actions_and_their_labels_on_the_log_page():
    assert AUDIT_ACTIONS.choices() == (
        ("workspace.create", "Workspace created"), ("workspace.rename", "Workspace renamed"),
        ("member.add", "Member added"), ("member.role", "Role changed"),
        ("member.remove", "Member removed"), ("user.create", "Account created"),
        ("user.deactivate", "Account deactivated"), ("user.activate", "Account reactivated"),
        ("user.password_reset", "One-time password set"),
        ("user.password_set", "Password set (CLI)"),
        ("token.create", "Ingest token created"), ("token.revoke", "Ingest token revoked"),
        ("settings.change", "Settings changed"),
        ("decision.own_rating", "Dispute decided by a lead who rated the run"),
        ("runs.redact", "Stored text redacted again (flask runs redact)"))
    with pytest.raises(UnknownValue) as error:
        AUDIT_ACTIONS.get("user.delete")
    assert error.value.name == "action"
    with pytest.raises(dataclasses.FrozenInstanceError):
        AUDIT_ACTIONS.get("user.create").label = "x"


@pytest.mark.parametrize("key", [
    "password", "password_hash", "new_password", "current_password", "secret", "secret_hash",
    "token", "session_token", "Password", "TOKEN", "Secret_Hash"])
def test_no_password_hash_or_token_secret_is_recorded_in_any_case(key):
    assert scrub({key: "hunter2", "username": "ann"}) == {key: HIDDEN, "username": "ann"}


def test_scrub_reaches_into_mappings_and_lists_at_any_depth():
    given = {"user": {"name": "ann", "password": "p"}, "tokens": [{"token": "t", "id": 3}, "x"],
             "pair": ({"secret": "s"}, 1), 7: "seven", "empty": None}
    assert scrub(given) == {"user": {"name": "ann", "password": HIDDEN},
                            "tokens": [{"token": HIDDEN, "id": 3}, "x"],
                            "pair": [{"secret": HIDDEN}, 1], "7": "seven", "empty": None}
    assert scrub(None) is None
    assert scrub("password") == "password"
    assert scrub({"tokenizer": "bpe", "passwords_count": 2}) == {"tokenizer": "bpe",
                                                                 "passwords_count": 2}


def test_changed_keys_are_the_differing_ones_sorted():
    assert changed_keys({"b": 1, "a": 1, "c": 3}, {"a": 2, "b": 1, "d": 4}) == ["a", "c", "d"]
    assert changed_keys(None, {"x": 1}) == ["x"]
    assert changed_keys({"x": 1}, None) == ["x"]
    assert changed_keys({"x": None}, {}) == []
    assert changed_keys(None, None) == []


def test_a_changed_field_is_named_by_its_registry_label():
    """The log named a change by its stored key, which the page's small capitals showed as
    `FAULT_CATEGORIES`; a setting reads under the settings registry's label, another
    recorded key under the audit fields' label, an unknown key as itself."""
    from reviewapp.domain.audit import field_label
    from reviewapp.domain.workspace_settings import SETTINGS

    for setting in SETTINGS:
        assert field_label("settings.change", setting.code) == setting.label
    assert field_label("settings.change", "fault_categories") == "Fault categories (triage and cases)"
    assert field_label("member.role", "role") == "Role"
    assert field_label("user.password_reset", "must_change_password") == "Must change password"
    assert field_label("member.role", "legacy_key") == "legacy_key"


@pytest.mark.parametrize(("value", "shown"), [
    ("lead", "lead"), ("tau-bench R&D 'airline'", "tau-bench R&D 'airline'"),
    (True, "yes"), (False, "no"), (None, "—"), (3, "3"),
    (["GENERAL"], "GENERAL"), (["GENERAL", "DATABASE"], "GENERAL, DATABASE"),
    ([{"code": "PAYMENTS", "label": "Payments", "group": "incident"}, {"code": "X"}], "Payments, X"),
    ({"logs": ["a", "b"], "metrics": ["m"]}, "logs: a, b; metrics: m"),
    ('["GENERAL"]', '["GENERAL"]'),
])
def test_a_recorded_value_reads_without_json_quotes(value, shown):
    """Values read as text: strings unquoted, lists as comma-separated labels (a row's
    label, else its code), a mapping as `key: value` parts; `"[\\"GENERAL\\"]"` was a
    JSON dump of the value on the page."""
    from reviewapp.domain.audit import readable

    assert readable(value) == shown


def test_a_settings_change_reads_through_the_setting_registry():
    """A setting's before / after: lists as their labels in the workspace's vocabulary, a
    value never set as the default applied then."""
    from reviewapp.domain.audit import change_text
    from reviewapp.domain.fault_categories import FAULT_CATEGORIES

    cats = [{"code": "GENERAL", "label": "General", "group": "incident"},
            {"code": "PAYMENTS", "label": "Payments", "group": "incident"}]
    assert change_text("settings.change", "fault_categories", cats) == "General, Payments"
    assert change_text("settings.change", "fault_categories", None) == \
        "(default) " + ", ".join(c.label for c in FAULT_CATEGORIES)
    assert change_text("settings.change", "triage_negative_targets", True) == "on"
    assert change_text("settings.change", "time_zone", "Asia/Tokyo") == "Asia/Tokyo"
    assert change_text("settings.change", "feedback_reasons",
                       [{"code": "other", "label": "Other", "polarity": "either"}]) == "Other"
    assert change_text("member.role", "role", "lead") == "lead"


def test_the_recorded_fields_and_their_labels_on_the_log_page():
    from reviewapp.domain.audit import AUDIT_FIELDS, field_label

    assert AUDIT_FIELDS.choices() == (
        ("username", "Username"), ("role", "Role"), ("name", "Name"), ("slug", "Short name"),
        ("active", "Active"), ("revoked", "Revoked"), ("sessions_ended", "Sessions ended"),
        ("must_change_password", "Must change password"), ("verdict", "Decision"),
        ("own_rating", "Their own rating"),
        ("open_assignments", "Assigned queue items released"),
        ("held_items", "Held queue items released"),
        ("named_reviewer_of", "Queues that named them as a reviewer"),
        ("rows_scanned", "Rows scanned per table"), ("rows_changed", "Rows redacted per column"),
        ("identities_holding_a_secret_kept", "Ids holding a secret (kept: rows are named by them)"),
        ("rows_merged", "Rows merged into the row holding their redacted value, per column"),
        ("runs_moved", "Runs moved to the merged session"),
        ("collisions_kept", "Rows kept: their redacted value is another row's (not merged)"),
        ("stopped", "Stopped at (a batch failed and was rolled back)"))
    assert [field_label("decision.own_rating", k) for k in ("verdict", "own_rating")] == [
        "Decision", "Their own rating"]
    with pytest.raises(UnknownValue) as error:
        AUDIT_FIELDS.get("password")
    assert error.value.name == "audit field"
    with pytest.raises(dataclasses.FrozenInstanceError):
        AUDIT_FIELDS.get("slug").label = "x"


def test_a_setting_key_outside_a_settings_change_is_no_setting():
    """Only a settings change reads its keys through the settings registry; the same key
    under another action (recorded by an older version) is named and read as it is."""
    from reviewapp.domain.audit import change_text, field_label

    assert field_label("workspace.rename", "time_zone") == "time_zone"
    assert field_label("settings.change", "time_zone") == "Time zone"
    assert change_text("workspace.rename", "triage_negative_targets", True) == "yes"
    assert change_text("settings.change", "triage_negative_targets", True) == "on"
    assert change_text("settings.change", "legacy_key", False) == "no"  # no setting: readable


@pytest.mark.parametrize(("value", "shown"), [
    ({"code": "PAYMENTS", "label": ""}, "PAYMENTS"),  # an empty label: the code
    ({"code": "PAYMENTS", "label": 7}, "PAYMENTS"),  # a label that is no string: the code
    ({"code": "", "label": None}, "code: ; label: —"),  # neither: key: value parts
    ({"label": "Payments"}, "Payments"),
    ((1, None, True), "1, —, yes"),
    ([], ""),
    ({}, ""),
    (2.5, "2.5"),
])
def test_a_row_reads_by_its_label_else_its_code_else_its_parts(value, shown):
    from reviewapp.domain.audit import readable

    assert readable(value) == shown


def test_what_an_action_did_reads_as_one_value_none_for_nothing():
    """Items released and rows scanned are what an action did, recorded on one side:
    the log page shows the value, "none" for nothing (it read "0 → —")."""
    from reviewapp.domain.audit import is_outcome, outcome_text

    outcomes = ["open_assignments", "held_items", "named_reviewer_of", "rows_scanned",
                "rows_changed", "identities_holding_a_secret_kept", "rows_merged", "runs_moved",
                "collisions_kept", "stopped"]
    assert [k for k in ("username", "role", "name", "slug", "active", "revoked", "verdict",
                        *outcomes) if is_outcome("member.remove", k)] == outcomes
    assert not is_outcome("settings.change", "held_items")
    assert not is_outcome("member.remove", "not_a_field")
    assert [outcome_text(v) for v in (0, 0.0, None, [], {}, ())] == ["none"] * 6
    assert [outcome_text(v) for v in (1, 12, ["Pairs", "Triage"])] == ["1", "12", "Pairs, Triage"]
    assert outcome_text({"message": 3, "step": 0}) == "message: 3; step: 0"
