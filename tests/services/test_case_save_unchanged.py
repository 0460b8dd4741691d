"""A case save that changes nothing changes nothing (new-user finding): saving the edit
page untouched bumped the case's version and ``updated_at``, which also counted as a
person's edit (``verdict_case.case_edited``: version > 1), so an AUTO case nobody had
edited was no longer withdrawn when its run left ``useful`` (SPEC 7). The rule is in
``cases.edit_case``; the save answers ``changed=False`` for the page to say so."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Role
from reviewapp.errors import Conflict
from reviewapp.models import AuditEvent, Case
from reviewapp.services import cases, feedback

from .feedback.helpers import answer_message

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
STORED = {"title": "Login failures", "fault_category": "AUTH", "root_cause": "expired key\nin vault",
          "solution": "rotate it", "error_code": "HTTP_401", "service": None}


@pytest.fixture
def stored(make, ws):
    lead = make.actor(make.user(ws, Role.LEAD))
    case = make.case(ws, run=make.run(ws), created_at=T0, **STORED)
    return lead, case


def _row(session, case_id):
    session.expire_all()
    c = session.get(Case, case_id)
    return (c.version, c.updated_at, c.title, c.fault_category, c.root_cause, c.solution,
            c.error_code, c.service)


def _audit_count(session):
    return session.scalar(select(func.count()).select_from(AuditEvent))


UNCHANGED = [
    pytest.param({**STORED, "service": ""}, id="as-the-form-sends-them"),
    # What a browser sends for the same values: CRLF line ends in a textarea, codes with
    # the spaces the service trims, a blank optional field.
    pytest.param({**STORED, "root_cause": "expired key\r\nin vault", "error_code": " HTTP_401 ",
                  "service": "   "}, id="crlf-and-trimmed"),
]


@pytest.mark.parametrize("fields", UNCHANGED)
def test_a_save_without_a_change_writes_nothing(session, stored, fields):
    lead, case = stored
    before, audits = _row(session, case.case_id), _audit_count(session)
    saved = cases.edit_case(session, lead, case.case_id, 1, fields)
    assert saved.changed is False and saved.case.case_id == case.case_id
    assert _row(session, case.case_id) == before
    assert before[:2] == (1, T0)
    assert _audit_count(session) == audits


def test_a_save_with_a_change_bumps_the_version(session, stored):
    lead, case = stored
    saved = cases.edit_case(session, lead, case.case_id, 1, {**STORED, "service": "vault"})
    assert saved.changed is True
    version, updated_at, *values = _row(session, case.case_id)
    assert (version, values[-1]) == (2, "vault") and updated_at > T0


def test_a_stale_page_is_still_a_conflict_without_a_change(session, stored):
    lead, case = stored
    cases.edit_case(session, lead, case.case_id, 1, {**STORED, "service": "vault"})
    with pytest.raises(Conflict):
        cases.edit_case(session, lead, case.case_id, 1, STORED)
    assert _row(session, case.case_id)[0] == 2


def test_an_untouched_save_leaves_an_auto_case_unedited(session, make, ws):
    """SPEC 7: the AUTO case of a run that leaves ``useful`` is withdrawn unless a person
    edited it; opening the editor and saving it untouched is not an edit."""
    reviewer, lead = make.actor(make.user(ws)), make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, reviewer, "chat_message", mid, None, "positive")
    case = session.scalars(select(Case).where(Case.run_pk == run.id)).one()
    untouched = {name: getattr(case, name) or "" for name in
                 ("title", "fault_category", "root_cause", "solution", "error_code", "service")}
    assert cases.edit_case(session, lead, case.case_id, case.version, untouched).changed is False
    feedback.upsert_feedback(session, reviewer, "chat_message", mid, None, "negative", switch=True)
    session.expire_all()
    case = session.get(Case, case.case_id)
    assert (case.version, case.run_not_useful_at) == (1, None)
    assert case.withdrawn_at is not None


def test_trailing_blanks_are_no_change_and_are_not_stored(session, stored):
    """New-user walk: spaces typed after the title saved as a change ("Case saved.", a new
    version) and stayed in the title, piling up save after save. Trailing blanks of the
    free-text fields are dropped (leading ones stay as typed, issue 11)."""
    lead, case = stored
    before = _row(session, case.case_id)
    padded = {**STORED, "title": "Login failures   ", "solution": "rotate it \n\n",
              "service": "  "}
    assert cases.edit_case(session, lead, case.case_id, 1, padded).changed is False
    assert _row(session, case.case_id) == before
    edited = {**STORED, "title": "Login failures (vault)  \t", "root_cause": "  expired key "}
    assert cases.edit_case(session, lead, case.case_id, 1, edited).changed is True
    after = _row(session, case.case_id)
    assert (after[0], after[2], after[4]) == (2, "Login failures (vault)", "  expired key")
