"""The import formats of ``flask runs import --format`` (SPEC 11, issue 14), one row
each: the CLI's choices, the importer's adapters (``services/importers``) and the
"supported:" list of an unsupported file's error derive from ``IMPORT_FORMATS``.

``whole_file``: the whole file (an event log) is one run; otherwise each record is one
run (or, for ``sregym-result``, the verdict of the runs logged beside it)."""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry


@dataclass(frozen=True)
class ImportFormat:
    """``code`` as given to ``--format``; ``label`` what files it reads."""

    code: str
    label: str
    whole_file: bool = False


IMPORT_FORMATS: Registry[ImportFormat] = Registry("format", (
    ImportFormat("native", "run documents as PUT /api/ingest/runs/<run_id> takes them"),
    ImportFormat("openai-messages", "chat-completions message lists"),
    ImportFormat("tau-bench", "tau-bench trajectories"),
    ImportFormat("claude-code", "a Claude Code session log or stream-json stdout", whole_file=True),
    ImportFormat("codex", "an OpenAI Codex CLI rollout", whole_file=True),
    ImportFormat("copilot", "a GitHub Copilot CLI event stream", whole_file=True),
    ImportFormat("gemini", "a Gemini CLI session log", whole_file=True),
    ImportFormat("opencode", "an OpenCode session export", whole_file=True),
    ImportFormat("stratus", "a Stratus agent trajectory (staged LangChain messages)", whole_file=True),
    ImportFormat("sregym-result", "an SREGym verdict file (<harness>_results_<problem>_<time>.json)"),
))

# ``auto`` (detect from the first record) and every format.
FORMAT_CHOICES: tuple[str, ...] = ("auto", *(f.code for f in IMPORT_FORMATS))

