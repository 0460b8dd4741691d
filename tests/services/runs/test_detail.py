"""The run page's read model (SPEC 2, 5, 8); the timeline is in test_timeline.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewapp.actors import Role
from reviewapp.errors import Forbidden
from reviewapp.models import Membership
from reviewapp.services import feedback, runs, unrated_runs
from reviewapp.services.runs import RunFilters, evaluation_view


def _assistant(run):
    return next(m for m in run.messages if m.role == "assistant")


def test_detail_of_a_missing_and_a_foreign_run_are_the_same_forbidden(session, make):
    mine, other = make.workspace(), make.workspace()
    foreign = make.run(other)
    actor = make.actor(make.user(mine))
    errors = []
    for run_pk in (foreign.id, foreign.id + 1000):
        with pytest.raises(Forbidden) as caught:
            runs.get_run_detail(session, actor, run_pk)
        errors.append(caught.value.to_dict())
    assert errors[0] == errors[1]
    with pytest.raises(Forbidden):
        runs.get_timeline(session, actor, foreign.id)
    with pytest.raises(Forbidden):
        runs.get_run(session, actor, foreign.id)


def test_detail_restores_my_ratings_and_reads_the_gatekeeper(session, make):
    ws = make.workspace()
    run = make.run(ws, messages=[
        {"id": "u", "role": "user", "content": "q"},
        {"id": "a0", "role": "assistant", "content": "draft"},
        {"id": "a1", "role": "assistant", "content": "final", "metadata": {"citations": [
            {"id": "c1", "title": "One", "source": "kb://1", "excerpt": "e1", "evidence_ref": "kb://1"},
            {"id": "c2", "title": "Two", "source": "https://x.example.com", "excerpt": "e2"}]}},
    ])
    final = [m for m in run.messages if m.role == "assistant"][-1]
    run.self_evaluation = {"citation_gatekeeper": {"verified": 1, "unverified": 1, "citations": [
        {"message_id": final.id, "citation_id": "c1", "status": "verified", "reason": "found", "evidence_ref": "kb://1"},
        {"message_id": final.id, "citation_id": "c2", "status": "unverified", "reason": "no tool returned it"}]}}
    session.commit()
    user = make.user(ws)
    actor = make.actor(user)
    feedback.upsert_feedback(session, actor, "citation", final.id, "c2", "negative", reason="citation")
    feedback.upsert_feedback(session, actor, "chat_message", final.id, None, "positive")
    detail = runs.get_run_detail(session, actor, run.id)
    assert detail.answer_message.id == final.id
    assert [(c.citation_id, c.gate["status"]) for c in detail.citations] == [("c1", "verified"), ("c2", "unverified")]
    assert detail.target("citation", final.id, "c2").mine.reason == "citation"
    assert detail.target("chat_message", final.id).mine.rating == "positive"
    assert detail.target("citation", final.id, "c1").mine is None
    assert detail.reasons == ["incorrect", "incomplete", "citation", "unsafe", "other"]


def test_detail_uses_the_workspace_reason_list(session, make):
    ws = make.workspace(feedback_reasons=["wrong_service", "stale_data"])
    run = make.run(ws)
    detail = runs.get_run_detail(session, make.actor(make.user(ws)), run.id)
    assert detail.reasons == ["wrong_service", "stale_data"]


def test_detail_neighbours_follow_the_current_list(session, make):
    ws = make.workspace()
    made = [make.run(ws, kind=k) for k in ("chat", "aiops", "chat", "chat")]
    actor = make.actor(make.user(ws))
    newest_first = sorted(r.id for r in made)[::-1]
    middle = runs.get_run_detail(session, actor, newest_first[1])
    assert (middle.prev_pk, middle.next_pk) == (newest_first[0], newest_first[2])
    chats = sorted((r.id for r in made if r.kind == "chat"), reverse=True)
    first_chat = runs.get_run_detail(session, actor, chats[0], RunFilters(kind="chat"))
    assert (first_chat.prev_pk, first_chat.next_pk) == (None, chats[1])
    oldest = runs.get_run_detail(session, actor, chats[-1], RunFilters(kind="chat", sort="oldest"))
    assert (oldest.prev_pk, oldest.next_pk) == (None, chats[-2])


@pytest.mark.parametrize("sort", ["newest", "oldest", "score_desc", "score_asc"])
def test_neighbours_of_each_run_of_one_list_in_turn(session, make, sort):
    """The previous / next statement is built once per viewer and list and reused for
    every run page (issue 18): each run of the list, visited in turn by one viewer with
    one set of filters, still gets its own neighbours. Two workspaces (the per-membership
    lookup), shared timestamps and unscored runs (the keys' ties and coalesce)."""
    first, second = make.workspace(), make.workspace()
    user = make.user(first)
    session.add(Membership(user_id=user.id, workspace_id=second.id, role=Role.REVIEWER.value))
    made = [make.run(ws) for ws in (first, second, first, second, first, second)]
    stamps = [datetime(2026, 3, 1, 12, tzinfo=UTC), datetime(2026, 3, 1, 12, tzinfo=UTC),
              datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC),
              datetime(2026, 3, 1, 12, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)]
    scores = [40, None, 40, 90, None, 10]
    for run, at, score in zip(made, stamps, scores):
        run.created_at, run.evidence_score = at, score
    session.commit()
    ids = [r.id for r in made]
    # The expected order, written out from the values above (ties broken by id).
    expected = {
        "newest": sorted(ids, key=lambda pk: (stamps[ids.index(pk)], pk), reverse=True),
        "oldest": sorted(ids, key=lambda pk: (stamps[ids.index(pk)], pk)),
        "score_desc": sorted(ids, key=lambda pk: (
            -1 if scores[ids.index(pk)] is None else scores[ids.index(pk)], pk), reverse=True),
        "score_asc": sorted(ids, key=lambda pk: (
            101 if scores[ids.index(pk)] is None else scores[ids.index(pk)], pk)),
    }[sort]
    actor = make.actor(user)
    filters = RunFilters(sort=sort)
    seen = []
    for pk in expected:
        detail = runs.get_run_detail(session, actor, pk, filters)
        seen.append((detail.prev_pk, detail.next_pk))
    assert seen == [(expected[i - 1] if i else None, expected[i + 1] if i + 1 < len(expected)
                     else None) for i in range(len(expected))]


