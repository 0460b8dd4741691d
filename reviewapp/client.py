"""A small client for agents: send runs and tool-call events to reviewapp's ingest API
(SPEC 9) from a background thread, so the agent never waits for, nor fails because of,
reviewapp. Standard library only (``pip install reviewapp`` brings nothing else for it).

::

    from reviewapp.client import ReviewappClient

    client = ReviewappClient("http://127.0.0.1:5000", "rvw_...")
    client.put_run("run-42", {"query": "Why is checkout failing?", "status": "RUNNING"})
    client.tool_event({"id": "call-1", "run_id": "run-42", "event": "started",
                       "tool_name": "query_logs", "arguments": {"service": "checkout"}})
    client.finish_run("run-42", {"status": "SUCCESS", "answer": "OOM-killed pods."})
    client.close()  # or let the interpreter exit: the queue is flushed at exit

* Calls enqueue and return at once. One background thread sends in order (a run's
  ``PUT`` before its events, events before its ``finish``), consecutive tool events as one
  batch (``POST /api/ingest/tool-events``, up to ``batch_size``).
* The queue is bounded (``max_queue`` operations): when it is full, the new operation is
  dropped, counted in ``dropped`` and logged, never raised.
* 429, 503, other 5xx and connection errors are retried with exponential backoff (``Retry-After``
  honoured, at most ``max_retries`` times); then, and for any other 4xx, the operation is
  dropped: counted in ``dropped`` and logged (lost on the way, the server never judged it).
* Operations the server refuses for their content are counted in ``rejected`` and logged
  with the server's field and reason; a retry would not help. That is an event answered
  ``rejected`` in a batch's results, and a run document, a finish or a batch of one event
  refused with a 400 ``VALIDATION_INVALID_ARGUMENT`` (e.g. ``body: malformed JSON: Infinity ...`` for a
  ``float("inf")``). A larger batch refused so is sent again event by event, so that only
  the events at fault are rejected and the others delivered.
* ``flush(timeout)`` waits until everything queued so far was sent; ``close()`` flushes
  and stops the thread, and runs at interpreter exit.
* No method raises into the agent.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("reviewapp.client")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass
class _Op:
    method: str
    path: str
    body: Any
    kind: str  # "run" | "event" | "finish"
    run_id: str = ""  # a run document's or a finish's run (named in the log)


_STOP = object()


@dataclass
class _Refused:
    """A 400 ``VALIDATION_INVALID_ARGUMENT``: the body's content was refused (``message``
    is the server's "field: reason")."""

    message: str


def _refusal(detail: str) -> _Refused | None:
    """The refusal a 400's body states, or ``None`` when it is no validation error of the
    API (a proxy's page, a CSRF error, ...)."""
    try:
        error = json.loads(detail).get("error") or {}
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict) or error.get("code") != "VALIDATION_INVALID_ARGUMENT":
        return None
    return _Refused(str(error.get("message") or "")[:300])


