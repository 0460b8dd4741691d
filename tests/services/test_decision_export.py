"""Lead decisions are exported apart from ratings (issue 16 adjudication)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden
from reviewapp.models import Message
from reviewapp.services import adjudication, exports, feedback
from reviewapp.services import review_queues as rq


def test_decisions_export_one_row_per_decision(session, make):
    ws = make.workspace(slug="pay")
    lead = make.user(ws, Role.LEAD, username="lea")
    admin = make.user(ws, Role.ADMIN, username="root")
    run = make.run(ws, "run-decided")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {},
                               reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    for rating in ("positive", "negative"):  # a tie: the run is disputed
        feedback.upsert_feedback(session, make.actor(make.user(ws)), "chat_message", answer,
                                 None, rating)
    first = adjudication.decide(session, make.actor(lead), run.id, "not_useful", "first look")
    adjudication.decide(session, make.actor(lead), run.id, "useful",
                        expected_decision=first.decision_id)
    stream = exports.open_export(session, make.actor(admin), "decisions", {})
    rows = list(stream.rows)
    assert stream.total == 2
    assert [(r["workspace"], r["run_id"], r["queue"], r["decided_by"], r["verdict"], r["note"])
            for r in rows] == [("pay", "run-decided", "Pairs", "lea", "not_useful", "first look"),
                               ("pay", "run-decided", "Pairs", "lea", "useful", None)]
    assert rows[0]["created_at"].endswith("Z") or "+00:00" in rows[0]["created_at"]
    with pytest.raises(Forbidden):
        exports.open_export(session, make.actor(lead), "decisions", {})
    assert queue.id
