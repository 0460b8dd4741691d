"""A rated part has one name on every page (new-user walk, 2026-12-04): the triage item
page called an AIOps run's rated answer "answer (message 2)" where the run page calls it
"Conclusion". Both now take the name from the target-type registry
(``domain.target_types.part_noun``): "conclusion" for an AIOps run's answer, "answer"
for a chat run's, on the run page, the triage item page and the disputes page."""

from __future__ import annotations

import re

from reviewapp.actors import Role
from reviewapp.services import triage


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_an_aiops_runs_answer_is_the_conclusion_on_the_run_and_triage_pages(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, kind="aiops")  # no report: the answer message carries the verdict
    make.feedback_row(run, lead, reason="incorrect")
    item = make.triage_item(run)
    session.commit()
    assert [r.target_label for r in triage.get_item(session, make.actor(lead), item.id).ratings] \
        == ["conclusion"]
    login(lead)
    run_html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    item_html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert '<h2 id="answer-h">Conclusion</h2>' in run_html
    assert "<h3>Conclusion</h3>" in item_html and "<h3>Answer</h3>" not in item_html
    assert "answer (message" not in _text(item_html)
    assert 'aria-label="Your rating of the conclusion"' in run_html
    assert "Your rating of the answer" not in run_html


def test_a_chat_runs_answer_stays_the_answer(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)
    make.feedback_row(run, lead, reason="incorrect")
    item = make.triage_item(run)
    session.commit()
    assert [r.target_label for r in triage.get_item(session, make.actor(lead), item.id).ratings] \
        == ["answer"]
    login(lead)
    item_html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert "<h3>Answer</h3>" in item_html and "Conclusion" not in item_html