def test_neighbours_follow_a_filter_on_the_viewers_own_ratings(session, make):
    """The reused statement reads the ratings as they are now: a run rated since the
    last page view drops out of a 'not reviewed by me' list's previous / next."""
    ws = make.workspace()
    made = [make.run(ws) for _ in range(3)]
    newest_first = sorted((r.id for r in made), reverse=True)
    actor = make.actor(make.user(ws))
    filters = RunFilters(reviewed="not_mine")
    assert runs.get_run_detail(session, actor, newest_first[0], filters).next_pk == newest_first[1]
    middle = next(r for r in made if r.id == newest_first[1])
    feedback.upsert_feedback(session, actor, "chat_message", _assistant(middle).id, None,
                             "positive")
    assert runs.get_run_detail(session, actor, newest_first[0], filters).next_pk == newest_first[2]
    assert runs.get_run_detail(session, actor, newest_first[2], filters).prev_pk == newest_first[0]


@pytest.mark.parametrize("raw, expected", [
    (None, None),
    ({}, None),
    ({"evidence_score": 65, "factors": []}, {"rule_evaluation": {"evidence_score": 65, "factors": []}}),
    ({"verdict": "PASS", "groundedness_score": 0.9},
     {"verifier_evaluation": {"verdict": "PASS", "groundedness_score": 0.9}}),
    ({"rule_evaluation": {"evidence_score": 30}, "junk": 3},
     {"rule_evaluation": {"evidence_score": 30}}),
])
def test_evaluation_view_wraps_legacy_roots(raw, expected):
    assert evaluation_view(raw) == expected


