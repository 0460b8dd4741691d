"""The runs list's walk through the runs I have not rated is not the "Review queue"
(new-user walk, 2026-12-04): the navigation's "Review queue" is the team's review queues
("My next item"), while the runs list's "Review the next unrated run" walk showed a
banner "Review queue · 1 of 3 reviewed" and marked "Review queue" in the navigation.
The walk now reads "Unrated runs" (banner, its done page, the run page's "Next unrated
run") and sits under "Runs" in the navigation."""

from __future__ import annotations

import re

from reviewapp.actors import Role

HX = {"HX-Request": "true"}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _current_nav(html: str) -> list[str]:
    nav = re.search(r'<nav class="nav" aria-label="Main">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r'<a href="[^"]*" aria-current="page">([^<]*)</a>', nav)


def test_the_unrated_runs_walk_is_named_apart_from_the_review_queue(client, login, make, session):
    ws = make.workspace()
    reviewer = make.user(ws, Role.REVIEWER)
    runs = [make.run(ws) for _ in range(3)]
    login(reviewer)
    listing = client.get("/").get_data(as_text=True)
    assert "Review the next unrated run ›" in listing
    first = client.get("/queue?kind=chat")
    assert first.status_code == 303
    page = client.get(first.headers["Location"]).get_data(as_text=True)
    assert _current_nav(page) == ["Runs"]
    assert "Next unrated run ›" in page and "Next to review" not in page
    banner = _text(client.get("/queue/progress?kind=chat", headers=HX).get_data(as_text=True))
    assert banner == f"Unrated runs 0 / {len(runs)} 0 of {len(runs)} reviewed · {len(runs)} to go"
    for run in runs:
        make.feedback_row(run, reviewer, rating="positive")
    session.commit()
    done = client.get("/queue?kind=chat").get_data(as_text=True)
    assert "<h1>Unrated runs</h1>" in done and "Review queue</h1>" not in done
    assert _current_nav(done) == ["Runs"]
