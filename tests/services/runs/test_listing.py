"""The runs list: filters, sort orders, keyset pagination, counts (SPEC 8)."""

from __future__ import annotations

import pytest

from reviewapp.errors import ValidationFailed
from reviewapp.services import feedback, runs
from reviewapp.services.runs import RunFilters, listing


def _all_pages(session, actor, filters, limit=2):
    seen, cursor = [], None
    for _ in range(100):
        page = runs.list_runs(session, actor, limit=limit, cursor=cursor, filters=filters)
        seen.extend(r.id for r in page.runs)
        cursor = page.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("pagination did not end")


@pytest.fixture
def world(session, make):
    """Six runs in one workspace with distinct facts, one foreign run, a reviewer."""
    ws, other = make.workspace(), make.workspace()
    specs = [
        dict(kind="chat", status="SUCCESS", score=80, verdict="PASS", feedback="useful", outcome="pass", calls=3, failed=0),
        dict(kind="chat", status="FAILED", score=0, verdict="REJECT", feedback="not_useful", outcome="fail", calls=2, failed=2),
        dict(kind="aiops", status="SUCCESS", score=45, verdict=None, feedback=None, outcome=None, calls=5, failed=1),
        dict(kind="aiops", status="RUNNING", score=None, verdict=None, feedback=None, outcome=None, calls=1, failed=0),
        dict(kind="chat", status="SUCCESS", score=65, verdict="LOW_CONFID", feedback=None, outcome="pass", calls=0, failed=0),
        dict(kind="chat", status="SUCCESS", score=30, verdict="PASS", feedback="useful", outcome="fail", calls=4, failed=0),
    ]
    made = []
    for i, spec in enumerate(specs):
        run = make.run(ws, kind=spec["kind"], status=spec["status"],
                       query=f"question {i} about {'disk 100% full' if i == 2 else 'latency'}",
                       answer=f"answer {i}" + (" mentions 订单服务" if i == 4 else ""))
        run.evidence_score = spec["score"]
        run.verifier_verdict = spec["verdict"]
        run.feedback = spec["feedback"]
        run.external_outcome = spec["outcome"]
        run.tool_call_count = spec["calls"]
        run.failed_tool_call_count = spec["failed"]
        made.append(run)
    stamp = made[0].created_at
    for run in made:  # every run shares one timestamp: the id must break ties
        run.created_at = stamp
    make.run(other, query="foreign latency question")
    session.commit()
    user = make.user(ws)
    return {"ws": ws, "runs": made, "user": user, "actor": make.actor(user), "specs": specs}


def _ids(world, predicate):
    return {r.id for r, s in zip(world["runs"], world["specs"]) if predicate(s)}


@pytest.mark.parametrize("filters, predicate", [
    (RunFilters(kind="aiops"), lambda s: s["kind"] == "aiops"),
    (RunFilters(status="SUCCESS"), lambda s: s["status"] == "SUCCESS"),
    (RunFilters(verdict="PASS"), lambda s: s["verdict"] == "PASS"),
    (RunFilters(verdict="none"), lambda s: s["verdict"] is None),
    (RunFilters(feedback="useful"), lambda s: s["feedback"] == "useful"),
    (RunFilters(feedback="none"), lambda s: s["feedback"] is None),
    (RunFilters(score_min=30, score_max=65), lambda s: s["score"] is not None and 30 <= s["score"] <= 65),
    (RunFilters(score_min=50), lambda s: s["score"] is not None and s["score"] >= 50),
    (RunFilters(outcome="pass"), lambda s: s["outcome"] == "pass"),
    (RunFilters(outcome="PASS"), lambda s: (s["outcome"] or "").upper() == "PASS"),
    (RunFilters(kind="chat", feedback="useful", outcome="fail"),
     lambda s: s["kind"] == "chat" and s["feedback"] == "useful" and s["outcome"] == "fail"),
])
def test_list_runs_filters_match_the_runs_facts(session, world, filters, predicate):
    page = runs.list_runs(session, world["actor"], filters=filters)
    assert {r.id for r in page.runs} == _ids(world, predicate)
    assert page.filtered.value == len(_ids(world, predicate))
    assert page.total_count.value == 6


