"""The dashboard's summary reads its numbers and marks from the read model
(``services.dashboard.Dashboard``: ``judged``, ``useful_rate``, ``useful_rate_good``,
``open_items``) instead of computing them in the template (issue 12 point 4)."""

from __future__ import annotations

import re

from reviewapp.actors import Actor, Role
from reviewapp.services import dashboard


def _kpis(page: str) -> dict[str, tuple[str, str]]:
    """label -> (the value's extra class, the value) of each summary box."""
    return {label: (cls.strip(), value.strip()) for cls, value, label in re.findall(
        r'<span class="kpi-value ?([^"]*)">\s*([^<]*)</span><span\s+class="kpi-label">([^<]*)</span>',
        page)}


def test_the_summary_counts_verdicts_and_marks_the_rate(client, login, make, session):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    empty = _kpis(client.get(f"/dashboard/?workspace={ws.id}").get_data(as_text=True))
    assert empty["with a verdict"] == ("", "0") and empty["useful"] == ("", "—")
    assert empty["open in the queue"] == ("good", "0")
    calls = [{"id": f"c-{n}-{status}", "tool_name": "vault_read", "status": status, "arguments": {},
              "error": "boom" if status == "failed" else None,
              "started_at": "2026-11-27T10:00:00Z", "completed_at": "2026-11-27T10:00:01Z"}
             for n, status in enumerate(("failed", "completed", "completed"))]
    runs = [make.run(ws, started_at="2026-11-27T08:00:00Z", tool_calls=calls if n == 0 else [])
            for n in range(4)]
    for run, verdict in zip(runs, ("useful", "useful", "not_useful", None)):
        run.feedback = verdict
    make.triage_item(runs[2], state="new", verdict=False)
    session.commit()
    dashboard.rebuild(session, Actor.system_actor())
    page = client.get(f"/dashboard/?workspace={ws.id}&date_from=2026-11-01&date_to=2026-11-30")
    kpis = _kpis(page.get_data(as_text=True))
    assert kpis["runs"] == ("", "4") and kpis["with a verdict"] == ("", "3")
    assert kpis["useful"] == ("bad", "67%")  # 2 of 3, under the 70 % mark
    assert kpis["open in the queue"] == ("bad", "1")
    # The most-failing tools chart: 1 failed (red) and 2 other calls of vault_read.
    chart = page.get_data(as_text=True).split('id="ch-tools"', 1)[1].split("</figure>", 1)[0]
    assert "vault_read" in chart and "1 of 3" in chart
    assert "<title>vault_read — failed: 1</title>" in chart
    assert "<title>vault_read — succeeded or no end: 2</title>" in chart
    runs[2].feedback = "useful"
    session.commit()
    dashboard.rebuild(session, Actor.system_actor())
    page = client.get(f"/dashboard/?workspace={ws.id}&date_from=2026-11-01&date_to=2026-11-30")
    assert _kpis(page.get_data(as_text=True))["useful"] == ("good", "100%")


def test_reset_shows_when_a_filter_is_set_or_refused(client, login, make):
    """The filters say whether any is set (``DashboardFilters.as_params``), as on the
    agreement, alignment and disputes pages; a refused filter offers Reset too."""
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    reset = '<a href="/dashboard/">Reset</a>'
    assert reset not in client.get("/dashboard/").get_data(as_text=True)
    for query in (f"workspace={ws.id}", "date_from=2026-11-01", "date_to=2026-11-30"):
        assert reset in client.get(f"/dashboard/?{query}").get_data(as_text=True), query
    refused = client.get("/dashboard/?date_from=someday")
    assert refused.status_code == 400 and reset in refused.get_data(as_text=True)
