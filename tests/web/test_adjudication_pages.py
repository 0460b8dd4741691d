"""The adjudication page (issue 16): a lead sees each disputed run with every reviewer's
rating, reason, comment and correction side by side, decides, and the verdict follows;
reviewers and leads of another workspace are refused."""

from __future__ import annotations

import html
import re

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Case, Message, Run, VerdictDecision
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq


@pytest.fixture
def site(make, session):
    ws = make.workspace(name="Payments")
    lead = make.user(ws, Role.LEAD, username="lead-one")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    run = make.run(ws, query="Why did checkout fail?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Checkout pairs", {},
                               reviewers_per_run=2, blind=True)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive",
                             comment="Matches the incident <b>log</b>")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative",
                             reason="incorrect", correction="The card processor timed out")
    other = make.workspace()
    return type("Site", (), dict(ws=ws, lead=lead, ann=ann, run=run, queue=queue,
                                 other_lead=make.user(other, Role.LEAD, username="lead-two")))


def test_lead_sees_the_dispute_side_by_side_and_decides(client, login, site, session):
    login(site.lead)
    page = client.get("/adjudication/").get_data(as_text=True)
    assert "Why did checkout fail?" in page and "Checkout pairs" in page
    for text in ("ann", "bob", "incorrect", "The card processor timed out",
                 "Matches the incident &lt;b&gt;log&lt;/b&gt;", "1 helpful, 1 not helpful"):
        assert text in page, text
    assert "<b>log</b>" not in page
    response = client.post(f"/adjudication/runs/{site.run.id}/decide",
                           data={"verdict": "not_useful", "note": "Processor timeout"})
    assert response.status_code == 303
    session.rollback()
    assert session.get(Run, site.run.id).feedback == "not_useful"
    assert session.scalars(select(VerdictDecision.note)).all() == ["Processor timeout"]
    after = client.get("/adjudication/").get_data(as_text=True)
    assert "No disputed runs." in after and "Processor timeout" in after


def test_a_bad_verdict_is_400_naming_the_field(client, login, site, session):
    login(site.lead)
    response = client.post(f"/adjudication/runs/{site.run.id}/decide", data={"verdict": "meh"})
    assert response.status_code == 400 and "verdict" in response.get_data(as_text=True)
    session.rollback()
    assert session.get(Run, site.run.id).feedback is None


def test_reviewers_and_other_workspaces_are_refused(client, login, site, session):
    login(site.ann)
    assert client.get("/adjudication/").status_code == 403
    assert client.post(f"/adjudication/runs/{site.run.id}/decide",
                       data={"verdict": "useful"}).status_code == 403
    client.post("/logout")
    login(site.other_lead)
    page = client.get("/adjudication/").get_data(as_text=True)
    assert "Why did checkout fail?" not in page and "No disputed runs." in page
    assert client.get(f"/adjudication/?workspace={site.ws.id}").status_code == 403
    assert client.get(f"/adjudication/?queue={site.queue.id}").status_code == 403
    assert client.post(f"/adjudication/runs/{site.run.id}/decide",
                       data={"verdict": "useful"}).status_code == 403
    session.rollback()
    assert session.get(Run, site.run.id).feedback is None
    assert session.scalars(select(VerdictDecision)).all() == []


def test_run_page_says_who_sets_the_verdict(client, login, site, make, session):
    """One reviewer's rating is the verdict, except in a queue with N > 1 reviewers per
    run, where the page says the majority of N decides (issue 16; a new user was told
    "Your rating ... is the run's verdict" on a two-reviewer queue's run)."""
    login(site.ann)
    queued = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert "The run's verdict is the majority of 2 reviewers' ratings of the answer" in queued
    assert "Your rating of the answer is the run's verdict" not in queued
    alone = make.run(site.ws)
    rq.remove_run(session, make.actor(site.lead), site.queue.id, alone.id)
    page = client.get(f"/runs/{alone.id}").get_data(as_text=True)
    assert "Your rating of the answer is the run's verdict" in page
    assert "majority of" not in page


