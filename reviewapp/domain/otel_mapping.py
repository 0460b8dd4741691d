"""From OpenTelemetry spans to a run (SPEC 9, 4): the pure mapping, stdlib only.

A *span* here is the plain dict ``services/otel_decode.py`` decodes from OTLP (protobuf or JSON)::

    {"trace_id": "<32 hex>", "span_id": "<16 hex>", "parent_span_id": "<16 hex>" | None,
     "name": str, "start_ns": int, "end_ns": int (0 = not ended),
     "status": "UNSET" | "OK" | "ERROR", "status_message": str,
     "attributes": {key: value}, "events": [{"name", "time_ns", "attributes"}],
     "resource": {key: value}}

Attribute values are plain JSON values (arrays as lists, key-value lists as dicts).
One trace is one run (``run_id`` = the trace id in hex). The rules, one row each (the README
publishes them as a table; ``tests/unit/test_otel_mapping.py`` has a test per row):

* **tool call**: a span with ``gen_ai.operation.name = execute_tool``,
  ``openinference.span.kind = TOOL``, or a ``gen_ai.tool.*`` call attribute (name, call id,
  arguments, result, type); **retrieval** spans (``gen_ai.operation.name = retrieval``,
  kind ``RETRIEVER`` / ``RERANKER``) are tool calls too, with evidence (``retrieval``).
* other spans are **diagnostic steps** (the root span is the run itself, not a step).
* run fields come from all non-tool spans of the trace (``run_document``); tool calls from
  each tool span on its own (``tool_events``), through the lifecycle rules of SPEC 4.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from typing import Any

from .times import MAX_YEAR, MIN_YEAR
from .tool_failure import mcp_error_text

SOURCE = "otlp"
HEX32 = re.compile(r"[0-9a-f]{32}")
HEX16 = re.compile(r"[0-9a-f]{16}")
CALL_ID_MAX = 160
STEP_NAME_MAX = 300
SUMMARY_MAX = 500
EXCERPT_MAX = 1000
RETRIEVAL_KINDS = frozenset({"RETRIEVER", "RERANKER"})
# gen_ai.operation.name of a model call (an LLM span, like OpenInference kind LLM).
LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
# gen_ai.tool.* attributes that make a span a tool call (gen_ai.tool.definitions, on
# inference spans, lists the tools a model may call: not a call).
TOOL_CALL_ATTRIBUTES = ("gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments",
                        "gen_ai.tool.call.result", "gen_ai.tool.type")
CITATIONS_ATTRIBUTE = "reviewapp.citations"
# The session of a run, in order of preference: the run's address, stored as sent.
SESSION_ATTRIBUTES = ("gen_ai.conversation.id", "session.id")
MATCH_LEVEL_ATTRIBUTE = "reviewapp.retrieval.match_level"
KIND_ATTRIBUTE = "reviewapp.run.kind"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_PREFIXES = ("annotations.", "evaluations.")


# ----------------------------------------------------------------------------- spans

def span_problem(span: Mapping[str, Any]) -> str | None:
    """Why ``span`` cannot be used (a message naming the field), or ``None``: ids must be
    lower-case hex of 16 / 8 bytes and not all zero, the start must lie in the years
    2000-2100 and the end (when ended) not before the start."""
    if not HEX32.fullmatch(span.get("trace_id") or "") or set(span["trace_id"]) == {"0"}:
        return "traceId: must be 16 bytes, not all zero"
    if not HEX16.fullmatch(span.get("span_id") or "") or set(span["span_id"]) == {"0"}:
        return "spanId: must be 8 bytes, not all zero"
    start, end = span.get("start_ns") or 0, span.get("end_ns") or 0
    if not _in_range(start):
        return f"startTimeUnixNano: {start} is outside the years {MIN_YEAR}-{MAX_YEAR}"
    if end and not _in_range(end):
        return f"endTimeUnixNano: {end} is outside the years {MIN_YEAR}-{MAX_YEAR}"
    if end and end < start:
        return "endTimeUnixNano: before startTimeUnixNano"
    return None


def _in_range(ns: int) -> bool:
    return _ns(MIN_YEAR) <= ns < _ns(MAX_YEAR + 1)


def _ns(year: int) -> int:
    return int(datetime(year, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000_000


def iso(ns: int | None) -> str | None:
    """Epoch nanoseconds as an ISO 8601 UTC text with microseconds; ``None`` for 0 / None."""
    if not ns:
        return None
    seconds, rest = divmod(int(ns), 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest // 1000)
    return moment.isoformat()


def _attrs(span: Mapping[str, Any]) -> Mapping[str, Any]:
    return span.get("attributes") or {}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json_or_text(value: Any) -> Any:
    """A JSON text (object / array) as its value; other values as they are."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _first(attrs: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value not in (None, ""):
            return value
    return None


