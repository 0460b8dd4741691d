"""Issue 14: final answers from terminal pseudo-tools; forced formats refuse what they
cannot read (index and reason), never an empty run; a file whose tool-like records give
no tool call exits 1; warnings by kind and ``--report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import Run, ToolCall
from reviewapp.services import importers

from ..shared_data import shared_data_dir

SYSTEM = Actor.system_actor()


def count(session, model, *where) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where))


def _react(run: int, finish_name: str = "Finish", arguments: object = None) -> dict:
    """A ReAct-style run: a search, a thought, then the final-answer pseudo-tool."""
    answer = f"answer {run}"
    return {"id": f"react-{run}", "messages": [
        {"role": "user", "content": f"question {run}"},
        {"role": "assistant", "content": "Thought: search first", "tool_calls": [
            {"id": "s1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}]},
        {"role": "tool", "tool_call_id": "s1", "content": "found it"},
        {"role": "assistant", "content": "Thought: I know the answer now", "tool_calls": [
            {"id": "f1", "type": "function", "function": {
                "name": finish_name, "arguments": json.dumps(arguments or {"answer": answer})}}]},
    ]}


def test_terminal_pseudo_tool_gives_the_answer_and_is_no_call(session, make, tmp_path):
    records = [_react(i, name) for i, name in enumerate(["Finish", "final_answer", "SUBMIT", "finish"])]
    path = tmp_path / "react.json"
    path.write_text(json.dumps(records))
    ws = make.workspace()
    summary = importers.import_files(session, SYSTEM, ws.id, [path])
    assert (summary.created, summary.tool_calls, summary.warnings) == (4, 4, [])
    answers = dict(session.execute(select(Run.run_id, Run.answer)).all())
    assert answers == {f"react-{i}": f"answer {i}" for i in range(4)}
    assert set(session.scalars(select(ToolCall.tool_name))) == {"search"}
    assert count(session, ToolCall, ToolCall.status == "started") == 0
    last = session.scalars(select(Run).where(Run.run_id == "react-0")).one().messages[-1]
    assert (last.role, last.content, last.meta) == ("assistant", "answer 0", {"extra": {"final_answer_tool": "Finish"}})


def test_terminal_names_are_configurable_and_a_result_of_the_terminal_call_is_dropped():
    record = _react(0, "done")
    record["messages"].append({"role": "tool", "tool_call_id": "f1", "content": "ok"})
    default = importers.adapt_openai_record(record, 0, "f")
    assert [c["tool_name"] for c in default.doc["tool_calls"]] == ["search", "done"]
    custom = importers.adapt_openai_record(record, 0, "f", importers.Options.make(["DONE"]))
    assert [c["tool_name"] for c in custom.doc["tool_calls"]] == ["search"]
    assert custom.doc["answer"] == "answer 0" and custom.warnings == []
    none = importers.adapt_openai_record(_react(1), 0, "f", importers.Options.make([]))
    assert [c["tool_name"] for c in none.doc["tool_calls"]] == ["search", "Finish"]
    assert none.doc["answer"] == "Thought: I know the answer now"


@pytest.mark.parametrize(("arguments", "answer", "status"), [
    ({"answer": "42"}, "42", "SUCCESS"),
    ({"final_answer": "yes"}, "yes", "SUCCESS"),
    ({"reason": "cannot find the flight", "give_up": True}, "cannot find the flight", "FAILED"),
    ({"status": "give_up", "summary": "no data"}, "no data", "FAILED"),
    ({"a": 1, "b": 2}, '{"a": 1, "b": 2}', "SUCCESS"),
])
def test_terminal_arguments_give_answer_and_give_up(arguments, answer, status):
    adapted = importers.adapt_openai_record(_react(0, "finish", arguments), 0, "f")
    assert (adapted.doc["answer"], adapted.doc["status"]) == (answer, status)


def test_terminal_call_in_a_tau_bench_trajectory_is_the_answer():
    record = {"task_id": 1, "trial": 0, "reward": 1.0, "traj": _react(0, "final_answer")["messages"]}
    adapted = importers.adapt_tau_bench(record, "x")
    assert adapted.doc["answer"] == "answer 0" and len(adapted.doc["tool_calls"]) == 1


SREGYM = {
    "claude-code": "claudecode_run/74bfdd52-f1bd-477d-98c8-306bde810080.jsonl",
    "codex": "codex_run/rollout-2026-06-29T16-58-06-019f1451-1903-7092-b4ca-73a57d9bdd9d.jsonl",
    "copilot": "copilot_run_real/copilot-cli.jsonl",
    "gemini": "gemini_run/session-fdaf509c.jsonl",
    "opencode": "opencode_run/session-ses_0e8fabe63ffe91KaErs7Mh9g5O.json",
    "stratus": "stratus_run/0704_1458_service_port_conflict_hotel_reservation_stratus_agent_trajectory.jsonl",
}


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
@pytest.mark.parametrize("other", ["claude-code", "codex", "copilot", "gemini", "opencode", "stratus"])
def test_a_forced_whole_file_format_never_creates_an_empty_run(session, make, fmt, other):
    if fmt == other:
        return
    path = shared_data_dir() / "sregym" / SREGYM[other]
    summary = importers.import_files(session, SYSTEM, make.workspace().id, [path], fmt=fmt)
    assert (summary.runs, summary.failed) == (0, 1)
    assert summary.problems[0].startswith(f"{path.name}: record 0")
    assert count(session, Run) == 0


@pytest.mark.parametrize("fmt", ["native", "openai-messages", "tau-bench"])
def test_a_forced_record_format_refuses_each_record_with_its_index(session, make, fmt):
    path = shared_data_dir() / "sregym" / SREGYM["codex"]
    lines = sum(1 for line in path.read_text().splitlines() if line.strip())
    summary = importers.import_files(session, SYSTEM, make.workspace().id, [path], fmt=fmt)
    assert (summary.runs, summary.failed) == (0, lines)
    assert summary.problems[0].startswith(f"{path.name}: record 0")
    assert count(session, Run) == 0


def test_claude_code_stream_json_keeps_the_result_line(session, make, tmp_path):
    path = shared_data_dir() / "sregym" / "claudecode_run" / "claude-code.txt"
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    result = next(e for e in events if e["type"] == "result")
    uses = [b for e in events if e["type"] == "assistant" for b in e["message"]["content"]
            if b.get("type") == "tool_use"]
    errors = [b for e in events if e["type"] == "user" and isinstance(e["message"]["content"], list)
              for b in e["message"]["content"] if b.get("type") == "tool_result" and b.get("is_error")]
    assert importers.detect_format(path) == "claude-code"
    alone = tmp_path / path.name  # without its session log beside it
    alone.write_bytes(path.read_bytes())
    summary = importers.import_files(session, SYSTEM, make.workspace().id, [alone])
    assert (summary.created, summary.tool_calls, summary.failed_tool_calls) == (1, len(uses), len(errors))
    run = session.scalars(select(Run)).one()
    assert run.run_id == f"claude-code-{result['session_id']}-stream"
    assert run.answer == result["result"] and run.status == "SUCCESS"
    assert run.orchestration_trace["total_cost_usd"] == result["total_cost_usd"]


def test_a_claude_code_session_log_and_its_stdout_beside_it_are_one_run(session, make):
    """The data set's claude-code.txt is the stream-json stdout of the session logged in
    the .jsonl beside it (same session id): either file, or both, import as that one run:
    query and calls from the log, answer, status and cost from the stdout's result line."""
    folder = shared_data_dir() / "sregym" / "claudecode_run"
    stdout, log = folder / "claude-code.txt", next(folder.glob("*.jsonl"))
    result = next(e for e in map(json.loads, stdout.read_text().splitlines()) if e.get("type") == "result")
    prompt = next(e["message"]["content"] for e in map(json.loads, log.read_text().splitlines())
                  if e.get("type") == "user" and isinstance(e["message"]["content"], str))
    ws = make.workspace()
    first = importers.import_files(session, SYSTEM, ws.id, [log])
    second = importers.import_files(session, SYSTEM, ws.id, [stdout])
    assert (first.created, second.created, second.unchanged) == (1, 0, 1)
    run = session.scalars(select(Run)).one()
    assert run.run_id == f"claude-code-{result['session_id']}" and run.query == prompt
    assert run.answer == result["result"] and run.orchestration_trace["total_cost_usd"] == result["total_cost_usd"]