def test_saved_reasons_read_as_the_workspace_labels_them(client, login, make, session):
    """The adjudication page showed the stored reason code ("xss_reason"), the triage
    pages the workspace's label: the same label here, escaped, beside each rating."""
    ws = make.workspace(feedback_reasons=[
        {"code": "xss_reason", "label": "<i>Made up</i> & wrong", "polarity": "negative"}])
    lead, ann, bob = make.user(ws, Role.LEAD), make.user(ws), make.user(ws)
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative",
                             reason="xss_reason")
    feedback.upsert_feedback(session, make.actor(bob), "citation", answer, "c1", "negative",
                             reason="xss_reason")
    login(lead)
    page = client.get("/adjudication/").get_data(as_text=True)
    escaped = "&lt;i&gt;Made up&lt;/i&gt; &amp; wrong"
    assert f'<dd><span title="xss_reason">{escaped}</span></dd>' in page  # the answer's
    assert f"· {escaped}" in page  # the citation's, among the other ratings
    assert "<i>Made up" not in page and ">xss_reason<" not in page and "xss reason" not in page


def test_run_page_says_the_lead_decided_after_a_decision(client, login, site, make, session):
    """After a lead decided a disputed run, its page said "majority of 2 reviewers ... ⚠
    Reviewers disagree" still; it says who decided and the verdict (the read model's
    ``decision``)."""
    from reviewapp.services import adjudication
    from reviewapp.services.runs import get_run_detail

    before = get_run_detail(session, make.actor(site.ann), site.run.id)
    assert before.decision is None
    login(site.ann)
    disputed = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert "⚠ Reviewers disagree" in disputed and "(lead) decided" not in disputed
    assert "The run's verdict is the majority of 2 reviewers' ratings" in disputed
    adjudication.decide(session, make.actor(site.lead), site.run.id, "not_useful", "Timeout")
    detail = get_run_detail(session, make.actor(site.ann), site.run.id)
    assert (detail.decision.verdict, detail.decision.label, detail.decision.lead) == (
        "not_useful", "Not useful", "lead-one")
    page = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert ("The reviewers were split; lead-one (lead) decided the run's verdict: Not useful"
            in page)
    assert "Reviewers split; decided by lead-one (lead): Not useful" in page
    assert "majority of 2 reviewers" not in page and "⚠ Reviewers disagree" not in page
    # A later decision is the one shown.
    latest = session.scalar(select(VerdictDecision.id).order_by(VerdictDecision.id.desc()))
    adjudication.decide(session, make.actor(site.lead), site.run.id, "useful",
                        expected_decision=latest)
    again = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert "decided the run's verdict: Useful" in again
    assert "decided the run's verdict: Not useful" not in again
    # Blind for a reviewer who has not rated: the decision is not shown either.
    cy = make.user(site.ws, username="cy")
    assert get_run_detail(session, make.actor(cy), site.run.id).decision is None


def test_a_tampered_cursor_is_400_naming_it(client, login, site):
    """As on every other list (runs, triage, cases, audit, queue items)."""
    login(site.lead)
    response = client.get("/adjudication/?cursor=zzz")
    assert response.status_code == 400 and "cursor" in response.get_data(as_text=True)


