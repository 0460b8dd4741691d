"""``ReviewappCallbackHandler``: a LangChain / LangGraph agent's runs into reviewapp by
configuration alone (SPEC 9, 4). Needs ``langchain-core`` (``pip install "reviewapp[langchain]"``);
the server does not.

::

    from reviewapp.client import ReviewappClient
    from reviewapp.langchain_handler import ReviewappCallbackHandler

    handler = ReviewappCallbackHandler(ReviewappClient("http://127.0.0.1:5000", "rvw_..."))
    agent.invoke({"input": "..."}, config={"callbacks": [handler],
                                          "metadata": {"session_id": "conv-7"}})

The callback events are the tool-call lifecycle of SPEC 4, keyed by LangChain's run ids:

* the root chain or graph run (no parent) becomes a run: its id is the metadata's
  ``reviewapp_run_id`` (else ``run_id``) when given, else the LangChain run id; its session
  the metadata's ``session_id`` (else LangGraph's ``thread_id``); its query the input
  (``input`` / ``question`` / ``query``, or the last human message);
* ``on_tool_start`` -> ``started`` (arguments from ``inputs``, else the input text; the
  call id ``<run id>/<tool_call_id>`` when LangChain passes the model's ``tool_call_id``,
  else ``<run id>/<LangChain run id>``); ``on_tool_end`` -> ``completed``, or ``failed``
  when the output is a ``ToolMessage`` with ``status="error"`` (how ``handle_tool_error``
  failures arrive); ``on_tool_error`` -> ``failed``, except LangGraph interrupts and
  bubble-ups (``GraphInterrupt``, ``GraphBubbleUp``), which are not failures;
* ``on_retriever_start`` / ``on_retriever_end`` -> a retrieval tool call whose evidence
  refs are the documents (ref: the document id, else its ``source`` / ``id`` metadata,
  else the start of its text; hit count: the number of documents; match level L1 when
  there is a hit: ``domain/otel_mapping.evidence``, the rule of OTLP retrieval spans);
* the root's ``on_chain_end`` -> finished SUCCESS with the answer (``output`` / ``answer``,
  or the last AI message); ``on_chain_error`` -> FAILED (an interrupt leaves it RUNNING).

Thread-safe: one lock guards the handler's state; the client sends from its own thread.
The handler never raises into the agent (``raise_error = False``, and every callback
catches and logs).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage

from .client import ReviewappClient
from .domain.otel_mapping import evidence

log = logging.getLogger("reviewapp.langchain")

INTERRUPTS = frozenset({"GraphInterrupt", "GraphBubbleUp", "NodeInterrupt", "ParentCommand"})


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _is_interrupt(error: BaseException) -> bool:
    """LangGraph's interrupts and bubble-ups (by class name: langgraph is not required)."""
    return any(cls.__name__ in INTERRUPTS for cls in type(error).__mro__)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _text_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.text if isinstance(value.text, str) else str(value.content)
    return None


def _last_message(messages: Any, kinds: tuple[str, ...]) -> str | None:
    if isinstance(messages, Sequence) and not isinstance(messages, str):
        for message in reversed(messages):
            if isinstance(message, BaseMessage) and message.type in kinds:
                return _text_of(message)
            if isinstance(message, tuple) and len(message) == 2 and message[0] in kinds:
                return str(message[1])
    return None


