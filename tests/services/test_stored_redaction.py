"""``flask runs redact`` (services.stored_redaction): text stored before a redaction fix
is redacted again, in every column of the registry and in the search index; the pass is
audited, idempotent, and a dry run writes nothing (SPEC 4)."""

from __future__ import annotations

import pytest
from sqlalchemy import JSON, String, Text, select, text

from reviewapp import search_index
from reviewapp.actors import Actor
from reviewapp.domain.search_text import fold
from reviewapp.extensions import db
from reviewapp.models import (
    AuditEvent,
    Case,
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    IngestToken,
    Message,
    Run,
    TargetRevision,
    ToolCall,
    ToolDayCount,
)
from reviewapp.services import rollups_rebuild, run_text, stored_redaction
from reviewapp.services.stored_text import KEPT, REDACTED

from ..shared_data import tau_bench_file

# Invented secrets, stored as the code before a fix would have stored them.
GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PW = "hunter2hunter2X"
SECRETS = (GH, PW)
LEAK = f"token {GH} and DB_PASSWORD={PW}"


def _text_columns():
    for table in db.metadata.sorted_tables:
        for column in table.columns:
            if isinstance(column.type, (String, Text, JSON)) or "JSON" in repr(column.type):
                yield table, column


def test_every_text_column_is_classified_by_the_registry():
    """A model that gains a text column fails here until the registry says whether the
    re-scan redacts it or why not."""
    redacted = {c.name for c in REDACTED}
    assert not redacted & set(KEPT)
    names = {f"{t.name}.{c.name}" for t, c in _text_columns()}
    missing = sorted(names - redacted - set(KEPT))
    assert missing == []
    assert redacted <= names  # no entry for a column that does not exist


def _leak_everywhere(session, make):
    """A run with every part, its secrets written straight into the rows (no redaction),
    and the search index rewritten from them, as it stood before the fix."""
    ws = make.workspace()
    run = make.aiops_run(ws, tool_calls=[
        {"id": "tc-1", "tool_name": "query_logs", "status": "failed",
         "arguments": {"q": "x"}, "error": "boom", "started_at": "2026-11-27T10:00:00Z",
         "completed_at": "2026-11-27T10:00:02Z"}],
        messages=[{"id": "a1", "role": "assistant", "content": "ok",
                   "metadata": {"citations": [{"id": "c1", "title": "t", "excerpt": "e"}],
                                "tool_call_ids": ["tc-1"]}}])
    run.query, run.answer = f"why? {LEAK}", f"because {GH}"
    run.alert, run.orchestration_trace = {"labels": {"note": LEAK}}, [{"step": LEAK}]
    run.session.query = LEAK
    message = session.scalars(select(Message).where(Message.run_pk == run.id)).one()
    message.content = LEAK
    message.meta = {"citations": [{"id": "c1", "title": LEAK, "excerpt": GH}], "tool_call_ids": ["tc-1"]}
    step = session.scalars(select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)).first()
    step.summary = LEAK
    session.scalars(select(DiagnosticReport).where(DiagnosticReport.run_pk == run.id)).one().content = LEAK
    call = session.scalars(select(ToolCall).where(ToolCall.run_pk == run.id)).one()
    call.arguments, call.result_summary, call.error_message = {"cmd": LEAK}, LEAK, f"auth failed {GH}"
    call.tool_name = f"tool {GH}"
    session.add(TargetRevision(workspace_id=ws.id, run_pk=run.id, target_type="diagnostic_report",
                               target_id=1, content=LEAK))
    session.add(Case(workspace_id=ws.id, diagnosis_id=run.run_id, run_pk=run.id, title=f"t {GH}",
                     root_cause=LEAK, solution=LEAK))
    make.token(ws, name="agent")
    session.scalars(select(IngestToken).where(IngestToken.workspace_id == ws.id)).one().name = GH
    session.commit()
    run_text.reindex_runs(session, [run.id])
    session.commit()
    rollups_rebuild.rebuild(session, ws.id)  # the dashboard's tool rows name the tool
    return ws, run


