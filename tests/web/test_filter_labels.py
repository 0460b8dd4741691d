"""Filters on list pages show the vocabularies' labels, the values stay codes (a new user
read `aiops`, `SUCCESS`, `AUTO` in the selects, and `kind: aiops` in a queue's rule
chips). Every label comes from the one registry of its vocabulary."""

from __future__ import annotations

import re

from reviewapp.actors import Role
from reviewapp.domain.case_sources import CASE_SOURCES
from reviewapp.domain.run_vocabulary import RUN_KINDS, RUN_STATUSES
from reviewapp.domain.verdicts import VERDICTS, VERIFIER_VERDICTS
from reviewapp.models import RunKind, RunStatus, SourceType
from reviewapp.services import review_queues as rq


def _options(html: str, select_id: str) -> list[tuple[str, str]]:
    select = re.search(rf'<select id="{select_id}"[^>]*>(.*?)</select>', html, re.S).group(1)
    return [(v, re.sub(r"\s+", " ", t).strip())
            for v, t in re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select)]


def test_the_registries_hold_the_stored_codes_with_labels():
    assert RUN_KINDS.codes() == tuple(k.value for k in RunKind)
    assert RUN_STATUSES.codes() == tuple(s.value for s in RunStatus)
    assert CASE_SOURCES.codes() == tuple(s.value for s in SourceType)
    assert RUN_KINDS.choices() == (("chat", "Chat"), ("aiops", "AIOps"))
    assert RUN_STATUSES.choices() == (("RUNNING", "Running"), ("SUCCESS", "Success"),
                                      ("FAILED", "Failed"))
    for registry in (RUN_KINDS, RUN_STATUSES, CASE_SOURCES):
        assert all(row.label != row.code for row in registry)


def test_triage_kind_select_shows_labels(client, login, make):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    html = client.get("/triage/").get_data(as_text=True)
    assert _options(html, "f-kind") == [("", "Any"), *RUN_KINDS.choices()]


def test_case_list_and_export_source_selects_show_labels(client, login, make):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    cases = client.get("/cases/").get_data(as_text=True)
    assert _options(cases, "c-src") == [("", "Any"), *CASE_SOURCES.choices()]
    exports = client.get("/exports/").get_data(as_text=True)
    assert _options(exports, "xc-src") == [("", "Any"), *CASE_SOURCES.choices()]


def test_queue_rule_chips_show_field_and_value_labels(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Labelled", {
        "kind": "aiops", "status": "SUCCESS", "verdict": "LOW_CONFID", "feedback": "not_useful",
        "score_min": "30", "failed_calls": "yes", "q": "<b>disk</b>"})
    login(lead)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    rule = re.search(r"<dt>Rule</dt><dd>(.*?)</dd>", html, re.S).group(1)
    chips = [re.sub(r"\s+", " ", c).strip() for c in re.findall(r'<span class="badge">(.*?)</span>', rule, re.S)]
    assert sorted(chips) == sorted([
        "Kind: AIOps", "Status: Success", f"Verifier verdict: {VERIFIER_VERDICTS.label('LOW_CONFID')}",
        f"Reviewers&#39; verdict: {VERDICTS.label('not_useful')}", "Evidence score from: 30",
        "Has failed tool calls", "Text: &lt;b&gt;disk&lt;/b&gt;"])


def test_triage_reason_suggestions_carry_labels(client, login, make):
    """The 'Reviewer reason' box suggested bare codes (incorrect, citation ...)."""
    from reviewapp.domain.reasons import DEFAULT_REASONS

    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    html = client.get("/triage/").get_data(as_text=True)
    datalist = re.search(r'<datalist id="reason-codes">(.*?)</datalist>', html, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)">([^<]*)</option>', datalist) == list(DEFAULT_REASONS.choices())