def _query_of(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in ("input", "question", "query"):
            text = _text_of(inputs.get(key))
            if text:
                return text
        return _last_message(inputs.get("messages"), ("human", "user"))
    return None


def _answer_of(outputs: Any) -> str | None:
    text = _text_of(outputs)
    if text is not None:
        return text
    if isinstance(outputs, Mapping):
        for key in ("output", "answer", "result"):
            text = _text_of(outputs.get(key))
            if text:
                return text
        return _last_message(outputs.get("messages"), ("ai", "assistant"))
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseMessage):
        return value.content
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def _safe(method: Callable[..., None]) -> Callable[..., None]:
    def wrapper(self: ReviewappCallbackHandler, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception:  # noqa: BLE001 - never raise into the agent
            log.exception("reviewapp handler: %s failed", method.__name__)
    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


class ReviewappCallbackHandler(BaseCallbackHandler):
    """LangChain callbacks -> reviewapp runs and tool calls (module docstring)."""

    raise_error = False

    def __init__(self, client: ReviewappClient, *, kind: str = "chat") -> None:
        self.client = client
        self.kind = kind
        self._lock = threading.Lock()
        self._roots: dict[UUID, str] = {}  # root LangChain run id -> reviewapp run id
        self._owner: dict[UUID, UUID] = {}  # any LangChain run id -> its root's
        self._calls: dict[UUID, tuple[str, str, str]] = {}  # tool run id -> (run, call id, name)

    # ----------------------------------------------------------------- chains

    @_safe
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                       **kwargs: Any) -> None:
        """The root chain / graph run starts a run; nested chains only join their root."""
        with self._lock:
            if parent_run_id is not None and self._root_of(parent_run_id) is not None:
                self._owner[run_id] = self._owner[parent_run_id]
                return
            external = self._start_run(run_id, metadata or {})
        document: dict[str, Any] = {"kind": self.kind, "status": "RUNNING",
                                    "query": _query_of(inputs), "started_at": _now()}
        session = (metadata or {}).get("session_id") or (metadata or {}).get("thread_id")
        if session:
            document["session_id"] = str(session)
        self.client.put_run(external, document)

    @_safe
    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The root's end finishes the run (SUCCESS) with its answer."""
        external = self._end_root(run_id)
        if external is not None:
            body: dict[str, Any] = {"status": "SUCCESS", "finished_at": _now()}
            answer = _answer_of(outputs)
            if answer:
                body["answer"] = answer
            self.client.finish_run(external, body)

    @_safe
    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The root's error finishes the run FAILED; an interrupt leaves it RUNNING (the
        handler forgets the root either way: a resumed graph is a new root run)."""
        external = self._end_root(run_id)
        if external is not None and not _is_interrupt(error):
            self.client.finish_run(external, {"status": "FAILED", "finished_at": _now()})

    # ----------------------------------------------------------------- tools

    @_safe
    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                      inputs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """``started``: arguments from ``inputs`` (else the input text), the model's call id."""
        name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
        own = kwargs.get("tool_call_id") or str(run_id)
        self._started(run_id, parent_run_id, metadata, str(name), str(own),
                      _jsonable(inputs) if inputs is not None else input_str)

    @_safe
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """``completed``; ``failed`` for a ``ToolMessage`` with ``status="error"``."""
        if isinstance(output, ToolMessage) and output.status == "error":
            self._terminal(run_id, "failed", error=_jsonable(output.content))
        else:
            self._terminal(run_id, "completed", output=_jsonable(output))

    @_safe
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """``failed`` with the exception; a LangGraph interrupt is not a failure (the call
        stays ``started``: it has not ended)."""
        if _is_interrupt(error):
            with self._lock:
                self._calls.pop(run_id, None)
            return
        self._terminal(run_id, "failed", error=_error_text(error))

    # ----------------------------------------------------------------- retrievers

    @_safe
    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None,
                           metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A retrieval tool call starts (arguments: the query)."""
        name = (serialized or {}).get("name") or kwargs.get("name") or "retriever"
        self._started(run_id, parent_run_id, metadata, str(name), str(run_id), {"query": query})

    @_safe
    def on_retriever_end(self, documents: Sequence[Any], *, run_id: UUID, **kwargs: Any) -> None:
        """``completed`` with the documents as evidence refs (the rule of
        ``otel_mapping.evidence``, as for OTLP retrieval spans)."""
        docs = []
        for document in documents:
            meta = getattr(document, "metadata", None) or {}
            ref = getattr(document, "id", None) or meta.get("source") or meta.get("id")
            docs.append({"id": str(ref) if ref is not None else None,
                         "content": str(getattr(document, "page_content", "") or "") or None})
        retrieval = evidence(docs)
        self._terminal(run_id, "completed", output=[r["ref"] for r in retrieval["evidence_refs"]],
                       retrieval=retrieval)

    @_safe
    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """``failed`` with the exception."""
        self._terminal(run_id, "failed", error=_error_text(error))

    # ----------------------------------------------------------------- state

    def _root_of(self, run_id: UUID | None) -> UUID | None:
        return self._owner.get(run_id) if run_id is not None else None

    def _start_run(self, run_id: UUID, metadata: Mapping[str, Any]) -> str:
        external = str(metadata.get("reviewapp_run_id") or metadata.get("run_id") or run_id)
        self._roots[run_id] = external
        self._owner[run_id] = run_id
        return external

    def _end_root(self, run_id: UUID) -> str | None:
        with self._lock:
            if self._owner.get(run_id) != run_id:
                self._owner.pop(run_id, None)
                return None
            external = self._roots.pop(run_id, None)
            for key in [k for k, root in self._owner.items() if root == run_id]:
                del self._owner[key]
            return external

    def _started(self, run_id: UUID, parent_run_id: UUID | None, metadata: dict[str, Any] | None,
                 name: str, own_id: str, arguments: Any) -> None:
        with self._lock:
            root = self._root_of(parent_run_id)
            standalone = root is None
            if standalone:  # a tool or retriever called outside any chain is its own run
                external = self._start_run(run_id, metadata or {})
            else:
                self._owner[run_id] = root
                external = self._roots[root]
            call = f"{external}/{own_id}"[:160]
            self._calls[run_id] = (external, call, name[:200])
        if standalone:
            self.client.put_run(external, {"kind": self.kind, "status": "RUNNING",
                                           "started_at": _now()})
        self.client.tool_event({"id": call, "run_id": external, "event": "started",
                                "tool_name": name[:200], "arguments": arguments,
                                "timestamp": _now()})

    def _terminal(self, run_id: UUID, event: str, *, output: Any = None, error: Any = None,
                  retrieval: dict[str, Any] | None = None) -> None:
        with self._lock:
            known = self._calls.pop(run_id, None)
            standalone = self._roots.get(run_id) is not None
        if known is None:
            log.warning("reviewapp handler: %s for an unknown tool run %s", event, run_id)
            return
        external, call, name = known
        body: dict[str, Any] = {"id": call, "run_id": external, "event": event,
                                "tool_name": name, "timestamp": _now()}
        if output is not None:
            body["output"] = output
        if error is not None:
            body["error"] = error
        if retrieval is not None:
            body["retrieval"] = retrieval
        self.client.tool_event(body)
        if standalone:
            external_run = self._end_root(run_id)
            if external_run is not None:
                self.client.finish_run(external_run, {
                    "status": "FAILED" if event == "failed" else "SUCCESS", "finished_at": _now()})
