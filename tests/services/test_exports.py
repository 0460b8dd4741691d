"""Exports: admin only, exact filtered rows, exact round trip of mixed scripts (SPEC 8, 10)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from reviewapp.actors import Actor, Role
from reviewapp.domain.export_format import chunks
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.services import exports
from reviewapp.services.cases import CaseFilters
from reviewapp.services.exports import FeedbackFilters

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

MIXED_TEXTS = [
    "数据库连接池耗尽 — 订单服务",
    "Rollback 🚀 then 👍🏽 (family 👨‍👩‍👧)",
    "הפריסה נכשלה בשרת payment-api",
    "line one\nline two\r\nline three, with \"quotes\"",
    "مرحبا =SUM(A1) not at the start",
]


def _iso(at: datetime) -> str:
    """The export's timestamp text: ISO 8601, UTC, always six fraction digits."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"


def _csv(stream):
    text = "".join(chunks("csv", stream.columns, stream.rows))
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _jsonl(stream):
    return [json.loads(line) for line in "".join(chunks("jsonl", stream.columns, stream.rows)).splitlines()]


def test_only_admins_export(session, make):
    ws = make.workspace()
    for role in (Role.REVIEWER, Role.LEAD):
        actor = make.actor(make.user(ws, role))
        for call in (exports.export_cases, exports.export_feedback, exports.export_evalset,
                     exports.export_options):
            with pytest.raises(Forbidden):
                call(session, actor)


def test_admin_of_a_cannot_export_b_and_never_sees_its_rows(session, make):
    a, b = make.workspace(), make.workspace()
    admin = make.actor(make.user(a, Role.ADMIN))
    make.case(a, title="mine")
    make.case(b, title="theirs")
    run_b = make.run(b)
    make.feedback_row(run_b, make.user(b), comment="theirs")
    with pytest.raises(Forbidden):
        exports.export_cases(session, admin, CaseFilters(workspace_id=b.id))
    with pytest.raises(Forbidden):
        exports.export_feedback(session, admin, FeedbackFilters(workspace_id=b.id))
    assert [r["title"] for r in exports.export_cases(session, admin).rows] == ["mine"]
    assert list(exports.export_feedback(session, admin).rows) == []


def test_cases_round_trip_with_mixed_scripts_csv_and_jsonl(session, make):
    ws = make.workspace(slug="ws-mixed")
    admin = make.actor(make.user(ws, Role.ADMIN))
    run = make.run(ws)
    source = []
    for i, text in enumerate(MIXED_TEXTS):
        case = make.case(ws, run=run if i == 0 else None, title=text[:50], root_cause=text,
                         solution=text[::-1], service=f"svc-{i}", error_code=None,
                         created_at=T0 + timedelta(minutes=i))
        source.append(case)
    expected = [{
        "case_id": c.case_id, "workspace": "ws-mixed", "diagnosis_id": c.diagnosis_id,
        "run_id": run.run_id if i == 0 else None, "source_type": "AUTO", "fault_category": "GENERAL",
        "title": c.title, "root_cause": c.root_cause, "solution": c.solution, "error_code": None,
        "service": c.service, "created_by": "system", "created_at": _iso(c.created_at),
        "updated_at": _iso(c.updated_at), "version": 1,
    } for i, c in enumerate(source)]
    assert _jsonl(exports.export_cases(session, admin)) == expected
    as_text = [{k: ("" if v is None else str(v)) for k, v in row.items()} for row in expected]
    assert _csv(exports.export_cases(session, admin)) == as_text


def test_feedback_round_trip_with_mixed_scripts(session, make):
    ws = make.workspace(slug="fb")
    admin = make.actor(make.user(ws, Role.ADMIN))
    reviewer = make.user(ws, username="评审员-אבי")
    rows = []
    for i, text in enumerate(MIXED_TEXTS):
        run = make.run(ws, kind="chat")
        run.evidence_score, run.verifier_verdict = i * 10, "PASS"
        rows.append((run, make.feedback_row(run, reviewer, reason="incorrect", comment=text,
                                            correction=text + " ✅", created_at=T0 + timedelta(minutes=i))))
    exported = _jsonl(exports.export_feedback(session, admin))
    assert [(r["comment"], r["correction"], r["reviewer"], r["run_id"], r["evidence_score"],
             r["verdict"], r["verifier_verdict"], r["rating"], r["target_type"]) for r in exported] == [
        (f.comment, f.correction, "评审员-אבי", run.run_id, run.evidence_score, None, "PASS",
         "negative", "chat_message") for run, f in rows]
    parsed = _csv(exports.export_feedback(session, admin))
    assert [(p["comment"], p["correction"]) for p in parsed] == [(f.comment, f.correction) for _, f in rows]
    assert list(parsed[0]) == list(exports.FEEDBACK_COLUMNS)


