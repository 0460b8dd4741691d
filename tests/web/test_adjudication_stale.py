"""A stale adjudication tab (new-user report): two tabs of /adjudication/ rendered before
any decision; tab A decides useful, tab B's "not useful" is refused with 409 showing the
current decision, nothing recorded; a fresh page offers to decide again on purpose."""

from __future__ import annotations

import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, Run, VerdictDecision
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq


def test_a_stale_tab_gets_409_and_a_fresh_page_decides_again(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead-stale")
    run = make.run(ws, query="Why did the deploy stall?")
    make.user(ws)  # two may review: a 2-reviewer queue can complete
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    for rating in ("positive", "negative"):
        feedback.upsert_feedback(session, make.actor(make.user(ws)), "chat_message", answer,
                                 None, rating)
    login(lead)
    tab = client.get("/adjudication/").get_data(as_text=True)
    fields = dict(re.findall(r'<input type="hidden" name="(decision|next)" value="([^"]*)"', tab))
    assert fields["decision"] == ""
    first = client.post(f"/adjudication/runs/{run.id}/decide", data={**fields, "verdict": "useful"})
    assert first.status_code == 303
    stale = client.post(f"/adjudication/runs/{run.id}/decide",
                        data={**fields, "verdict": "not_useful", "note": "tab B"})
    html = stale.get_data(as_text=True)
    assert stale.status_code == 409
    assert "decided meanwhile: useful, by lead-stale" in html and "tab B" in html
    current = html.split("Current values")[1].split("Your version")[0]
    assert re.search(r"<dt>Verdict</dt><dd[^>]*>Useful</dd>", current)
    assert re.search(r"<dt>Lead</dt><dd[^>]*>lead-stale</dd>", current)
    session.rollback()
    assert session.get(Run, run.id).feedback == "useful"
    decided = session.scalars(select(VerdictDecision)).all()
    assert [d.verdict for d in decided] == ["useful"]
    # A fresh page shows the decision and a form that names it: deciding again works.
    fresh = client.get("/adjudication/").get_data(as_text=True)
    assert f'name="decision" value="{decided[0].id}"' in fresh and "Decide again" in fresh
    again = client.post(f"/adjudication/runs/{run.id}/decide",
                        data={"decision": str(decided[0].id), "verdict": "not_useful"})
    assert again.status_code == 303
    session.rollback()
    assert session.get(Run, run.id).feedback == "not_useful"
    assert len(session.scalars(select(VerdictDecision)).all()) == 2