def test_list_runs_text_search_covers_query_and_answer_and_escapes_wildcards(session, world):
    actor = world["actor"]
    by_answer = runs.list_runs(session, actor, filters=RunFilters(q="订单服务"))
    assert [r.id for r in by_answer.runs] == [world["runs"][4].id]
    literal = runs.list_runs(session, actor, filters=RunFilters(q="100%"))
    assert [r.id for r in literal.runs] == [world["runs"][2].id]
    # Unescaped, "%" and "_" would match every run.
    assert [r.id for r in runs.list_runs(session, actor, filters=RunFilters(q="%")).runs] == \
        [world["runs"][2].id]
    assert runs.list_runs(session, actor, filters=RunFilters(q="_")).runs == []
    assert {r.id for r in runs.list_runs(session, actor, filters=RunFilters(q="LATENCY")).runs} == \
        {r.id for i, r in enumerate(world["runs"]) if i != 2}


def test_list_runs_reviewed_by_me_filter(session, world, make):
    actor = world["actor"]
    rated = world["runs"][1]
    message = next(m for m in rated.messages if m.role == "assistant")
    feedback.upsert_feedback(session, actor, "chat_message", message.id, None, "positive")
    # Another reviewer's rating does not count as mine.
    someone = make.actor(make.user(world["ws"]))
    other_message = next(m for m in world["runs"][3].messages if m.role == "assistant")
    feedback.upsert_feedback(session, someone, "chat_message", other_message.id, None, "negative")
    mine = runs.list_runs(session, actor, filters=RunFilters(reviewed="mine"))
    assert [r.id for r in mine.runs] == [rated.id]
    todo = runs.list_runs(session, actor, filters=RunFilters(reviewed="not_mine"))
    assert {r.id for r in todo.runs} == {r.id for r in world["runs"]} - {rated.id}
    everything = runs.list_runs(session, actor)
    assert everything.reviewed_by_me == {rated.id}


@pytest.mark.parametrize("sort, key", [
    ("newest", lambda r, s: (-r.id,)),
    ("oldest", lambda r, s: (r.id,)),
    ("score_desc", lambda r, s: (-(s["score"] if s["score"] is not None else -1), -r.id)),
    ("score_asc", lambda r, s: ((s["score"] if s["score"] is not None else 101), r.id)),
    ("calls_desc", lambda r, s: (-s["calls"], -r.id)),
    ("failed_desc", lambda r, s: (-s["failed"], -r.id)),
])
def test_keyset_pages_neither_skip_nor_repeat_in_every_sort(session, world, sort, key):
    """All six runs share one created_at; pages of two walk them in the expected order."""
    expected = [r.id for r, s in sorted(zip(world["runs"], world["specs"]), key=lambda p: key(*p))]
    assert _all_pages(session, world["actor"], RunFilters(sort=sort)) == expected


def test_keyset_pages_with_filters(session, world):
    expected = sorted(_ids(world, lambda s: s["kind"] == "chat"), reverse=True)
    assert _all_pages(session, world["actor"], RunFilters(kind="chat"), limit=1) == expected


def test_filtered_count_stops_at_its_own_cap(session, world, monkeypatch):
    monkeypatch.setattr(listing, "FILTERED_COUNT_CAP", 2)
    page = runs.list_runs(session, world["actor"], filters=RunFilters(kind="chat"))
    assert (page.filtered.value, page.filtered.capped) == (2, True)
    assert (page.total_count.value, page.total_count.capped) == (6, False)


def test_counts_stop_at_the_cap(session, world):
    page = runs.list_runs(session, world["actor"], count_cap=4)
    assert (page.total_count.value, page.total_count.capped) == (4, True)
    page = runs.list_runs(session, world["actor"], count_cap=6)
    assert (page.total_count.value, page.total_count.capped) == (6, False)


def test_list_runs_never_shows_another_workspace(session, world):
    page = runs.list_runs(session, world["actor"], filters=RunFilters(q="foreign"))
    assert page.runs == [] and page.total_count.value == 6


@pytest.mark.parametrize("filters, field", [
    (RunFilters(kind="robot"), "kind"),
    (RunFilters(status="DONE"), "status"),
    (RunFilters(verdict="MAYBE"), "verdict"),
    (RunFilters(feedback="meh"), "feedback"),
    (RunFilters(reviewed="yours"), "reviewed"),
    (RunFilters(score_min=-1), "score_min"),
    (RunFilters(score_max=101), "score_max"),
    (RunFilters(score_min=60, score_max=10), "score_max"),
    (RunFilters(sort="random"), "sort"),
    (RunFilters(q="x" * 201), "q"),
])
def test_bad_filters_name_the_field(session, world, filters, field):
    with pytest.raises(ValidationFailed) as caught:
        runs.list_runs(session, world["actor"], filters=filters)
    assert caught.value.field == field


