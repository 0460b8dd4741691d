"""A τ-bench airline record turned into a run document (until the importer of issue 3
lands): OpenAI-style messages, tool calls from ``tool_calls`` + tool messages (an error is
a tool message starting with "Error:"), no times, reward as the external outcome.

τ-bench reuses call ids inside one run (record 0 has two ``call_oIHaz…``), so a tool
message is paired with the oldest open call of its id, and a repeated id gets a ``#n``
suffix to stay unique."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path("/work/shared/data/tau-bench/gpt-4o-airline.json")


def load_record(index: int = 0) -> dict[str, Any]:
    return json.loads(DATA.read_text())[index]


def run_document(record: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    open_calls: dict[str, list[dict[str, Any]]] = {}
    seen: dict[str, int] = {}
    for position, message in enumerate(record["traj"]):
        role = message["role"]
        meta: dict[str, Any] = {}
        if role == "tool":
            pending = open_calls.get(message.get("tool_call_id"), [])
            if pending:
                call = pending.pop(0)
                output = message.get("content") or ""
                failed = output.startswith("Error:")
                call.update(status="failed" if failed else "completed",
                            output=None if failed else output, error=output if failed else None)
        for raw in message.get("tool_calls") or []:
            seen[raw["id"]] = seen.get(raw["id"], 0) + 1
            call_id = raw["id"] if seen[raw["id"]] == 1 else f"{raw['id']}#{seen[raw['id']]}"
            call = {"id": call_id, "tool_name": raw["function"]["name"], "status": "started",
                    "arguments": json.loads(raw["function"]["arguments"] or "{}")}
            calls.append(call)
            open_calls.setdefault(raw["id"], []).append(call)
            meta.setdefault("tool_call_ids", []).append(call_id)
        messages.append({"id": f"m{position}", "role": role, "content": message.get("content"),
                         "metadata": meta})
    answer = next((m["content"] for m in reversed(messages)
                   if m["role"] == "assistant" and m["content"]), None)
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    return {
        "session_id": f"tau-airline-task-{record['task_id']}",
        "kind": "chat", "query": first_user, "answer": answer, "status": "SUCCESS",
        "external_outcome": "pass" if record["reward"] == 1 else "fail",
        "messages": messages, "tool_calls": calls,
    }
