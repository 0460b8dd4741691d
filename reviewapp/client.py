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
  dropped, counted and logged. Events the server answers ``rejected`` are counted in
  ``rejected`` and logged.
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


_STOP = object()


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
        """Operations (a run document, a finish, or one event each) never delivered."""
        return self._dropped

    @property
    def rejected(self) -> int:
        """Events delivered but answered ``rejected`` by the server (logged with the reason)."""
        return self._rejected

    @property
    def sent(self) -> int:
        """Operations delivered (one per event)."""
        return self._sent

    def put_run(self, run_id: str, document: dict[str, Any]) -> None:
        """Queue ``PUT /api/ingest/runs/<run_id>`` (a whole run document)."""
        self._enqueue(_Op("PUT", f"/api/ingest/runs/{urllib.parse.quote(run_id, safe='')}",
                          document, "run"))

    def tool_event(self, event: dict[str, Any]) -> None:
        """Queue one tool-call event (``started`` / ``completed`` / ``failed``); sent in a batch."""
        self._enqueue(_Op("POST", "/api/ingest/tool-events", event, "event"))

    def finish_run(self, run_id: str, body: dict[str, Any]) -> None:
        """Queue ``POST /api/ingest/runs/<run_id>/finish`` ({status, answer?, finished_at?})."""
        self._enqueue(_Op("POST", f"/api/ingest/runs/{urllib.parse.quote(run_id, safe='')}/finish",
                          body, "finish"))

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
                    self._send(item.method, item.path, item.body, 1, item.kind)
            except Exception:  # noqa: BLE001 - the thread must survive anything
                log.exception("reviewapp client: unexpected error while sending")

    def _send_events(self, batch: list[dict[str, Any]]) -> None:
        answer = self._send("POST", "/api/ingest/tool-events", batch, len(batch), "tool events")
        if not isinstance(answer, dict):
            return
        for result in answer.get("results") or ():
            if result.get("result") == "rejected":
                with self._lock:
                    self._rejected += 1
                log.warning("reviewapp client: event %s (%s) rejected: %s %s", result.get("id"),
                            result.get("event"), result.get("field", ""), result.get("message", ""))

    def _send(self, method: str, path: str, body: Any, count: int, what: str) -> Any:
        """Send with retries; returns the decoded answer, or ``None`` when dropped."""
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
                    detail = exc.read()[:300].decode(errors="replace")
                if exc.code not in RETRY_STATUSES:
                    self._drop(count, f"{what}: HTTP {exc.code} {detail}")
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
