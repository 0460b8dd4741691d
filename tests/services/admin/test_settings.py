"""Workspace settings (SPEC 8): one versioned page whose values the app then applies —
reasons with their polarity, negative part ratings opening triage items, one
fault-category vocabulary for triage and cases, evidence tools, time zone — each
change audited, a stale save refused with the current values."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.domain.fault_categories import FAULT_CATEGORIES
from reviewapp.domain.suggest import _TRIAGE_RULES, CATEGORY_KEYWORDS, TRIAGE_CATEGORIES
from reviewapp.domain.workspace_settings import SETTINGS
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.models import AuditEvent, TriageItem, Workspace
from reviewapp.services import admin, cases, feedback, triage


@pytest.fixture
def ws(make):
    return make.workspace(slug="alpha")


@pytest.fixture
def boss(make, ws):
    return make.actor(make.user(ws, Role.ADMIN, username="boss"))


def _page(session, boss, ws, **changes):
    """The page's values as shown, with ``changes`` typed over them."""
    view = admin.get_settings(session, boss, ws.id)
    return view.version, {**view.values, **changes}


def test_defaults_are_shown_and_saving_them_unchanged_changes_nothing(session, boss, ws):
    version, values = _page(session, boss, ws)
    assert values["triage_negative_targets"] == "" and values["time_zone"] == "UTC"
    assert values["fault_categories"].splitlines()[0] == "GENERAL | General / other | incident"
    view = admin.update_settings(session, boss, ws.id, version, values)
    assert view.version == version
    assert session.scalars(select(AuditEvent.action).where(AuditEvent.action == "settings.change")).all() == []


def test_a_save_applies_and_is_audited_with_before_and_after(session, boss, ws):
    version, values = _page(session, boss, ws, triage_negative_targets="1", time_zone="Europe/Berlin")
    view = admin.update_settings(session, boss, ws.id, version, values)
    assert view.version == version + 1
    session.expire_all()
    stored = session.get(Workspace, ws.id).settings
    assert stored["triage_negative_targets"] is True and stored["time_zone"] == "Europe/Berlin"
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "settings.change")).one()
    assert event.before == {"time_zone": None, "triage_negative_targets": None}
    assert event.after == {"time_zone": "Europe/Berlin", "triage_negative_targets": True}
    assert event.actor_label == "boss"


def test_a_stale_save_is_refused_with_the_current_values(session, boss, ws):
    version, values = _page(session, boss, ws, time_zone="Asia/Tokyo")
    admin.update_settings(session, boss, ws.id, version, values)
    with pytest.raises(Conflict) as stale:
        admin.update_settings(session, boss, ws.id, version, {**values, "time_zone": "UTC"})
    assert stale.value.details["version"] == version + 1
    assert stale.value.details["values"]["time_zone"] == "Asia/Tokyo"
    session.expire_all()
    assert session.get(Workspace, ws.id).settings["time_zone"] == "Asia/Tokyo"


def test_a_stale_save_says_who_changed_the_settings(session, make, boss, ws):
    """The 409 said only "the settings were changed" (tidy walk, 2026-12-04; the triage
    and case 409s name who): the latest audited settings change names them, or says it
    was the same admin's other tab."""
    other = make.actor(make.user(ws, Role.ADMIN, username="olga"))
    version, values = _page(session, boss, ws)
    admin.update_settings(session, other, ws.id, version, {**values, "time_zone": "Asia/Tokyo"})
    with pytest.raises(Conflict) as stale:
        admin.update_settings(session, boss, ws.id, version, {**values, "time_zone": "UTC"})
    assert stale.value.message == ("The settings were changed by olga since this page was loaded; "
                                   "nothing was saved. Here are the current values.")
    admin.update_settings(session, boss, ws.id, version + 1, {**values, "time_zone": "Europe/Berlin"})
    with pytest.raises(Conflict) as own:
        admin.update_settings(session, boss, ws.id, version + 1, {**values, "time_zone": "UTC"})
    assert own.value.message == ("The settings were changed by you, in another tab or window, since this "
                                 "page was loaded; nothing was saved. Here are the current values.")


@pytest.mark.parametrize("code, text, says", [
    ("feedback_reasons", "incorrect | Wrong | positive", "negative ratings only"),
    ("feedback_reasons", "incorrect | Wrong | either", "cannot be either"),
    ("feedback_reasons", "Bad Code", "not a code"),
    ("feedback_reasons", "", "at least one"),
    ("fault_categories", "database", "not a code"),
    ("fault_categories", "NET | Network | infra", "group must be"),
    ("fault_categories", "", "at least one category"),
    ("aiops_evidence_tools", "logs query_logs", "group: tool"),
    ("time_zone", "Mars/Olympus", "not a time zone"),
    ("triage_negative_targets", "maybe", "on or off"),
])
def test_invalid_values_are_refused_naming_the_setting(session, boss, ws, code, text, says):
    version, values = _page(session, boss, ws, **{code: text})
    with pytest.raises(ValidationFailed) as invalid:
        admin.update_settings(session, boss, ws.id, version, values)
    assert invalid.value.field == code and says in invalid.value.message
    session.expire_all()
    assert session.get(Workspace, ws.id).settings_version == version


def test_only_admins_of_the_workspace_read_or_save(session, make, ws):
    other = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    foreign_admin = make.actor(make.user(other, Role.ADMIN))
    for actor in (lead, foreign_admin):
        with pytest.raises(Forbidden):
            admin.get_settings(session, actor, ws.id)
        with pytest.raises(Forbidden):
            admin.update_settings(session, actor, ws.id, 1, {"time_zone": "UTC"})


