"""The dashboard's roll-ups kept by the services (issue 18): after a random sequence of
writes through the services — ingest and re-ingest with changed status, time, score,
verifier verdict and calls; tool-call events (also failed, re-sent, renamed); finishing;
verdicts (ratings added, switched, deleted; the verdict API), which open, resolve and
reopen triage items; tool-call ratings; bulk re-scoring; triage moves, one by one and in
bulk; a deleted run — the dashboard equals the figures computed here, in Python, from
the base tables' rows (no SQL aggregate, no code of the app), on the database under test
(SQLite, or PostgreSQL with ``REVIEWAPP_TEST_DB_URL``); the triage backlog too, at
moments that put each age bound on the items' own day and on the days around it."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

import pytest
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import select

from reviewapp import REPO_ROOT
from reviewapp.actors import Actor, Role
from reviewapp.domain import triage_flow
from reviewapp.errors import Conflict, Forbidden, ServiceError
from reviewapp.models import (
    DiagnosticReport,
    Feedback,
    Membership,
    Message,
    Run,
    RunDayCount,
    ToolCall,
    ToolDayCount,
    TriageDayCount,
    TriageItem,
    User,
)
from reviewapp.services import (
    dashboard,
    evaluations,
    feedback,
    rollups,
    runs,
    tool_calls,
    triage,
)
from reviewapp.services.dashboard import DashboardFilters

SYSTEM = Actor.system_actor()
TOOLS = ("query_logs", "vault_read", "node_exec", "get_metrics")
DAYS = [date(2026, 11, 20) + timedelta(days=i) for i in range(6)]
# Times near midnight on both sides, so a wrong time zone moves runs between days.
CLOCKS = ("00:00:01", "11:30:00", "23:59:59")


# ------------------------------------------------------------------ the independent oracle


def expected(session, ws_ids, date_from=None, date_to=None):
    """The dashboard's run and tool figures from the rows, computed in Python: a run's
    day is the UTC day of started_at, else of created_at; a call and its ratings count
    on its run's day."""
    runs_by_pk = {}
    for run in session.scalars(select(Run).where(Run.workspace_id.in_(ws_ids))):
        when = run.started_at or run.created_at
        day = when.astimezone(UTC).date()
        if (date_from is None or day >= date_from) and (date_to is None or day <= date_to):
            runs_by_pk[run.id] = (run, day)
    per_day = defaultdict(Counter)
    bands, verifier = Counter(), Counter()
    for run, day in runs_by_pk.values():
        per_day[day.isoformat()]["runs"] += 1
        per_day[day.isoformat()][run.feedback] += 1
        if run.evidence_score is None:
            bands["unscored"] += 1
        else:
            bands["90–100" if run.evidence_score >= 90 else
                  f"{run.evidence_score // 10 * 10}–{run.evidence_score // 10 * 10 + 9}"] += 1
        verifier[run.verifier_verdict or "none"] += 1
    calls, failed = Counter(), Counter()
    tool_of = {}
    for call in session.scalars(select(ToolCall).where(ToolCall.run_pk.in_(runs_by_pk))):
        calls[call.tool_name] += 1
        failed[call.tool_name] += call.status == "failed"
        tool_of[(call.run_pk, call.id)] = call.tool_name
    rated, negative, disliked = Counter(), Counter(), defaultdict(set)
    for row in session.scalars(select(Feedback).where(Feedback.target_type == "tool_call")):
        tool = tool_of.get((row.target_id, row.subject_key))
        if tool is None or row.run_pk not in runs_by_pk:
            continue
        rated[tool] += 1
        if row.rating == "negative":
            negative[tool] += 1
            disliked[tool].add((row.target_id, row.subject_key))
    failing = sorted(((t, failed[t], calls[t]) for t in calls if failed[t]),
                     key=lambda x: (-x[1], x[0]))[:dashboard.TOP_TOOLS]
    dislikes = sorted(((t, negative[t], rated[t], len(disliked[t])) for t in rated
                       if negative[t]), key=lambda x: (-x[1], x[0]))[:dashboard.TOP_TOOLS]
    return {
        "runs": len(runs_by_pk),
        "days": {d: (c["runs"], c["useful"], c["not_useful"]) for d, c in per_day.items()},
        "bands": +bands,
        "verifier": +verifier,
        "failing": failing,
        "disliked": dislikes,
    }


