"""Import of real agent-run files (SPEC 11, issue 14), split by concern:

- ``_common``: the record error, warnings by kind, options (terminal pseudo-tools), and
  ``Builder``, which makes every format's tool calls through the one set of failure
  rules (``domain/tool_failure.py``);
- one module per format of ``domain/import_formats.py``, its adapter: ``native``,
  ``openai_messages`` (its ``chat_messages_doc`` also reads tau-bench's messages),
  ``tau_bench`` (record-per-run formats); ``claude_code``, ``codex``, ``copilot``,
  ``gemini``, ``opencode``, ``stratus`` (whole-file event logs, sharing ``_logs``);
  ``sregym_result`` (verdict files);
- ``reading``: layouts, format detection, streaming, ``read_records`` (pure);
- ``importing``: ``import_files`` and its summary.

Adapters are pure: a source record in, a run document (``schemas/run_document.schema.json``)
out. ``import_files`` streams records one at a time (JSON arrays with ``ijson``, JSON
lines line by line), so memory stays bounded by the largest single record whatever the
file size, and stores each through ``runs.upsert_run`` — the same service as the API.

Formats:

* ``native``: JSON array, JSON lines or one object of run documents, each with ``run_id``.
* ``openai-messages``: chat-completions message lists (``role``, ``content``,
  ``tool_calls[{id, function{name, arguments}}]``, ``tool`` messages with
  ``tool_call_id``); a record is a list, or an object ``{id | run_id, messages, session_id?}``.
  Each list is one chat run; results are paired with calls by id; ``arguments`` given as
  JSON text are parsed (invalid JSON kept as text, with a warning); a call without a
  result stays ``started`` (no end event; nothing is invented).
* ``tau-bench``: the tau-bench trajectory records (``task_id``, ``trial``, ``reward``,
  ``traj``): openai-messages plus query = first user message, answer = last assistant
  text, status ``SUCCESS`` (the agent finished), ``reward`` kept as ``external_outcome``
  pass / fail with detail ``{source, reward, task_id, trial}``; no timestamps (order is
  the ordinal); run id ``tau-<file stem>-t<task>-r<trial>``.
* ``claude-code``: a Claude Code session log (JSON lines of ``user`` / ``assistant``
  events with ``tool_use`` / ``tool_result`` blocks) or its stream-json stdout; the whole
  file is one AIOps run.
* ``codex``: an OpenAI Codex CLI rollout (JSON lines ``{timestamp, type, payload}``);
  the whole file is one AIOps run.
* ``copilot``, ``gemini``, ``opencode``, ``stratus``: those harnesses' logs, each file one
  AIOps run (see their modules); ``sregym-result``: a verdict file, the outcome of the runs
  logged beside it (a log imported with its verdict beside it carries it already).

The list of formats is ``domain/import_formats.IMPORT_FORMATS``.

In every format a tool result is failed by the rules of ``domain/tool_failure.py``
(explicit flag, non-zero exit code, ``Error:`` prefix, traceback, JSON ``error`` field,
MCP ``isError``), and a call to a terminal pseudo-tool (default ``finish``,
``final_answer``, ``submit``, any case) gives the run's answer instead of being a call.

Tool-call ids from foreign formats are namespaced as ``<run_id>/<source id>`` (and
``#2``, ``#3`` ... for a source id repeated inside one run): the tau-bench file reuses
the same ``call_...`` ids across runs and even within a run (1,138 of its 1,164 calls
share an id with another call), and ids are unique per workspace here. The rule depends
on nothing but the record, so a re-import finds the same rows.
"""

from __future__ import annotations

from ._common import DEFAULT_TERMINAL_TOOLS, MAX_ID, Adapted, Options, RecordError, Warn
from .claude_code import adapt_claude_code
from .codex import adapt_codex
from .copilot import adapt_copilot
from .gemini import adapt_gemini
from .importing import ImportSummary, import_files
from .native import adapt_native
from .openai_messages import adapt_openai_record, openai_messages_run
from .opencode import adapt_opencode
from .reading import (
    FORMATS,
    WHOLE_FILE_FORMATS,
    Parsed,
    check_files,
    detect_format,
    read_records,
    sibling_verdict,
    unsupported,
)
from .sregym_result import verdict_outcome
from .stratus import adapt_stratus
from .tau_bench import adapt_tau_bench, tau_bench_run

__all__ = [
    "DEFAULT_TERMINAL_TOOLS", "FORMATS", "MAX_ID", "WHOLE_FILE_FORMATS", "Adapted", "ImportSummary",
    "Options", "Parsed", "RecordError", "Warn", "adapt_claude_code", "adapt_codex", "adapt_copilot",
    "adapt_gemini", "adapt_native", "adapt_openai_record", "adapt_opencode", "adapt_stratus",
    "adapt_tau_bench", "check_files", "detect_format", "import_files", "openai_messages_run", "read_records",
    "sibling_verdict",
    "tau_bench_run", "unsupported", "verdict_outcome",
]