def test_filtered_case_export_contains_exactly_the_filtered_rows(session, make):
    ws, other = make.workspace(), make.workspace()
    user = make.user(ws, Role.ADMIN)
    from reviewapp.models import Membership

    session.add(Membership(user_id=user.id, workspace_id=other.id, role="admin"))
    session.commit()
    admin = make.actor(user)
    wanted = set()
    for i in range(12):
        target = ws if i % 3 else other
        category = "DATABASE" if i % 2 else "NETWORK"
        case = make.case(target, fault_category=category, source_type="MANUAL" if i % 4 == 0 else "AUTO",
                         title=f"case {i} {'pool' if i % 5 else 'disk'}", created_at=T0 + timedelta(minutes=i))
        if target is ws and category == "DATABASE" and "pool" in case.title:
            wanted.add(case.case_id)
    filters = CaseFilters.from_params({"workspace": str(ws.id), "fault_category": "DATABASE", "q": "POOL"})
    stream = exports.export_cases(session, admin, filters)
    got = [r["case_id"] for r in stream.rows]
    assert set(got) == wanted and len(got) == len(wanted) == stream.total


def test_filtered_feedback_export_contains_exactly_the_filtered_rows(session, make):
    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    reviewers = [make.user(ws) for _ in range(3)]
    chat, aiops = make.run(ws), make.run(ws, kind="aiops")
    wanted = set()
    for day in range(4):
        for j, reviewer in enumerate(reviewers):
            run = chat if (day + j) % 2 else aiops
            rating = "negative" if j != 1 else "positive"
            reason = "incorrect" if rating == "negative" and day % 2 else None
            row = make.feedback_row(run, reviewer, rating=rating, reason=reason,
                                    target_type="diagnostic_step", target_id=day,
                                    created_at=T0 + timedelta(days=day, hours=j))
            if run is chat and rating == "negative" and 1 <= day <= 2:
                wanted.add(row.id)
    filters = FeedbackFilters.from_params({"rating": "negative", "kind": "chat",
                                           "date_from": "2026-11-21", "date_to": "2026-11-22"})
    stream = exports.export_feedback(session, admin, filters)
    got = [r["feedback_id"] for r in stream.rows]
    assert set(got) == wanted and len(got) == len(wanted) == stream.total
    reasons = {r["reason"] for r in exports.export_feedback(
        session, admin, FeedbackFilters(reason="incorrect")).rows}
    assert reasons == {"incorrect"}


def test_keyset_batches_neither_skip_nor_repeat_under_equal_timestamps(session, make):
    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    made = [make.case(ws, created_at=T0) for _ in range(7)]
    made += [make.case(ws, created_at=T0 + timedelta(seconds=1)) for _ in range(2)]
    got = [r["case_id"] for r in exports.export_cases(session, admin, batch_size=2).rows]
    expected = sorted(made, key=lambda c: (c.created_at, c.case_id))
    assert got == [c.case_id for c in expected]


def test_keyset_batches_across_workspaces_keep_every_row_once(session, make):
    a, b = make.workspace(), make.workspace()
    made = [make.case(ws, created_at=T0 + timedelta(seconds=i % 2)) for i in range(5) for ws in (b, a)]
    feedback = []
    for ws in (b, a):
        run, reviewer = make.run(ws), make.user(ws)
        feedback += [make.feedback_row(run, reviewer, target_type="diagnostic_step", target_id=i,
                                       created_at=T0) for i in range(3)]
    system = Actor.system_actor()
    got = [r["case_id"] for r in exports.export_cases(session, system, batch_size=3).rows]
    expected = sorted(made, key=lambda c: (c.workspace_id, c.created_at, c.case_id))
    assert got == [c.case_id for c in expected]
    got_fb = [r["feedback_id"] for r in exports.export_feedback(session, system, batch_size=2).rows]
    assert got_fb == [f.id for f in sorted(feedback, key=lambda f: (f.workspace_id, f.id))]


