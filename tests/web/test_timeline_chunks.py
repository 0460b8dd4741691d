"""The run page's timeline in chunks (issue 18): the first 50 calls, "Show the next N of M
tool calls" as an htmx fragment (keyset: after the last call shown) and as a plain link,
links to one call past the first chunk, the failed calls not shown yet, and the
fragment's access checks."""

from __future__ import annotations

import re
from html import unescape as html_unescape
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from reviewapp.models import Feedback


def _calls(n, prefix="call"):
    """``n`` calls one second apart, every 9th failed, in call order."""
    return [{"id": f"{prefix}-{i}", "tool_name": f"tool_{i % 7}",
             "status": "failed" if i % 9 == 0 else "completed",
             "arguments": {"i": i}, "output": f"result {i}", "error": "boom" if i % 9 == 0 else None,
             "started_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
             "completed_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.500000Z"} for i in range(n)]


def _row_ids(html: str) -> list[str]:
    return re.findall(r'<li class="tl-row [^"]*" id="call-([^"]+)"', html)


def _indexes(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<span class="tl-index">(\d+)</span>', html)]


HX = {"HX-Request": "true"}


@pytest.fixture
def reviewer(make, login):
    ws = make.workspace()
    user = make.user(ws)
    login(user)
    return ws, user


@pytest.fixture
def big_run(make, reviewer):
    return make.run(reviewer[0], tool_calls=_calls(300))


def test_the_page_shows_the_first_50_calls_and_counts_all(client, big_run):
    html = client.get(f"/runs/{big_run.id}").get_data(as_text=True)
    assert _row_ids(html) == [f"call-{i}" for i in range(50)]
    assert _indexes(html) == list(range(1, 51))
    assert '<span class="count-pill">300</span>' in html
    assert "Show the next 200 of 250 tool calls" in html and "50 of 300 shown" in html
    more = re.search(r'<a class="button" href="([^"]+)"\s+hx-get="([^"]+)"', html)
    assert more.group(1) == f"/runs/{big_run.id}?calls_after=call-49#call-call-50"
    assert more.group(2) == f"/runs/{big_run.id}/timeline/calls?after=call-49"


def test_a_small_run_has_no_show_next_control(client, make, reviewer):
    run = make.run(reviewer[0], tool_calls=_calls(50))
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert len(_row_ids(html)) == 50 and "Show the next" not in html and "data-more-calls" not in html


def test_the_fragment_loads_the_next_chunk_after_the_last_call_shown(client, big_run):
    response = client.get(f"/runs/{big_run.id}/timeline/calls?after=call-49", headers=HX)
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "<html" not in html
    assert _row_ids(html) == [f"call-{i}" for i in range(50, 250)]
    assert _indexes(html) == list(range(51, 251))
    assert "Show the remaining 50 tool calls" in html and "250 of 300 shown" in html
    # The last chunk: no control after it.
    last = client.get(f"/runs/{big_run.id}/timeline/calls?after=call-249", headers=HX).get_data(as_text=True)
    assert _row_ids(last) == [f"call-{i}" for i in range(250, 300)] and "data-more-calls" not in last


def test_loaded_rows_carry_working_rating_forms(client, big_run, session, reviewer):
    html = client.get(f"/runs/{big_run.id}/timeline/calls?after=call-49", headers=HX).get_data(as_text=True)
    row = html.split('id="call-call-120"', 1)[1].split("</li>", 1)[0]
    assert 'name="csrf_token"' in row and 'name="subject_id" value="call-120"' in row
    # Without JavaScript the rating returns to the page shown down to this row.
    next_url = re.search(r'name="next" value="([^"]+)"', row).group(1)
    assert next_url == f"/runs/{big_run.id}?call=call-120#call-call-120"
    response = client.post("/feedback", data={"target_type": "tool_call", "target_id": big_run.id,
                                              "subject_id": "call-120", "rating": "negative",
                                              "next": next_url})
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith(f"/runs/{big_run.id}?call=call-120&rated=fb-tool_call-")
    back = client.get(location.split("#")[0]).get_data(as_text=True)
    assert "call-120" in _row_ids(back) and len(_row_ids(back)) == 121
    session.rollback()
    assert [(f.subject_key, f.rating) for f in session.query(Feedback).filter_by(author_id=reviewer[1].id)] == [
        ("call-120", "negative")]


def test_without_javascript_the_control_is_a_link_to_the_page_with_the_next_chunk(client, big_run):
    html = client.get(f"/runs/{big_run.id}?calls_after=call-49").get_data(as_text=True)
    assert _row_ids(html) == [f"call-{i}" for i in range(250)]
    assert "Show the remaining 50 tool calls" in html
    assert f'href="/runs/{big_run.id}?calls_after=call-249#call-call-250"' in html
    # The fragment's address opened as a page goes to that page.
    plain = client.get(f"/runs/{big_run.id}/timeline/calls?after=call-49")
    assert plain.status_code == 303
    assert plain.headers["Location"] == f"/runs/{big_run.id}?calls_after=call-49"
    every = client.get(f"/runs/{big_run.id}?calls=all").get_data(as_text=True)
    assert len(_row_ids(every)) == 300 and "data-more-calls" not in every


def test_a_link_to_a_call_past_the_first_chunk_renders_the_page_down_to_it(client, make, reviewer):
    # A slash and a space in the id: the link's query value is encoded.
    calls = _calls(120)
    calls[99]["id"] = "kb://doc 99"
    run = make.run(reviewer[0], tool_calls=calls)
    html = client.get(f"/runs/{run.id}?call={quote('kb://doc 99', safe='')}").get_data(as_text=True)
    assert len(_row_ids(html)) == 100 and _indexes(html)[-1] == 100
    last_row = html.rsplit('<li class="tl-row ', 1)[1]
    assert 'name="subject_id" value="kb://doc 99"' in last_row
    assert "Show the remaining 20 tool calls" in html
    # The tool call's own page links back to the run page shown down to it.
    page = client.get(f"/runs/{run.id}/tool-calls/call-110").get_data(as_text=True)
    assert f'href="/runs/{run.id}?call=call-110#call-call-110"' in page
    # An id that is no call of the run shows the first chunk.
    assert len(_row_ids(client.get(f"/runs/{run.id}?call=nope").get_data(as_text=True))) == 50


def test_the_summary_names_failed_calls_not_shown_yet(client, big_run):
    html = client.get(f"/runs/{big_run.id}").get_data(as_text=True)
    failed = [i for i in range(300) if i % 9 == 0]
    hidden = [i for i in failed if i >= 50]
    assert f'<span class="failed-count">({len(failed)} failed)</span>' in html
    link = re.search(r'<a class="hidden-failed small"\s+href="([^"]+)">Show the (\d+) failed calls not shown yet</a>', html)
    assert int(link.group(2)) == len(hidden) == 28
    assert link.group(1) == f"/runs/{big_run.id}?call=call-{hidden[-1]}#call-call-{hidden[0]}"
    through = client.get(link.group(1).split("#")[0]).get_data(as_text=True)
    assert f"call-{hidden[-1]}" in _row_ids(through) and "hidden-failed" not in through


def test_a_conversation_link_to_a_call_past_the_first_chunk_reloads_down_to_it(client, make, reviewer):
    run = make.run(reviewer[0], tool_calls=_calls(80), messages=[
        {"id": "u1", "role": "user", "content": "Q?"},
        {"id": "a1", "role": "assistant", "content": "Looking.", "metadata": {"tool_call_ids": ["call-3", "call-70"]}},
        {"id": "u2", "role": "user", "content": "More?"},
        {"id": "a2", "role": "assistant", "content": "Done."}])
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert '<a href="#call-call-3"><code>tool_3</code></a>' in html
    # call-70 is not shown: the link reloads the page down to it; its tool name is known.
    assert f'<a href="/runs/{run.id}?call=call-70#call-call-70"><code>tool_0</code></a>' in html


def test_the_fragment_checks_access_like_the_page(client, make, reviewer, app_factory):
    foreign = make.run(make.workspace(), tool_calls=_calls(60))
    mine = make.run(reviewer[0], tool_calls=_calls(60))
    page = client.get(f"/runs/{foreign.id}")
    fragment = client.get(f"/runs/{foreign.id}/timeline/calls?after=call-49", headers=HX)
    missing = client.get(f"/runs/{foreign.id + 999}/timeline/calls?after=call-49", headers=HX)
    # SPEC 2: a foreign run and a missing one get the same 403, as the page does.
    assert page.status_code == fragment.status_code == missing.status_code == 403
    assert fragment.get_data() == missing.get_data()
    # A call of another run is no cursor of this one.
    assert client.get(f"/runs/{mine.id}/timeline/calls?after=nope", headers=HX).status_code == 400
    missing_after = client.get(f"/runs/{mine.id}/timeline/calls", headers=HX)
    assert missing_after.status_code == 400 and "after" in missing_after.get_data(as_text=True)
    # Anonymous: htmx is sent to the login page (HX-Redirect), a plain request redirected.
    anonymous = app_factory().test_client()
    swap = anonymous.get(f"/runs/{mine.id}/timeline/calls?after=call-49", headers=HX)
    assert swap.headers["HX-Redirect"].startswith("/login?next=") and "tl-row" not in swap.get_data(as_text=True)
    plain = anonymous.get(f"/runs/{mine.id}/timeline/calls?after=call-49")
    assert plain.status_code in (302, 303) and "/login" in plain.headers["Location"]


def test_bad_chunk_parameters_are_a_400_naming_the_field(client, big_run):
    for query, field in (("calls=some", "calls"), ("call=" + "x" * 161, "call"),
                         ("calls_after=" + "x" * 161, "calls_after")):
        response = client.get(f"/runs/{big_run.id}?{query}")
        assert response.status_code == 400, query
        assert f"{field}:" in response.get_data(as_text=True)


def test_the_live_poll_keeps_the_rows_shown(client, make, reviewer):
    run = make.run(reviewer[0], status="RUNNING", tool_calls=_calls(70))
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert 'data-call="call-49"' in html  # the poll names the last row shown (app.js)
    poll = client.get(f"/runs/{run.id}/timeline?live=1&call=call-60", headers=HX).get_data(as_text=True)
    assert len(_row_ids(poll)) == 61
    assert f'id="run-{run.id}-call-count" hx-swap-oob="true">70 <span class="failed-count">(8 failed)</span>' in poll


def _query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(html_unescape(url)).query)


