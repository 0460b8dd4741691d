"""Text a person types is redacted before storage like anything an agent sends (SPEC 4):
rating comments and corrections, triage notes and case fields, through the services so
the views, the API and the CLI all get it, and the exports never see the secret."""

from __future__ import annotations

import json

import pytest

from reviewapp.actors import Role
from reviewapp.domain.export_format import chunks
from reviewapp.models import Case, Feedback, TriageItem
from reviewapp.services import cases, exports, feedback, triage

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # invented
PASTED = f"ran aws configure set aws_secret_access_key {SECRET} and it worked"
OTHER = "db url postgres://app:S3cr3tPassw0rd@db.internal/app"
REDACTED = "[redacted]"  # SPEC 4


def _answer_id(run) -> str:
    return next(m.id for m in run.messages if m.role == "assistant")


def test_rating_comment_and_correction_are_redacted_before_storage(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws, Role.REVIEWER))
    run = make.run(ws, kind="chat")
    row = feedback.upsert_feedback(session, actor, "chat_message", _answer_id(run), None, "negative",
                                   reason="incorrect", comment=PASTED, correction=OTHER)
    session.expire_all()
    stored = session.get(Feedback, row.id)
    assert SECRET not in stored.comment and REDACTED in stored.comment
    assert stored.comment.startswith("ran aws configure set aws_secret_access_key ")
    assert "S3cr3tPassw0rd" not in stored.correction and REDACTED in stored.correction


def test_triage_note_is_redacted_before_storage(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)
    item = make.triage_item(run)
    row = triage.set_note(session, make.actor(lead), item.id, item.version, PASTED)
    session.expire_all()
    note = session.get(TriageItem, row.id).note
    assert SECRET not in note and REDACTED in note


@pytest.mark.parametrize("field", ["title", "root_cause", "solution", "error_code", "service"])
def test_case_fields_are_redacted_before_storage(session, make, field):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws, title="old")
    value = "token hunter2hunter2" if field in ("error_code", "service") else PASTED
    fields = {"title": "Pool exhaustion", field: value}
    cases.edit_case(session, make.actor(lead), case.case_id, 1, fields)
    session.expire_all()
    stored = getattr(session.get(Case, case.case_id), field)
    assert "hunter2hunter2" not in stored and SECRET not in stored and REDACTED in stored


def test_exports_hold_no_pasted_secret(session, make):
    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, kind="chat")
    feedback.upsert_feedback(session, make.actor(lead), "chat_message", _answer_id(run), None,
                             "negative", reason="incorrect", comment=PASTED, correction=PASTED)
    case = make.case(ws, title="old")
    cases.edit_case(session, make.actor(lead), case.case_id, 1,
                    {"title": PASTED, "solution": PASTED})
    for export in (exports.export_feedback, exports.export_cases, exports.export_evalset):
        for fmt in ("csv", "jsonl"):
            stream = export(session, admin)
            text = "".join(chunks(fmt, stream.columns, stream.rows))
            assert SECRET not in text, (export.__name__, fmt)
    stream = exports.export_feedback(session, admin)
    rows = [json.loads(line) for line in "".join(chunks("jsonl", stream.columns, stream.rows)).splitlines()]
    assert [r["comment"] for r in rows] == [PASTED.replace(SECRET, REDACTED)]
