"""The not-useful queue's list: filters, counts, keyset pages, access (SPEC 2, 8)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import Membership, TriageItem
from reviewapp.services import triage
from reviewapp.services.triage import TriageFilters

from .conftest import T0, row_ids


def test_lead_sees_the_queue_newest_first_with_counts(session, make, queue):
    page = triage.list_items(session, make.actor(queue.lead))
    assert row_ids(page) == [i.id for i in reversed(queue.items)]
    assert page.counts == {"new": 3, "triaged": 0, "resolved": 0, "wont_fix": 0}
    assert page.total == 3
    assert page.rows[0].run_id == queue.runs[2].run_id
    assert {name for _, name in page.rows[0].assignable} == {
        queue.lead.username, queue.lead2.username, queue.admin.username}


@pytest.mark.parametrize("call", [
    lambda s, a, item: triage.list_items(s, a),
    lambda s, a, item: triage.get_item(s, a, item.id),
    lambda s, a, item: triage.assign(s, a, item.id, item.version, None),
    lambda s, a, item: triage.move(s, a, item.id, item.version, "triaged"),
    lambda s, a, item: triage.set_note(s, a, item.id, item.version, "x"),
    lambda s, a, item: triage.set_fault_category(s, a, item.id, item.version, "GENERAL"),
    lambda s, a, item: triage.bulk_move(s, a, [(item.id, item.version)], "triaged"),
])
def test_reviewer_is_forbidden_everything(session, make, queue, call):
    with pytest.raises(Forbidden):
        call(session, make.actor(queue.reviewer), queue.items[0])


def test_lead_of_a_sees_nothing_of_b(session, make, queue):
    other = make.workspace()
    foreign = make.triage_item(make.run(other))
    make.user(other, Role.LEAD)
    actor = make.actor(queue.lead)
    assert foreign.id not in row_ids(triage.list_items(session, actor))
    for call in (
        lambda: triage.get_item(session, actor, foreign.id),
        lambda: triage.move(session, actor, foreign.id, 1, "triaged"),
        lambda: triage.assign(session, actor, foreign.id, 1, queue.lead.id),
    ):
        with pytest.raises(Forbidden) as foreign_error:
            call()
        with pytest.raises(Forbidden) as missing_error:
            triage.get_item(session, actor, 10_000_000)
        assert foreign_error.value.to_dict() == missing_error.value.to_dict()
    outcomes = triage.bulk_move(session, actor, [(foreign.id, 1)], "triaged")
    assert [(o.status, o.row) for o in outcomes] == [("forbidden", None)]
    assert session.get(TriageItem, foreign.id).state == "new"


def test_keyset_pagination_is_stable_under_equal_timestamps(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    items = [make.triage_item(make.run(ws), created_at=T0) for _ in range(7)]
    seen, cursor = [], None
    while True:
        page = triage.list_items(session, make.actor(lead), limit=3, cursor=cursor)
        seen.extend(row_ids(page))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted((i.id for i in items), reverse=True)


def test_malformed_cursor_is_a_validation_error(session, make, queue):
    with pytest.raises(ValidationFailed) as error:
        triage.list_items(session, make.actor(queue.lead), cursor="not-a-cursor!")
    assert error.value.field == "cursor"


def test_filters_state_assignee_kind_opened_score_date(session, make):
    ws = make.workspace()
    lead, other_lead = make.user(ws, Role.LEAD), make.user(ws, Role.LEAD)
    chat = make.run(ws)
    aiops = make.run(ws, kind="aiops")
    low = make.run(ws)
    a = make.triage_item(chat, state="triaged", assignee=lead, created_at=T0)
    b = make.triage_item(aiops, created_at=T0 + timedelta(days=1))
    c = make.triage_item(low, opened_reason="negative_target", assignee=other_lead,
                         created_at=T0 + timedelta(days=2), verdict=False)
    chat.evidence_score, aiops.evidence_score, low.evidence_score = 65, 30, 0
    session.commit()
    actor = make.actor(lead)

    def ids(**params):
        return set(row_ids(triage.list_items(session, actor, TriageFilters.from_params(params))))

    assert ids(state="triaged") == {a.id}
    assert ids(state="open") == {a.id, b.id, c.id}
    assert ids(state="resolved") == set()
    assert ids(assignee="me") == {a.id}
    assert ids(assignee="none") == {b.id}
    assert ids(assignee=str(other_lead.id)) == {c.id}
    assert ids(kind="aiops") == {b.id}
    assert ids(opened="negative_target") == {c.id}
    assert ids(score_min="30") == {a.id, b.id}
    assert ids(score_min="1", score_max="40") == {b.id}
    assert ids(date_from="2026-11-21") == {b.id, c.id}
    assert ids(date_from="2026-11-21", date_to="2026-11-21") == {b.id}
    # counts ignore the state filter but honour the others
    page = triage.list_items(session, actor, TriageFilters.from_params({"kind": "chat", "state": "new"}))
    assert page.counts == {"new": 1, "triaged": 1, "resolved": 0, "wont_fix": 0}
    assert row_ids(page) == [c.id] and page.total == 1


def test_filter_by_reviewer_reason_and_disagreement(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    r1, r2 = make.user(ws), make.user(ws)
    agreed, disputed, cited = make.run(ws), make.run(ws), make.run(ws)
    items = {name: make.triage_item(run) for name, run in
             (("agreed", agreed), ("disputed", disputed), ("cited", cited))}
    make.feedback_row(agreed, r1, reason="incorrect")
    make.feedback_row(agreed, r2, reason="incomplete")
    make.feedback_row(disputed, r1, reason="incorrect")
    make.feedback_row(disputed, r2, rating="positive")
    # Up on one citation and down on another is no disagreement: different parts.
    msg_id = make.feedback_row(cited, r1, target_type="citation", subject_key="c1",
                               rating="positive").target_id
    make.feedback_row(cited, r2, target_type="citation", target_id=msg_id, subject_key="c2",
                      reason="citation")
    actor = make.actor(lead)

    def ids(**params):
        return set(row_ids(triage.list_items(session, actor, TriageFilters.from_params(params))))

    assert ids(disagreement="1") == {items["disputed"].id}
    assert ids(reason="incorrect") == {items["agreed"].id, items["disputed"].id}
    assert ids(reason="citation") == {items["cited"].id}
    rows = {row.id: row for row in triage.list_items(session, actor).rows}
    disputed_row = rows[items["disputed"].id]
    assert (disputed_row.positive, disputed_row.negative, disputed_row.reviewers) == (1, 1, 2)
    assert disputed_row.disagreement and not rows[items["agreed"].id].disagreement
    assert rows[items["agreed"].id].reasons == ("incomplete", "incorrect")


@pytest.mark.parametrize("params, field", [
    ({"state": "open-ish"}, "state"), ({"kind": "batch"}, "kind"), ({"score_min": "x"}, "score_min"),
    ({"score_max": "101"}, "score_max"), ({"score_min": "50", "score_max": "10"}, "score_max"),
    ({"date_from": "30/11/2026"}, "date_from"), ({"assignee": "bob"}, "assignee"),
    ({"date_from": "2026-11-30", "date_to": "2026-11-01"}, "date_from"),
    ({"opened": "whim"}, "opened"), ({"workspace": "a b"}, "workspace"),
])
def test_bad_filters_name_the_field(params, field):
    with pytest.raises(ValidationFailed) as error:
        TriageFilters.from_params(params)
    assert error.value.field == field


def test_every_bad_filter_is_refused_at_once():
    """New-user walk: a filter form with several bad fields named only the first."""
    with pytest.raises(ValidationFailed) as error:
        TriageFilters.from_params({"state": "open-ish", "assignee": "bob", "kind": "batch",
                                   "score_min": "x", "score_max": "101", "opened": "whim",
                                   "date_from": "2026-11-30", "date_to": "2026-11-01"})
    assert error.value.problems == {
        "state": "must be one of open, new, triaged, resolved, wont_fix",
        "assignee": "must be me, none or a user id",
        "kind": "must be one of chat, aiops",
        "opened": "must be one of not_useful, negative_target",
        "score_min": "must be a whole number",
        "score_max": "must be between 0 and 100",
        "date_from": "must not be after the end day",
    }
    with pytest.raises(ValidationFailed) as error:
        TriageFilters.from_params({"kind": "batch", "score_min": "80", "score_max": "10"})
    assert error.value.problems == {"kind": "must be one of chat, aiops",
                                    "score_max": "must not be below the minimum score"}


UNKNOWN_ASSIGNEE = "must be someone items can be assigned to"


def test_an_assignee_id_nobody_can_be_assigned_to_is_refused(session, make):
    """New-user walk: ``?assignee=999999`` filtered the queue to nothing, silently. A user
    id is refused unless items of the actor's workspaces can be assigned to them (or one
    is assigned to them), as any bad value, naming the field; a user of another workspace
    reads as one who does not exist (SPEC 2)."""
    ws, elsewhere = make.workspace(), make.workspace()
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws)
    stranger = make.user(elsewhere, Role.LEAD)
    make.triage_item(make.run(ws))
    make.triage_item(make.run(elsewhere), assignee=stranger)
    actor = make.actor(lead)
    for unknown in ("999999", str(reviewer.id), str(stranger.id)):
        with pytest.raises(ValidationFailed) as error:
            triage.read_filters(session, actor, {"assignee": unknown, "kind": "chat"})
        assert error.value.problems == {"assignee": UNKNOWN_ASSIGNEE}
        with pytest.raises(ValidationFailed) as error:
            triage.list_items(session, actor, TriageFilters(assignee=unknown))
        assert error.value.problems == {"assignee": UNKNOWN_ASSIGNEE}
    with pytest.raises(ValidationFailed) as error:
        triage.read_filters(session, actor, {"assignee": "999999", "score_min": "80", "score_max": "10"})
    assert error.value.problems == {"assignee": UNKNOWN_ASSIGNEE,
                                    "score_max": "must not be below the minimum score"}
    assert triage.read_filters(session, actor, {"assignee": str(lead.id)}) == TriageFilters(assignee=str(lead.id))
    assert triage.read_filters(session, actor, {"assignee": "me"}) == TriageFilters(assignee="me")


def test_a_workspace_id_the_lead_does_not_triage_in_is_refused(session, make):
    """New-user walk: ``/triage/?workspace=77`` listed nothing, silently. A workspace the
    actor does not triage in (none such, or another's) is refused naming the field, with
    the other bad filters, in the runs list's words whether it exists or not (SPEC 2)."""
    mine, other = make.workspace(), make.workspace()
    make.triage_item(make.run(other))
    actor = make.actor(make.user(mine, Role.LEAD))
    for unknown in (other.id, 999_999):
        with pytest.raises(ValidationFailed) as error:
            triage.read_filters(session, actor, {"workspace": str(unknown), "score_min": "80",
                                                 "score_max": "10"})
        assert error.value.problems == {"workspace": f"you have no workspace '{unknown}'",
                                        "score_max": "must not be below the minimum score"}
        with pytest.raises(ValidationFailed) as error:
            triage.list_items(session, actor, TriageFilters(workspace_id=unknown))
        assert error.value.problems == {"workspace": f"you have no workspace '{unknown}'"}
    assert triage.read_filters(session, actor, {"workspace": str(mine.id)}) == TriageFilters(workspace_id=mine.id)


def test_an_assignee_who_lost_the_lead_role_still_filters_their_items(session, make):
    ws = make.workspace()
    lead, former = make.user(ws, Role.LEAD), make.user(ws, Role.LEAD)
    kept = make.triage_item(make.run(ws), assignee=former)
    make.triage_item(make.run(ws))
    session.scalars(select(Membership).filter_by(user_id=former.id)).one().role = Role.REVIEWER.value
    session.commit()
    actor = make.actor(lead)
    filters = triage.read_filters(session, actor, {"assignee": str(former.id)})
    assert row_ids(triage.list_items(session, actor, filters)) == [kept.id]


def test_the_assignee_filter_offers_who_holds_items_though_they_may_not_be_assigned(session, make):
    """A former lead still holding items filtered right but the filter's select had no
    option for them (it listed who may be assigned only), so it showed "Anyone". The
    filter's choices add the current holders of the actor's items (a former lead, a
    deactivated lead); bulk assign still offers only who may be assigned."""
    ws, elsewhere = make.workspace(), make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    former = make.user(ws, Role.LEAD, username="fred")
    gone = make.user(ws, Role.LEAD, username="gail")
    make.user(ws, Role.REVIEWER, username="rita")  # holds nothing: not offered
    stranger = make.user(elsewhere, Role.LEAD, username="sam")
    make.triage_item(make.run(ws), assignee=former)
    make.triage_item(make.run(ws), assignee=gone)
    make.triage_item(make.run(elsewhere), assignee=stranger)  # not the actor's workspace
    session.scalars(select(Membership).filter_by(user_id=former.id)).one().role = Role.REVIEWER.value
    gone.active = False
    session.commit()
    actor = make.actor(lead)
    page = triage.list_items(session, actor, TriageFilters(assignee=str(former.id)))
    assert page.assignee_choices == [(former.id, "fred"), (gone.id, "gail"), (lead.id, "lena")]
    assert page.assignable == [(lead.id, "lena")]
    assert triage.filter_choices(session, actor) == ([(ws.id, ws.name)], page.assignee_choices)


def test_admin_of_one_workspace_and_lead_of_another_sees_both(session, make):
    a, b = make.workspace(), make.workspace()
    user = make.user(a, Role.ADMIN)
    from reviewapp.models import Membership

    session.add(Membership(user_id=user.id, workspace_id=b.id, role="lead"))
    session.commit()
    ia, ib = make.triage_item(make.run(a)), make.triage_item(make.run(b))
    page = triage.list_items(session, make.actor(user))
    assert set(row_ids(page)) == {ia.id, ib.id}
    only_b = triage.list_items(session, make.actor(user), TriageFilters(workspace_id=b.id))
    assert row_ids(only_b) == [ib.id]


def test_counts_come_from_the_rollup_or_stop_at_the_cap(session, make):
    """Unfiltered (or one workspace) the per-state counts are the triage roll-up's, exact;
    with another filter each state's count reads its index ranges up to the cap and
    says so (``capped``, ``total_capped``: the page shows "2+"). Pages of every state
    filter list the same items either way, newest first across both workspaces."""
    a, b = make.workspace(), make.workspace()
    lead = make.user(a, Role.LEAD)
    session.add(Membership(user_id=lead.id, workspace_id=b.id, role=Role.LEAD.value))
    session.commit()
    made = []
    for i, (ws, state) in enumerate([(a, "new"), (b, "new"), (a, "new"), (b, "triaged"),
                                     (a, "resolved"), (b, "new"), (a, "wont_fix")]):
        made.append(make.triage_item(make.run(ws), state=state,
                                     created_at=T0 + timedelta(minutes=i)))
    actor = make.actor(lead)
    exact = {"new": 4, "triaged": 1, "resolved": 1, "wont_fix": 1}
    page = triage.list_items(session, actor, count_cap=2)
    assert (page.counts, page.total, page.capped, page.total_capped) == (
        exact, 7, frozenset(), False)
    assert row_ids(page) == [item.id for item in reversed(made)]
    only_b = triage.list_items(session, actor, TriageFilters(workspace_id=b.id), count_cap=2)
    assert only_b.counts == {"new": 2, "triaged": 1, "resolved": 0, "wont_fix": 0}
    filtered = triage.list_items(session, actor, TriageFilters(assignee="none", state="open"),
                                 count_cap=2)
    assert filtered.counts == {"new": 2, "triaged": 1, "resolved": 1, "wont_fix": 1}
    assert (filtered.capped, filtered.total, filtered.total_capped) == (
        frozenset({"new"}), 3, True)
    assert row_ids(filtered) == [made[i].id for i in (5, 3, 2, 1, 0)]
    uncapped = triage.list_items(session, actor, TriageFilters(assignee="none"))
    assert (uncapped.counts, uncapped.capped) == (exact, frozenset())
    # A workspace the actor does not lead: refused, not an empty list (new-user walk).
    other = make.workspace()
    with pytest.raises(ValidationFailed) as error:
        triage.list_items(session, actor, TriageFilters(workspace_id=other.id))
    assert error.value.problems == {"workspace": f"you have no workspace '{other.id}'"}