def test_fragments_keep_the_list_filters_and_queue_mode_of_the_page(client, make, reviewer):
    """User-walk finding: the "failed calls not shown yet" link (and the rows' plain
    rating forms) that a live poll or "Show the next" brought dropped the list filters
    and ``queue=1`` the page was opened with. The fragments' addresses carry them, so
    their links go back to the same page. Calls 54 and 63 fail, past the first 50."""
    run = make.run(reviewer[0], status="RUNNING", tool_calls=_calls(70) + _calls(260, "more"))
    kept = {"queue": ["1"], "kind": ["chat"], "q": ["Question"]}
    page = client.get(f"/runs/{run.id}?queue=1&kind=chat&q=Question").get_data(as_text=True)
    poll = re.search(r'class="card timeline"[^>]*hx-get="([^"]+)"', page).group(1)
    more = re.search(r'hx-get="([^"]*/timeline/calls[^"]*)"', page).group(1)
    for url in (poll, more):
        query = _query_of(url)
        assert {k: query.get(k) for k in kept} == kept, url
    answers = {
        "poll": client.get(html_unescape(poll).replace("v=", "was=") + "&call=call-49", headers=HX),
        "chunk": client.get(html_unescape(more), headers=HX),
    }
    for name, answer in answers.items():
        assert answer.status_code == 200, name
        html = answer.get_data(as_text=True)
        link = re.search(r'<a class="hidden-failed small"\s+href="([^"]+)"', html)
        assert link, name
        nexts = re.findall(r'name="next" value="([^"]+)"', html)
        assert nexts, name
        for url in [link.group(1), *nexts]:
            assert urlsplit(html_unescape(url)).path == f"/runs/{run.id}", (name, url)
            query = _query_of(url)
            assert {k: query.get(k) for k in kept} == kept, (name, url)
    # Without JavaScript "Show the next" redirects to the page showing them, filters kept.
    plain = client.get(html_unescape(more))
    assert plain.status_code == 303
    query = _query_of(plain.headers["Location"])
    assert {k: query.get(k) for k in kept} == kept and query["calls_after"] == _query_of(more)["after"]
