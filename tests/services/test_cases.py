"""The case library service (SPEC 3, 7, 8, 10) and the automatic case of a useful run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Role
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.models import Case, Membership
from reviewapp.services import case_proposals, cases
from reviewapp.services.cases import CaseFilters

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _titles(page):
    return [row.case.title for row in page.rows]


def test_list_and_search_filters(session, make):
    ws = make.workspace()
    reader = make.user(ws)
    make.case(ws, title="Pool exhausted after failover", fault_category="DATABASE",
              service="payment-api", error_code="PoolTimeout", created_at=T0)
    make.case(ws, title="OOM after deploy", fault_category="RESOURCE_EXHAUSTION",
              service="checkout-service", error_code="OOMKilled", source_type="MANUAL",
              root_cause="cart cache doubled", created_at=T0 + timedelta(hours=1))
    make.case(ws, title="订单服务延迟", solution="回滚发布 100%_done", created_at=T0 + timedelta(hours=2))
    actor = make.actor(reader)

    def titles(**params):
        return _titles(cases.list_cases(session, actor, CaseFilters.from_params(params)))

    assert titles() == ["订单服务延迟", "OOM after deploy", "Pool exhausted after failover"]
    assert titles(fault_category="database") == ["Pool exhausted after failover"]
    assert titles(service="CHECKOUT-service") == ["OOM after deploy"]
    assert titles(error_code="poolTIMEOUT") == ["Pool exhausted after failover"]
    assert titles(source_type="manual") == ["OOM after deploy"]
    assert titles(q="CACHE") == ["OOM after deploy"]
    assert titles(q="回滚") == ["订单服务延迟"]
    assert titles(q="100%_") == ["订单服务延迟"]  # LIKE wildcards are escaped
    assert titles(q="0%") == ["订单服务延迟"]
    assert titles(q="%") == ["订单服务延迟"]
    assert titles(q="nothing like this") == []
    page = cases.list_cases(session, actor, CaseFilters.from_params({"q": "after"}))
    assert page.total == 2 and not page.can_edit


def test_a_workspace_id_the_reader_is_not_in_is_refused(session, make):
    """New-user walk: ``/cases/?workspace=77`` answered "0 matching". A workspace the
    actor is not in (none such, or another's) is refused naming the field, in the same
    words whether it exists or not (SPEC 2); their own lists its cases."""
    mine, other = make.workspace(), make.workspace()
    make.case(other, title="theirs")
    make.case(mine, title="ours")
    actor = make.actor(make.user(mine))
    for unknown in (other.id, 999_999):
        with pytest.raises(ValidationFailed) as error:
            cases.list_cases(session, actor, CaseFilters(workspace_id=unknown))
        assert error.value.problems == {"workspace": f"you have no workspace '{unknown}'"}
    assert _titles(cases.list_cases(session, actor, CaseFilters(workspace_id=mine.id))) == ["ours"]


def test_case_list_keyset_pagination_with_equal_timestamps(session, make):
    ws = make.workspace()
    reader = make.user(ws)
    made = [make.case(ws, created_at=T0) for _ in range(5)]
    seen, cursor = [], None
    while True:
        page = cases.list_cases(session, make.actor(reader), limit=2, cursor=cursor)
        seen.extend(row.case.case_id for row in page.rows)
        cursor = page.next_cursor
        if not cursor:
            break
    assert seen == sorted((c.case_id for c in made), reverse=True)
    with pytest.raises(ValidationFailed):
        cases.list_cases(session, make.actor(reader), cursor="@@@")


def test_case_list_of_two_workspaces_merges_their_ranges_newest_first(session, make):
    """Issue 18: a member of two workspaces reads one index range per workspace, merged:
    pages of two interleave the workspaces by time, equal times by case id, none lost."""
    a, b, c = make.workspace(), make.workspace(), make.workspace()
    reader = make.user(a)
    session.add(Membership(user_id=reader.id, workspace_id=b.id, role=Role.LEAD.value))
    session.commit()
    made = {}
    for name, ws, minutes in (("a0", a, 0), ("b1", b, 1), ("a2", a, 2), ("b3", b, 3),
                              ("a4", a, 4), ("b4", b, 4), ("c5", c, 5)):
        made[name] = make.case(ws, title=name, created_at=T0 + timedelta(minutes=minutes))
    tie = sorted(("a4", "b4"), key=lambda n: made[n].case_id, reverse=True)
    seen, cursor = [], None
    while True:
        page = cases.list_cases(session, make.actor(reader), limit=2, cursor=cursor)
        seen.extend(_titles(page))
        cursor = page.next_cursor
        if not cursor:
            break
    assert seen == [*tie, "b3", "a2", "b1", "a0"]  # c5: not a workspace of the reader
    assert _titles(cases.list_cases(session, make.actor(reader),
                                    CaseFilters(workspace_id=b.id))) == ["b4", "b3", "b1"]
    with pytest.raises(ValidationFailed) as error:  # c: not the reader's, refused
        cases.list_cases(session, make.actor(reader), CaseFilters(workspace_id=c.id))
    assert error.value.problems == {"workspace": f"you have no workspace '{c.id}'"}
    # The count stops at the cap: 6 cases visible (a0 .. b4).
    full = cases.list_cases(session, make.actor(reader), count_cap=6)
    assert (full.total, full.total_capped) == (6, False)
    capped = cases.list_cases(session, make.actor(reader), count_cap=5)
    assert (capped.total, capped.total_capped) == (5, True)


def test_a_search_counts_up_to_the_filtered_cap(session, make, monkeypatch):
    """A search reads its matches row by row (a substring has no index), so its count
    stops at FILTERED_COUNT_CAP (1,000) instead of 10,000; the list, or one workspace
    of it, unsearched, counts to the full cap."""
    ws = make.workspace()
    reader = make.user(ws)
    for i in range(5):
        make.case(ws, title=f"deploy {i}" if i < 4 else "other")
    monkeypatch.setattr(cases, "FILTERED_COUNT_CAP", 3)
    actor = make.actor(reader)
    searched = cases.list_cases(session, actor, CaseFilters(q="Deploy"))
    assert (searched.total, searched.total_capped, len(searched.rows)) == (3, True, 4)
    assert (cases.list_cases(session, actor, CaseFilters(q="other")).total,) == (1,)
    for filters in (CaseFilters(), CaseFilters(workspace_id=ws.id)):
        page = cases.list_cases(session, actor, filters)
        assert (page.total, page.total_capped) == (5, False)


def test_member_of_a_sees_no_case_of_b(session, make):
    a, b = make.workspace(), make.workspace()
    lead = make.user(a, Role.LEAD)
    mine, theirs = make.case(a, title="mine"), make.case(b, title="theirs")
    actor = make.actor(lead)
    assert _titles(cases.list_cases(session, actor)) == ["mine"]
    assert cases.get_case(session, actor, mine.case_id).case.title == "mine"
    with pytest.raises(Forbidden) as foreign:
        cases.get_case(session, actor, theirs.case_id)
    with pytest.raises(Forbidden) as missing:
        cases.get_case(session, actor, "00000000-0000-0000-0000-000000000000")
    assert foreign.value.to_dict() == missing.value.to_dict()
    with pytest.raises(Forbidden):
        cases.edit_case(session, actor, theirs.case_id, 1, {"title": "x"})


def test_reviewer_reads_but_cannot_edit_or_create(session, make):
    ws = make.workspace()
    reviewer = make.user(ws)
    run = make.run(ws)
    case = make.case(ws, run=run)
    actor = make.actor(reviewer)
    assert cases.get_case(session, actor, case.case_id).can_edit is False
    with pytest.raises(Forbidden):
        case_proposals.edit_view(session, actor, case.case_id)
    with pytest.raises(Forbidden):
        cases.edit_case(session, actor, case.case_id, 1, {"title": "x"})
    with pytest.raises(Forbidden):
        cases.new_case_draft(session, actor, run.id)
    with pytest.raises(Forbidden):
        cases.create_manual_case(session, actor, run.id, {"title": "x"})


def test_edit_with_version_check(session, make):
    ws = make.workspace()
    lead, other = make.user(ws, Role.LEAD), make.user(ws, Role.ADMIN)
    case = make.case(ws, title="old")
    fields = {"title": "Pool exhaustion", "fault_category": "DATABASE", "error_code": "PoolTimeout",
              "service": "payment-api", "root_cause": "failover", "solution": "restart pods"}
    edited = cases.edit_case(session, make.actor(other), case.case_id, 1, fields)
    assert (edited.case.version, edited.case.fault_category, edited.case.title) == (2, "DATABASE", "Pool exhaustion")
    with pytest.raises(Conflict) as error:
        cases.edit_case(session, make.actor(lead), case.case_id, 1, {**fields, "title": "mine"})
    assert error.value.details["version"] == 2
    assert error.value.details["title"] == "Pool exhaustion"
    session.rollback()
    assert session.get(Case, case.case_id).title == "Pool exhaustion"


def test_a_stale_case_edit_says_who_changed_the_case(session, make):
    """The case 409 said "changed by someone else" even when the save it lost to was the
    lead's own, from another tab: it names who saved last ("you, in another tab or
    window", or their username)."""
    ws = make.workspace()
    lead, other = make.user(ws, Role.LEAD, username="lena"), make.user(ws, Role.ADMIN, username="omar")
    case = make.case(ws, title="old")
    cases.edit_case(session, make.actor(other), case.case_id, 1, {"title": "omar's"})
    with pytest.raises(Conflict) as error:
        cases.edit_case(session, make.actor(lead), case.case_id, 1, {"title": "mine"})
    assert error.value.message == ("This case was changed by omar since your page was loaded; "
                                   "nothing was saved. Here are its current values.")
    session.rollback()
    cases.edit_case(session, make.actor(lead), case.case_id, 2, {"title": "lena's"})
    with pytest.raises(Conflict) as error:
        cases.edit_case(session, make.actor(lead), case.case_id, 2, {"title": "mine again"})
    assert error.value.message == ("This case was changed by you, in another tab or window, since your "
                                   "page was loaded; nothing was saved. Here are its current values.")


def test_an_edit_keeps_free_text_as_typed_and_only_the_csv_export_neutralises(session, make):
    """Issue 11: a solution saved with a leading space is stored with it; the CSV export
    alone neutralises the formula behind it."""
    from reviewapp.domain.export_format import csv_chunks
    from reviewapp.services.exports import export_cases

    ws = make.workspace()
    admin_user = make.user(ws, Role.ADMIN)
    case = make.case(ws, title="old")
    fields = {"title": "  Pool exhaustion", "root_cause": "\n=cause", "solution": " =1+1",
              "error_code": "  PoolTimeout  ", "service": "api"}
    cases.edit_case(session, make.actor(admin_user), case.case_id, 1, fields)
    session.expire_all()
    stored = session.get(Case, case.case_id)
    assert (stored.title, stored.root_cause, stored.solution, stored.error_code) == (
        "  Pool exhaustion", "\n=cause", " =1+1", "PoolTimeout")
    stream = export_cases(session, make.actor(admin_user))
    text = "".join(csv_chunks(stream.columns, stream.rows))
    assert "' =1+1" in text and "'\n=cause" in text


@pytest.mark.parametrize("fields, field", [
    ({"title": "  "}, "title"), ({"title": "x" * 201}, "title"),
    ({"title": "t", "fault_category": "not/ok"}, "fault_category"),
    ({"title": "t", "error_code": "x" * 121}, "error_code"),
    ({"title": "t", "service": 42}, "service"),
])
def test_edit_validation_names_the_field(session, make, fields, field):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws)
    with pytest.raises(ValidationFailed) as error:
        cases.edit_case(session, make.actor(lead), case.case_id, 1, fields)
    assert error.value.field == field