def _oi_kind(span: Mapping[str, Any]) -> str:
    """The OpenInference span kind (``openinference.span.kind``) in upper case, or ``""``."""
    return str(_attrs(span).get("openinference.span.kind") or "").upper()


def _operation(span: Mapping[str, Any]) -> Any:
    """The GenAI operation (``gen_ai.operation.name``), or ``None``."""
    return _attrs(span).get("gen_ai.operation.name")


def is_retrieval(span: Mapping[str, Any]) -> bool:
    """A retrieval span: ``gen_ai.operation.name = retrieval`` or OpenInference kind
    ``RETRIEVER`` / ``RERANKER``."""
    return _operation(span) == "retrieval" or _oi_kind(span) in RETRIEVAL_KINDS


def is_tool(span: Mapping[str, Any]) -> bool:
    """A span that becomes a tool call (module docstring), retrieval spans included."""
    if _operation(span) == "execute_tool" or _oi_kind(span) == "TOOL":
        return True
    attrs = _attrs(span)
    return is_retrieval(span) or any(key in attrs for key in TOOL_CALL_ATTRIBUTES)


def is_root(span: Mapping[str, Any]) -> bool:
    return not span.get("parent_span_id")


# ----------------------------------------------------------------------------- tool calls

def tool_name(span: Mapping[str, Any]) -> str:
    """``gen_ai.tool.name`` / ``tool.name``, else the span name without ``execute_tool ``."""
    name = _first(_attrs(span), "gen_ai.tool.name", "tool.name")
    if name is None:
        name = span.get("name") or "tool"
        if name.startswith("execute_tool "):
            name = name[len("execute_tool "):]
    return (str(name).strip() or "tool")[:200]


def call_id(span: Mapping[str, Any], run_id: str) -> str:
    """The stored call id: ``<run_id>/<gen_ai.tool.call.id | tool.id | tool_call.id | span
    id>`` (call ids are unique per workspace; agents reuse theirs across runs, as the
    importers found)."""
    own = _first(_attrs(span), "gen_ai.tool.call.id", "tool.id", "tool_call.id")
    own = str(own) if own is not None else span["span_id"]
    return f"{run_id}/{own}"[:CALL_ID_MAX]


def _exception(span: Mapping[str, Any]) -> str | None:
    for event in span.get("events") or ():
        if event.get("name") == "exception":
            attrs = event.get("attributes") or {}
            kind, message = attrs.get("exception.type"), attrs.get("exception.message")
            text = ": ".join(str(part) for part in (kind, message) if part not in (None, ""))
            return text or "exception"
    return None


def tool_error(span: Mapping[str, Any]) -> str | None:
    """Why a tool span failed, or ``None`` when it did not. Failed when the status is
    ERROR, ``error.type`` is set, an ``exception`` event is present (its type and message
    are the error) or the result is an MCP result with ``isError: true``."""
    attrs = _attrs(span)
    exception = _exception(span)
    if exception is not None:
        return exception
    error_type = attrs.get("error.type")
    message = span.get("status_message") or ""
    if span.get("status") == "ERROR" or error_type not in (None, ""):
        text = ": ".join(str(p) for p in (error_type, message) if p not in (None, ""))
        return text or "status ERROR"
    return mcp_error_text(tool_result(span))


def tool_arguments(span: Mapping[str, Any]) -> Any:
    """``gen_ai.tool.call.arguments`` / ``input.value`` / ``tool.parameters`` (JSON texts
    read as JSON)."""
    return _json_or_text(_first(_attrs(span), "gen_ai.tool.call.arguments", "input.value",
                                "tool.parameters"))


def tool_result(span: Mapping[str, Any]) -> Any:
    """``gen_ai.tool.call.result`` / ``output.value`` (JSON texts read as JSON)."""
    return _json_or_text(_first(_attrs(span), "gen_ai.tool.call.result", "output.value"))


