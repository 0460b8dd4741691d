"""The citation gatekeeper: is each citation backed by evidence a tool really returned?
(SPEC 5.4, S001 §5).

For every citation of every assistant message, in message order then citation order:

1. ``verified`` when its ``evidence_ref`` is among the ``ref`` values of the run's
   tool-call ``evidence_refs``;
2. else ``verified`` when its ``excerpt`` occurs, whitespace-normalised and casefolded, in
   a tool call's result summary or in the excerpt of one of its ``evidence_refs``;
3. else ``unverified``, with the reason: "no tool call has retrieval evidence" (no call
   returned any evidence_ref or result), "no tool returned evidence_ref X" (plus "and its
   excerpt occurs in no tool result" when it has one), "its excerpt occurs in no tool
   result" (no ref), or "citation has neither evidence_ref nor excerpt".

Result, stored as ``self_evaluation["citation_gatekeeper"]`` and read as-is by the run
page: ``{"source": "gatekeeper", "verified": int, "unverified": int, "citations":
[{"message_id": int, "citation_id": str, "status": "verified"|"unverified",
"reason": str, "evidence_ref": str|None}]}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple


class ToolEvidence(NamedTuple):
    """The evidence one tool call returned: its id and name (for the reason text), its
    ``evidence_refs`` ([{ref, excerpt}] or None) and its stored ``result_summary``."""

    call_id: str
    tool_name: str
    evidence_refs: Sequence[Any] | None
    result_summary: str | None


class CitedMessage(NamedTuple):
    """An assistant message (``message_id`` is ``Message.id``) and its citations."""

    message_id: int
    citations: Sequence[Any]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


_SEP = "\x00"  # joins the texts of one run; no normalised excerpt can contain it


class _Evidence:
    """The run's evidence, indexed once: refs by value, and every text (result summaries,
    evidence excerpts) normalised into one haystack, built on the first excerpt lookup."""

    def __init__(self, calls: Iterable[ToolEvidence]) -> None:
        self.calls = calls if isinstance(calls, (list, tuple)) else list(calls)
        self.refs: dict[str, tuple[str, str]] = {}
        for call_id, tool_name, evidence_refs, _ in self.calls:
            for item in evidence_refs or ():
                if isinstance(item, Mapping):
                    ref = item.get("ref")
                    if isinstance(ref, str) and ref:
                        self.refs.setdefault(ref, (tool_name, call_id))
        self._texts: list[str] | None = None
        self.sources: list[tuple[str, str, str]] = []  # (kind, tool name, call id)
        self._haystack: str | None = None

    @property
    def texts(self) -> list[str]:
        """Every text a tool returned, in call order (built on first use)."""
        if self._texts is None:
            self._texts = []
            for call_id, tool_name, evidence_refs, result_summary in self.calls:
                for item in evidence_refs or ():
                    excerpt = item.get("excerpt") if isinstance(item, Mapping) else None
                    if isinstance(excerpt, str) and excerpt.strip():
                        self._texts.append(excerpt)
                        self.sources.append(("an evidence excerpt of", tool_name, call_id))
                if isinstance(result_summary, str) and result_summary.strip():
                    self._texts.append(result_summary)
                    self.sources.append(("the result of", tool_name, call_id))
        return self._texts

    @property
    def empty(self) -> bool:
        return not self.refs and not self.texts

    def find(self, excerpt: str) -> str | None:
        """Where the normalised ``excerpt`` occurs first, as reason text, else None."""
        if self._haystack is None:
            self._haystack = _norm(_SEP.join(t.replace(_SEP, " ") for t in self.texts))
        pos = self._haystack.find(excerpt)
        if pos < 0:
            return None
        kind, tool_name, call_id = self.sources[self._haystack.count(_SEP, 0, pos)]
        return f"{kind} {tool_name} ({call_id})"


def check_citations(
    messages: Iterable[CitedMessage], calls: Iterable[ToolEvidence]
) -> dict[str, Any] | None:
    """Verify every citation of ``messages`` against ``calls`` (rules: module docstring).

    ``calls`` may be ``ToolEvidence`` values or equal 4-tuples. Returns the
    ``citation_gatekeeper`` value, or ``None`` when no message has a citation (nothing to
    verify: the key stays absent).
    """
    evidence: _Evidence | None = None
    results: list[dict[str, Any]] = []
    for message_id, citations in messages:
        for index, citation in enumerate(citations or ()):
            if not isinstance(citation, Mapping):
                continue
            if evidence is None:
                evidence = _Evidence(calls)
            results.append(_check_one(message_id, index, citation, evidence))
    if not results:
        return None
    verified = sum(1 for r in results if r["status"] == "verified")
    return {"source": "gatekeeper", "verified": verified,
            "unverified": len(results) - verified, "citations": results}


def _check_one(message_id: int, index: int, citation: Mapping[str, Any],
               evidence: _Evidence) -> dict[str, Any]:
    cid = citation.get("id")
    citation_id = str(cid) if cid is not None and str(cid) else f"#{index + 1}"
    raw_ref = citation.get("evidence_ref")
    ref = raw_ref if isinstance(raw_ref, str) and raw_ref else None
    raw_excerpt = citation.get("excerpt")
    excerpt = _norm(raw_excerpt.replace(_SEP, " ")) if isinstance(raw_excerpt, str) else ""

    def out(status: str, reason: str) -> dict[str, Any]:
        return {"message_id": message_id, "citation_id": citation_id, "status": status,
                "reason": reason, "evidence_ref": ref}

    if ref is not None and ref in evidence.refs:
        tool_name, call_id = evidence.refs[ref]
        return out("verified", f"evidence_ref {ref} returned by {tool_name} ({call_id})")
    if excerpt:
        where = evidence.find(excerpt)
        if where is not None:
            return out("verified", f"excerpt found in {where}")
    if evidence.empty:
        return out("unverified", "no tool call has retrieval evidence")
    if ref is not None:
        return out("unverified", f"no tool returned evidence_ref {ref}"
                   + (" and its excerpt occurs in no tool result" if excerpt else ""))
    if excerpt:
        return out("unverified", "its excerpt occurs in no tool result")
    return out("unverified", "citation has neither evidence_ref nor excerpt")
