"""Issue 14: a generic openai-messages log keeps every failure whatever its convention
(explicit ``error: true``, JSON results with an ``error`` field): files built from the
tau-bench log, expected counts computed from the raw file with plain json."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import ToolCall
from reviewapp.services import importers

from ..shared_data import tau_bench_file

SYSTEM = Actor.system_actor()


def _converted(convention: str) -> tuple[list[dict], int, int]:
    """tau-bench trajectories as openai-messages records, their ``Error:`` results
    rewritten to ``convention``; with the number of calls and failures."""
    records, calls, failed = [], 0, 0
    for record in json.loads(tau_bench_file().read_text()):
        messages = []
        for message in record["traj"]:
            message = dict(message)
            calls += len(message.get("tool_calls") or [])
            content = message.get("content") or ""
            if message["role"] == "tool" and content.startswith("Error:"):
                failed += 1
                text = content.removeprefix("Error:").strip()
                if convention == "flag":
                    message.update(content=text, error=True)
                else:
                    message["content"] = json.dumps({"error": text, "data": None})
            messages.append(message)
        records.append({"id": f"{convention}-{record['task_id']}-{record['trial']}", "messages": messages})
    return records, calls, failed


def _import(session, make, tmp_path, convention):
    records, calls, failed = _converted(convention)
    path = tmp_path / f"{convention}.json"
    path.write_text(json.dumps(records))
    ws = make.workspace(convention.replace("_", "-"))
    summary = importers.import_files(session, SYSTEM, ws.id, [path], fmt="openai-messages")
    return summary, calls, failed, len(records)


def test_openai_messages_with_error_true_keeps_every_failure(session, make, tmp_path):
    summary, calls, failed, runs = _import(session, make, tmp_path, "flag")
    assert (calls, failed) == (1164, 73)
    assert (summary.created, summary.failed, summary.tool_calls, summary.failed_tool_calls) == (runs, 0, calls, failed)
    assert summary.failures_by_rule == {"flag": failed}
    stored = session.scalar(select(func.count()).select_from(ToolCall).where(ToolCall.status == "failed"))
    assert stored == failed


def test_openai_messages_with_json_error_results_keeps_every_failure(session, make, tmp_path):
    summary, calls, failed, runs = _import(session, make, tmp_path, "json_error")
    assert (summary.created, summary.tool_calls, summary.failed_tool_calls) == (runs, calls, failed)
    assert summary.failures_by_rule == {"json_error": failed}


def test_cli_summary_counts_failures_by_rule(runner, make):
    make.workspace("tau")
    result = runner.invoke(args=["runs", "import", str(tau_bench_file()), "--workspace", "tau"])
    assert result.exit_code == 0, result.output
    assert "(73 failed); failures by rule: error_prefix 73; warnings: 0" in result.output


def test_each_format_uses_the_rules():
    traceback = 'Traceback (most recent call last):\n  File "a.py"\nKeyError: 1'
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in "abcde"]},
        {"role": "tool", "tool_call_id": "a", "content": traceback},
        {"role": "tool", "tool_call_id": "b", "content": json.dumps({"content": [], "isError": True})},
        {"role": "tool", "tool_call_id": "c", "content": "Exit code: 1\nOutput:\n"},
        {"role": "tool", "tool_call_id": "d", "content": "ok", "status": "error"},
        {"role": "tool", "tool_call_id": "e", "content": "fine"},
    ]
    doc, _ = importers.openai_messages_run(messages, "r")
    assert [c["status"] for c in doc["tool_calls"]] == ["failed"] * 4 + ["completed"]
    assert doc["tool_calls"][0]["error"] == traceback and doc["tool_calls"][4]["output"] == "fine"


def test_opencode_reads_the_exit_code_its_bash_tool_keeps_beside_the_output():
    """OpenCode keeps a bash call's exit code in ``state.metadata.exit``; a completed call
    with a non-zero one failed (rule exit_code), 0 or none did not."""
    def part(call_id: str, exit_code) -> dict:
        return {"type": "tool", "tool": "bash", "callID": call_id,
                "state": {"status": "completed", "input": {"command": "false"}, "output": "",
                          "metadata": {"exit": exit_code}, "time": {"start": 1, "end": 2}}}
    export = {"info": {"id": "ses_x", "time": {"created": 1}}, "messages": [
        {"info": {"id": "m1", "role": "user"}, "parts": [{"type": "text", "text": "fix it"}]},
        {"info": {"id": "m2", "role": "assistant"},
         "parts": [part("a", 1), part("b", 0), part("c", None), {"type": "text", "text": "done"}]}]}
    adapted = importers.adapt_opencode([export], "x")
    assert [c["status"] for c in adapted.doc["tool_calls"]] == ["failed", "completed", "completed"]
    assert adapted.failures == {"exit_code": 1}