def test_every_bad_filter_is_refused_at_once():
    """New-user walk: a filter form with several bad fields named only the first."""
    with pytest.raises(ValidationFailed) as caught:
        RunFilters.from_params({"workspace": "Not A Slug", "kind": "batch", "status": "DONE",
                                "score_min": "x", "score_max": "101", "reviewed": "yours",
                                "sort": "cheapest", "failed_calls": "no"})
    assert caught.value.problems == {
        "workspace": "must be a workspace's number or its short name (e.g. demo)",
        "kind": "must be one of chat, aiops",
        "status": "must be one of RUNNING, SUCCESS, FAILED",
        "score_min": "must be a whole number",
        "score_max": "must be between 0 and 100",
        "reviewed": "must be one of not_mine, mine",
        "sort": "must be one of newest, oldest, score_desc, score_asc, failed_desc, calls_desc, relevance",
        "failed_calls": "must be one of yes",
    }
    with pytest.raises(ValidationFailed) as caught:
        RunFilters.from_params({"kind": "batch", "score_min": "80", "score_max": "10"})
    assert caught.value.problems == {"kind": "must be one of chat, aiops",
                                     "score_max": "must not be below the minimum score"}


def test_a_workspace_name_the_actor_lacks_is_refused_with_the_other_bad_filters(session, make):
    """``?workspace=nope`` (a short name the actor has no workspace by) was named only
    once every other filter was right; ``read_filters`` names it with them."""
    ws = make.workspace(slug="alpha")
    actor = make.actor(make.user(ws))
    with pytest.raises(ValidationFailed) as caught:
        runs.read_filters(session, actor, {"workspace": "nope", "kind": "batch"})
    assert caught.value.problems == {"workspace": "you have no workspace 'nope'",
                                     "kind": "must be one of chat, aiops"}
    assert runs.read_filters(session, actor, {"workspace": "alpha"}) == RunFilters(workspace_slug="alpha")


def test_a_workspace_id_the_actor_is_not_in_is_refused_like_an_unknown_name(session, make):
    """New-user walk: ``?workspace=77`` (no such workspace, or one the actor is not in)
    listed nothing, silently. It is refused naming the field, with the other bad filters,
    in the same words whether the workspace exists or not (SPEC 2)."""
    mine, other = make.workspace(), make.workspace()
    make.run(other)
    actor = make.actor(make.user(mine))
    for unknown in (other.id, 999_999):
        with pytest.raises(ValidationFailed) as caught:
            runs.read_filters(session, actor, {"workspace": str(unknown), "kind": "batch"})
        assert caught.value.problems == {"workspace": f"you have no workspace '{unknown}'",
                                         "kind": "must be one of chat, aiops"}
        with pytest.raises(ValidationFailed) as caught:
            runs.list_runs(session, actor, filters=RunFilters(workspace_id=unknown))
        assert caught.value.problems == {"workspace": f"you have no workspace '{unknown}'"}
    assert runs.read_filters(session, actor, {"workspace": str(mine.id)}) == RunFilters(workspace_id=mine.id)


def test_a_cursor_from_another_sort_is_refused(session, world):
    page = runs.list_runs(session, world["actor"], limit=2, filters=RunFilters(sort="score_desc"))
    with pytest.raises(ValidationFailed) as caught:
        runs.list_runs(session, world["actor"], limit=2, cursor=page.next_cursor)
    assert caught.value.field == "cursor"


def test_filters_travel_as_query_text_and_back():
    """The list recipe of every page (issue 12): from_params parses query-string text with
    the shared parsers, as_params writes it back; a round trip changes nothing."""
    filters = RunFilters(workspace_id=3, kind="aiops", status="FAILED", verdict="none",
                         feedback="not_useful", score_min=0, score_max=40, outcome="fail",
                         reviewed="not_mine", q="disk full", sort="score_asc")
    params = filters.as_params()
    assert params == {"workspace": "3", "kind": "aiops", "status": "FAILED", "verdict": "none",
                      "feedback": "not_useful", "score_min": "0", "score_max": "40",
                      "outcome": "fail", "reviewed": "not_mine", "q": "disk full",
                      "sort": "score_asc"}
    assert RunFilters.from_params(params) == filters
    assert RunFilters.from_params({}) == RunFilters() and RunFilters().as_params() == {}
    with pytest.raises(ValidationFailed) as error:
        RunFilters.from_params({"score_min": "50", "score_max": "10"})
    assert error.value.field == "score_max"
    with pytest.raises(ValidationFailed) as error:
        RunFilters.from_params({"sort": "cheapest"})
    assert error.value.field == "sort"
