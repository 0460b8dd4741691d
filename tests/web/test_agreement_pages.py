"""The reviewer-agreement page and its downloads (issue 16): what a lead sees and gets."""

from __future__ import annotations

import csv
import io
import json

import pytest

from reviewapp.actors import Role


@pytest.fixture
def site(make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead-one")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    # ann / bob: 4 shared items, (+,+) (+,-) (-,-) (+,+): kappa 0.5 (hand-computed in
    # tests/unit/test_agreement.py), alpha over the 4 items: n+ = 5, n- = 3, D_o = 2/8,
    # D_e = 2*5*3/(8*7) = 30/56 -> alpha = 1 - (2/8)/(30/56) = 1 - 56/120 = 0.5333.
    for a, b in (("positive", "positive"), ("positive", "negative"),
                 ("negative", "negative"), ("positive", "positive")):
        run = make.run(ws)
        make.feedback_row(run, ann, rating=a)
        make.feedback_row(run, bob, rating=b)
    return type("Site", (), dict(ws=ws, lead=lead, ann=ann))


def test_lead_sees_the_figures(client, login, site):
    login(site.lead)
    page = client.get("/dashboard/agreement?min_shared=4").get_data(as_text=True)
    assert "Reviewer agreement" in page
    assert "0.533" in page  # alpha
    assert "0.50" in page  # kappa of ann and bob
    assert "(too few)" not in page
    assert "too few" in client.get("/dashboard/agreement?min_shared=5").get_data(as_text=True)
    assert "/dashboard/agreement" in client.get("/dashboard/").get_data(as_text=True)


def test_reviewer_is_refused_and_bad_filter_is_400(client, login, site):
    login(site.ann)
    assert client.get("/dashboard/agreement").status_code == 403
    assert client.get("/dashboard/agreement.csv").status_code == 403
    client.post("/logout")
    login(site.lead)
    response = client.get("/dashboard/agreement?min_shared=0")
    assert response.status_code == 400 and "min_shared" in response.get_data(as_text=True)
    assert client.get("/dashboard/agreement.xlsx").status_code == 404


def test_downloads(client, login, site):
    login(site.lead)
    response = client.get("/dashboard/agreement.csv?min_shared=4")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["figure"] for r in rows] == ["alpha", "kappa", "majority", "majority"]
    assert float(rows[0]["value"]) == pytest.approx(1 - 56 / 120)
    assert (rows[1]["reviewer"], rows[1]["other_reviewer"], rows[1]["items"]) == ("ann", "bob", "4")
    lines = client.get("/dashboard/agreement.jsonl?min_shared=4").get_data(as_text=True).splitlines()
    assert json.loads(lines[1])["value"] == pytest.approx(0.5)


@pytest.fixture
def judged(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead-two")
    # (verdict, score, verifier): scores 30 everywhere but one -> the warning shows.
    rows = [("useful", 30, "PASS"), ("not_useful", 30, "PASS"), ("not_useful", 30, "REJECT"),
            ("useful", 80, "PASS")]
    runs = []
    for i, (verdict, score, verifier) in enumerate(rows):
        run = make.run(ws, f"judged-{i}", query=f"Question <b>{i}</b>")
        run.feedback, run.evidence_score, run.verifier_verdict = verdict, score, verifier
        runs.append(run)
    session.commit()
    return type("J", (), dict(ws=ws, lead=lead, runs=runs))


def test_alignment_page(client, login, judged):
    login(judged.lead)
    page = client.get("/dashboard/alignment").get_data(as_text=True)
    assert "Automatic evaluation vs people" in page
    assert "3 of 4 scored runs (75%) score exactly 30" in page
    # AUC: useful 30, 80 vs not useful 30, 30: (0.5 + 0.5 + 1 + 1) / 4 = 0.75.
    assert "0.75" in page
    # The verifier's PASS on the not-useful run judged-1 is a disagreement, linked.
    assert f'href="/runs/{judged.runs[1].id}"' in page
    assert "Question &lt;b&gt;1&lt;/b&gt;" in page and "<b>1</b>" not in page
    # The verifier's values read as the registry labels them, in the matrix and the list.
    verifier = page.split('id="sig-verifier_verdict"', 1)[1].split("</section>", 1)[0]
    assert "<tr><td>Pass</td>" in verifier and "<tr><td>Reject</td>" in verifier
    assert "· Pass predicts useful" in " ".join(verifier.split())
    table = verifier.split("<tbody>", 1)[1]  # (the rule above it states the codes)
    assert "PASS" not in table and "REJECT" not in table
    assert "/dashboard/alignment" in client.get("/dashboard/").get_data(as_text=True)


def test_alignment_downloads(client, login, judged):
    login(judged.lead)
    rows = list(csv.DictReader(io.StringIO(
        client.get("/dashboard/alignment.csv").get_data(as_text=True))))
    summary = {r["signal"]: r for r in rows if r["value"] == "*"}
    assert float(summary["evidence_score"]["auc"]) == pytest.approx(0.75)
    lines = client.get("/dashboard/alignment.jsonl?table=disagreements").get_data(
        as_text=True).splitlines()
    found = {(json.loads(line)["signal"], json.loads(line)["run_id"]) for line in lines}
    # threshold 50: judged-0 (30, useful) predicted not useful; verifier PASS on judged-1.
    assert found == {("evidence_score", "judged-0"), ("verifier_verdict", "judged-1")}
    response = client.get("/dashboard/alignment.csv?table=everything")
    assert response.status_code == 400 and "table" in response.get_data(as_text=True)


def test_alignment_page_compares_failed_tool_calls_with_their_ratings(client, login, session, make):
    """Issue 19: "tool call failed" against "tool call rated not helpful"."""
    from reviewapp.services import feedback

    from ..services.feedback.helpers import CALL_ID, chat_run_with_turns

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = chat_run_with_turns(make, ws)  # CALL_ID failed, call-2 completed
    for who, call, rating in ((make.user(ws), CALL_ID, "negative"), (lead, "call-2", "negative")):
        feedback.upsert_feedback(session, make.actor(who), "tool_call", run.id, call, rating)
    login(lead)
    page = client.get("/dashboard/alignment").get_data(as_text=True)
    card = " ".join(page.split('id="sig-tool_calls"', 1)[1].split("</section>", 1)[0].split())
    assert "Tool call failed vs rated not helpful" in card
    assert "over 2 ratings of tool calls · 50% agree" in card
    assert '<tr><td>Failed</td><td class="num">1</td><td class="num">0</td></tr>' in card
    assert '<tr><td>Not failed</td><td class="num">1</td><td class="num">0</td></tr>' in card


def test_alignment_rule_line_reads_in_labels(client, login, judged):
    """The rule line above the verifier's matrix listed the raw codes ("PASS → useful;
    LOW_CONFID, REJECT → not useful"); a lead reads the registry's labels."""
    login(judged.lead)
    page = client.get("/dashboard/alignment").get_data(as_text=True)
    verifier = page.split('id="sig-verifier_verdict"', 1)[1].split("</section>", 1)[0]
    assert ("Pass → useful; Low confidence, Reject → not useful; anything else: no prediction"
            in verifier)
    assert "LOW_CONFID" not in verifier and "REJECT" not in verifier and "PASS" not in verifier