def test_a_record_with_nothing_is_reported_not_stored(session, make, tmp_path):
    path = tmp_path / "empty-runs.jsonl"
    path.write_text(json.dumps({"id": "e1", "messages": [{"role": "system", "content": "be nice"}]}) + "\n")
    summary = importers.import_files(session, SYSTEM, make.workspace().id, [path], fmt="openai-messages")
    assert summary.problems == ["empty-runs.jsonl: record 0 (e1): the record yields no query, no answer and "
                                "no tool call; not stored (is it of this format?)"]
    assert count(session, Run) == 0


def _lossy(tmp_path: Path) -> Path:
    """A conversion that wrote LangChain-style calls ({name, args}) where openai-messages
    wants {function: {name, arguments}}: every call is lost."""
    records = [{"id": f"lossy-{i}", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "let me look", "tool_calls": [{"id": "c", "name": "search", "args": {}}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "assistant", "content": "done"}]} for i in range(3)]
    path = tmp_path / "lossy.json"
    path.write_text(json.dumps(records))
    return path


def test_tool_like_records_without_a_call_exit_1_and_the_report_has_every_warning(runner, make, tmp_path):
    make.workspace("lossy")
    report = tmp_path / "report.jsonl"
    result = runner.invoke(args=["runs", "import", str(_lossy(tmp_path)), "--workspace", "lossy",
                                 "--report", str(report)])
    assert result.exit_code == 1
    assert "lossy.json: its records have tool-call fields but no tool call could be made" in result.output
    assert "warnings: 6 (no_function_name 3, unknown_result 3)" in result.output
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["no_function_name", "unknown_result"] * 3
    assert lines[0]["message"].startswith("lossy.json: record 0 (lossy-0): messages[1].tool_calls[0]")


def test_report_holds_more_than_the_twenty_warnings_shown(runner, make, tmp_path):
    messages = [{"role": "user", "content": "q"}] + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{bad"}}]}
        for i in range(25)] + [{"role": "tool", "tool_call_id": f"c{i}", "content": "ok"} for i in range(25)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps([{"id": "many", "messages": messages}]))
    make.workspace("many")
    report = tmp_path / "r.jsonl"
    result = runner.invoke(args=["runs", "import", str(path), "--workspace", "many", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "... and 5 more" in result.output and "warnings: 25 (bad_arguments 25)" in result.output
    assert len(report.read_text().splitlines()) == 25