def documents(span: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The retrieved documents ``[{id, content, score}]`` of a retrieval span: from
    ``gen_ai.retrieval.documents`` (a list or its JSON text), else the OpenInference
    ``retrieval.documents.N.document.{id, content, score}`` (reranker:
    ``reranker.output_documents.N...``)."""
    attrs = _attrs(span)
    listed = _json_or_text(attrs.get("gen_ai.retrieval.documents"))
    if isinstance(listed, list):
        return [{"id": d.get("id"), "content": d.get("content"), "score": d.get("score")}
                for d in listed if isinstance(d, Mapping)]
    for prefix in ("retrieval.documents.", "reranker.output_documents."):
        found: dict[int, dict[str, Any]] = {}
        for key, value in attrs.items():
            if not key.startswith(prefix):
                continue
            index, _, field = key[len(prefix):].partition(".document.")
            if index.isdigit() and field in ("id", "content", "score"):
                found.setdefault(int(index), {"id": None, "content": None, "score": None})[field] = value
        if found:
            return [found[i] for i in sorted(found)]
    return []


def evidence(docs: Sequence[Mapping[str, Any]], match_level: Any = None) -> dict[str, Any]:
    """The retrieval facts (``tool_event`` ``retrieval``: {match_level, hit_count,
    evidence_refs}) of retrieved documents ``[{id, content}]``, for OTLP spans and the
    LangChain handler alike. The rule: ``hit_count`` = the number of documents; each
    document is an evidence ref (``ref`` = its id, else the first 200 characters of its
    content; ``excerpt`` = its content, cut to 1,000 characters); ``match_level`` =
    ``match_level`` when it is ``L0`` (exact) or ``L1`` (semantic), else ``L1`` when there
    is a hit (a retriever's documents are semantic matches) and none without."""
    refs = []
    for doc in docs:
        content = _text(doc.get("content"))
        ref = _text(doc.get("id")) or (content or "")[:200]
        if ref:
            refs.append({"ref": ref[:2000],
                         "excerpt": content[:EXCERPT_MAX] if content else None})
    if match_level not in ("L0", "L1"):
        match_level = "L1" if docs else None
    return {"match_level": match_level, "hit_count": len(docs), "evidence_refs": refs}


def retrieval(span: Mapping[str, Any]) -> dict[str, Any]:
    """Retrieval facts of a retrieval span: ``evidence`` of its ``documents``, with the
    match level the span sets in ``reviewapp.retrieval.match_level``."""
    return evidence(documents(span), _attrs(span).get(MATCH_LEVEL_ATTRIBUTE))


def tool_events(span: Mapping[str, Any], run_id: str,
                step_ids: AbstractSet[str] = frozenset()) -> list[dict[str, Any]]:
    """The lifecycle events (``schemas/tool_event.schema.json``) of one tool span: a
    ``started`` at the span's start, and when the span has ended a ``completed`` or
    ``failed`` (``tool_error``) at its end, carrying the result and, for a retrieval span,
    its ``retrieval`` facts. ``step_id`` is the parent span when it is in ``step_ids``."""
    call = call_id(span, run_id)
    started = {"id": call, "run_id": run_id, "event": "started", "tool_name": tool_name(span),
               "arguments": tool_arguments(span), "timestamp": iso(span["start_ns"])}
    parent = span.get("parent_span_id")
    if parent and parent in step_ids:
        started["step_id"] = parent
    events = [started]
    if span.get("end_ns"):
        error = tool_error(span)
        end: dict[str, Any] = {"id": call, "run_id": run_id, "tool_name": started["tool_name"],
                               "event": "failed" if error is not None else "completed",
                               "output": tool_result(span), "timestamp": iso(span["end_ns"])}
        if error is not None:
            end["error"] = error
        if is_retrieval(span):
            end["retrieval"] = retrieval(span)
        events.append(end)
    return events


# ----------------------------------------------------------------------------- messages

def _parts_text(message: Mapping[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [str(p.get("content")) for p in parts
                 if isinstance(p, Mapping) and p.get("type") == "text" and p.get("content")]
        return "\n".join(texts)
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _genai_messages(value: Any) -> list[tuple[str, str]]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` as (role, text of the text
    parts); a JSON text is read first."""
    value = _json_or_text(value)
    if not isinstance(value, list):
        return []
    return [(str(m.get("role") or "assistant"), _parts_text(m)) for m in value
            if isinstance(m, Mapping)]


def _flat_messages(attrs: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
    """OpenInference ``llm.input_messages.N.message.{role, content}`` (or the
    ``message.contents.M.message_content.text`` parts); also the deprecated
    ``gen_ai.prompt.N.{role, content}`` when ``prefix`` is that."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix):].partition(".")
        if not index.isdigit():
            continue
        entry = found.setdefault(int(index), {"role": None, "content": None, "parts": {}})
        rest = rest.removeprefix("message.")
        if rest == "role":
            entry["role"] = value
        elif rest == "content":
            entry["content"] = value
        elif rest.startswith("contents.") and rest.endswith("message_content.text"):
            part = rest.split(".")[1]
            if part.isdigit():
                entry["parts"][int(part)] = value
    out = []
    for i in sorted(found):
        entry = found[i]
        text = entry["content"] if isinstance(entry["content"], str) else "\n".join(
            str(entry["parts"][j]) for j in sorted(entry["parts"]))
        out.append((str(entry["role"] or "assistant"), text or ""))
    return out


def _last(messages: Sequence[tuple[str, str]], roles: tuple[str, ...]) -> str | None:
    for role, text in reversed(messages):
        if role in roles and text:
            return text
    return None


def _value_text(value: Any, keys: tuple[str, ...]) -> str | None:
    """``input.value`` / ``output.value``: a text, or from a JSON object the first of
    ``keys`` that holds a text."""
    parsed = _json_or_text(value)
    if isinstance(parsed, Mapping):
        for key in keys:
            if isinstance(parsed.get(key), str) and parsed[key]:
                return parsed[key]
        return _text(parsed)
    return _text(parsed) or None


def _query_answer_of(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(query, answer) from one root / agent span, by the first source that has either:
    GenAI messages, then OpenInference ``input.value`` / ``output.value``."""
    attrs = _attrs(span)
    inputs = _genai_messages(attrs.get("gen_ai.input.messages"))
    outputs = _genai_messages(attrs.get("gen_ai.output.messages"))
    query, answer = _last(inputs, ("user",)), _last(outputs, ("assistant",))
    if query or answer:
        return query, answer
    query = _value_text(attrs.get("input.value"), ("input", "query", "question"))
    answer = _value_text(attrs.get("output.value"), ("output", "answer", "content"))
    return query, answer


def _is_llm(span: Mapping[str, Any]) -> bool:
    return _oi_kind(span) == "LLM" or _operation(span) in LLM_OPERATIONS


def _llm_io(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(last user input, last assistant output) of an LLM span: OpenInference
    ``llm.input_messages`` / ``llm.output_messages``, else GenAI messages."""
    attrs = _attrs(span)
    inputs = _flat_messages(attrs, "llm.input_messages.") or _genai_messages(
        attrs.get("gen_ai.input.messages"))
    outputs = _flat_messages(attrs, "llm.output_messages.") or _genai_messages(
        attrs.get("gen_ai.output.messages"))
    return _last(inputs, ("user",)), _last(outputs, ("assistant",))


def _deprecated_io(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    attrs = _attrs(span)
    prompt, completion = attrs.get("gen_ai.prompt"), attrs.get("gen_ai.completion")
    query = _last(_flat_messages(attrs, "gen_ai.prompt."), ("user",)) or (
        _text(prompt) if prompt not in (None, "") else None)
    answer = _last(_flat_messages(attrs, "gen_ai.completion."), ("assistant",)) or (
        _text(completion) if completion not in (None, "") else None)
    return query, answer


# ----------------------------------------------------------------------------- the run

def _by_start(spans: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(spans, key=lambda s: (s.get("start_ns") or 0, s["span_id"]))


def root_span(spans: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The trace's root span (no parent; the earliest if several), or ``None``."""
    roots = _by_start(s for s in spans if is_root(s))
    return roots[0] if roots else None


def _agent_spans(spans: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [s for s in _by_start(spans) if _operation(s) == "invoke_agent" or _oi_kind(s) == "AGENT"]


def query_and_answer(spans: Sequence[Mapping[str, Any]]) -> tuple[str | None, str | None, Mapping[str, Any] | None]:
    """(query, answer, the span that carries the answer) by the first rule that yields
    either: the root span, then ``invoke_agent`` / AGENT spans (GenAI messages, then
    ``input.value`` / ``output.value``); then the LLM spans (query from the first,
    answer from the last: ``llm.*_messages``, else GenAI messages); then the deprecated
    ``gen_ai.prompt`` / ``gen_ai.completion`` on any span."""
    root = root_span(spans)
    for span in ([root] if root else []) + _agent_spans(spans):
        query, answer = _query_answer_of(span)
        if query or answer:
            return query, answer, span
    llm_io = [(s, *_llm_io(s)) for s in _by_start(spans) if _is_llm(s)]
    asked = [query for _, query, _ in llm_io if query]
    answered = [(s, answer) for s, _, answer in llm_io if answer]
    if asked or answered:
        carrier, answer = answered[-1] if answered else (None, None)
        return (asked[0] if asked else None), answer, carrier
    for span in _by_start(spans):
        query, answer = _deprecated_io(span)
        if query or answer:
            return query, answer, span if answer else None
    return None, None, None


def citations(carrier: Mapping[str, Any] | None, spans: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``reviewapp.citations`` (a JSON list of ``{id, title, source, excerpt,
    evidence_ref}``) of the span that carries the answer, else of the first span that
    has it. Entries without an ``id`` get ``c1``, ``c2`` ... by position; unknown keys are
    dropped; values become texts."""
    candidates = ([carrier] if carrier is not None else []) + _by_start(spans)
    for span in candidates:
        listed = _json_or_text(_attrs(span).get(CITATIONS_ATTRIBUTE))
        if isinstance(listed, list):
            out = []
            for position, item in enumerate(listed, start=1):
                if not isinstance(item, Mapping):
                    continue
                entry = {"id": (_text(item.get("id")) or f"c{position}")[:160]}
                for key in ("title", "source", "excerpt", "evidence_ref"):
                    if item.get(key) is not None:
                        entry[key] = _text(item[key])
                out.append(entry)
            return out
    return []


def _pick(spans: Sequence[Mapping[str, Any]], *keys: str) -> Any:
    """The first value of ``keys`` (in order of preference) on the root, then on any span
    in start order."""
    root = root_span(spans)
    ordered = ([root] if root else []) + _by_start(spans)
    for key in keys:
        for span in ordered:
            value = _attrs(span).get(key)
            if value not in (None, ""):
                return value
    return None


def agent_name(spans: Sequence[Mapping[str, Any]]) -> str | None:
    """``gen_ai.agent.name``, else OpenInference ``agent.name``, else the root span's name."""
    name = _pick(spans, "gen_ai.agent.name", "agent.name")
    if name is None:
        root = root_span(spans)
        name = root.get("name") if root else None
    return _text(name)


def session_id(spans: Sequence[Mapping[str, Any]]) -> str | None:
    """``gen_ai.conversation.id``, else ``session.id`` (``None``: the run is its own session)."""
    value = _pick(spans, SESSION_ATTRIBUTES[0])
    if value is None:
        value = _pick(spans, SESSION_ATTRIBUTES[1])
    return _text(value)[:160] if value is not None else None


def evaluations(spans: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The agent's own evaluations carried in telemetry: each ``gen_ai.evaluation.result``
    event (``gen_ai.evaluation.{name, score.value, score.label, explanation}``) and the
    OpenInference ``annotations.*`` / ``evaluations.*`` attributes of a span, with the
    span id. Kept as the agent's own, never as a reviewer's rating."""
    out: list[dict[str, Any]] = []
    for span in _by_start(spans):
        for event in span.get("events") or ():
            if event.get("name") != EVALUATION_EVENT:
                continue
            attrs = event.get("attributes") or {}
            out.append({"name": attrs.get("gen_ai.evaluation.name"),
                        "score": attrs.get("gen_ai.evaluation.score.value"),
                        "label": attrs.get("gen_ai.evaluation.score.label"),
                        "explanation": attrs.get("gen_ai.evaluation.explanation"),
                        "span_id": span["span_id"], "source": EVALUATION_EVENT})
        flat = {k: v for k, v in _attrs(span).items() if k.startswith(EVALUATION_PREFIXES)}
        if flat:
            out.append({"attributes": dict(sorted(flat.items())), "span_id": span["span_id"],
                        "source": "openinference"})
    return out


def _step(span: Mapping[str, Any]) -> dict[str, Any]:
    exception = _exception(span)
    if not span.get("end_ns"):
        status = "running"
    else:
        status = "failed" if span.get("status") == "ERROR" or exception else "completed"
    summary = exception or span.get("status_message") or None
    if summary is None and _is_llm(span):
        model = _first(_attrs(span), "gen_ai.request.model", "gen_ai.response.model",
                       "llm.model_name")
        _, output = _llm_io(span)
        summary = " ".join(str(p) for p in (model, output) if p) or None
    return {"id": span["span_id"], "name": (span.get("name") or "span")[:STEP_NAME_MAX],
            "status": status, "summary": summary[:SUMMARY_MAX] if summary else None,
            "started_at": iso(span.get("start_ns")), "finished_at": iso(span.get("end_ns"))}


def step_spans(spans: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The spans that become diagnostic steps: not tool calls, not the root, start order."""
    return [s for s in _by_start(spans) if not is_tool(s) and not is_root(s)]


def run_document(spans: Sequence[Mapping[str, Any]], earliest_start_ns: int | None = None) -> dict[str, Any]:
    """The run document (``schemas/run_document.schema.json``, without tool calls) of one
    trace from its spans received so far (tool spans may be left out: they do not count).

    * status: RUNNING until the root span has arrived ended; then FAILED when its status
      is ERROR, else SUCCESS; started_at / finished_at from the root (before it arrives,
      ``earliest_start_ns`` or the earliest span stands in);
    * session, agent, service (``service.name`` / ``service.version`` of the resource),
      query, answer and citations (``query_and_answer``, ``citations``); kind ``aiops``
      when the root says ``reviewapp.run.kind = aiops``, else ``chat``;
    * messages: the query (user), each LLM span's output (assistant, conversation turns,
      except a text equal to the answer), the answer with its citations last;
    * steps (``step_spans``); the agent's evaluations in ``orchestration_trace``.
    Pure: the same spans in any order give the same document.
    """
    spans = _by_start({s["span_id"]: s for s in spans}.values())
    root = root_span(spans)
    query, answer, carrier = query_and_answer(spans)
    doc: dict[str, Any] = {"kind": "chat", "query": query, "answer": answer}
    if root is not None and str(_attrs(root).get(KIND_ATTRIBUTE) or "") == "aiops":
        doc["kind"] = "aiops"
    session = session_id(spans)
    if session:
        doc["session_id"] = session
    if root is not None and root.get("end_ns"):
        doc["status"] = "FAILED" if root.get("status") == "ERROR" else "SUCCESS"
        doc["finished_at"] = iso(root["end_ns"])
    else:
        doc["status"] = "RUNNING"
    starts = [s["start_ns"] for s in spans if s.get("start_ns")]
    if earliest_start_ns:
        starts.append(earliest_start_ns)
    doc["started_at"] = iso(root["start_ns"]) if root is not None else iso(min(starts, default=0))
    messages: list[dict[str, Any]] = []
    if query:
        messages.append({"id": "otel:query", "role": "user", "content": query})
    for span in spans:
        if _is_llm(span) and span is not carrier:
            _, output = _llm_io(span)
            if output and output != answer:
                messages.append({"id": f"otel:{span['span_id']}", "role": "assistant",
                                 "content": output})
    if answer:
        cited = citations(carrier, spans)
        answer_message: dict[str, Any] = {"id": "otel:answer", "role": "assistant", "content": answer}
        if cited:
            answer_message["metadata"] = {"citations": cited}
        messages.append(answer_message)
    doc["messages"] = messages
    doc["steps"] = [_step(s) for s in step_spans(spans)]
    resource = (root or (spans[0] if spans else {})).get("resource") or {}
    trace: dict[str, Any] = {"source": SOURCE, "trace_id": spans[0]["trace_id"] if spans else None,
                             "agent": agent_name(spans),
                             "service": {"name": resource.get("service.name"),
                                         "version": resource.get("service.version")}}
    evaluated = evaluations(spans)
    if evaluated:
        trace["agent_evaluations"] = evaluated
    doc["orchestration_trace"] = trace
    return doc
