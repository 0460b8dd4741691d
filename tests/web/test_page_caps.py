"""Content of any size stays viewable (SPEC 10): Markdown, long texts and tool-call
arguments / results are capped on pages with a visible "cut at N of M characters", and
a page made of hostile content costs about a second of server time at most.

Server time is the CPU time of the request in this process (the test client runs the
app in-process), so other processes on a loaded machine change it little."""

from __future__ import annotations

import gc
import re
import time

import pytest

SPEC_SUMMARY_LIMIT = 2000  # SPEC 4: results and errors are stored cut to 2,000 characters

ADVERSARIAL_MARKDOWN = {
    "image openers": "![" * 1_500_000,
    "nested quotes and lists": "> - " * 750_000,
    "long table": "| a | b |\n|---|---|\n" + "| x | [y](z |\n" * 230_000,
    "link openers": "[a](" * 750_000,
}


@pytest.fixture
def reviewer(make, login):
    ws = make.workspace()
    user = make.user(ws)
    login(user)
    return ws, user


def _cpu_get(client, url, **kwargs):
    """The response and the CPU seconds the request took, without the garbage collector:
    a full collection walks every object the test worker has gathered over thousands of
    tests (CI once read 2.2 s for a request that takes 0.16 s), which is no cost of the
    page. Collected before, paused while timed."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        response = client.get(url, **kwargs)
        return response, time.process_time() - start
    finally:
        gc.enable()


def _numbers(text: str) -> list[tuple[int, int]]:
    return [(int(a.replace(",", "")), int(b.replace(",", "")))
            for a, b in re.findall(r"Cut at ([\d,]+) of ([\d,]+) characters", text)]


@pytest.mark.parametrize("kind", ADVERSARIAL_MARKDOWN)
def test_a_3_mb_adversarial_answer_leaves_the_run_page_under_a_second(client, make, reviewer, kind):
    # The least of three requests, each on a text of its own (rendered Markdown is cached
    # by the part it renders, the start): CPU time also grows a little on a loaded
    # machine, and one slow sample must not decide.
    timed = []
    for variant in range(3):
        answer = str(variant) + ADVERSARIAL_MARKDOWN[kind]
        run = make.run(reviewer[0], answer=answer, report={"content": answer})
        timed.append(_cpu_get(client, f"/runs/{run.id}"))
    response, spent = timed[-1][0], min(cost for _, cost in timed)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert spent < 1.0, (kind, [cost for _, cost in timed])
    assert "Show the rest" in html
    # The answer and the report are each cut at the page's text cap, and say so.
    assert [total for _, total in _numbers(html)].count(len(answer)) >= 2
    assert len(html) < 2 * 1024 * 1024


def test_markdown_budget_is_shared_by_the_page(client, make, reviewer, app):
    """The answer renders as Markdown first; what the budget leaves is plain text."""
    budget = app.config["MARKDOWN_PAGE_BUDGET_CHARS"]
    answer = "**bold answer**\n\n" + "word " * (budget // 5)
    run = make.run(reviewer[0], answer=answer, report={"content": "**bold report**\n"})
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "<strong>bold answer</strong>" in html
    assert "<strong>bold report</strong>" not in html and "**bold report**" in html


def test_a_short_answer_renders_whole_with_no_cut_note(client, make, reviewer):
    run = make.run(reviewer[0], answer="# Title\n\nAll **fine**.")
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "<strong>fine</strong>" in html and "Cut at" not in html and "Show the rest" not in html


def test_a_5_mb_result_says_where_it_was_cut(client, make, reviewer):
    output = "r" * 5_000_000
    run = make.run(reviewer[0], tool_calls=[{"id": "big", "tool_name": "dump", "output": output,
                                             "status": "failed", "error": "e" * 7000}])
    html = client.get(f"/runs/{run.id}/tool-calls/big", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert (SPEC_SUMMARY_LIMIT, 5_000_000) in _numbers(html)
    assert (SPEC_SUMMARY_LIMIT, 7000) in _numbers(html)
    assert "Show all 2" not in html  # never "show all" for what was cut at ingest


def test_a_1_mb_argument_opens_fast_and_cut(client, make, reviewer, app):
    arguments = {"rows": [{"id": i, "name": f"customer-{i:07d}", "note": "n" * 40} for i in range(14_000)]}
    run = make.run(reviewer[0], tool_calls=[{"id": "wide", "tool_name": "bulk", "arguments": arguments}])
    response, spent = _cpu_get(client, f"/runs/{run.id}/tool-calls/wide", headers={"HX-Request": "true"})
    html = response.get_data(as_text=True)
    cap = app.config["TOOL_CALL_PAGE_CAP_CHARS"]
    [(shown, total)] = _numbers(html)
    assert shown == cap and total > 1_000_000
    assert len(html) < 2 * cap and spent < 0.5, spent
    timeline = client.get(f"/runs/{run.id}/timeline", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "customer-0000001" not in timeline  # the timeline loads arguments only when opened


def test_an_old_row_at_the_summary_limit_may_have_been_cut(client, make, reviewer, session):
    from reviewapp.models import ToolCall

    run = make.run(reviewer[0], tool_calls=[{"id": "old", "tool_name": "t", "output": "o" * 3000}])
    call = session.get(ToolCall, (reviewer[0].id, "old"))
    call.result_length = None  # stored before original lengths were kept
    session.commit()
    html = client.get(f"/runs/{run.id}/tool-calls/old", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "it may have been cut" in html


def test_a_5_mb_tool_message_is_capped_in_the_conversation(client, make, reviewer, app):
    content = "line of tool output\n" * 250_000
    run = make.run(reviewer[0], messages=[{"id": "u", "role": "user", "content": "q"},
                                          {"id": "t", "role": "tool", "content": content},
                                          {"id": "a", "role": "assistant", "content": "done"}])
    response, spent = _cpu_get(client, f"/runs/{run.id}")
    html = response.get_data(as_text=True)
    assert (app.config["PAGE_TEXT_CAP_CHARS"], len(content)) in _numbers(html)
    assert spent < 1.0 and len(html) < 2 * 1024 * 1024


def test_long_answers_are_capped_on_triage_and_case_pages(client, make, login, session):
    from reviewapp.services.feedback import set_run_verdict

    ws = make.workspace()
    lead = make.user(ws, role="lead")
    login(lead)
    answer = "a" * 1_000_000
    run = make.run(ws, answer=answer)
    from reviewapp.models import DiagnosisSession, TriageItem

    session_id = session.get(DiagnosisSession, run.diagnosis_session_id).session_id
    set_run_verdict(session, make.actor(lead), session_id, run.run_id, "not_useful")

    item = session.query(TriageItem).filter_by(run_pk=run.id).one()
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert any(total == len(answer) for _, total in _numbers(html)) and len(html) < 1024 * 1024


def test_a_3_mb_query_is_cut_on_the_run_page_with_its_marker(client, make, reviewer):
    """The question is capped like the answer (SPEC 10): the heading shows a short head,
    "Show the whole question" the first 200,000 characters and says where it was cut."""
    query = "Why is checkout slow? " + "x" * (3_000_000 - 22)
    run = make.run(reviewer[0], query=query)
    response = client.get(f"/runs/{run.id}")
    body = response.get_data()
    html = body.decode()
    assert response.status_code == 200
    assert len(body) < 1_000_000, len(body)
    assert (200_000, 3_000_000) in _numbers(html)
    assert "Cut at 200,000 of 3,000,000 characters" in html
    heading = re.search(r'<h1[^>]*class="query-title"[^>]*>(.*?)</h1>', html, re.S).group(1)
    assert heading.startswith("Why is checkout slow? x") and len(heading) < 1_000


def test_a_run_with_a_3_mb_answer_and_a_5_mb_result_opens_in_about_a_second(client, make, reviewer, app):
    """Issue 11, done when: the run page, its timeline and the opened call, together about
    a second of server time, each cut marked (the answer at the page's text cap, the
    result at the 2,000 characters stored of its 5,000,000)."""
    # The least of three runs, each with texts of its own (rendered Markdown is cached by
    # the part it renders): a long-lived test worker's heap makes one sample's garbage
    # collection slow (1.96 s of CPU once in a full parallel run, 0.6 s alone), and one
    # slow sample must not decide.
    samples = []
    for variant in range(3):
        answer = "![" * 1_500_000
        output = "r" * 5_000_000
        run = make.run(reviewer[0], query=f"Variant {variant}?", answer=answer,
                       tool_calls=[{"id": f"big{variant}", "tool_name": "dump", "output": output}])
        page, page_cpu = _cpu_get(client, f"/runs/{run.id}")
        timeline, timeline_cpu = _cpu_get(client, f"/runs/{run.id}/timeline", headers={"HX-Request": "true"})
        call, call_cpu = _cpu_get(client, f"/runs/{run.id}/tool-calls/big{variant}", headers={"HX-Request": "true"})
        assert [r.status_code for r in (page, timeline, call)] == [200, 200, 200]
        html = page.get_data(as_text=True)
        assert (app.config["PAGE_TEXT_CAP_CHARS"], 3_000_000) in _numbers(html) and "Show the rest" in html
        assert (SPEC_SUMMARY_LIMIT, 5_000_000) in _numbers(call.get_data(as_text=True))
        assert len(html) + len(timeline.get_data()) + len(call.get_data()) < 2 * 1024 * 1024
        samples.append((page_cpu, timeline_cpu, call_cpu))
    assert min(sum(sample) for sample in samples) < 1.5, samples