def test_workspace_reasons_and_their_polarity_are_applied_to_ratings(session, make, boss, ws):
    version, values = _page(session, boss, ws, feedback_reasons="slow | Too slow | negative\n"
                                                                 "great_sources | Great sources | positive")
    admin.update_settings(session, boss, ws.id, version, values)
    reviewer = make.actor(make.user(ws, Role.REVIEWER))
    run = make.aiops_run(ws)
    step = run.steps[0].id
    feedback.upsert_feedback(session, reviewer, "diagnostic_step", step, None, "negative", "slow")
    with pytest.raises(ValidationFailed):  # a negative-only reason on a thumbs-up
        feedback.upsert_feedback(session, reviewer, "diagnostic_step", step, None, "positive", "slow")
    with pytest.raises(ValidationFailed):  # a default reason the workspace dropped
        feedback.upsert_feedback(session, reviewer, "diagnostic_step", step, None, "negative", "incorrect")


def test_the_negative_part_rating_setting_opens_triage_items(session, make, boss, ws):
    reviewer = make.actor(make.user(ws, Role.REVIEWER))
    before = make.aiops_run(ws)
    feedback.upsert_feedback(session, reviewer, "diagnostic_step", before.steps[0].id, None, "negative")
    assert session.scalars(select(TriageItem).where(TriageItem.run_pk == before.id)).all() == []
    version, values = _page(session, boss, ws, triage_negative_targets="1")
    admin.update_settings(session, boss, ws.id, version, values)
    after = make.aiops_run(ws)
    feedback.upsert_feedback(session, reviewer, "diagnostic_step", after.steps[0].id, None, "negative")
    item = session.scalars(select(TriageItem).where(TriageItem.run_pk == after.id)).one()
    assert item.opened_reason != "not_useful"


def test_one_category_vocabulary_for_triage_and_cases(session, make, boss, ws):
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    item = make.triage_item(run)
    case = make.case(ws, run=run)
    # Both take a code of the one list, as typed ...
    assert triage.set_fault_category(session, lead, item.id, 1, "DATABASE").fault_category == "DATABASE"
    edited = cases.edit_case(session, lead, case.case_id, 1, {"title": "t", "fault_category": "RETRIEVAL_MISS"})
    assert edited.case.fault_category == "RETRIEVAL_MISS"
    # ... a code or label of it in any case as that code (second new-user walk) ...
    assert triage.set_fault_category(session, lead, item.id, 2, "database").fault_category == "DATABASE"
    # ... and refuse anything else with the list, never upper-casing it into a new code.
    for call in (lambda: triage.set_fault_category(session, lead, item.id, 3, "my_own"),
                 lambda: cases.edit_case(session, lead, case.case_id, 2, {"title": "t", "fault_category": "MY_OWN"})):
        with pytest.raises(ValidationFailed) as refused:
            call()
        assert refused.value.field == "fault_category"
        assert ", ".join(label for _, label in FAULT_CATEGORIES.choices()) in refused.value.message
        assert refused.value.details == {"allowed": list(FAULT_CATEGORIES.codes())}


def test_a_workspace_list_replaces_the_default_for_both(session, make, boss, ws):
    version, values = _page(session, boss, ws, fault_categories="GENERAL\nPAYMENTS | Payments")
    admin.update_settings(session, boss, ws.id, version, values)
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    item = make.triage_item(run)
    assert triage.set_fault_category(session, lead, item.id, 1, "PAYMENTS").fault_category == "PAYMENTS"
    with pytest.raises(ValidationFailed) as refused:
        triage.set_fault_category(session, lead, item.id, 2, "DATABASE")
    assert refused.value.message.endswith("use one of General, Payments")
    draft = cases.new_case_draft(session, lead, run.id)
    assert tuple(category.code for category in draft.categories) == ("GENERAL", "PAYMENTS")


def test_a_case_keeps_a_category_dropped_from_the_list_until_it_is_changed(session, make, ws):
    lead = make.actor(make.user(ws, Role.LEAD))
    case = make.case(ws, fault_category="LEGACY_FREE_TEXT")
    edited = cases.edit_case(session, lead, case.case_id, 1, {"title": "renamed",
                                                              "fault_category": "LEGACY_FREE_TEXT"})
    assert (edited.changed, edited.case.fault_category) == (True, "LEGACY_FREE_TEXT")


def test_every_proposed_category_is_in_the_vocabulary():
    proposed = {c for c, _ in CATEGORY_KEYWORDS} | {c for _, _, c in _TRIAGE_RULES} | {"GENERAL"}
    assert proposed <= set(FAULT_CATEGORIES.codes())
    assert set(TRIAGE_CATEGORIES) <= set(FAULT_CATEGORIES.codes())


def test_every_setting_shows_what_it_parses():
    """Round trip: the default page text parses back to a value that shows the same."""
    for row in SETTINGS:
        text = row.show({})
        assert row.show({row.code: row.parse(text)}) == text, row.code


def test_a_stored_value_is_described_with_its_vocabulary_labels():
    flag, zone, cats = (SETTINGS.get(c) for c in ("triage_negative_targets", "time_zone", "fault_categories"))
    assert (flag.describe(None), flag.describe(True), flag.describe(False)) == ("(default) off", "on", "off")
    assert (zone.describe(None), zone.describe("Asia/Tokyo")) == ("(default) UTC", "Asia/Tokyo")
    # GENERAL, the default category, is always kept (workspace_categories)
    assert cats.describe([{"code": "PAYMENTS", "label": "Payments", "group": "incident"}]) == \
        "General / other, Payments"
    assert cats.describe(None).startswith("(default) General / other, Resource exhaustion, Database, ")
