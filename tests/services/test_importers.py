"""Import of real agent-run files (SPEC 11): tau-bench counted against the raw file,
idempotent re-import, per-record errors, streaming, adapters."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import Message, Run, ToolCall
from reviewapp.services import importers

from ..shared_data import shared_data_dir, tau_bench_file

SYSTEM = Actor.system_actor()


def tau_counts() -> dict[str, int]:
    """The expected figures, computed from the raw file with plain ``json``."""
    records = json.loads(tau_bench_file().read_text())
    calls = failed = 0
    runs_with_failure = set()
    for index, record in enumerate(records):
        for message in record["traj"]:
            calls += len(message.get("tool_calls") or [])
            if message["role"] == "tool" and (message.get("content") or "").startswith("Error:"):
                failed += 1
                runs_with_failure.add(index)
    return {"runs": len(records), "tool_calls": calls, "failed": failed,
            "runs_with_failure": len(runs_with_failure),
            "passed": sum(1 for r in records if r["reward"] == 1)}


def count(session, model, *where) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where))


def test_tau_bench_import_matches_the_raw_file_and_reimport_is_unchanged(runner, session, make, login, client):
    expected = tau_counts()
    assert expected == {"runs": 200, "tool_calls": 1164, "failed": 73, "runs_with_failure": 36, "passed": 84}
    ws = make.workspace("tau")
    first = runner.invoke(args=["runs", "import", str(tau_bench_file()), "--workspace", "tau"])
    assert first.exit_code == 0, first.output
    assert "runs: 200 created, 0 updated, 0 unchanged, 0 failed; tool calls: 1164 (73 failed)" in first.output
    assert count(session, Run) == expected["runs"]
    assert count(session, ToolCall) == expected["tool_calls"]
    assert count(session, ToolCall, ToolCall.status == "failed") == expected["failed"]
    assert count(session, Run, Run.failed_tool_call_count > 0) == expected["runs_with_failure"]
    assert count(session, Run, Run.external_outcome == "pass") == expected["passed"]
    assert count(session, Run, Run.status == "SUCCESS") == expected["runs"]
    assert count(session, ToolCall, ToolCall.started_at.is_not(None)) == 0  # no clocks in the source
    rows = (count(session, Run), count(session, ToolCall), count(session, Message))

    again = runner.invoke(args=["runs", "import", str(tau_bench_file()), "--workspace", "tau", "--format", "tau-bench"])
    assert again.exit_code == 0, again.output
    assert "runs: 0 created, 0 updated, 200 unchanged, 0 failed; tool calls: 1164 (73 failed)" in again.output
    assert (count(session, Run), count(session, ToolCall), count(session, Message)) == rows

    reviewer = make.user(ws)
    page = login(reviewer).get("/")
    assert page.status_code == 200 and b"200 runs" in page.data and b"tau-gpt-4o-airline-t" in page.data


def test_tau_bench_run_keeps_query_answer_outcome_and_order():
    record = json.loads(tau_bench_file().read_text())[0]
    run_id, doc, warnings = importers.tau_bench_run(record, "gpt-4o-airline")
    assert run_id == "tau-gpt-4o-airline-t0-r0" and warnings == []
    first_user = next(m["content"] for m in record["traj"] if m["role"] == "user")
    last_text = next(m["content"] for m in reversed(record["traj"]) if m["role"] == "assistant" and m["content"])
    assert (doc["query"], doc["answer"], doc["status"], doc["kind"]) == (first_user, last_text, "SUCCESS", "chat")
    assert doc["external_outcome"] == ("pass" if record["reward"] == 1 else "fail")
    made = [(tc["function"]["name"], json.loads(tc["function"]["arguments"]))
            for m in record["traj"] for tc in m.get("tool_calls") or []]
    writes = [a for a in record["info"]["task"]["actions"]
              if not a["name"].startswith(("get_", "search_", "list_", "find_"))
              and a["name"] not in ("calculate", "think", "transfer_to_human_agents")]
    missed = [{"name": a["name"], "kwargs": a["kwargs"]} for a in writes if (a["name"], a["kwargs"]) not in made]
    assert doc["external_outcome_detail"] == {"source": "tau-bench", "reward": record["reward"],
                                              "task_id": 0, "trial": 0, "missed_actions": missed}
    source_calls = [tc for m in record["traj"] for tc in m.get("tool_calls") or []]
    assert [c["tool_name"] for c in doc["tool_calls"]] == [tc["function"]["name"] for tc in source_calls]
    assert all(c["id"].startswith("tau-gpt-4o-airline-t0-r0/call_") for c in doc["tool_calls"])
    assert len({c["id"] for c in doc["tool_calls"]}) == len(source_calls)
    assert all("started_at" not in c for c in doc["tool_calls"])


def test_openai_messages_pairs_results_by_id_and_warns_on_bad_arguments():
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "geo", "arguments": "{\"city\": \"Oslo\"}"}},
            {"id": "b", "type": "function", "function": {"name": "wx", "arguments": "{not json"}},
            {"id": "c", "type": "function", "function": {"name": "slow", "arguments": ""}}]},
        {"role": "tool", "tool_call_id": "b", "content": "rain"},
        {"role": "tool", "tool_call_id": "a", "content": "59.9,10.7"},
        {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
        {"role": "assistant", "content": "Rain in Oslo."},
    ]
    doc, warnings = importers.openai_messages_run(messages, "r")
    calls = {c["id"]: c for c in doc["tool_calls"]}
    assert calls["r/a"] == {"id": "r/a", "tool_name": "geo", "status": "completed",
                            "arguments": {"city": "Oslo"}, "output": "59.9,10.7"}
    assert calls["r/b"]["arguments"] == "{not json" and calls["r/b"]["output"] == "rain"
    assert calls["r/c"]["status"] == "started" and "output" not in calls["r/c"]
    assert (doc["query"], doc["answer"]) == ("weather?", "Rain in Oslo.")
    assert doc["messages"][2]["metadata"] == {"tool_call_ids": ["r/a", "r/b", "r/c"]}
    assert len(warnings) == 3
    assert any("not valid JSON" in w for w in warnings) and any("zzz" in w for w in warnings)
    assert any("r/c has no result" in w for w in warnings)


def test_repeated_source_ids_in_one_run_get_distinct_deterministic_ids():
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{}"}}]}
    messages = [call, {"role": "tool", "tool_call_id": "x", "content": "1"},
                call, {"role": "tool", "tool_call_id": "x", "content": "Error: no"}]
    doc, _ = importers.openai_messages_run(messages, "r", error_prefix="Error:")
    assert [(c["id"], c["status"]) for c in doc["tool_calls"]] == [("r/x", "completed"), ("r/x#2", "failed")]
    assert doc["tool_calls"][1]["error"] == "Error: no"
    assert importers.openai_messages_run(messages, "r", error_prefix="Error:")[0] == doc


def test_bad_records_are_reported_with_index_and_the_rest_imported(session, make, tmp_path):
    ws = make.workspace()
    good = {"run_id": "ok-1", "query": "q", "status": "SUCCESS"}
    lines = [json.dumps(good), "{not json", json.dumps({"query": "no id"}),
             json.dumps({"run_id": "bad-kind", "kind": "batch"}), "", json.dumps({**good, "run_id": "ok-2"})]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    seen: list[str] = []
    summary = importers.import_files(session, SYSTEM, ws.id, [path], fmt="native", problem=seen.append)
    assert (summary.created, summary.failed) == (2, 3)
    assert summary.problems == seen
    assert seen[0].startswith("runs.jsonl: record 1: not JSON")
    assert seen[1] == "runs.jsonl: record 2: run_id is required in import files"
    assert seen[2].startswith("runs.jsonl: record 3 (bad-kind): kind: must be one of")
    assert sorted(session.scalars(select(Run.run_id))) == ["ok-1", "ok-2"]


def test_malformed_json_array_keeps_the_records_before_the_error(session, make, tmp_path):
    ws = make.workspace()
    path = tmp_path / "runs.json"
    path.write_text('[{"run_id": "a", "query": "q"}, {"run_id": "b", "query": "q"}, {"run_id": ')
    summary = importers.import_files(session, SYSTEM, ws.id, [path])
    assert (summary.created, summary.failed) == (2, 1)
    assert "malformed JSON after record 1" in summary.problems[0]


def test_json_array_is_streamed_with_bounded_memory(tmp_path):
    """A 12 MB array is read one record at a time: peak memory stays far below its size."""
    path = tmp_path / "big.json"
    record = {"run_id": "r", "query": "x" * 2000, "messages": [{"role": "user", "content": "y" * 2000}]}
    with path.open("w") as handle:
        handle.write("[")
        for i in range(3000):
            handle.write(("," if i else "") + json.dumps({**record, "run_id": f"r{i}"}))
        handle.write("]")
    size = path.stat().st_size
    assert size > 12_000_000
    tracemalloc.start()
    seen = sum(1 for parsed in importers.read_records(path, "native") if parsed.doc)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen == 3000
    assert peak < size / 10, (peak, size)


@pytest.mark.parametrize(("content", "suffix", "expected"), [
    ('[{"task_id": 1, "trial": 0, "reward": 1.0, "traj": []}]', ".json", "tau-bench"),
    ('[[{"role": "user", "content": "hi"}]]', ".json", "openai-messages"),
    ('{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}\n', ".jsonl", "openai-messages"),
    ('{\n  "run_id": "r1",\n  "query": "q"\n}\n', ".json", "native"),
    ('{"run_id": "r1", "query": "q"}\n{"run_id": "r2"}\n', ".jsonl", "native"),
])
def test_format_detection(tmp_path, content, suffix, expected):
    path = tmp_path / f"f{suffix}"
    path.write_text(content)
    assert importers.detect_format(path) == expected


def test_unknown_format_is_refused(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('[{"hello": 1}]')
    with pytest.raises(importers.RecordError):
        importers.detect_format(path)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_claude_code_session_imports_as_one_aiops_run(session, make):
    ws = make.workspace()
    path = next((shared_data_dir() / "sregym" / "claudecode_run").glob("*.jsonl"))
    blocks = [b for e in _jsonl(path) if e.get("type") in ("user", "assistant")
              and isinstance(e["message"].get("content"), list) for b in e["message"]["content"]]
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    errors = [b for b in blocks if b.get("type") == "tool_result" and b.get("is_error") is True]
    summary = importers.import_files(session, SYSTEM, ws.id, [path])
    assert (summary.created, summary.tool_calls, summary.failed_tool_calls) == (1, len(uses), len(errors))
    assert (len(uses), len(errors)) == (16, 1)
    run = session.scalars(select(Run)).one()
    assert (run.kind, run.status, run.run_id) == ("aiops", "SUCCESS", "claude-code-74bfdd52-f1bd-477d-98c8-306bde810080")
    assert run.report is not None and run.report.content == run.answer
    timed = list(session.scalars(select(ToolCall).where(ToolCall.duration_ms.is_not(None))))
    assert len(timed) == len(uses) and all(t.duration_ms >= 0 for t in timed)
    assert importers.import_files(session, SYSTEM, ws.id, [path]).unchanged == 1


def test_codex_rollout_imports_as_one_aiops_run(session, make):
    ws = make.workspace()
    path = next((shared_data_dir() / "sregym" / "codex_run").glob("rollout-*.jsonl"))
    payloads = [e["payload"] for e in _jsonl(path) if e.get("type") == "response_item"]
    calls = [p for p in payloads if p.get("type") == "function_call"]
    outputs = [p for p in payloads if p.get("type") == "function_call_output"]
    nonzero = [p for p in outputs if "Process exited with code " in p["output"]
               and "Process exited with code 0" not in p["output"]]
    summary = importers.import_files(session, SYSTEM, ws.id, [path], fmt="codex")
    assert (summary.created, summary.tool_calls, summary.failed_tool_calls) == (1, len(calls), len(nonzero))
    assert (len(calls), len(nonzero)) == (33, 3)
    run = session.scalars(select(Run)).one()
    assert run.answer.startswith("Fixed.") and run.query.startswith("You are an SRE agent")


SUPPORTED = ("native, openai-messages, tau-bench, claude-code, codex, copilot, gemini, opencode, stratus, "
             "sregym-result")


def _unknown_file(tmp_path: Path) -> Path:
    """A session whose ``messages`` are ``{author, blocks}`` objects: a ``messages`` list,
    but no format of ours."""
    path = tmp_path / "session-unknown.json"
    path.write_text(json.dumps({"id": "s1", "messages": [{"author": "me", "blocks": []}]}))
    return path


def test_unsupported_file_is_refused_naming_it_and_the_formats(session, make, tmp_path):
    """A file with a ``messages`` list that is no format of ours is refused before
    anything is written, also when it comes after a good file."""
    ws = make.workspace()
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"run_id": "r1", "query": "q"}]))
    with pytest.raises(importers.RecordError) as err:
        importers.import_files(session, SYSTEM, ws.id, [good, _unknown_file(tmp_path)])
    assert str(err.value) == (
        f"session-unknown.json: unsupported format; supported: {SUPPORTED} (pass --format to force one)")
    assert count(session, Run) == 0


def test_forcing_openai_messages_on_a_list_without_roles_is_a_record_error(session, make, tmp_path):
    ws = make.workspace()
    path = tmp_path / "parts.json"
    path.write_text(json.dumps({"id": "x1", "messages": [{"info": {}, "parts": []}]}))
    summary = importers.import_files(session, SYSTEM, ws.id, [path], fmt="openai-messages")
    assert (summary.created, summary.failed) == (0, 1)
    assert summary.problems == ["parts.json: record 0: no message has a role; not a chat-completions message list"]
    assert count(session, Run) == 0


def test_cli_import_of_an_unsupported_file_exits_1_with_one_line(runner, make, session, tmp_path):
    ws = make.workspace()
    result = runner.invoke(args=["runs", "import", str(_unknown_file(tmp_path)), "--workspace", ws.slug])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: session-unknown.json: unsupported format; supported: {SUPPORTED} (pass --format to force one)"]
    assert count(session, Run) == 0


@pytest.mark.parametrize(("content", "message"), [
    ("", "empty.json: the file is empty"),
    ("  \n", "empty.json: the file is empty"),
    ('[{"run_id": "r1", "query": ', "empty.json: not valid JSON"),
    ('{"run_id": "r1", "query"', "empty.json: not valid JSON"),
])
def test_empty_or_truncated_files_are_named_as_such(session, make, tmp_path, content, message):
    path = tmp_path / "empty.json"
    path.write_text(content)
    with pytest.raises(importers.RecordError) as err:
        importers.import_files(session, SYSTEM, make.workspace().id, [path])
    assert str(err.value).startswith(message)
    assert count(session, Run) == 0


def test_a_folder_is_refused_with_a_hint(session, make, tmp_path):
    with pytest.raises(importers.RecordError) as err:
        importers.import_files(session, SYSTEM, make.workspace().id, [tmp_path])
    assert "is a folder" in str(err.value)


@pytest.mark.parametrize("content", ["[]", " [ \n ] \n"])
def test_cli_import_of_an_empty_array_says_the_file_has_no_records(runner, make, session, tmp_path, content):
    """A file holding ``[]`` was refused as "unsupported format"; it is a JSON array with
    no record, and the message says so."""
    ws = make.workspace()
    path = tmp_path / "none.json"
    path.write_text(content)
    result = runner.invoke(args=["runs", "import", str(path), "--workspace", ws.slug])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["Error: none.json: the file has no records (an empty JSON array)"]
    assert count(session, Run) == 0


def test_each_format_is_read_by_its_own_adapter_and_can_be_detected():
    """Issue 12: every format of domain/import_formats.py has exactly one reader (a new
    record-per-run format is no longer read as openai-messages) and a detector."""
    from reviewapp.domain.import_formats import IMPORT_FORMATS
    from reviewapp.services.importers import reading

    assert set(reading.RECORD_ADAPTERS) == {"native", "openai-messages", "tau-bench"}
    assert set(reading.WHOLE_FILE_ADAPTERS) == {
        "claude-code", "codex", "copilot", "gemini", "opencode", "stratus"}
    assert reading.RESULT_FORMAT == "sregym-result"
    assert sorted([*reading.RECORD_ADAPTERS, *reading.WHOLE_FILE_ADAPTERS, reading.RESULT_FORMAT]) \
        == sorted(IMPORT_FORMATS.codes())
    assert {fmt for fmt, _ in reading._RECORD_SHAPES} == set(IMPORT_FORMATS.codes())


@pytest.mark.parametrize("fmt", ["jsonl", "openai", "", "AUTO"])
def test_reading_with_an_unlisted_format_is_refused_not_read_as_another(tmp_path, fmt):
    path = tmp_path / "f.jsonl"
    path.write_text('{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}\n')
    with pytest.raises(importers.RecordError, match=f"unknown format '{fmt}'"):
        list(importers.read_records(path, fmt))
    with pytest.raises(importers.RecordError, match=f"unknown format '{fmt}'"):
        importers.check_files([path], fmt)


def test_a_forced_record_format_reads_each_record_through_its_own_adapter(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"id": "c1", "messages": [{"role": "user", "content": "hi"},'
                    ' {"role": "assistant", "content": "hello"}]}\n')
    (openai,) = importers.read_records(path, "openai-messages")
    assert (openai.error, openai.doc["query"], openai.doc["answer"]) == (None, "hi", "hello")
    (tau,) = importers.read_records(path, "tau-bench")  # no traj: not a tau-bench record
    assert tau.doc is None and tau.error
