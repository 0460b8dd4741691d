"""Text a person types is redacted before storage like anything an agent sends (SPEC 4):
rating comments and corrections, triage notes and case fields, through the services so
the views, the API and the CLI all get it, and the exports never see the secret."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

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


def test_an_ingest_token_name_is_redacted_before_storage(session, make):
    """An admin who pastes a GitHub token as the name of an ingest token: the token list,
    the audit log (label and recorded name) and the token actor's label never show it."""
    from reviewapp.models import AuditEvent
    from reviewapp.services import admin, audit

    ws = make.workspace()
    actor = make.actor(make.user(ws, Role.ADMIN))
    gh = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"  # invented
    new = admin.create_token(session, actor, ws.id, f"ci {gh}")
    session.expire_all()
    names = [t.name for t in admin.list_tokens(session, actor, ws.id)]
    assert names == ["ci [redacted]"]
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "token.create")).one()
    assert event.target_label == "ci [redacted]" and event.after["name"] == "ci [redacted]"
    assert gh not in repr(audit.list_events(session, actor, ws.id))
    assert gh not in admin.authenticate_token(session, new.secret).label
    admin.revoke_token(session, actor, new.token.id)
    revoked = session.scalars(select(AuditEvent).where(AuditEvent.action == "token.revoke")).one()
    assert revoked.target_label == "ci [redacted]"


def test_a_token_name_that_redaction_lengthens_is_cut_to_its_column(session, make):
    """``[redacted]`` is longer than the short secret it replaces; the stored name stays
    within the column's 120 characters."""
    from reviewapp.services import admin

    ws = make.workspace()
    token = admin.create_token(session, make.actor(make.user(ws, Role.ADMIN)), ws.id,
                               "x" * 110 + " pwd=abc1").token
    session.expire_all()
    assert token.name == ("x" * 110 + " pwd=[redacted]")[:120]