def expected_backlog(session, ws_ids, now):
    """(open items per age bucket and state, items per state) from the items' rows: an
    open item is in the first bucket whose bound (now - N days) it was opened after."""
    grid = [{"new": 0, "triaged": 0} for _ in dashboard.AGE_BUCKETS]
    states = {"new": 0, "triaged": 0, "resolved": 0, "wont_fix": 0}
    for item in session.scalars(select(TriageItem).where(TriageItem.workspace_id.in_(ws_ids))):
        states[item.state] += 1
        if item.state not in grid[0]:
            continue
        index = next((i for i, (_, days) in enumerate(dashboard.AGE_BUCKETS)
                      if days is not None and item.created_at > now - timedelta(days=days)),
                     len(dashboard.AGE_BUCKETS) - 1)
        grid[index][item.state] += 1
    return grid, states


def backlog_moments(session):
    """Moments to draw the backlog at: now, and each age bound put exactly on an item's
    opening time (strictly after: not in the younger bucket), a second later, and half
    a day to either side (the bound's day before or after the items')."""
    times = sorted(session.scalars(select(TriageItem.created_at)))
    moments = [datetime.now(UTC)]
    for opened in times[:1] + times[len(times) // 2:len(times) // 2 + 1]:
        for _, days in dashboard.AGE_BUCKETS:
            for shift in (timedelta(0), timedelta(seconds=1), timedelta(hours=-12),
                          timedelta(hours=12)):
                if days is not None:
                    moments.append(opened + timedelta(days=days) + shift)
    return moments


def shown(board):
    """The same figures as the dashboard shows them."""
    bands = Counter(dict(board.score_histogram))
    bands["unscored"] = board.unscored
    return {
        "runs": board.runs,
        "days": {d.day: (d.runs, d.useful, d.not_useful) for d in board.usefulness if d.runs},
        "bands": +bands,
        "verifier": +Counter(dict(board.verdicts)),
        "failing": [(t.tool_name, t.failed, t.total) for t in board.failing_tools],
        "disliked": [(t.tool_name, t.negative, t.rated, t.calls) for t in board.disliked_tools],
    }


def stored_rollups(session):
    """The roll-up rows, zero rows left out (a count that went back to 0 may stay)."""
    run_rows = {(r.workspace_id, r.dimension, r.day, r.value): r.runs
                for r in session.scalars(select(RunDayCount)) if r.runs}
    tool_rows = {(r.workspace_id, r.day, r.tool_name): (r.calls, r.failed, r.rated, r.negative,
                                                        r.disliked_calls)
                 for r in session.scalars(select(ToolDayCount))
                 if (r.calls, r.failed, r.rated, r.negative, r.disliked_calls) != (0,) * 5}
    triage_rows = {(r.workspace_id, r.state, r.day): r.items
                   for r in session.scalars(select(TriageDayCount)) if r.items}
    return run_rows, tool_rows, triage_rows


# ------------------------------------------------------------------ the random writes


class World:
    def __init__(self, session, make, rng):
        self.session, self.make, self.rng = session, make, rng
        self.spaces = [make.workspace(), make.workspace()]
        self.lead = make.user(self.spaces[0], Role.LEAD)
        session.add(Membership(user_id=self.lead.id, workspace_id=self.spaces[1].id,
                               role=Role.LEAD.value))
        session.commit()
        self.reviewers = {ws.id: [make.user(ws), make.user(ws)] for ws in self.spaces}
        self.docs = {}  # (ws id, run_id) -> the last document sent
        self.serial = 0
        self.moved = Counter()  # triage moves applied: one by one, in bulk

    def pick_run(self):
        if not self.docs:
            return None
        return self.rng.choice(sorted(self.docs))

    def run_of(self, key):
        return self.session.scalar(select(Run).where(Run.workspace_id == key[0],
                                                     Run.run_id == key[1]))

    def calls(self, run_id, n):
        rng = self.rng
        return [{"id": f"{run_id}/c{i}", "tool_name": rng.choice(TOOLS),
                 "status": rng.choice(("completed", "completed", "failed", "started")),
                 "arguments": {"q": i}, "error": "boom"}
                for i in range(n)]

    def document(self, run_id, status):
        rng = self.rng
        doc = {
            "kind": rng.choice(("chat", "aiops")),
            "query": f"Why {run_id}?", "answer": f"Because {run_id}.", "status": status,
            "messages": [{"id": "u1", "role": "user", "content": f"Why {run_id}?"},
                         {"id": "a1", "role": "assistant", "content": f"Because {run_id}."}],
            "report": "Report.",
            "tool_calls": self.calls(run_id, rng.randrange(0, 4)),
        }
        if rng.random() < 0.8:  # else: no started_at, the day is the day it was stored
            doc["started_at"] = f"{rng.choice(DAYS).isoformat()}T{rng.choice(CLOCKS)}Z"
        if rng.random() < 0.6:
            doc["verifier_evaluation"] = {"verdict": rng.choice(("PASS", "LOW_CONFID", "REJECT")),
                                          "groundedness_score": rng.randrange(0, 101)}
        if rng.random() < 0.5:
            doc["self_evaluation"] = {"rule_evaluation": {
                "evidence_score": rng.choice((0, 9, 10, 45, 89, 90, 100))}}
        return doc

    # each step: one service call (errors a service refuses with are part of the game)

    def ingest(self):
        self.serial += 1
        ws = self.rng.choice(self.spaces)
        run_id = f"r{self.serial}"
        doc = self.document(run_id, self.rng.choice(("RUNNING", "SUCCESS", "FAILED")))
        runs.upsert_run(self.session, SYSTEM, ws.id, run_id, doc)
        self.docs[(ws.id, run_id)] = doc

    def reingest(self):
        key = self.pick_run()
        if key is None:
            return
        doc = dict(self.docs[key])
        rng = self.rng
        if doc["status"] == "RUNNING" or rng.random() < 0.2:
            doc["status"] = rng.choice(("RUNNING", "SUCCESS", "FAILED"))
        if rng.random() < 0.5:
            doc["started_at"] = f"{rng.choice(DAYS).isoformat()}T{rng.choice(CLOCKS)}Z"
        if rng.random() < 0.5:  # the same calls, other names and states, and new ones
            doc["tool_calls"] = [{**c, "tool_name": rng.choice(TOOLS),
                                  "status": rng.choice(("completed", "failed"))}
                                 for c in doc["tool_calls"]] + self.calls(
                                     key[1] + f"x{rng.randrange(1000)}", rng.randrange(0, 2))
        if rng.random() < 0.5:
            doc["verifier_evaluation"] = {"verdict": rng.choice(("PASS", "LOW_CONFID", "REJECT"))}
        try:
            runs.upsert_run(self.session, SYSTEM, key[0], key[1], doc)
            self.docs[key] = doc
        except Conflict:  # a finished run cannot go back to RUNNING
            pass

    def events(self):
        key = self.pick_run()
        if key is None:
            return
        rng = self.rng
        known = [c["id"] for c in self.docs[key]["tool_calls"]]
        events = []
        for _ in range(rng.randrange(1, 4)):
            call_id = rng.choice(known + [f"{key[1]}/e{rng.randrange(5)}"])
            events.append({"run_id": key[1], "id": call_id,
                           "event": rng.choice(("started", "completed", "failed")),
                           "tool_name": rng.choice(TOOLS + ("unknown",)),
                           "error": "boom"})
        tool_calls.apply_events(self.session, SYSTEM, key[0], events)

    def finish(self):
        key = self.pick_run()
        if key is None:
            return
        try:
            runs.finish_run(self.session, SYSTEM, key[0], key[1],
                            {"status": self.rng.choice(("SUCCESS", "FAILED"))})
            self.docs[key]["status"] = self.run_of(key).status
        except Conflict:
            pass

    def rate_answer(self):
        key = self.pick_run()
        if key is None:
            return
        run = self.run_of(key)
        target = self.session.scalar(
            select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant")
            .order_by(Message.ordinal.desc()).limit(1))
        if run.kind == "aiops":
            target_type = "diagnostic_report"
            target = self.session.scalar(select(DiagnosticReport.id).where(
                DiagnosticReport.run_pk == run.id))
        else:
            target_type = "chat_message"
        if target is None:
            return
        user = self.rng.choice(self.reviewers[key[0]])
        feedback.upsert_feedback(self.session, self.make.actor(user), target_type, target, None,
                                 self.rng.choice(("positive", "negative")),
                                 switch=self.rng.random() < 0.5)

    def rate_call(self):
        key = self.pick_run()
        if key is None:
            return
        run = self.run_of(key)
        ids = sorted(self.session.scalars(select(ToolCall.id).where(ToolCall.run_pk == run.id)))
        if not ids:
            return
        user = self.rng.choice(self.reviewers[key[0]])
        feedback.upsert_feedback(self.session, self.make.actor(user), "tool_call", run.id,
                                 self.rng.choice(ids), self.rng.choice(("positive", "negative")))

    def unrate(self):
        rows = self.session.execute(select(Feedback.id, Feedback.author_id)
                                    .order_by(Feedback.id)).all()
        if not rows:
            return
        feedback_id, author_id = self.rng.choice(rows)
        author = self.session.get(User, author_id)
        feedback.delete_feedback(self.session, self.make.actor(author), feedback_id)

    def verdict_api(self):
        key = self.pick_run()
        if key is None:
            return
        run = self.run_of(key)
        feedback.set_run_verdict(self.session, SYSTEM, run.session.session_id, run.run_id,
                                 self.rng.choice(("useful", "not_useful")))

    def verifier_key(self):
        key = self.pick_run()
        if key is None:
            return
        evaluations.write_evaluation_key(
            self.session, SYSTEM, self.run_of(key).id, "verifier_evaluation",
            {"verdict": self.rng.choice(("PASS", "LOW_CONFID", "REJECT"))})

    def rescore(self):
        evaluations.rescore_runs(self.session, SYSTEM, batch_size=self.rng.choice((1, 3, 50)))

    def _items(self):
        return self.session.execute(select(TriageItem.id, TriageItem.version, TriageItem.state)
                                    .order_by(TriageItem.id)).all()

    def triage_move(self):
        """A lead moves one item (sometimes from a stale page: a Conflict, nothing moves)."""
        items = self._items()
        if not items:
            return
        item_id, version, state = self.rng.choice(items)
        moves = triage_flow.TRANSITIONS[state]
        stale = self.rng.random() < 0.15
        triage.move(self.session, self.make.actor(self.lead), item_id,
                    version - 1 if stale else version, self.rng.choice(moves))
        self.moved["one"] += 1

    def triage_bulk(self):
        """A lead moves a few items at once to one state (some skipped, some invalid)."""
        items = self._items()
        if not items:
            return
        chosen = self.rng.sample(items, min(len(items), self.rng.randrange(1, 5)))
        outcomes = triage.bulk_move(self.session, self.make.actor(self.lead),
                                    [(i, v) for i, v, _ in chosen],
                                    self.rng.choice(triage_flow.MOVE_TARGETS))
        self.moved["bulk"] += sum(o.status == "applied" for o in outcomes)

    def delete_run(self):
        """A run deleted with its calls and ratings (cascade): the roll-ups let it go
        when the deleting transaction tracks it, as every writer does."""
        key = self.pick_run()
        if key is None:
            return
        run = self.run_of(key)
        rollups.track(self.session, [run.id], rollups.Part.ALL | rollups.Part.TRIAGE, lock=True)
        self.session.delete(run)
        self.session.commit()
        del self.docs[key]

    STEPS = (("ingest", 8), ("reingest", 4), ("events", 4), ("finish", 2), ("rate_answer", 4),
             ("rate_call", 4), ("unrate", 3), ("verdict_api", 2), ("verifier_key", 1),
             ("rescore", 1), ("triage_move", 4), ("triage_bulk", 2), ("delete_run", 1))

    def plan(self, length):
        """``length`` step names: a few runs first, then every kind of write twice and
        the rest drawn by weight, shuffled."""
        names = [name for name, weight in self.STEPS for _ in range(weight)]
        rest = [n for n, _ in self.STEPS] * 2
        rest += [self.rng.choice(names) for _ in range(length - 4 - len(rest))]
        self.rng.shuffle(rest)
        return ["ingest"] * 4 + rest

    def step(self, name):
        """Run one step; ``False`` when the service refused it (nothing written)."""
        try:
            getattr(self, name)()
        except ServiceError:  # e.g. a Conflict: a finished run cannot go back to RUNNING
            self.session.rollback()
            return False
        return True


def check(session, world):
    lead = world.make.actor(world.lead)
    ws_ids = [ws.id for ws in world.spaces]
    filters = [DashboardFilters(), DashboardFilters(workspace_id=ws_ids[0]),
               DashboardFilters(workspace_id=ws_ids[1]),
               DashboardFilters(date_from=DAYS[1], date_to=DAYS[3]),
               DashboardFilters(workspace_id=ws_ids[1], date_from=DAYS[4]),
               DashboardFilters(date_to=DAYS[0]),
               DashboardFilters(date_from=datetime.now(UTC).date())]
    for f in filters:
        wanted = expected(session, [f.workspace_id] if f.workspace_id else ws_ids,
                          f.date_from, f.date_to)
        assert shown(dashboard.build(session, lead, f)) == wanted, f
    for ids in (ws_ids, ws_ids[:1]):
        for now in backlog_moments(session):
            board = dashboard.build(session, lead, DashboardFilters(
                workspace_id=ids[0] if len(ids) == 1 else None), now=now)
            grid, states = expected_backlog(session, ids, now)
            assert [b.counts for b in board.backlog] == grid, now
            assert board.triage_states == states


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rollups_follow_every_write(session, make, seed):
    world = World(session, make, random.Random(seed))
    done = Counter()
    for i, name in enumerate(world.plan(80)):
        done[name] += world.step(name)
        if i % 23 == 22:
            check(session, world)
    check(session, world)
    # Every kind of write happened (the sequence is not degenerate).
    assert all(done[name] for name, _ in World.STEPS), done
    ws_ids = [ws.id for ws in world.spaces]
    board = dashboard.build(session, make.actor(world.lead))
    assert board.runs == session.query(Run).filter(Run.workspace_id.in_(ws_ids)).count() > 5
    assert board.failing_tools and board.disliked_tools
    # Items were opened, and leads moved some (one by one and in bulk).
    assert sum(board.triage_states.values()) >= 3 and all(world.moved.values()), world.moved
    # The rebuild (and the migration's backfill) find exactly what the services kept.
    kept = stored_rollups(session)
    dashboard.rebuild(session, SYSTEM)
    assert stored_rollups(session) == kept
    _backfill_as_the_migration(session)
    assert stored_rollups(session) == kept


def _backfill_as_the_migration(session):
    for name in ("dashboard_rollups", "dashboard_triage_rollup"):
        path = next((REPO_ROOT / "migrations" / "versions").glob(f"*_{name}.py"))
        spec = importlib.util.spec_from_file_location(f"{name}_migration", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        tables = ((RunDayCount, ToolDayCount) if name == "dashboard_rollups"
                  else (TriageDayCount,))
        for table in tables:
            session.execute(table.__table__.delete())
        with Operations.context(MigrationContext.configure(session.connection())):
            module._backfill()
    session.commit()


def test_a_rollback_writes_nothing(session, make):
    ws = make.workspace()
    make.run(ws, started_at="2026-11-20T10:00:00Z")
    before = stored_rollups(session)
    run = session.scalar(select(Run))
    rollups.track(session, [run.id])
    run.status = "FAILED"
    session.flush()
    session.rollback()
    session.commit()
    assert stored_rollups(session) == before
    assert before[0][(ws.id, "status", date(2026, 11, 20), "SUCCESS")] == 1


def test_the_day_is_utc_whatever_the_offset_sent(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.run(ws, started_at="2026-11-20T23:30:00-02:00")  # 2026-11-21 01:30 UTC
    make.run(ws, started_at="2026-11-21T00:30:00+02:00")  # 2026-11-20 22:30 UTC
    board = dashboard.build(session, make.actor(lead))
    assert [(d.day, d.runs) for d in board.usefulness] == [("2026-11-20", 1), ("2026-11-21", 1)]


def test_rebuild_is_for_the_system_or_an_admin_of_the_workspace(session, make):
    ws = make.workspace()
    lead, admin = make.user(ws, Role.LEAD), make.user(ws, Role.ADMIN)
    with pytest.raises(Forbidden):
        dashboard.rebuild(session, make.actor(lead), ws.id)
    with pytest.raises(Forbidden):
        dashboard.rebuild(session, make.actor(admin))
    assert dashboard.rebuild(session, make.actor(admin), ws.id).run_rows == 0


def test_a_leads_decision_and_a_dispute_move_the_verdict_counts(session, make):
    """Issue 16's verdict paths (majority of N, a dispute withdrawing the verdict, the
    lead's decision) all write through the one verdict write the roll-ups follow."""
    from reviewapp.services import adjudication
    from reviewapp.services import review_queues as rq

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws), make.user(ws)
    run = make.run(ws, started_at="2026-11-20T10:00:00Z")
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))

    def verdicts():
        board = shown(dashboard.build(session, make.actor(lead)))
        assert board == expected(session, [ws.id])
        return board["days"]["2026-11-20"]

    for user in (ann, bob):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None,
                                 "positive")
    assert verdicts() == (1, 1, 0)  # (runs, useful, not useful): the majority of two
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative")
    assert verdicts() == (1, 0, 0)  # a tie: the verdict is withdrawn, the lead decides
    first = adjudication.decide(session, make.actor(lead), run.id, "not_useful")
    assert verdicts() == (1, 0, 1)
    adjudication.decide(session, make.actor(lead), run.id, "useful",
                        expected_decision=first.decision_id)
    assert verdicts() == (1, 1, 0)