def test_evalset_has_one_line_per_run_with_a_correction(session, make):
    ws = make.workspace(slug="ev")
    admin = make.actor(make.user(ws, Role.ADMIN))
    r1, r2 = make.user(ws, username="r1"), make.user(ws, username="r2")
    corrected = make.run(ws, query="Why 502?", answer="OOM 🙂")
    corrected.evidence_score, corrected.verifier_verdict = 65, "LOW_CONFID"
    make.triage_item(corrected, fault_category="WRONG_ROOT_CAUSE")
    make.case(ws, run=corrected, error_code="OOMKilled", service="checkout-service")
    make.feedback_row(corrected, r1, reason="incorrect", correction="It was the DB pool.\n第二行")
    make.feedback_row(corrected, r2, rating="positive")
    uncorrected = make.run(ws)
    make.feedback_row(uncorrected, r1, reason="incomplete", comment="no correction here")
    lines = list(exports.export_evalset(session, admin).rows)
    assert lines == [{
        "run_id": corrected.run_id, "workspace": "ev", "kind": "chat", "query": "Why 502?",
        "answer": "OOM 🙂", "report": None,
        "corrections": [{"reviewer": "r1", "target_type": "chat_message", "subject": "",
                         "rating": "negative", "reason": "incorrect",
                         "correction": "It was the DB pool.\n第二行"}],
        "labels": {"verdict": "not_useful", "evidence_score": 65, "verifier_verdict": "LOW_CONFID",
                   "external_outcome": None, "reasons": ["incorrect"], "triage_state": "new",
                   "triage_fault_category": "WRONG_ROOT_CAUSE", "case_fault_category": "GENERAL",
                   "error_code": "OOMKilled", "service": "checkout-service"},
    }]


def test_evalset_batches_cover_every_run(session, make):
    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    reviewer = make.user(ws)
    runs = [make.run(ws) for _ in range(5)]
    for run in runs:
        make.feedback_row(run, reviewer, correction=f"fix {run.run_id}")
    lines = list(exports.export_evalset(session, admin, batch_size=2).rows)
    assert [line["run_id"] for line in lines] == [r.run_id for r in runs]
    assert [line["corrections"][0]["correction"] for line in lines] == [f"fix {r.run_id}" for r in runs]


def test_evalset_answer_of_a_run_answered_only_in_its_messages_is_that_answer(session, make):
    """The eval set carries the answer the run page shows and its case holds (SPEC 7):
    a real τ-bench run sent with no ``answer`` field, its answer only in its messages."""
    from reviewapp.services import runs

    from ..shared_data import tau_run_answered_in_messages

    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    doc, answer = tau_run_answered_in_messages()
    run = runs.upsert_run(session, Actor.system_actor(), ws.id, "tau-messages-only", doc).run
    with_field = make.run(ws, answer="field answer")
    for each in (run, with_field):
        make.feedback_row(each, make.user(ws), correction="a fix")
    assert [line["answer"] for line in exports.export_evalset(session, admin).rows] == [
        answer, "field answer"]


def test_system_actor_exports_every_workspace(session, make):
    a, b = make.workspace(), make.workspace()
    make.case(a)
    make.case(b)
    assert exports.export_cases(session, Actor.system_actor()).total == 2


@pytest.mark.parametrize("kind, params, field", [
    ("cases", {"source_type": "BOTH"}, "source_type"),
    ("feedback", {"rating": "meh"}, "rating"),
    ("feedback", {"date_from": "yesterday"}, "date_from"),
    ("evalset", {"workspace": "x"}, "workspace"),
    ("users", {}, "kind"),
])
def test_open_export_validates_before_streaming(session, make, kind, params, field):
    ws = make.workspace()
    admin = make.actor(make.user(ws, Role.ADMIN))
    with pytest.raises(ValidationFailed) as error:
        exports.open_export(session, admin, kind, params)
    assert error.value.field == field


@pytest.mark.parametrize(("kind", "fmt", "ok"), [
    ("cases", "csv", True), ("cases", "jsonl", True), ("feedback", "csv", True),
    ("decisions", "jsonl", True), ("decisions", "csv", True), ("evalset", "jsonl", True),
    ("evalset", "csv", False), ("cases", "xlsx", False), ("feedback", "JSONL", False),
])
def test_each_export_kind_is_one_row_with_its_formats(session, make, kind, fmt, ok):
    """Issue 12: the kinds are one table (every kind in it, an unknown one refused naming
    them all); the eval set is JSONL only, the others CSV or JSONL."""
    assert exports.KINDS == ("cases", "feedback", "evalset", "decisions")
    admin = make.actor(make.user(make.workspace(), Role.ADMIN))
    if ok:
        assert exports.open_export(session, admin, kind, {}, fmt).total == 0
        return
    with pytest.raises(ValidationFailed) as error:
        exports.open_export(session, admin, kind, {}, fmt)
    assert (error.value.field, error.value.reason) == (
        "format", "cases and feedback: csv or jsonl; the eval set: jsonl")


