"""The automatic case of a useful run (SPEC 7)."""

from __future__ import annotations

from sqlalchemy import func, select

from reviewapp.models import Case, DiagnosisSession
from reviewapp.services.cases import get_or_create_auto_case


def test_auto_case_maps_the_run_fields(session, make):
    ws = make.workspace()
    query = "为什么支付服务超时？" * 15  # 150 characters
    run = make.run(ws, query=query, answer="连接池耗尽 🔥")
    case = get_or_create_auto_case(session, run)
    session.commit()
    assert case.diagnosis_id == run.run_id and case.run_pk == run.id
    assert case.workspace_id == ws.id
    assert case.title == query[:100] and len(case.title) == 100
    assert case.root_cause == case.solution == "连接池耗尽 🔥"
    assert (case.source_type, case.fault_category, case.created_by) == ("AUTO", "GENERAL", "system")
    assert len(case.case_id) == 36 and case.version == 1


def test_auto_case_is_reused_and_edits_survive(session, make):
    run = make.run(make.workspace())
    first = get_or_create_auto_case(session, run)
    first.fault_category = "DATABASE"
    first.source_type = "MANUAL"
    session.commit()
    again = get_or_create_auto_case(session, run)
    session.commit()
    assert again.case_id == first.case_id
    assert (again.fault_category, again.source_type) == ("DATABASE", "MANUAL")
    assert session.scalar(select(func.count()).select_from(Case)) == 1


def test_same_run_id_in_two_workspaces_gets_two_cases(session, make):
    a = make.run(make.workspace(), run_id="shared-id")
    b = make.run(make.workspace(), run_id="shared-id")
    assert get_or_create_auto_case(session, a).case_id != get_or_create_auto_case(session, b).case_id


def test_legacy_session_maps_to_its_session_id(session, make):
    ws = make.workspace()
    legacy = DiagnosisSession(session_id="old-42", workspace_id=ws.id, kind="aiops",
                              query="disk full", answer="rotate logs", status="SUCCESS")
    session.add(legacy)
    session.commit()
    case = get_or_create_auto_case(session, legacy)
    session.commit()
    assert (case.diagnosis_id, case.run_pk, case.title, case.root_cause) == (
        "old-42", None, "disk full", "rotate logs")


def test_run_without_answer_gets_an_empty_case_body(session, make):
    run = make.run(make.workspace(), query="", answer=None)
    case = get_or_create_auto_case(session, run)
    assert (case.title, case.root_cause, case.solution) == ("", None, None)