class ReviewappClient:
    """Send runs and tool-call events in the background (module docstring)."""

    def __init__(self, base_url: str, token: str, *, max_queue: int = 10_000,
                 batch_size: int = 200, max_retries: int = 5, backoff_s: float = 0.5,
                 max_backoff_s: float = 30.0, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.batch_size = max(1, batch_size)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, max_queue))
        self._lock = threading.Lock()
        self._dropped = 0
        self._rejected = 0
        self._sent = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="reviewapp-client", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    # ------------------------------------------------------------------ public, never raise

    @property
    def dropped(self) -> int:
        """Operations (a run document, a finish, or one event each) never delivered: queue
        full, after ``close()``, server unreachable or 429 / 5xx after the retries, a 4xx
        other than a refusal of the content (module docstring)."""
        return self._dropped

    @property
    def rejected(self) -> int:
        """Operations the server refused for their content (logged with the field and
        reason): an event answered ``rejected`` in a batch, or an event alone, a run
        document or a finish refused with a 400 ``VALIDATION_INVALID_ARGUMENT``. Never
        counted in ``dropped`` nor ``sent``."""
        return self._rejected

    @property
    def sent(self) -> int:
        """Operations delivered (one per event)."""
        return self._sent

    def put_run(self, run_id: str, document: dict[str, Any]) -> None:
        """Queue ``PUT /api/ingest/runs/<run_id>`` (a whole run document)."""
        self._enqueue(_Op("PUT", f"/api/ingest/runs/{urllib.parse.quote(run_id, safe='')}",
                          document, "run", run_id))

    def tool_event(self, event: dict[str, Any]) -> None:
        """Queue one tool-call event (``started`` / ``completed`` / ``failed``); sent in a batch."""
        self._enqueue(_Op("POST", "/api/ingest/tool-events", event, "event"))

    def finish_run(self, run_id: str, body: dict[str, Any]) -> None:
        """Queue ``POST /api/ingest/runs/<run_id>/finish`` ({status, answer?, finished_at?})."""
        self._enqueue(_Op("POST", f"/api/ingest/runs/{urllib.parse.quote(run_id, safe='')}/finish",
                          body, "finish", run_id))

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Wait until every operation queued so far was sent (or dropped); ``False`` when
        ``timeout`` seconds passed first."""
        try:
            done = threading.Event()
            self._queue.put(done, timeout=self.timeout_s)
            return done.wait(timeout)
        except Exception:  # noqa: BLE001 - never raise into the agent
            log.exception("reviewapp client: flush failed")
            return False

    def close(self, timeout: float | None = 30.0) -> None:
        """Flush, then stop the background thread. Idempotent; runs at exit."""
        try:
            if self._closed:
                return
            self.flush(timeout)
            self._closed = True
            self._queue.put(_STOP, timeout=self.timeout_s)
            self._thread.join(timeout)
            atexit.unregister(self.close)
        except Exception:  # noqa: BLE001
            log.exception("reviewapp client: close failed")

    # ------------------------------------------------------------------ internals

    def _enqueue(self, op: _Op) -> None:
        try:
            if self._closed:
                self._drop(1, f"{op.kind} after close()")
                return
            self._queue.put_nowait(op)
        except queue.Full:
            self._drop(1, f"queue full ({self._queue.maxsize} operations): {op.kind} dropped")
        except Exception:  # noqa: BLE001
            log.exception("reviewapp client: could not queue a %s", op.kind)
            self._drop(1, "unexpected error while queueing")

    def _drop(self, count: int, why: str) -> None:
        with self._lock:
            self._dropped += count
        log.warning("reviewapp client: dropped %d (%s); %d dropped so far", count, why, self._dropped)

    def _run(self) -> None:
        pending: _Op | Any = None
        while True:
            item = pending if pending is not None else self._queue.get()
            pending = None
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                if item.kind == "event":
                    batch = [item.body]
                    while len(batch) < self.batch_size:
                        try:
                            nxt = self._queue.get_nowait()
                        except queue.Empty:
                            break
                        if isinstance(nxt, _Op) and nxt.kind == "event":
                            batch.append(nxt.body)
                        else:
                            pending = nxt
                            break
                    self._send_events(batch)
                else:
                    answer = self._send(item.method, item.path, item.body, 1, item.kind,
                                        refusable=True)
                    if isinstance(answer, _Refused):
                        self._reject(item.kind, item.run_id, answer.message)
            except Exception:  # noqa: BLE001 - the thread must survive anything
                log.exception("reviewapp client: unexpected error while sending")

    def _send_events(self, batch: list[dict[str, Any]]) -> None:
        answer = self._send("POST", "/api/ingest/tool-events", batch, len(batch), "tool events",
                            refusable=True)
        if isinstance(answer, _Refused):
            if len(batch) > 1:  # one event's content: find it, deliver the others
                for event in batch:
                    self._send_events([event])
                return
            event = batch[0] if isinstance(batch[0], dict) else {}
            self._reject("event", f"{event.get('id')} ({event.get('event')})", answer.message)
            return
        if not isinstance(answer, dict):
            return
        for result in answer.get("results") or ():
            if result.get("result") == "rejected":
                self._reject("event", f"{result.get('id')} ({result.get('event')})",
                             f"{result.get('field', '')} {result.get('message', '')}")

    def _reject(self, kind: str, which: str, why: str) -> None:
        """Count one operation refused for its content and log ``kind which rejected: why``."""
        with self._lock:
            self._rejected += 1
        log.warning("reviewapp client: %s %s rejected: %s", kind, which, why.strip())

    def _send(self, method: str, path: str, body: Any, count: int, what: str, *,
              refusable: bool = False) -> Any:
        """Send with retries; returns the decoded answer, or ``None`` when dropped. With
        ``refusable``, a 400 ``VALIDATION_INVALID_ARGUMENT`` returns ``_Refused`` (the
        caller counts it), nothing dropped."""
        data = json.dumps(body, default=str).encode()
        delay = self.backoff_s
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(
                self.base_url + path, data=data, method=method,
                headers={"Authorization": f"Bearer {self._token}",
                         "Content-Type": "application/json"})
            retry_after: float | None = None
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310
                    text = response.read()
                with self._lock:
                    self._sent += count
                return json.loads(text) if text else None
            except urllib.error.HTTPError as exc:
                with exc:  # closes the connection
                    detail = exc.read(4096).decode(errors="replace")
                if exc.code not in RETRY_STATUSES:
                    refused = _refusal(detail) if refusable and exc.code == 400 else None
                    if refused is not None:
                        return refused
                    self._drop(count, f"{what}: HTTP {exc.code} {detail[:300]}")
                    return None
                header = exc.headers.get("Retry-After") if exc.headers else None
                retry_after = float(header) if header and header.isdigit() else None
                reason = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                reason = f"{type(exc).__name__}: {exc}"
            if attempt == self.max_retries:
                self._drop(count, f"{what}: gave up after {attempt + 1} attempts ({reason})")
                return None
            wait = min(self.max_backoff_s, retry_after if retry_after is not None else delay)
            log.info("reviewapp client: %s failed (%s); retrying in %.2f s", what, reason, wait)
            time.sleep(wait)
            delay = min(self.max_backoff_s, delay * 2)
        return None