def test_disputes_page_through_cursors_keeping_the_queue(app_factory, login, make, site,
                                                         session):
    other = app_factory(ADJUDICATION_PAGE_SIZE=1)
    client = other.test_client()
    bob = make.user(site.ws, username="bob2")
    late = make.run(site.ws, query="Why did refunds stall?")
    answer = session.scalar(select(Message.id).where(Message.run_pk == late.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(site.ann), "chat_message", answer, None,
                             "positive")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative")
    login(site.lead, c=client)
    first = client.get(f"/adjudication/?queue={site.queue.id}").get_data(as_text=True)
    assert "Why did checkout fail?" in first and "Why did refunds stall?" not in first
    assert "1–1 of 2" in first and "Previous page" not in first
    found = re.search(r'<a[^>]*href="([^"]*)"[^>]*>Next page', first)
    url = html.unescape(found.group(1))
    assert "cursor=" in url and f"queue={site.queue.id}" in url
    second = client.get(url).get_data(as_text=True)
    assert "Why did refunds stall?" in second and "Why did checkout fail?" not in second
    assert "2–2 of 2" in second and "Next page" not in second
    back = re.search(r'<a[^>]*href="([^"]*)"[^>]*>‹ Previous page', second)
    assert html.unescape(back.group(1)) == f"/adjudication/?queue={site.queue.id}"


def test_a_lead_who_rated_the_run_sees_it_on_the_decision_form(client, login, site, make,
                                                                session):
    run = make.run(site.ws, query="Was the rollback right?")
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    lead = make.user(site.ws, Role.LEAD, username="lead-rater")
    feedback.upsert_feedback(session, make.actor(lead), "chat_message", answer, None, "positive")
    feedback.upsert_feedback(session, make.actor(site.ann), "chat_message", answer, None,
                             "negative")
    login(lead)
    page = client.get("/adjudication/").get_data(as_text=True)
    assert "Was the rollback right?" in page and "Why did checkout fail?" in page
    assert page.count("You rated this run") == 1
    assert "You rated this run: 👍 Helpful" in page
    # Decided: its "Decide again" form keeps the warning, from the same data.
    assert client.post(f"/adjudication/runs/{run.id}/decide",
                       data={"verdict": "useful", "decision": ""}).status_code == 303
    page = client.get("/adjudication/").get_data(as_text=True)
    redo = page.split('id="decided-h"')[1]
    # (the flash above <main> names its case by the run's query: not a disputed row)
    assert "Was the rollback right?" not in page.split("<main")[1].split('id="decided-h"')[0]
    assert redo.count("You rated this run: 👍 Helpful") == 1
    client.post("/logout")
    login(site.lead)
    assert "You rated this run" not in client.get("/adjudication/").get_data(as_text=True)


def test_the_disputes_count_is_capped_like_the_other_lists(client, login, site, monkeypatch,
                                                           make, session):
    """Counted in the database up to a cap: past it the page says "N+" (as the runs list's
    "10,000+"), here with the cap at 1 and two disputes."""
    from reviewapp.services import adjudication

    run = make.run(site.ws, query="Why did refunds stall?")
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    for who, rating in ((site.ann, "positive"), (site.lead, "negative")):
        feedback.upsert_feedback(session, make.actor(who), "chat_message", answer, None, rating)
    login(site.lead)
    full = client.get("/adjudication/").get_data(as_text=True)
    assert re.search(r'<span class="count-pill">2</span>', full)
    monkeypatch.setattr(adjudication, "COUNT_CAP", 1)
    capped = client.get("/adjudication/").get_data(as_text=True)
    assert re.search(r'<span class="count-pill">1\+</span>', capped)


def _verdict_span(page: str, run_pk: int) -> str:
    """The run header's verdict fragment (``runs/_verdict.html``), tags and all."""
    return re.search(rf'<span id="run-{run_pk}-verdict".*?</span>\n?(?=\s*<span class="label-value"|$)',
                     page, re.S).group(0)


def test_a_disputed_run_says_so_in_its_header_not_no_verdict_yet(client, login, site, make,
                                                                  session):
    """New-user finding: the header of a run the two reviewers split on read "No verdict
    yet". It reads "Disputed", waiting for a lead; a lead (and an admin) gets the link to
    the run on the disputes page, a reviewer (who may not open it) gets none. The badge's
    own refresh (after a rating) says the same; a decision ends it."""
    admin_user = make.user(site.ws, Role.ADMIN, username="boss")
    disputes_link = f'href="/adjudication/?queue={site.queue.id}#adj-{site.run.id}-h"'
    login(site.ann)
    header = _verdict_span(client.get(f"/runs/{site.run.id}").get_data(as_text=True), site.run.id)
    assert "Disputed" in header and "waits for a lead" in header
    assert "No verdict yet" not in header and "/adjudication" not in header
    fragment = client.get(f"/runs/{site.run.id}/verdict", headers={"HX-Request": "true"})
    assert "Disputed" in fragment.get_data(as_text=True)
    assert "/adjudication" not in fragment.get_data(as_text=True)
    for user in (site.lead, admin_user):
        client.post("/logout")
        login(user)
        page = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
        header = _verdict_span(page, site.run.id)
        assert "Disputed" in header and disputes_link in header, user.username
        assert disputes_link in client.get(f"/runs/{site.run.id}/verdict").get_data(as_text=True)
    assert f'id="adj-{site.run.id}-h"' in client.get(
        f"/adjudication/?queue={site.queue.id}").get_data(as_text=True)  # the link's target
    adjudication_service = __import__("reviewapp.services.adjudication", fromlist=["decide"])
    adjudication_service.decide(session, make.actor(site.lead), site.run.id, "useful")
    header = _verdict_span(client.get(f"/runs/{site.run.id}").get_data(as_text=True), site.run.id)
    assert "Disputed" not in header and "Useful" in header


def test_every_hint_names_the_disputes_page_as_the_nav_does(client, login, site):
    """New-user walk: the navigation says "Disputes" while the queue form's hint sent
    the lead to "the Disputed runs page" and the triage queue to "Disputed runs". Every
    hint that points there names it as the navigation does."""
    login(site.lead)
    runs_page = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    nav = re.search(r'<nav class="nav" aria-label="Main">(.*?)</nav>', runs_page, re.S).group(1)
    name = re.search(r'<a href="/adjudication/"[^>]*>([^<]+)</a>', nav).group(1)
    assert name == "Disputes"
    header = _verdict_span(runs_page, site.run.id)
    assert re.search(r'<a href="/adjudication/\?queue=\d+#adj-\d+-h">decide it\s+on the (\w+) page</a>',
                     header).group(1) == name
    form = client.get("/queues/new").get_data(as_text=True)
    assert re.search(r"a disputed run waits for a lead on the (\w+) page\.", form).group(1) == name
    triage = client.get("/triage/").get_data(as_text=True)
    assert re.search(r'wait in <a href="/adjudication/">([^<]+)</a>', triage).group(1) == name
    agreement = client.get("/dashboard/agreement").get_data(as_text=True)
    assert re.search(r'\(on the <a href="/adjudication/">([^<]+)</a> page\)', agreement).group(1) == name
    for page in (runs_page, form, triage, agreement):
        assert "Disputed runs page" not in page and "disputes page" not in page


def test_a_useful_decision_links_its_case_by_name(client, login, make, session):
    """New-user walk (2026-12-03): deciding a dispute "useful" said "its case:
    cc019a10-2fe0-…", a raw id; it names the case (its title: the run's query) and links
    to the case's page, the title escaped."""
    ws = make.workspace(name="Payments")
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws), make.user(ws)
    run = make.run(ws, query="Why did <checkout> & billing fail?")
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative")
    login(lead)
    response = client.post(f"/adjudication/runs/{run.id}/decide", data={"verdict": "useful"},
                           follow_redirects=True)
    session.rollback()
    case = session.scalars(select(Case).where(Case.run_pk == run.id)).one()
    page = response.get_data(as_text=True)
    flash = re.search(r'<div class="flash flash-success">(.*?)</div>', page, re.S).group(1)
    assert case.case_id not in re.sub(r'href="[^"]*"', "", flash)  # no raw id to read
    assert (f'<a href="/cases/{case.case_id}">“Why did &lt;checkout&gt; &amp; billing fail?” — open it</a>'
            in flash), flash
    assert html.unescape(re.sub(r"<[^>]+>", "", flash)).startswith(
        "Decision saved: the run is useful. Its case: “Why did <checkout> & billing fail?” — open it")