def test_an_unknown_export_kind_names_the_kinds(session, make):
    admin = make.actor(make.user(make.workspace(), Role.ADMIN))
    with pytest.raises(ValidationFailed) as error:
        exports.open_export(session, admin, "users", {}, "csv")
    assert (error.value.field, error.value.reason) == (
        "kind", "must be one of cases, feedback, evalset, decisions")


@pytest.mark.parametrize("kind, params, field", [
    ("cases", {"source": "bogus"}, "source"),           # new-user finding 2026-12-02: was 200
    ("cases", {"q": "x", "sourcetype": "AUTO"}, "sourcetype"),
    ("cases", {"rating": "up"}, "rating"),              # a feedback filter on cases
    ("feedback", {"source_type": "AUTO"}, "source_type"),
    ("evalset", {"kind": "chat"}, "kind"),
    ("decisions", {"q": "x"}, "q"),
])
def test_an_unknown_export_filter_is_refused_naming_it(session, make, kind, params, field):
    admin = make.actor(make.user(make.workspace(), Role.ADMIN))
    with pytest.raises(ValidationFailed) as error:
        exports.open_export(session, admin, kind, params)
    assert error.value.field == field
    assert error.value.reason.startswith("not a filter of this export; it takes: ")


@pytest.mark.parametrize("kind, params", [
    ("cases", {"workspace": "", "q": "x", "fault_category": "", "service": "", "error_code": "",
               "source_type": "AUTO", "bom": "1"}),
    ("feedback", {"date_from": "", "date_to": "", "rating": "", "target_type": "",
                  "reason": "", "kind": "", "bom": "1"}),
    ("evalset", {"workspace": ""}),
    ("decisions", {"date_from": "", "date_to": "", "bom": "1"}),
])
def test_every_export_form_field_is_still_taken(session, make, kind, params):
    admin = make.actor(make.user(make.workspace(), Role.ADMIN))
    assert exports.open_export(session, admin, kind, params).total == 0


def test_an_unknown_export_filter_is_a_400_naming_it(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    response = client.get("/exports/cases.csv?source=bogus")
    assert response.status_code == 400 and "source" in response.get_data(as_text=True)
    assert client.get("/exports/cases.csv?source_type=AUTO&bom=1").status_code == 200


def test_an_unknown_feedback_reason_is_refused_listing_the_workspace_reasons(session, make):
    """New-user finding 2026-12-03: reason "bogus" exported nothing, silently. As the
    ratings refuse it (feedback.ratings._check_reason): the reasons of the workspaces
    exported, label (code)."""
    ws = make.workspace(feedback_reasons=["hallucination", "stale"])
    actor = make.actor(make.user(ws, Role.ADMIN))
    with pytest.raises(ValidationFailed) as error:
        exports.export_feedback(session, actor, FeedbackFilters(workspace_id=ws.id, reason="bogus"))
    assert (error.value.field, error.value.reason) == (
        "reason", "must be one of Hallucination (hallucination), Stale (stale)")
    with pytest.raises(ValidationFailed):
        exports.open_export(session, actor, "feedback", {"reason": "incorrect",
                                                          "workspace": str(ws.id)})
    assert exports.export_feedback(
        session, actor, FeedbackFilters(workspace_id=ws.id, reason="stale")).total == 0


def test_a_feedback_reason_is_checked_after_access(session, make):
    ws = make.workspace()
    reviewer = make.actor(make.user(ws))
    with pytest.raises(Forbidden):
        exports.export_feedback(session, reviewer, FeedbackFilters(reason="bogus"))


def test_without_a_workspace_the_reasons_of_every_administered_workspace_are_taken(session, make):
    from reviewapp.models import Membership

    custom, plain = make.workspace(feedback_reasons=["stale"]), make.workspace()
    admin = make.user(custom, Role.ADMIN)
    session.add(Membership(user_id=admin.id, workspace_id=plain.id, role=Role.ADMIN.value))
    session.commit()
    actor = make.actor(admin)
    assert exports.export_feedback(session, actor, FeedbackFilters(reason="stale")).total == 0
    assert exports.export_feedback(session, actor, FeedbackFilters(reason="citation")).total == 0
    with pytest.raises(ValidationFailed) as error:
        exports.export_feedback(session, actor, FeedbackFilters(reason="bogus"))
    # workspaces by id, the registry's order, each code once
    assert error.value.reason == ("must be one of Stale (stale), Incorrect (incorrect), "
                                  "Incomplete (incomplete), Citation (citation), Unsafe (unsafe), "
                                  "Other (other)")