def _stored_secrets(session) -> list[str]:
    """``table.column`` of every stored value (any table, any text column) and search
    index row that still holds one of ``SECRETS``."""
    found = []
    for table, column in _text_columns():
        for value in session.execute(select(column).where(column.isnot(None))).scalars():
            if any(s in str(value) for s in SECRETS):
                found.append(f"{table.name}.{column.name}")
    for name in (search_index.SEARCH_TABLE, search_index.CALL_TABLE):
        for row in session.execute(text(f"SELECT * FROM {name}")):
            if any(fold(s) in str(row) or s in str(row) for s in SECRETS):
                found.append(name)
    return sorted(set(found))


def test_the_pass_redacts_every_column_and_the_search_index(session, make, runner):
    ws, run = _leak_everywhere(session, make)
    assert run_text.few_matches(session, fold(GH)) == (run.id,)  # findable before
    assert len(_stored_secrets(session)) >= 14

    out = runner.invoke(args=["runs", "redact"])
    assert out.exit_code == 0, out.output
    session.expire_all()
    assert _stored_secrets(session) == []
    assert run_text.few_matches(session, fold(GH)) == ()
    stored = session.get(Run, run.id)
    assert stored.query == "why? token [redacted] and DB_PASSWORD=[redacted]"
    assert stored.answer == "because [redacted]"
    meta = session.scalars(select(Message.meta).where(Message.run_pk == run.id)).one()
    assert meta == {"citations": [{"id": "c1", "title": "token [redacted] and DB_PASSWORD=[redacted]",
                                   "excerpt": "[redacted]"}], "tool_call_ids": ["tc-1"]}
    assert "diagnosis_run.query: 1 rows changed" in out.output
    assert "tool_call_audit.error_message: 1 rows changed" in out.output
    tool_rows = session.scalars(select(ToolDayCount.tool_name).where(ToolDayCount.workspace_id == ws.id)).all()
    assert len(tool_rows) == 1 and tool_rows[0].startswith("tool [redacted]~")

    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).one()
    assert event.workspace_id is None and event.actor_label == "system"
    changed = event.after["rows_changed"]
    assert changed["diagnosis_run.query"] == 1 and changed["diagnosis_run.answer"] == 1
    assert changed["message.metadata"] == 1 and changed["case_library.title"] == 1
    assert changed["ingest_token.name"] == 1 and changed["diagnosis_session.query"] == 1
    assert event.after["rows_scanned"]["diagnosis_run"] == 1
    assert event.after["rows_scanned"]["tool_call_audit"] == 1

    # Idempotent: a second pass finds nothing to change.
    again = stored_redaction.redact_stored(session, Actor.system_actor())
    assert sum(again.changed.values()) == 0 and again.scanned["diagnosis_run"] == 1
    assert again.reindexed_runs == 0 and again.reindexed_calls == 0


def test_a_dry_run_counts_and_writes_nothing(session, make, runner):
    _leak_everywhere(session, make)
    before = _stored_secrets(session)
    out = runner.invoke(args=["runs", "redact", "--dry-run", "--batch-size", "1"])
    assert out.exit_code == 0, out.output
    assert "diagnosis_run.query: 1 rows would change" in out.output
    assert "(dry run)" in out.output
    session.expire_all()
    assert _stored_secrets(session) == before
    assert session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).all() == []


def test_one_workspace_only_and_batches(session, make):
    ws, run = _leak_everywhere(session, make)
    other, other_run = _leak_everywhere(session, make)
    summary = stored_redaction.redact_stored(session, Actor.system_actor(), workspace_id=ws.id,
                                             batch_size=1)
    session.expire_all()
    assert summary.scanned["diagnosis_run"] == 1 and summary.scanned["message"] == 1
    assert GH not in session.get(Run, run.id).answer
    assert GH in session.get(Run, other_run.id).answer  # the other workspace untouched
    assert GH in session.get(DiagnosisSession, other_run.diagnosis_session_id).query
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).one()
    assert event.workspace_id == ws.id


