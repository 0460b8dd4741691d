"""Issue 14: every SREGym harness log imports with exact runs, calls, failures and
outcomes. The expected figures are computed here from the raw files with plain json,
independently of the adapters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import or_, select

from reviewapp.actors import Actor
from reviewapp.models import Run, ToolCall
from reviewapp.services import importers

from ..shared_data import shared_data_dir

SYSTEM = Actor.system_actor()
LIMIT = 2000


def _lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _text(content) -> str:
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _claude(path: Path) -> tuple[int, int, list[int]]:
    blocks = [b for e in _lines(path) if e.get("type") in ("user", "assistant")
              and isinstance(e["message"].get("content"), list) for b in e["message"]["content"]]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    return (sum(b.get("type") == "tool_use" for b in blocks), sum(b.get("is_error") is True for b in results),
            [len(_text(b.get("content"))) for b in results])


def _codex(path: Path) -> tuple[int, int, list[int]]:
    payloads = [e["payload"] for e in _lines(path) if e.get("type") == "response_item"]
    outputs = [p["output"] for p in payloads if p.get("type") == "function_call_output"]
    codes = [re.search(r"^Process exited with code (-?\d+)$", o, re.M) for o in outputs]
    return (sum(p.get("type") == "function_call" for p in payloads),
            sum(1 for c in codes if c and c.group(1) != "0"), [len(o) for o in outputs])


def _copilot(path: Path) -> tuple[int, int, list[int]]:
    events = _lines(path)
    done = [e["data"] for e in events if e["type"] == "tool.execution_complete"]
    return (sum(len(e["data"].get("toolRequests") or []) for e in events if e["type"] == "assistant.message"),
            sum(d.get("success") is False for d in done), [len(d["result"]["content"]) for d in done])


def _gemini(path: Path) -> tuple[int, int, list[int]]:
    latest = {}
    for e in _lines(path):
        if e.get("type") == "gemini":
            for call in e.get("toolCalls") or []:
                latest[call["id"]] = call
    outputs = [c["result"][0]["functionResponse"]["response"].get("output", "") for c in latest.values()]
    # The shell tool reports a non-zero exit code in its footer while the call's status
    # stays "success" (4 of the 34: kubectl 403s and a curl time-out).
    footer = [re.search(r"^Exit Code: (-?\d+)\n(?:Signal|Background PIDs|Process Group PGID): ", o, re.M)
              for o in outputs]
    failed = [c["status"] != "success" or bool(f and f.group(1) != "0") for c, f in zip(latest.values(), footer)]
    return len(latest), sum(failed), [len(o) for o in outputs]


def _opencode(path: Path) -> tuple[int, int, list[int]]:
    parts = [p for m in json.loads(path.read_text())["messages"] for p in m["parts"] if p["type"] == "tool"]
    return (len(parts), sum(p["state"]["status"] == "error" for p in parts),
            [len(p["state"].get("output") or "") for p in parts])


def _stratus(path: Path) -> tuple[int, int, list[int]]:
    stages = {e["stage"]: e for e in _lines(path) if e.get("type") == "event"}
    messages = [m for e in stages.values() for m in e["messages"]]
    tool = [m for m in messages if m["type"] == "ToolMessage"]
    return (sum(len(m.get("tool_calls") or []) for m in messages if m["type"] == "AIMessage"),
            sum(m["content"].startswith(("Error:", "Traceback")) for m in tool), [len(m["content"]) for m in tool])


HARNESSES = {
    "claude-code": ("claudecode_run/74bfdd52-f1bd-477d-98c8-306bde810080.jsonl", _claude, "pass"),
    "claude-code-stream": ("claudecode_run/claude-code.txt", _claude, "pass"),
    "codex": ("codex_run/rollout-2026-06-29T16-58-06-019f1451-1903-7092-b4ca-73a57d9bdd9d.jsonl", _codex, "pass"),
    "copilot": ("copilot_run_real/copilot-cli.jsonl", _copilot, None),
    "gemini": ("gemini_run/session-fdaf509c.jsonl", _gemini, None),
    "opencode": ("opencode_run/session-ses_0e8fabe63ffe91KaErs7Mh9g5O.json", _opencode, "pass"),
    "stratus": ("stratus_run/0704_1458_service_port_conflict_hotel_reservation_stratus_agent_trajectory.jsonl",
                _stratus, None),
}


def _verdict(folder: Path):
    found = [json.loads(p.read_text()) for p in folder.glob("*_results_*.json")]
    return ("pass" if found[0]["success"] else "fail") if found else None


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_each_harness_imports_with_exact_counts_and_its_outcome(session, make, name):
    relative, count, outcome = HARNESSES[name]
    path = shared_data_dir() / "sregym" / relative
    calls, failed, lengths = count(path)
    assert _verdict(path.parent) == outcome
    ws = make.workspace()
    summary = importers.import_files(session, SYSTEM, ws.id, [path])
    assert (summary.created, summary.failed, summary.no_tool_calls) == (1, 0, [])
    assert (summary.tool_calls, summary.failed_tool_calls, summary.outcomes) == (calls, failed, int(bool(outcome)))
    run = session.scalars(select(Run)).one()
    assert (run.kind, run.external_outcome) == ("aiops", outcome)
    assert run.answer and (run.query or name == "claude-code-stream")
    stored = sorted(c.result_length or c.error_length or len(c.result_summary or c.error_message or "")
                    for c in session.scalars(select(ToolCall)))
    assert sum(n > LIMIT for n in stored) == sum(n > LIMIT for n in lengths)
    again = importers.import_files(session, SYSTEM, ws.id, [path])
    assert (again.unchanged, again.tool_calls) == (1, calls)


def test_all_sregym_logs_and_verdicts_in_one_import(runner, session, make):
    """The whole folder in one command (verdict files first on the command line): every
    run, call, failure and outcome; the verdict files attach to the runs beside them."""
    make.workspace("sre")
    folder = shared_data_dir() / "sregym"
    files = sorted(folder.glob("*/*"), key=lambda p: "_results_" not in p.name)
    expected = [HARNESSES[n][1](folder / HARNESSES[n][0]) for n in HARNESSES]
    result = runner.invoke(args=["runs", "import", *map(str, files), "--workspace", "sre"])
    assert result.exit_code == 0, result.output
    runs = session.scalars(select(Run)).all()
    # Six runs: the Claude Code stdout (claude-code.txt) is the same run as its session log.
    assert len(runs) == len(HARNESSES) - 1 == 6
    stream = expected.pop(list(HARNESSES).index("claude-code-stream"))
    calls = sum(e[0] for e in expected)
    failed = sum(e[1] for e in expected)
    # 141 calls (8 failed: 1 Claude Code, 3 Codex, 4 Gemini) in the six harness logs.
    assert (calls, failed) == (141, 8)
    stored = session.scalars(select(ToolCall)).all()
    assert (len(stored), sum(c.status == "failed" for c in stored)) == (calls, failed)
    # The summary counts what the files held: the stdout's 16 calls again (its run unchanged).
    assert f"tool calls: {calls + stream[0]} ({failed + stream[1]} failed)" in result.output
    assert sorted(r.external_outcome or "-" for r in runs) == sorted(
        o or "-" for n, (_, _, o) in HARNESSES.items() if n != "claude-code-stream")
    cut = sum(n > LIMIT for e in expected for n in e[2])
    assert stream[:2] == (16, 1)
    # Of the six logs' 141 results, 45 are longer than 2,000 characters (issue 14 counted
    # 46: one Gemini output of 1,926 characters passes 2,000 only inside its JSON wrapper).
    assert cut == 45
    marked = or_(ToolCall.result_length > LIMIT, ToolCall.error_length > LIMIT)  # a failed call keeps its error
    assert len(session.scalars(select(ToolCall).where(marked)).all()) == cut


def test_a_verdict_imported_later_attaches_to_the_run_and_before_its_run_is_refused(session, make):
    folder = shared_data_dir() / "sregym" / "opencode_run"
    log = folder / "session-ses_0e8fabe63ffe91KaErs7Mh9g5O.json"
    verdict_file = next(folder.glob("*_results_*.json"))
    verdict = json.loads(verdict_file.read_text())
    ws = make.workspace()
    early = importers.import_files(session, SYSTEM, ws.id, [verdict_file])
    assert early.failed == 1 and "no run opencode-ses_0e8fabe63ffe91KaErs7Mh9g5O" in early.problems[0]
    assert session.scalars(select(Run)).all() == []
    importers.import_files(session, SYSTEM, ws.id, [log])
    run = session.scalars(select(Run)).one()
    run.external_outcome = None  # as if imported before the verdict existed
    session.commit()
    later = importers.import_files(session, SYSTEM, ws.id, [verdict_file])
    assert (later.runs, later.verdicts_set, later.failed, later.outcomes) == (0, 1, 0, 1)
    session.expire_all()
    run = session.scalars(select(Run)).one()
    assert run.external_outcome == ("pass" if verdict["success"] else "fail")
    detail = run.external_outcome_detail
    assert (detail["source"], detail["problem_id"], detail["return_code"]) == (
        "sregym", verdict["problem_id"], verdict["return_code"])
    assert detail["checks"][0] == {"name": "problem solved (success)", "passed": verdict["success"]}


def test_stratus_stages_become_steps_and_calls_belong_to_them(session, make):
    path = shared_data_dir() / "sregym" / HARNESSES["stratus"][0]
    stages = {e["stage"]: e for e in _lines(path) if e.get("type") == "event"}
    importers.import_files(session, SYSTEM, make.workspace().id, [path])
    run = session.scalars(select(Run)).one()
    assert [s.name for s in run.steps] == list(stages)
    per_step = {s.name: sum(len(m.get("tool_calls") or []) for m in stages[s.name]["messages"]
                            if m["type"] == "AIMessage") for s in run.steps}
    stored = {s.name: len(session.scalars(select(ToolCall).where(ToolCall.step_pk == s.id)).all())
              for s in run.steps}
    assert stored == per_step


def test_verdict_files_are_counted_as_verdicts_not_as_runs(session, make):
    """A new user imported the six logs with the three verdict files beside them and read
    'runs: 6 created, 0 updated, 3 unchanged': the verdict records were counted as runs.
    Runs count runs; verdict records count apart, as set or already set."""
    folder = shared_data_dir() / "sregym"
    logs = [folder / HARNESSES[n][0] for n in HARNESSES if n != "claude-code-stream"]
    verdict_files = sorted(folder.glob("*/*_results_*.json"))
    ws = make.workspace()
    both = importers.import_files(session, SYSTEM, ws.id, [*logs, *verdict_files])
    # Each log beside a verdict file already carries its outcome: its verdict is already set.
    assert (both.created, both.updated, both.unchanged, both.failed) == (len(logs), 0, 0, 0)
    assert (both.verdicts_set, both.verdicts_unchanged) == (0, len(verdict_files))
    assert both.runs == len(logs) == len(session.scalars(select(Run)).all())
    for run in session.scalars(select(Run)):
        run.external_outcome = None  # as if the logs had been imported before the verdicts
    session.commit()
    later = importers.import_files(session, SYSTEM, ws.id, verdict_files)
    assert (later.runs, later.verdicts_set, later.verdicts_unchanged, later.failed) == (
        0, len(verdict_files), 0, 0)
    assert later.outcomes == len(verdict_files)


def test_the_import_command_prints_verdicts_apart_from_runs(runner, make):
    make.workspace("sre")
    folder = shared_data_dir() / "sregym" / "opencode_run"
    files = [folder / HARNESSES["opencode"][0].split("/", 1)[1], *folder.glob("*_results_*.json")]
    result = runner.invoke(args=["runs", "import", *map(str, files), "--workspace", "sre"])
    assert result.exit_code == 0, result.output
    assert "runs: 1 created, 0 updated, 0 unchanged, 0 failed;" in result.output
    assert "verdicts: 0 set, 1 already set" in result.output