def test_review_queue_walks_unrated_runs_and_counts_progress(session, make):
    ws = make.workspace()
    made = [make.run(ws) for _ in range(3)]
    actor = make.actor(make.user(ws))
    newest = sorted((r.id for r in made), reverse=True)
    state = unrated_runs.next_run(session, actor)
    assert state.run_pk == newest[0]
    assert (state.progress.reviewed, state.progress.total) == (0, 3)
    first = next(r for r in made if r.id == newest[0])
    feedback.upsert_feedback(session, actor, "chat_message", _assistant(first).id, None, "positive")
    state = unrated_runs.next_run(session, actor)
    assert state.run_pk == newest[1]
    assert (state.progress.reviewed, state.progress.remaining) == (1, 2)
    # Skipping the second run moves on; skipping the last one wraps around.
    assert unrated_runs.next_run(session, actor, after_run_pk=newest[1]).run_pk == newest[2]
    assert unrated_runs.next_run(session, actor, after_run_pk=newest[2]).run_pk == newest[1]
    for run in made[:]:
        feedback.upsert_feedback(session, actor, "chat_message", _assistant(run).id, None, "negative")
    done = unrated_runs.next_run(session, actor)
    assert done.run_pk is None and done.progress.remaining == 0


def test_review_queue_offers_only_finished_runs_with_something_to_rate(session, make):
    """A run nobody can rate would stay at the head of the queue for ever (finding 3)."""
    ws = make.workspace()
    rateable = [
        make.run(ws),                                            # answer text + citations
        make.aiops_run(ws, report=None),                         # steps only
        make.aiops_run(ws, steps=[]),                            # report only
        # the conclusion, as an answer message made from run.answer
        make.aiops_run(ws, steps=[], report=None, answer="Conclusion only."),
    ]
    make.run(ws, status="RUNNING", answer=None)                  # still going
    make.run(ws, answer=None, messages=[{"id": "u1", "role": "user", "content": "q"}])
    make.run(ws, answer=None, messages=[{"id": "u1", "role": "user", "content": "q"},
                                        {"id": "a1", "role": "assistant", "content": "   "}])
    actor = make.actor(make.user(ws))
    seen = set()
    state = unrated_runs.next_run(session, actor)
    assert (state.progress.reviewed, state.progress.total) == (0, 4)
    while state.run_pk is not None:
        seen.add(state.run_pk)
        state = unrated_runs.next_run(session, actor, after_run_pk=state.run_pk)
        if state.run_pk in seen:
            break
    assert seen == {r.id for r in rateable}


def test_review_queue_refuses_to_skip_a_foreign_run(session, make):
    ws, other = make.workspace(), make.workspace()
    foreign = make.run(other)
    with pytest.raises(Forbidden):
        unrated_runs.next_run(session, make.actor(make.user(ws)), after_run_pk=foreign.id)


def test_detail_handles_a_run_without_messages_or_calls(session, make):
    ws = make.workspace()
    run = make.run(ws, kind="aiops", messages=[], answer=None, status="FAILED",
                   finished_at=datetime(2026, 1, 1, tzinfo=UTC).isoformat())
    detail = runs.get_run_detail(session, make.actor(make.user(ws)), run.id)
    assert detail.answer_message is None and detail.citations == [] and detail.timeline.rows == []
    # A FAILED run is scored at once: execution_failed, evidence score 0 (SPEC 5.1).
    assert detail.evaluation["rule_evaluation"]["evidence_score"] == 0
    assert [f["name"] for f in detail.evaluation["rule_evaluation"]["factors"]] == ["execution_failed"]


def test_detail_of_a_running_run_is_not_scored_yet(session, make):
    ws = make.workspace()
    run = make.run(ws, status="RUNNING", answer=None)
    detail = runs.get_run_detail(session, make.actor(make.user(ws)), run.id)
    # The gatekeeper checks citations at once; the evidence score waits for the end.
    assert "rule_evaluation" not in detail.evaluation
    assert detail.evaluation["citation_gatekeeper"]["unverified"] == 2
