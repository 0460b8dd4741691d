"""Runs list, run page, timeline fragment, tool-call fragment, verdict badge (SPEC 8)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import event

from reviewapp.extensions import db
from reviewapp.services import admin, tool_calls


def _calls(n, size=2000, prefix="call"):
    return [{"id": f"{prefix}-{i}", "tool_name": f"tool_{i % 7}", "status": "failed" if i % 9 == 0 else "completed",
             "arguments": {"i": i, "query": "x" * 50}, "output": "r" * size,
             "error": "boom" if i % 9 == 0 else None,
             "started_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
             "completed_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.500000Z"} for i in range(n)]


@pytest.fixture
def reviewer(make, login):
    ws = make.workspace()
    user = make.user(ws)
    login(user)
    return ws, user


def test_list_filters_live_in_the_url_and_htmx_gets_only_the_table(client, make, reviewer):
    ws, _ = reviewer
    make.run(ws, kind="aiops", query="disk alert on node-7")
    make.run(ws, kind="chat", query="a chat question")
    page = client.get("/?kind=aiops")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "<html" in html
    assert "disk alert on node-7" in html and "a chat question" not in html
    assert re.search(r'<option value="aiops" selected>', html)
    fragment = client.get("/?kind=aiops", headers={"HX-Request": "true"})
    body = fragment.get_data(as_text=True)
    assert body.lstrip().startswith("{#") is False
    assert 'id="runs-table"' in body and "<html" not in body and "<form" not in body
    assert "HX-Request" in fragment.headers["Vary"]
    # Links to the run page carry the list, so prev / next walk the same list.
    assert re.search(r'href="/runs/\d+\?kind=aiops"', body)


def test_history_restore_request_gets_the_whole_page(client, make, reviewer):
    make.run(reviewer[0])
    response = client.get("/", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<html" in response.get_data(as_text=True)


def test_a_bad_filter_is_a_400_naming_the_field(client, reviewer):
    response = client.get("/?kind=robot&score_min=abc")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert 'aria-invalid="true"' in html and "Score from" in html


def test_an_unknown_sort_is_a_400(client, reviewer):
    response = client.get("/?sort=random")
    assert response.status_code == 400 and "sort" in response.get_data(as_text=True)


def test_list_next_page_link_keeps_the_filters(client, make, app, reviewer):
    app.config["RUNS_PAGE_SIZE"] = 2
    for _ in range(3):
        make.run(reviewer[0], kind="chat")
    html = client.get("/?kind=chat").get_data(as_text=True)
    match = re.search(r'href="(/\?cursor=[^"]+)"', html)
    assert match and "kind=chat" in match.group(1)
    second = client.get(match.group(1).replace("&amp;", "&"))
    assert second.status_code == 200 and second.get_data(as_text=True).count('<td class="query"') == 1


def test_run_page_shows_every_part(client, make, reviewer):
    ws, _ = reviewer
    run = make.run(ws, kind="aiops", query="Alert X", answer="**root cause** found",
                   steps=[{"id": "s1", "name": "Look at logs", "summary": "`PoolTimeout`"}],
                   report={"content": "## Report\n\nAll good"},
                   tool_calls=_calls(3), external_outcome="pass")
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "<strong>root cause</strong>" in html
    assert "Look at logs" in html and "<code>PoolTimeout</code>" in html
    assert "<h2>Report</h2>" in html
    assert html.count('class="tl-row ') == 3
    assert 'id="fb-diagnostic_step-' in html and 'id="fb-diagnostic_report-' in html
    # Finished runs are scored on ingest (SPEC 5.1): the factor names are on the page.
    assert "has_successful_tool_call" in html
    assert ">pass<" in html


def test_run_page_of_a_missing_or_foreign_run_is_the_same_403(client, make, reviewer):
    foreign = make.run(make.workspace())
    a = client.get(f"/runs/{foreign.id}")
    b = client.get(f"/runs/{foreign.id + 999}")
    assert a.status_code == b.status_code == 403
    assert a.get_data() == b.get_data()
    for path in (f"/runs/{foreign.id}/timeline", f"/runs/{foreign.id}/verdict",
                 f"/runs/{foreign.id}/tool-calls/x"):
        assert client.get(path).status_code == 403


def test_answer_markdown_is_sanitised(client, make, reviewer):
    evil = ('Hello <img src=x onerror=alert(1)> <script>alert(2)</script> '
            '[click](javascript:alert(3)) ![pixel](https://tracker.example.com/p.png) '
            '[site](https://ok.example.com)')
    run = make.run(reviewer[0], answer=evil, messages=[
        {"id": "a", "role": "assistant", "content": evil}])
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    answer = html.split('class="prose"', 1)[1].split("</div>", 1)[0]
    assert "<img" not in answer and "<script" not in answer
    assert 'href="javascript:' not in answer and "onerror=" not in answer.replace("&lt;img src=x onerror=", "")
    assert "&lt;script&gt;" in answer
    assert '<a href="https://tracker.example.com/p.png" rel="noopener noreferrer nofollow">[image: pixel]</a>' in answer
    assert 'href="https://ok.example.com" rel="noopener noreferrer nofollow"' in answer


def test_pages_carry_a_strict_csp_and_no_inline_style_or_script(client, make, reviewer):
    run = make.run(reviewer[0], tool_calls=_calls(4))
    for path in ("/", f"/runs/{run.id}"):
        response = client.get(path)
        csp = response.headers["Content-Security-Policy"]
        assert "unsafe-inline" not in csp and "script-src 'self'" in csp
        html = response.get_data(as_text=True)
        assert " style=" not in html and "<style" not in html
        assert re.search(r"<script(?![^>]*\bsrc=)", html) is None
        assert '<html lang="en">' in html


def test_timeline_fragment_polls_only_while_running_and_answers_204_when_unchanged(client, make, reviewer):
    ws, _ = reviewer
    run = make.run(ws, status="RUNNING", tool_calls=_calls(1))
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    poll = re.search(r'hx-get="(/runs/\d+/timeline\?[^"]+)" hx-trigger="every 2s"', html)
    assert poll
    url = poll.group(1).replace("&amp;", "&")
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 204
    tool_calls.apply_events(db.session, make.system, ws.id, [
        {"id": "live-1", "run_id": run.run_id, "event": "started", "tool_name": "cluster_health"}])
    changed = client.get(url, headers={"HX-Request": "true"})
    assert changed.status_code == 200
    assert "cluster_health" in changed.get_data(as_text=True) and "no end event" in changed.get_data(as_text=True)
    # The header's tool-call count follows the live timeline (out-of-band swap).
    assert f'<dd id="run-{run.id}-call-count" hx-swap-oob="true">2 ' in changed.get_data(as_text=True)
    page = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert page.count(f'id="run-{run.id}-call-count"') == 1 and "hx-swap-oob" not in page
    make.run(ws, run_id=run.run_id, status="SUCCESS", session_id=run.session.session_id)
    ended = client.get(url, headers={"HX-Request": "true"})
    assert ended.headers.get("HX-Refresh") == "true"
    final = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    assert 'hx-trigger="every 2s"' not in final


def test_timeline_without_times_lists_calls_in_order(client, make, reviewer):
    run = make.run(reviewer[0], tool_calls=[
        {"id": "x1", "tool_name": "first", "status": "completed"},
        {"id": "x2", "tool_name": "second", "status": "failed", "error": "Error: nope"}])
    html = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    assert "without a time axis" in html and 'class="tl-svg"' not in html
    assert html.index("first") < html.index("second")
    # A failed row says why on the row itself (escaped), and each row has its thumbs.
    assert '<span class="tl-error small" dir="auto">Error: nope</span>' in html
    assert html.count('class="thumbs thumbs-compact') == 2


def test_timeline_marks_open_and_compensated_calls(client, make, reviewer):
    ws, _ = reviewer
    run = make.run(ws, status="RUNNING")
    tool_calls.apply_events(db.session, make.system, ws.id, [
        {"id": "open", "run_id": run.run_id, "event": "started", "tool_name": "a",
         "timestamp": "2026-01-01T00:00:00Z"},
        {"id": "comp", "run_id": run.run_id, "event": "completed", "tool_name": "b",
         "timestamp": "2026-01-01T00:00:03Z", "output": "ok"}])
    html = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    assert "no end event" in html and "bar-open" in html
    assert "compensated (duration approximate)" in html and "bar-compensated" in html


def test_tool_call_fragment_pretty_prints_and_collapses_long_results(client, make, reviewer):
    run = make.run(reviewer[0], tool_calls=_calls(1, size=1500))
    fragment = client.get(f"/runs/{run.id}/tool-calls/call-0", headers={"HX-Request": "true"})
    html = fragment.get_data(as_text=True)
    assert "<html" not in html
    assert '&#34;i&#34;: 0' in html or "&quot;i&quot;: 0" in html or '"i": 0' in html
    assert "Show the 1,5" in html and "Error" in html  # issue 11: no "Show all" for a stored summary
    page = client.get(f"/runs/{run.id}/tool-calls/call-0")
    assert "<html" in page.get_data(as_text=True)


def test_run_page_issues_the_same_number_of_statements_for_5_and_500_calls(client, make, reviewer):
    """No N+1: the statement count does not grow with the number of tool calls."""
    ws, _ = reviewer
    small = make.run(ws, tool_calls=_calls(5, prefix="small"))
    big = make.run(ws, tool_calls=_calls(500, prefix="big"))
    counts = {}
    for name, run_pk in (("small", small.id), ("big", big.id)):
        # Warm up first: the test shares one app context (and session) with the
        # requests, so the first request also reloads objects the factories expired.
        assert client.get(f"/runs/{run_pk}").status_code == 200
        seen = []

        def count(conn, cursor, statement, parameters, context, executemany, seen=seen):
            seen.append(statement)

        event.listen(db.engine, "before_cursor_execute", count)
        try:
            response = client.get(f"/runs/{run_pk}")
        finally:
            event.remove(db.engine, "before_cursor_execute", count)
        assert response.status_code == 200
        rows = response.get_data(as_text=True).count('class="tl-row ')
        assert rows == (5 if name == "small" else 50)  # the first 50 calls (issue 18)
        counts[name] = len(seen)
    assert counts["small"] == counts["big"]
    assert counts["big"] <= 20


def test_verdict_fragment_refreshes_on_feedback_saved(client, make, reviewer):
    run = make.run(reviewer[0])
    html = client.get(f"/runs/{run.id}/verdict", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert 'hx-trigger="feedback-saved from:body"' in html and "No verdict yet" in html


def test_a_filter_rule_of_the_service_shows_on_the_list_form(client, make, login):
    """score_min above score_max is the service's rule; the list page names it next to
    the score fields instead of a bare error page."""
    ws = make.workspace()
    login(make.user(ws))
    response = client.get("/?score_min=90&score_max=10")
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert 'name="score_min"' in html and 'value="90"' in html
    assert "must not be below the minimum score" in html


@pytest.mark.parametrize("call_id", ["multi line id", "kb://doc-1", "/leading-slash", "a//b/", "q?x#y",
                                     "../../admin", "./x/.", "%2E%2E", "..", ".", "a&call_id=b+c"])
def test_timeline_link_opens_calls_whose_id_has_line_breaks_or_slashes(client, make, reviewer, call_id):
    """The ingest schema accepts any non-blank id; the timeline's link must open it
    (werkzeug's ``path`` converter stopped at a line break and merged ``//``)."""
    run = make.run(reviewer[0], tool_calls=[{"id": call_id, "tool_name": "kb_search",
                                            "output": "found it"}])
    timeline = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    link = re.search(r'<details class="tl-call" hx-get="([^"]+)"', timeline).group(1)
    # The id in the query, the path fixed: nothing a browser could normalise ("..", "../../admin").
    parts = urlsplit(link.replace("&amp;", "&"))
    assert parts.path == f"/runs/{run.id}/tool-calls"
    assert parse_qs(parts.query) == {"call_id": [call_id]}
    fragment = client.get(link.replace("&amp;", "&"), headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert "found it" in fragment.get_data(as_text=True)


def test_an_aiops_run_without_report_offers_thumbs_on_its_conclusion(client, make, reviewer):
    run = make.aiops_run(reviewer[0], report=None, steps=[], messages=[], answer="Disk full on db-1.")
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "Your rating of the conclusion is the run's verdict" in html
    assert re.search(r'name="target_type" value="chat_message"', html)


# --- finding runs (issue 19) ----------------------------------------------------------------


def test_by_id_redirects_to_the_run_and_foreign_reads_like_missing(client, make, reviewer, login):
    ws, user = reviewer
    run = make.run(ws, "agent-run:7@x", tool_calls=[])
    response = client.get("/runs/by-id/agent-run:7@x")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/runs/{run.id}")
    other = make.workspace(name="Other <b>team</b>")
    foreign = make.run(other, "only-elsewhere")
    missing = client.get("/runs/by-id/never-sent")
    hidden = client.get(f"/runs/by-id/{foreign.run_id}")
    assert missing.status_code == hidden.status_code == 403
    assert missing.get_data() == hidden.get_data()
    # The same id in two of the user's workspaces: 409 naming both, a link to each.
    twin = make.run(other, "agent-run:7@x")
    admin.set_membership(db.session, make.system, user.id, other.id, "reviewer")
    conflict = client.get("/runs/by-id/agent-run:7@x")
    html = conflict.get_data(as_text=True)
    assert conflict.status_code == 409
    assert ws.name in html and "Other &lt;b&gt;team&lt;/b&gt;" in html
    assert f'href="/runs/{run.id}"' in html and f'href="/runs/{twin.id}"' in html


def test_list_search_says_where_it_matched_and_filters_failed_calls(client, make, reviewer):
    ws, _ = reviewer
    make.run(ws, "quiet-run", query="Nothing to see")
    loud = make.run(ws, "loud-run", query="Change my flight", tool_calls=[
        {"id": "f-1", "tool_name": "update_reservation_flights", "status": "failed",
         "arguments": {"flight_number": "HAT170"}, "error": "not available"}])
    html = client.get("/?q=hat170").get_data(as_text=True)
    assert "loud-run" in html and "quiet-run" not in html
    assert "Found in: arguments of update_reservation_flights" in html
    html = client.get("/?failed_calls=yes").get_data(as_text=True)
    assert "loud-run" in html and "quiet-run" not in html
    assert 'name="failed_calls" value="yes" checked' in html
    assert client.get("/?failed_calls=maybe").status_code == 400
    page = client.get(f"/runs/{loud.id}?failed_calls=yes").get_data(as_text=True)
    assert "failed_calls=yes" in page  # the list's filter travels to the run page's links


def test_open_calls_are_markers_and_a_backwards_call_says_so(client, make, reviewer):
    """Issue 17 item 6: no full-width bar for a call with no end event, no axis
    stretched to the run's end, and a call that ended before it started says so."""
    ws, _ = reviewer
    run = make.run(ws, status="SUCCESS", started_at="2026-01-01T00:00:00Z",
                   finished_at="2026-01-05T00:00:00Z", tool_calls=[
                       {"id": "done", "tool_name": "a", "status": "completed",
                        "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:02Z"},
                       {"id": "open", "tool_name": "b", "status": "started",
                        "started_at": "2026-01-01T00:00:01Z"}])
    # A terminal event first, its started event later with a later clock: the row ends
    # before it starts (late facts win, SPEC 4).
    tool_calls.apply_events(db.session, make.system, ws.id, [
        {"id": "back", "run_id": run.run_id, "event": "completed", "tool_name": "c",
         "timestamp": "2026-01-01T00:00:01Z", "output": "ok"},
        {"id": "back", "run_id": run.run_id, "event": "started", "tool_name": "c",
         "timestamp": "2026-01-01T00:00:01.500Z"}])
    html = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    bars = re.findall(r'class="bar bar-(\w+)[^"]*"\s+x="([\d.]+)" y="2" width="([\d.]+)"', html)
    assert [(s, float(x), float(w)) for s, x, w in bars] == [
        ("completed", 0, 1000), ("started", 500, 12), ("completed", 750, 4)]
    assert html.count("ended before it started") == 1
    ticks = re.search(r'<span class="tl-ticks">(.*?)</span>\n', html).group(1)
    assert re.findall(r"<span>([^<]*)</span>", ticks) == ["0 ms", "500 ms", "1.0 s", "1.5 s", "2.0 s"]


def test_no_create_a_case_while_the_run_is_running(client, make, login):
    """Issue 17 item 9: the case would be made from an answer that is not final."""
    ws = make.workspace()
    login(make.user(ws, "lead"))
    running = make.run(ws, status="RUNNING")
    finished = make.run(ws)
    html = client.get(f"/runs/{running.id}").get_data(as_text=True)
    assert "Create a case from this run" not in html
    assert "A case can be made once the run has ended" in html
    assert "Create a case from this run" in client.get(f"/runs/{finished.id}").get_data(as_text=True)


def test_demo_answers_cite_the_ids_their_citations_carry(session, make):
    """Issue 17 item 9: the demo answer said "[1]" while its citations are c1, c2."""
    from reviewapp.actors import Actor
    from reviewapp.models import Run
    from reviewapp.services import demo

    ws = make.workspace()
    demo.load(session, Actor.system_actor(), ws.id)
    checked = 0
    for run in session.query(Run).filter_by(workspace_id=ws.id):
        cited = set(re.findall(r"\[([A-Za-z0-9_-]+)\]", run.answer or ""))
        ids = {str(c["id"]) for m in run.messages for c in m.citations}
        if cited or ids:
            assert cited <= ids, (run.run_id, cited, ids)
            checked += 1
    assert checked >= 2


def test_list_search_shows_an_escaped_excerpt_with_the_match_marked(client, make, reviewer):
    """Issue 18: the runs list shows the part of the answer around the match, every part
    escaped (agent text is never HTML), the match in <mark>; a short term says what it
    searched."""
    ws, _ = reviewer
    make.run(ws, "xss-run", query="Why did it fail?",
             answer="x " * 100 + '<img src=x onerror="alert(1)"> the Quokka pod <script>' + " y" * 100)
    html = client.get("/?q=quokka").get_data(as_text=True)
    assert "Answer: …" in html
    assert ('&lt;img src=x onerror=&#34;alert(1)&#34;&gt; the <mark>Quokka</mark> pod &lt;script&gt;'
            in html)
    assert "<script>" not in html.split("<main", 1)[-1].split("</main>", 1)[0]
    short = client.get("/?q=qu").get_data(as_text=True)
    assert "Terms shorter than 3 characters are looked for in the newest 10,000 runs" in short


def test_the_verifier_verdict_reads_in_words_on_the_list_the_run_and_the_dashboard(client, make, login):
    # LOW_CONFID read as a cut-off word; the pages show the registry's label instead.
    ws = make.workspace()
    login(make.user(ws, role="lead"))
    run = make.run(ws, self_evaluation={"verifier_evaluation": {"verdict": "LOW_CONFID",
                                                                "groundedness_score": 0.4}})
    assert run.verifier_verdict == "LOW_CONFID"
    for url in ("/", f"/runs/{run.id}", "/dashboard/"):
        html = client.get(url).get_data(as_text=True)
        assert "Low confidence" in html, url
        assert ">LOW_CONFID<" not in html and "LOW_CONFID</" not in html, url


@pytest.mark.parametrize(("zone", "shown"), [
    ("Europe/Berlin", "2026-05-01 14:00 UTC+02:00"), ("America/New_York", "2026-05-01 08:00 UTC-04:00"),
    (None, "2026-05-01 12:00 UTC")])
def test_the_run_page_without_js_shows_times_in_the_workspaces_time_zone(client, make, reviewer, session, zone, shown):
    """The workspace's time zone setting did nothing: the run page's server-rendered
    times read UTC. They read in the workspace's zone, with its offset from UTC as app.js
    writes it ("UTC+02:00"; plain "UTC" at none: tidy walk, 2026-12-04, the page read
    "CEST" before JavaScript ran and "(UTC+02:00)" after); the machine-readable attribute
    stays UTC (the browser localises from it)."""
    ws = reviewer[0]
    if zone:
        ws.settings = {**(ws.settings or {}), "time_zone": zone}
        session.commit()
    run = make.run(ws, started_at="2026-05-01T12:00:00Z")
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    started = re.search(r"<dt>Started</dt><dd>(<time [^>]*>[^<]*</time>)", html).group(1)
    assert started == (f'<time datetime="2026-05-01T12:00:00+00:00" title="2026-05-01T12:00:00+00:00">{shown}</time>')


def test_a_run_answered_only_in_its_messages_shows_that_answer_and_becomes_its_case(
        client, make, login, session):
    """SPEC 7, 8: the answer a lead reads on the run page is the one "Create a case"
    prefills and the one a thumbs-up puts in the run's case (a real τ-bench run sent with
    its answer only as the last assistant message)."""
    from html import escape

    from reviewapp.actors import Actor, Role
    from reviewapp.models import Case
    from reviewapp.services import runs

    from ..shared_data import tau_run_answered_in_messages

    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    doc, answer = tau_run_answered_in_messages()
    run = runs.upsert_run(session, Actor.system_actor(), ws.id, "tau-messages-only", doc).run
    shown = escape(answer.split("\n")[0], quote=False)
    page = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert shown in page.split('id="answer-h"')[1].split("</section>")[0]
    draft = client.get(f"/cases/new?run={run.id}").get_data(as_text=True)
    assert escape(answer) in draft.split('name="root_cause"')[1].split("</textarea>")[0]
    message = [m for m in run.messages if m.role == "assistant" and (m.content or "").strip()][-1]
    rated = client.post("/feedback", data={"target_type": "chat_message", "target_id": message.id,
                                           "rating": "positive", "next": f"/runs/{run.id}"},
                        follow_redirects=True).get_data(as_text=True)
    assert "no case" not in rated and "This run's case" in rated
    case = session.scalars(db.select(Case)).one()
    assert (case.root_cause, case.solution) == (answer, answer)
    assert shown in client.get(f"/cases/{case.case_id}").get_data(as_text=True)


@pytest.mark.parametrize(("zone", "started", "ended"), [
    ("America/New_York", "2026-01-01 05:15:05.250 UTC-05:00", "2026-01-01 05:15:05.700 UTC-05:00"),
    ("Asia/Kolkata", "2026-01-01 15:45:05.250 UTC+05:30", "2026-01-01 15:45:05.700 UTC+05:30"),
    (None, "2026-01-01 10:15:05.250 UTC", "2026-01-01 10:15:05.700 UTC")])
def test_a_tool_calls_times_without_js_read_in_the_workspaces_time_zone(
        client, make, reviewer, session, zone, started, ended):
    """User-walk finding: without JavaScript a tool call's times read UTC while the run
    header above them read the workspace's zone. Both the opened row's fragment and the
    call's own page use the header's formatter and zone; the attribute stays UTC."""
    ws = reviewer[0]
    if zone:
        ws.settings = {**(ws.settings or {}), "time_zone": zone}
        session.commit()
    run = make.run(ws, tool_calls=[
        {"id": "c1", "tool_name": "lookup", "status": "completed", "arguments": {}, "output": "ok",
         "started_at": "2026-01-01T10:15:05.250Z", "completed_at": "2026-01-01T10:15:05.700Z"}])
    for url, headers in ((f"/runs/{run.id}/tool-calls?call_id=c1", {"HX-Request": "true"}),
                         (f"/runs/{run.id}/tool-calls?call_id=c1", {}),
                         (f"/runs/{run.id}/tool-calls/c1", {})):
        html = client.get(url, headers=headers).get_data(as_text=True)
        times = re.findall(r'<time datetime="([^"]+)" title="[^"]+" data-precise>([^<]*)</time>', html)
        assert times == [("2026-01-01T10:15:05.250+00:00", started),
                         ("2026-01-01T10:15:05.700+00:00", ended)], (url, headers)


def test_a_call_under_a_millisecond_reads_under_1_ms_not_0_ms(client, make, reviewer):
    """New-user finding: a 0.4 ms tool call read "0 ms" in the timeline and its details,
    as if it took no time. Its stored duration rounds to 0; it reads "<1 ms", and a call
    of 1 ms still reads "1 ms"."""
    ws, _ = reviewer
    run = make.run(ws, status="SUCCESS", tool_calls=[
        {"id": "quick", "tool_name": "cache_get", "status": "completed",
         "started_at": "2026-01-01T00:00:00.000000Z", "completed_at": "2026-01-01T00:00:00.000400Z"},
        {"id": "one", "tool_name": "cache_put", "status": "completed",
         "started_at": "2026-01-01T00:00:01.000000Z", "completed_at": "2026-01-01T00:00:01.001000Z"}])
    html = client.get(f"/runs/{run.id}/timeline").get_data(as_text=True)
    assert re.findall(r'<span class="tl-dur">([^<]*)</span>', html) == ["&lt;1 ms", "1 ms"]
    detail = client.get(f"/runs/{run.id}/tool-calls?call_id=quick").get_data(as_text=True)
    assert re.search(r"<dt>Duration</dt><dd>([^<]*)</dd>", detail).group(1) == "&lt;1 ms"


def test_create_a_case_only_where_the_viewer_leads_the_run_s_workspace(client, make, login, session):
    """A lead of one workspace who reviews in another was offered "Create a case" on the
    other's runs (the page read the viewer's highest role anywhere), and the link led to a
    refusal. The offer follows the role in the run's own workspace (SPEC 7, 8)."""
    from reviewapp.models import Membership

    led, reviewed = make.workspace(), make.workspace()
    lead = make.user(led, "lead")
    session.add(Membership(user_id=lead.id, workspace_id=reviewed.id, role="reviewer"))
    session.commit()
    login(lead)
    own, other = make.run(led), make.run(reviewed)
    assert "Create a case from this run" in client.get(f"/runs/{own.id}").get_data(as_text=True)
    html = client.get(f"/runs/{other.id}").get_data(as_text=True)
    assert "Create a case from this run" not in html
    assert client.get(f"/cases/new?run={other.id}").status_code == 403
    assert "A case can be made once the run has ended" not in client.get(
        f"/runs/{make.run(reviewed, status='RUNNING').id}").get_data(as_text=True)
