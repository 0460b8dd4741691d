"""Issue 14: a tool result longer than the 2,000-character summary is cut with its
original length recorded, and the tool-call page says "Cut at 2,000 of N characters"
(counts from the raw tau-bench file with plain json)."""

from __future__ import annotations

import json
from urllib.parse import quote

from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.models import Run, ToolCall
from reviewapp.services import importers

from ..shared_data import tau_bench_file

SYSTEM = Actor.system_actor()
LIMIT = 2000


def test_long_tau_bench_results_are_cut_with_their_length_and_the_page_says_so(session, make, login, client):
    long = sorted(len(m["content"]) for r in json.loads(tau_bench_file().read_text()) for m in r["traj"]
                  if m["role"] == "tool" and len(m.get("content") or "") > LIMIT)
    assert len(long) == 34
    ws = make.workspace()
    importers.import_files(session, SYSTEM, ws.id, [tau_bench_file()])
    cut = list(session.scalars(select(ToolCall).where(ToolCall.result_length > LIMIT)))
    assert sorted(c.result_length for c in cut) == long
    assert all(len(c.result_summary) <= LIMIT for c in cut)
    longest = max(cut, key=lambda c: c.result_length)
    run = session.get(Run, longest.run_pk)
    login(make.user(ws))
    page = client.get(f"/runs/{run.id}/tool-calls/{quote(longest.id, safe='/')}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert f"Cut at {len(longest.result_summary):,} of {longest.result_length:,} characters when it was stored" in html