def test_blank_category_becomes_general_and_blank_text_null(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws, fault_category="DATABASE", service="x")
    edited = cases.edit_case(session, make.actor(lead), case.case_id, 1,
                             {"title": "t", "fault_category": "", "service": "  "})
    assert (edited.changed, edited.case.fault_category, edited.case.service) == (True, "GENERAL", None)


def _aiops_run(make, ws):
    return make.run(
        ws, kind="aiops", query="Alert HighErrorRate on payment-api (critical)",
        answer="Connection pool exhaustion after the PostgreSQL failover.",
        alert={"alertname": "HighErrorRate", "service": "payment-api"},
        messages=[],
        tool_calls=[{"id": "tc-1", "tool_name": "query_logs", "status": "failed",
                     "arguments": {"service": "payment-api", "level": "error"},
                     "error": "PoolTimeout: timed out waiting for a connection",
                     "started_at": "2026-11-27T10:00:00Z", "completed_at": "2026-11-27T10:00:02Z"}],
    )


def test_edit_view_proposes_from_the_run(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = _aiops_run(make, ws)
    case = make.case(ws, run=run)
    view = case_proposals.edit_view(session, make.actor(lead), case.case_id)
    # DATABASE: "postgres", "postgresql", "failover" in the answer (1 + 1 + 1) = 3 ties with
    # NETWORK: "timed out" in a tool error (3); DATABASE is listed first.
    assert view.suggestions.as_dict() == {
        "fault_category": "DATABASE", "error_code": "PoolTimeout", "service": "payment-api"}
    assert view.suggestions.service.source == "alert"
    assert view.suggestions.error_code.source == "tool_errors"


def test_manual_case_from_a_run(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = _aiops_run(make, ws)
    draft = cases.new_case_draft(session, make.actor(lead), run.id)
    assert draft.existing is None
    assert draft.values["title"] == run.query[:100]
    assert draft.values["service"] == "payment-api"
    # The answer is a root cause, and the run states no remediation: Solution stays empty
    # (it used to repeat the root-cause sentence).
    assert draft.values["root_cause"] == "Connection pool exhaustion after the PostgreSQL failover."
    assert draft.values["solution"] == ""
    case = cases.create_manual_case(session, make.actor(lead), run.id,
                                    {**draft.values, "title": "Pool exhaustion"})
    assert (case.source_type, case.diagnosis_id, case.run_pk, case.created_by, case.version) == (
        "MANUAL", run.run_id, run.id, lead.username, 1)
    assert case.run.run_id == run.run_id  # the case links back to its run
    detail = cases.get_case(session, make.actor(lead), case.case_id)
    assert detail.run.id == run.id and detail.can_edit


def test_manual_case_when_the_run_already_has_an_auto_case_is_a_conflict(session, make):
    """One case per run: the lead is sent to the existing case (module doc of services.cases)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)
    auto = make.case(ws, run=run, source_type="AUTO", title="auto")
    assert cases.new_case_draft(session, make.actor(lead), run.id).existing.case_id == auto.case_id
    with pytest.raises(Conflict) as error:
        cases.create_manual_case(session, make.actor(lead), run.id, {"title": "manual"})
    assert error.value.details["case_id"] == auto.case_id
    session.rollback()
    assert session.query(Case).count() == 1


def test_manual_case_for_a_foreign_or_missing_run_is_forbidden(session, make):
    ws, other = make.workspace(), make.workspace()
    lead = make.user(ws, Role.LEAD)
    foreign = make.run(other)
    for run_pk in (foreign.id, 10_000_000):
        with pytest.raises(Forbidden):
            cases.create_manual_case(session, make.actor(lead), run_pk, {"title": "x"})


@pytest.mark.parametrize(("run_pk", "message"), [("", "no run given"), (None, "no run given"),
                                                 ("abc", "must be a run's number")])
def test_a_manual_case_without_a_usable_run_number_names_the_run_field(session, make, run_pk, message):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    with pytest.raises(ValidationFailed) as refused:
        cases.create_manual_case(session, lead, run_pk, {"title": "t"})
    assert refused.value.field == "run" and message in refused.value.message


def test_submitting_the_same_manual_case_twice_returns_the_first(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    fields = {"title": "Disk full", "fault_category": "RESOURCE_EXHAUSTION", "solution": "rotate logs"}
    first = cases.create_manual_case(session, lead, run.id, fields)
    again = cases.create_manual_case(session, lead, run.id, dict(fields))
    assert again.case_id == first.case_id and again.version == 1
    with pytest.raises(Conflict):
        cases.create_manual_case(session, lead, run.id, {**fields, "title": "Another"})
    assert session.scalar(select(func.count()).select_from(Case)) == 1


def test_a_new_case_takes_its_solution_from_the_reports_action_line(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, kind="aiops", query="Alert HighErrorRate on payment-api",
                   answer="Root cause: connection pool exhaustion in payment-api.", messages=[],
                   report={"content": "## HighErrorRate\n\n**Root cause:** the pool is exhausted.\n\n"
                                      "**Action:** restart payment-api pods;\nset `tcp_keepalives_idle`.\n\n"
                                      "**Evidence**\n\n- logs"})
    draft = cases.new_case_draft(session, make.actor(lead), run.id)
    assert draft.values["root_cause"] == "Root cause: connection pool exhaustion in payment-api."
    assert draft.values["solution"] == "restart payment-api pods;\nset `tcp_keepalives_idle`."


def test_the_case_filters_parameter_names_are_those_it_reads_and_writes():
    # Every filter set: as_params writes each name once; from_params reads each back.
    params = {"workspace": "7", "q": "disk", "fault_category": "CAPACITY", "service": "api",
              "error_code": "E1", "source_type": "AUTO"}
    filters = CaseFilters.from_params(params)
    assert filters.as_params() == params
    assert sorted(CaseFilters.PARAM_NAMES) == sorted(params)


def test_edit_view_values_are_the_stored_ones_never_the_proposals(session, make):
    """A new user's case (GENERAL, no error code, no service) opened for edit showed the
    proposals in the fields, so saving a change of the error code alone stored the
    proposed category. The edit form's values are the stored ones; the proposals stay
    proposals (``suggestions``) for the user to accept."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, query="Login to checkout-service fails with 401 Unauthorized")
    case = make.case(ws, run=run, fault_category="GENERAL", root_cause="r")
    view = case_proposals.edit_view(session, make.actor(lead), case.case_id)
    # AUTH: "unauthorized" and "401" in the query (2 + 2); HTTP_401 from "401 Unauthorized".
    assert view.suggestions.as_dict() == {
        "fault_category": "AUTH", "error_code": "HTTP_401", "service": "checkout-service"}
    assert view.values == {"title": case.title, "fault_category": "GENERAL", "error_code": None,
                           "service": None, "root_cause": "r", "solution": None, "version": 1}


def test_a_redacted_password_in_the_run_proposes_no_auth_category(session, make):
    """The proposal read ``password=[redacted]`` (a redaction marker and its label) as an
    auth fault and proposed AUTH; a redacted secret is no evidence of anything."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, query="Nightly job stopped; its env has DB_PASSWORD=hunter2hunter2x9")
    case = make.case(ws, run=run)
    assert "[redacted]" in run.query and "hunter2" not in run.query  # stored redacted
    view = case_proposals.edit_view(session, make.actor(lead), case.case_id)
    assert (view.suggestions.fault_category.value, view.suggestions.fault_category.rule) == (
        "GENERAL", "default")