def test_ingested_runs_need_nothing(session, make):
    """What today's ingestion stored is already redacted: a pass over it changes nothing
    (the pass and ingestion apply the same functions)."""
    ws = make.workspace()
    make.aiops_run(ws, query=LEAK, answer=LEAK, alert={"password": PW, "x": [LEAK]},
                   session_id=f"s-{GH}", orchestration_trace={"k": LEAK},
                   tool_calls=[{"id": f"call-{GH}", "tool_name": f"tool {GH}", "status": "completed",
                                "arguments": {"token": GH, "x": LEAK}, "output": {"o": LEAK},
                                "started_at": "2026-11-27T10:00:00Z",
                                "completed_at": "2026-11-27T10:00:02Z"}],
                   messages=[{"id": f"m-{GH}", "role": "assistant", "content": LEAK,
                              "metadata": {"citations": [{"id": f"c-{GH}", "title": LEAK}],
                                           "tool_call_ids": [f"call-{GH}"], "extra": {"k": LEAK}}}])
    summary = stored_redaction.redact_stored(session, Actor.system_actor(), dry_run=True)
    assert dict(summary.changed) == {}
    assert summary.identities["tool_call_audit.id"] == 0


def test_an_admin_may_redact_their_workspace_only(session, make):
    from reviewapp.actors import Role
    from reviewapp.errors import Forbidden

    ws, other = make.workspace(), make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    stored_redaction.redact_stored(session, admin, workspace_id=ws.id)
    for workspace_id in (other.id, None):
        with pytest.raises(Forbidden):
            stored_redaction.redact_stored(session, admin, workspace_id=workspace_id)


def test_a_pass_over_real_imported_runs_changes_nothing(session, make, runner):
    """200 real τ-bench runs imported today: the pass (same functions as ingestion)
    finds nothing left to redact, so it rewrites no row of real data."""
    make.workspace(slug="tau")
    out = runner.invoke(args=["runs", "import", str(tau_bench_file()), "--workspace", "tau"])
    assert out.exit_code == 0, out.output
    summary = stored_redaction.redact_stored(session, Actor.system_actor(), dry_run=True, batch_size=64)
    assert summary.scanned["diagnosis_run"] == 200 and summary.scanned["message"] > 1000
    assert dict(summary.changed) == {}


# --- A redacted value that another row already holds (new-user finding: the pass stopped
# on UNIQUE (workspace_id, session_id) and never reached the later columns).

OLD_SECRET = "OldSessionSecret99"
RAW_SESSION = f"password={OLD_SECRET}"


def _call(call_id: str, tool_name: str) -> dict:
    return {"id": call_id, "tool_name": tool_name, "status": "completed", "arguments": {"q": "x"},
            "started_at": "2026-11-27T10:00:00Z", "completed_at": "2026-11-27T10:00:02Z"}


def _session_collision(session, make):
    """The agent re-sent its session after the fix (stored redacted, with one run), and a
    run of the same session stored before it (its session id in clear, with a tool call,
    in the search index); a token named with a secret, in a table walked later."""
    ws = make.workspace()
    new = make.aiops_run(ws, "run-new", session_id=RAW_SESSION)
    redacted_id = session.get(DiagnosisSession, new.diagnosis_session_id).session_id
    assert OLD_SECRET not in redacted_id and redacted_id.startswith("password=[redacted]~")
    old = make.aiops_run(ws, "run-old", session_id="placeholder", tool_calls=[_call("tc-old", "query_logs")])
    old_session = session.get(DiagnosisSession, old.diagnosis_session_id)
    old_session.session_id = RAW_SESSION
    old_session.created_at = new.created_at.replace(year=2025)  # the session began before
    make.token(ws, name="agent")
    session.scalars(select(IngestToken).where(IngestToken.workspace_id == ws.id)).one().name = GH
    session.commit()
    run_text.reindex_runs(session, [old.id])
    session.commit()
    return ws, new, old, redacted_id