def _control_badge(html_text):
    """The answer control's "All reviewers" line's badge text (decided or disagree), or None."""
    found = re.search(r'<span class="badge (?:decided|badge-warn)">([^<]*)</span>', html_text)
    return html.unescape(found.group(1)) if found else None


def test_a_rating_fragment_after_a_decision_says_what_the_page_says(client, login, site, make,
                                                                     session):
    """User walk: after a lead decided the disputed run, a reviewer flipped the answer's
    thumbs on the run page; the htmx fragment said "⚠ Reviewers disagree" where a reload
    said "Reviewers split; decided by lead-one (lead): Not useful"."""
    from reviewapp.services import adjudication

    adjudication.decide(session, make.actor(site.lead), site.run.id, "not_useful", "Timeout")
    answer = session.scalar(select(Message.id).where(Message.run_pk == site.run.id,
                                                     Message.role == "assistant"))
    login(site.ann)
    for rating in ("negative", "positive"):  # a flip and back: ann and bob disagree again
        fragment = client.post("/feedback", headers={"HX-Request": "true"}, data={
            "target_type": "chat_message", "target_id": answer, "rating": rating, "switch": "1"})
        assert fragment.status_code == 200, fragment.get_data(as_text=True)
    shown = _control_badge(fragment.get_data(as_text=True))
    page = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert shown == _control_badge(page) == "Reviewers split; decided by lead-one (lead): Not useful"


def test_a_lead_named_lead_is_named_once(client, login, make, session):
    """User walk: a lead whose username is "lead" read "lead (lead) decided"; the role is
    not repeated when it is the name."""
    from reviewapp.services import adjudication

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative",
                             reason="incorrect")
    adjudication.decide(session, make.actor(lead), run.id, "useful", "ok")
    login(ann)
    page = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "The reviewers were split; lead decided the run's verdict: Useful" in page
    assert _control_badge(page) == "Reviewers split; decided by lead: Useful"
    assert "lead (lead)" not in page
