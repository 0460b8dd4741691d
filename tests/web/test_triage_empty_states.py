"""The triage list's empty states say what is empty (new-user walk, 2026-12-03: "Nothing in the
queue for these filters" with no filter set), and the bulk controls show only when there are
items to tick."""

from __future__ import annotations

import re


def _empty(html):
    table = html.split('<section id="triage-table"', 1)[1].split("</section>", 1)[0]
    box = table.split('<div class="empty">', 1)[1].split("</div>", 1)[0]
    return [" ".join(re.sub(r"<[^>]+>", " ", p).split()) for p in re.findall(r"<p[^>]*>(.*?)</p>", box, re.S)], table


def test_an_empty_queue_says_the_queue_is_empty_and_offers_no_bulk_controls(client, lead_workspace):
    texts, table = _empty(client.get("/triage/").get_data(as_text=True))
    assert texts == ["The queue is empty.", "Runs land here when a reviewer judges them not useful."]
    assert 'id="bulk-form"' not in table and "With the selected items" not in table


def test_filters_that_match_nothing_say_so_with_a_way_to_clear_them(client, lead_workspace, make):
    make.triage_item(make.run(lead_workspace, kind="chat"))
    texts, table = _empty(client.get("/triage/?kind=aiops").get_data(as_text=True))
    assert texts == ["No items match these filters.", "Clear the filters to see the whole queue."]
    assert '<a href="/triage/">Clear the filters</a>' in table
    assert 'id="bulk-form"' not in table
    page = client.get("/triage/").get_data(as_text=True)
    assert 'id="bulk-form"' in page and '<div class="empty">' not in page
