"""Each user's count of rated runs per workspace (``user_rated_runs``, services/rated_runs.py,
issue 18) and their list of rated runs (``rated_run``), kept by the services: after a random sequence of writes through them — runs
ingested (some still running, some with nothing to rate but tool calls), re-ingested
(finished, given an answer), finished; ratings of answers, reports and tool calls
created, switched and deleted, by reviewers of one workspace and a lead of two — the
kept rows equal the counts and the (run, author, workspace, run time) rows computed
here, in Python, from the ratings' and runs' rows; so do the review queue's progress and
the runs list's "reviewed by me" count and pages (read from the list), and ``flask
dashboard rebuild`` and the migrations' backfills find the same rows."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter, defaultdict

import pytest
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import select

from reviewapp import REPO_ROOT
from reviewapp.models import Feedback, RatedRun, RatedRunCount, Run
from reviewapp.services import dashboard, runs, unrated_runs
from reviewapp.services.runs import COUNT_CAP, FILTERED_COUNT_CAP, RunFilters

from .test_dashboard_rollups import SYSTEM, World


def expected(session):
    """(author, workspace) -> (runs holding a rating of theirs, of them rateable), from
    the rows; pairs with no rated run left out."""
    rateable = dict(session.execute(select(Run.id, Run.rateable)).all())
    rated = defaultdict(set)
    for author, ws, run_pk in session.execute(
            select(Feedback.author_id, Feedback.workspace_id, Feedback.run_pk)):
        rated[(author, ws)].add(run_pk)
    return {key: (len(pks), sum(1 for pk in pks if rateable[pk]))
            for key, pks in rated.items()}


def expected_list(session):
    """(run, author) -> (workspace, run created_at) for each run holding a rating of the
    author, from the rows."""
    runs_ = {r.id: (r.workspace_id, r.created_at) for r in session.scalars(select(Run))}
    return {(run_pk, author): runs_[run_pk] for author, run_pk in session.execute(
        select(Feedback.author_id, Feedback.run_pk))}


def stored_list(session):
    return {(r.run_pk, r.author_id): (r.workspace_id, r.run_created_at)
            for r in session.scalars(select(RatedRun))}


def _pages(session, actor, filters):
    """Every run id of the list, page after page of 3 (the keyset on the kept list)."""
    ids, cursor = [], None
    while True:
        page = runs.list_runs(session, actor, limit=3, cursor=cursor, filters=filters)
        ids += [r.id for r in page.runs]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def stored(session):
    return {(r.author_id, r.workspace_id): (r.runs, r.rateable_runs)
            for r in session.scalars(select(RatedRunCount)) if (r.runs, r.rateable_runs) != (0, 0)}


class RatingWorld(World):
    """The dashboard oracle's world, its writes that touch ratings and rateability, plus
    runs with nothing to rate (tool calls only) and the lead of both workspaces rating."""

    def document(self, run_id, status):
        doc = super().document(run_id, status)
        if self.rng.random() < 0.3:  # only tool calls: not rateable (until an answer comes)
            doc = {**doc, "messages": [], "answer": None, "report": None}
            doc["tool_calls"] = doc["tool_calls"] or self.calls(run_id, 1)
        return doc

    def answer_later(self):
        """Re-sent with an answer: a run that had nothing to rate becomes rateable."""
        key = self.pick_run()
        if key is None:
            return
        doc = {**self.docs[key], "answer": f"Later {key[1]}.",
               "messages": [{"id": "a9", "role": "assistant", "content": f"Later {key[1]}."}]}
        runs.upsert_run(self.session, SYSTEM, key[0], key[1], doc)
        self.docs[key] = doc

    def lead_rates(self):
        saved = self.reviewers
        self.reviewers = {ws: [self.lead] for ws in saved}
        try:
            self.rng.choice((self.rate_answer, self.rate_call))()
        finally:
            self.reviewers = saved

    STEPS = (("ingest", 8), ("reingest", 3), ("events", 2), ("finish", 3), ("answer_later", 2),
             ("rate_answer", 6), ("rate_call", 5), ("lead_rates", 4), ("unrate", 4))


def check(session, world):
    wanted = expected(session)
    assert stored(session) == wanted
    listed = expected_list(session)
    assert stored_list(session) == listed
    users = [world.lead] + [u for pair in world.reviewers.values() for u in pair]
    for user in users:
        actor = world.make.actor(user)
        mine = {ws: n for (author, ws), n in wanted.items() if author == user.id}
        progress = unrated_runs.progress(session, actor)
        assert progress.reviewed == min(COUNT_CAP, sum(r for _, r in mine.values()))
        page = runs.list_runs(session, actor, limit=5, filters=RunFilters(reviewed="mine"))
        count = sum(n for n, _ in mine.values())
        assert (page.filtered.value, page.filtered.capped) == (min(count, FILTERED_COUNT_CAP),
                                                              count > FILTERED_COUNT_CAP)
        # The pages, newest and oldest first, are the user's rated runs of the workspaces
        # they belong to, in (created_at, id) order (computed here from the rows).
        member_of = {ws.id for ws in world.spaces
                     if user.id == world.lead.id or user in world.reviewers[ws.id]}
        by_time = sorted((at, pk) for (pk, author), (ws, at) in listed.items()
                         if author == user.id and ws in member_of)
        newest = [pk for _, pk in reversed(by_time)]
        assert _pages(session, actor, RunFilters(reviewed="mine")) == newest
        assert _pages(session, actor, RunFilters(reviewed="mine", sort="oldest")) == newest[::-1]
        for ws in world.spaces:  # one workspace, by id: the same rows, and a filtered list
            one = unrated_runs.progress(session, actor, RunFilters(workspace_id=ws.id))
            member = user.id == world.lead.id or user in world.reviewers[ws.id]
            assert one.reviewed == (mine.get(ws.id, (0, 0))[1] if member else 0)
            chat = unrated_runs.progress(session, actor, RunFilters(workspace_id=ws.id,
                                                                    kind="chat"))
            assert chat.reviewed == (len({
                f.run_pk for f in session.scalars(select(Feedback).where(
                    Feedback.author_id == user.id, Feedback.workspace_id == ws.id))
                if session.get(Run, f.run_pk).rateable and session.get(Run, f.run_pk).kind
                == "chat"}) if member else 0)
    return {ws for (author, ws) in wanted if author == world.lead.id}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_counts_follow_every_write(session, make, seed):
    world = RatingWorld(session, make, random.Random(seed))
    done, lead_rated, unrateable = Counter(), set(), False
    for i, name in enumerate(world.plan(90)):
        done[name] += world.step(name)
        if i % 11 == 10:
            lead_rated |= check(session, world)
            unrateable |= any(n > r for n, r in expected(session).values())
    check(session, world)
    assert all(done[name] for name, _ in RatingWorld.STEPS), done
    # Not degenerate: the lead rated in both workspaces, some rated runs were not rateable.
    assert lead_rated == {ws.id for ws in world.spaces} and unrateable
    kept, kept_list = stored(session), stored_list(session)
    assert kept_list == expected_list(session) and kept_list
    session.execute(RatedRun.__table__.delete())  # rebuilt from nothing, not left alone
    dashboard.rebuild(session, SYSTEM)
    assert (stored(session), stored_list(session)) == (kept, kept_list)
    session.execute(RatedRun.__table__.delete().where(
        RatedRun.workspace_id == world.spaces[0].id))
    dashboard.rebuild(session, SYSTEM, world.spaces[0].id)  # that workspace's rows only
    assert (stored(session), stored_list(session)) == (kept, kept_list)
    _backfill_as_the_migration(session, "*_user_rated_runs.py", RatedRunCount)
    _backfill_as_the_migration(session, "*_rated_run_list.py", RatedRun)
    assert (stored(session), stored_list(session)) == (kept, kept_list)


def _backfill_as_the_migration(session, name, model):
    path = next((REPO_ROOT / "migrations" / "versions").glob(name))
    spec = importlib.util.spec_from_file_location(f"migration_{model.__tablename__}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    session.execute(model.__table__.delete())
    with Operations.context(MigrationContext.configure(session.connection())):
        module._backfill()
    session.commit()