def _where(needle: str, session) -> list[str]:
    found = []
    for table, column in _text_columns():
        for value in session.execute(select(column).where(column.isnot(None))).scalars():
            if needle in str(value):
                found.append(f"{table.name}.{column.name}")
    for name in (search_index.SEARCH_TABLE, search_index.CALL_TABLE):
        for row in session.execute(text(f"SELECT * FROM {name}")):
            if fold(needle) in str(row) or needle in str(row):
                found.append(name)
    return sorted(set(found))


def test_a_session_id_whose_redacted_form_exists_is_merged_into_that_session(session, make, runner):
    from reviewapp.actors import Role
    from reviewapp.services.feedback.verdict import set_run_verdict

    ws, new, old, redacted_id = _session_collision(session, make)
    old_session_pk, new_session_pk = old.diagnosis_session_id, new.diagnosis_session_id
    assert _where(OLD_SECRET, session) == ["diagnosis_session.session_id", search_index.SEARCH_TABLE]

    dry = runner.invoke(args=["runs", "redact", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert ("diagnosis_session.session_id: 1 rows would merge into the row that holds their "
            "redacted value (1 runs moved)") in dry.output
    assert "diagnosis_session.session_id: 1 rows would change" not in dry.output
    assert "ingest_token.name: 1 rows would change" in dry.output
    session.expire_all()
    assert session.get(DiagnosisSession, old_session_pk) is not None  # nothing written

    out = runner.invoke(args=["runs", "redact"])
    assert out.exit_code == 0, out.output
    assert ("diagnosis_session.session_id: 1 rows merged into the row that holds their "
            "redacted value (1 runs moved)") in out.output
    session.expire_all()
    assert _where(OLD_SECRET, session) == [] and _where(GH, session) == []
    assert session.get(DiagnosisSession, old_session_pk) is None
    kept = session.get(DiagnosisSession, new_session_pk)
    assert kept.session_id == redacted_id and kept.created_at.year == 2025  # the earlier start
    runs = session.scalars(select(Run).where(Run.workspace_id == ws.id).order_by(Run.run_id)).all()
    assert [(r.run_id, r.diagnosis_session_id) for r in runs] == [
        ("run-new", new_session_pk), ("run-old", new_session_pk)]
    call = session.scalars(select(ToolCall).where(ToolCall.id == "tc-old")).one()
    assert (call.run_pk, call.diagnostic_task_id, call.chat_session_id) == (old.id, new_session_pk, None)
    assert run_text.few_matches(session, fold(redacted_id)) == tuple(sorted((new.id, old.id)))
    # The agent names the old run by the session id it sends (redacted on the way in).
    reviewer = make.actor(make.user(ws, Role.REVIEWER))
    assert set_run_verdict(session, reviewer, RAW_SESSION, "run-old", "not_useful").run_id == "run-old"
    assert session.get(Run, old.id).feedback == "not_useful"

    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).one()
    assert event.after["rows_merged"] == {"diagnosis_session.session_id": 1}
    assert event.after["runs_moved"] == 1 and event.after["collisions_kept"] == {}
    assert event.after["rows_changed"] == {"ingest_token.name": 1}

    again = runner.invoke(args=["runs", "redact"])
    assert again.exit_code == 0, again.output
    assert "0 column values changed" in again.output and "merged" not in again.output


def test_a_collision_with_a_session_of_its_own_state_is_kept_and_reported(session, make, runner):
    """A legacy session (question, answer, verdict of its own) is not merged: its id is
    left as stored, counted in the output and the audit event; the pass goes on."""
    ws, new, old, redacted_id = _session_collision(session, make)
    legacy = session.get(DiagnosisSession, old.diagnosis_session_id)
    session.delete(session.get(Run, old.id))
    legacy.query, legacy.answer, legacy.status = "why?", "because", "SUCCESS"
    session.commit()

    dry = runner.invoke(args=["runs", "redact", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    line = ("diagnosis_session.session_id: 1 rows keep their value: the redacted value is another "
            "row's and theirs has state of its own (not merged)")
    assert line in dry.output
    out = runner.invoke(args=["runs", "redact"])
    assert out.exit_code == 0, out.output
    assert line in out.output
    session.expire_all()
    assert _where(OLD_SECRET, session) == ["diagnosis_session.session_id"]  # reported, not hidden
    assert _where(GH, session) == []  # the later tables were reached
    assert session.get(DiagnosisSession, legacy.id).query == "why?"
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).one()
    assert event.after["collisions_kept"] == {"diagnosis_session.session_id": 1}
    assert event.after["rows_merged"] == {} and event.after["rows_changed"] == {"ingest_token.name": 1}


def test_tool_names_that_redact_to_one_name_are_summed_in_the_dashboard(session, make):
    """A tool name stored in clear before the fix and the same name sent after it (stored
    redacted) become one name: the dashboard's roll-up row (keyed by name) counts both."""
    ws = make.workspace()
    make.aiops_run(ws, tool_calls=[_call("tc-new", f"tool {GH}")])
    old = make.aiops_run(ws, tool_calls=[_call("tc-old", "placeholder")])
    session.scalars(select(ToolCall).where(ToolCall.run_pk == old.id)).one().tool_name = f"tool {GH}"
    session.commit()
    rollups_rebuild.rebuild(session, ws.id)
    assert len(session.scalars(select(ToolDayCount).where(ToolDayCount.workspace_id == ws.id)).all()) == 2

    summary = stored_redaction.redact_stored(session, Actor.system_actor())
    assert summary.changed["tool_call_audit.tool_name"] == 1
    rows = session.execute(select(ToolDayCount.tool_name, ToolDayCount.calls)
                           .where(ToolDayCount.workspace_id == ws.id)).all()
    assert len(rows) == 1 and rows[0].calls == 2 and GH not in rows[0].tool_name


def test_a_batch_that_fails_leaves_an_audit_event_of_what_was_done(session, make, runner, monkeypatch):
    """A batch that fails is rolled back; the event records the batches committed before
    it and where the pass stopped; the command says so (exit status 1, no traceback)."""
    ws, run = _leak_everywhere(session, make)
    real = stored_redaction._write_batch

    def failing(session_, table, *args, **kwargs):
        if table.name == "ingest_token":
            raise RuntimeError("disk full")
        return real(session_, table, *args, **kwargs)

    monkeypatch.setattr(stored_redaction, "_write_batch", failing)
    out = runner.invoke(args=["runs", "redact"])
    assert out.exit_code == 1
    assert "stopped at ingest_token" in out.output and "RuntimeError" in out.output
    assert "Traceback" not in out.output
    session.expire_all()
    assert GH not in session.get(Run, run.id).answer  # committed before the failure
    assert session.scalars(select(IngestToken.name).where(IngestToken.workspace_id == ws.id)).one() == GH
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "runs.redact")).one()
    assert event.after["rows_changed"]["diagnosis_run.answer"] == 1
    assert "ingest_token.name" not in event.after["rows_changed"]
    assert event.after["stopped"] == {"table": "ingest_token", "error": "RuntimeError"}


def test_only_runs_and_tool_calls_name_a_session():
    """The merge moves what names a session: a new reference to it must be moved too."""
    refs = sorted(f"{t.name}.{fk.parent.name}" for t in db.metadata.sorted_tables
                  for fk in t.foreign_keys if fk.column.table.name == "diagnosis_session")
    assert refs == ["diagnosis_run.diagnosis_session_id", "tool_call_audit.chat_session_id",
                    "tool_call_audit.diagnostic_task_id"]
