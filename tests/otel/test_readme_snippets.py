"""The README's "Send runs from your agent" snippets, run as written against a live server
(only the address and the token are replaced)."""

from __future__ import annotations

import re
import shlex

import pytest
import requests
from langchain_core.runnables import RunnableLambda
from sqlalchemy import select

from reviewapp import REPO_ROOT
from reviewapp.models import DiagnosisSession, Run

from .test_langchain_live import agent

README = (REPO_ROOT / "README.md").read_text()


def snippet(name: str) -> str:
    match = re.search(rf"<!-- snippet: {name} -->\n```\w+\n(.*?)```", README, re.S)
    assert match, f"README has no snippet {name}"
    return match.group(1)


@pytest.fixture
def token(make, ws):
    return make.token(ws, "readme")


def real(code: str, live_server: str, token: str) -> str:
    assert "http://127.0.0.1:5000" in code and "rvw_..." in code or "rvw_" not in code
    return code.replace("http://127.0.0.1:5000", live_server).replace("rvw_...", token)


def runs_of(live_server: str, token: str, run_id: str) -> dict:
    response = requests.get(f"{live_server}/api/runs/{run_id}/trace", timeout=30,
                            headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


def test_otel_snippets(live_server, token, monkeypatch, session):
    for line in real(snippet("otel-env"), live_server, token).splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        monkeypatch.setenv(name, shlex.split(value)[0])
    namespace: dict = {}
    exec(compile(snippet("otel-python"), "README otel-python", "exec"), namespace)  # noqa: S102
    run_id = session.scalar(select(Run.run_id).join(DiagnosisSession).where(
        DiagnosisSession.session_id == "conv-7"))
    t = runs_of(live_server, token, run_id)
    assert (t["run"]["status"], t["run"]["query"], t["run"]["answer"]) == (
        "SUCCESS", "Why is checkout returning 502?", "The pods were OOM-killed.")
    assert [(c["toolName"], c["status"]) for c in t["toolCalls"]] == [("query_logs", "completed")]


def test_langchain_snippet(live_server, token):
    namespace = {"agent": RunnableLambda(agent)}
    exec(compile(real(snippet("langchain"), live_server, token), "README langchain", "exec"),  # noqa: S102
         namespace)
    t = runs_of(live_server, token, "lc-42")
    assert (t["run"]["status"], t["run"]["sessionId"]) == ("SUCCESS", "conv-7")
    assert len(t["toolCalls"]) == 4


def test_client_snippet(live_server, token):
    exec(compile(real(snippet("client"), live_server, token), "README client", "exec"), {})  # noqa: S102
    t = runs_of(live_server, token, "run-43")
    assert (t["run"]["status"], t["run"]["answer"]) == ("SUCCESS", "Yes: replication lag is 0 s.")
    assert [(c["id"], c["status"], c["durationMs"] is not None) for c in t["toolCalls"]] == [
        ("run-43/call-1", "completed", True)]
