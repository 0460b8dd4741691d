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


def check_citations(
    messages: Iterable[CitedMessage], calls: Iterable[ToolEvidence]
) -> dict[str, Any] | None:
    """Verify every citation of ``messages`` against ``calls`` (rules: module docstring).

    Returns the ``citation_gatekeeper`` value, or ``None`` when no message has a citation
    (nothing to verify: the key stays absent).
    """
    refs: dict[str, str] = {}
    texts: list[tuple[str, str]] = []  # (normalised text, where it came from)
    for call in calls:
        where = f"{call.tool_name} ({call.call_id})"
        for item in call.evidence_refs or ():
            if not isinstance(item, Mapping):
                continue
            ref = item.get("ref")
            if isinstance(ref, str) and ref:
                refs.setdefault(ref, where)
            excerpt = item.get("excerpt")
            if isinstance(excerpt, str) and excerpt.strip():
                texts.append((_norm(excerpt), f"an evidence excerpt of {where}"))
        if call.result_summary and call.result_summary.strip():
            texts.append((_norm(call.result_summary), f"the result of {where}"))

    results: list[dict[str, Any]] = []
    for message in messages:
        for index, citation in enumerate(message.citations or ()):
            if not isinstance(citation, Mapping):
                continue
            results.append(_check_one(message.message_id, index, citation, refs, texts))
    if not results:
        return None
    verified = sum(1 for r in results if r["status"] == "verified")
    return {"source": "gatekeeper", "verified": verified,
            "unverified": len(results) - verified, "citations": results}


def _check_one(message_id: int, index: int, citation: Mapping[str, Any],
               refs: Mapping[str, str], texts: Sequence[tuple[str, str]]) -> dict[str, Any]:
    cid = citation.get("id")
    citation_id = str(cid) if cid is not None and str(cid) else f"#{index + 1}"
    raw_ref = citation.get("evidence_ref")
    ref = raw_ref if isinstance(raw_ref, str) and raw_ref else None
    raw_excerpt = citation.get("excerpt")
    excerpt = _norm(raw_excerpt) if isinstance(raw_excerpt, str) else ""

    def out(status: str, reason: str) -> dict[str, Any]:
        return {"message_id": message_id, "citation_id": citation_id, "status": status,
                "reason": reason, "evidence_ref": ref}

    if ref is not None and ref in refs:
        return out("verified", f"evidence_ref {ref} returned by {refs[ref]}")
    if excerpt:
        for text, where in texts:
            if excerpt in text:
                return out("verified", f"excerpt found in {where}")
    if not refs and not texts:
        return out("unverified", "no tool call has retrieval evidence")
    if ref is not None:
        return out("unverified", f"no tool returned evidence_ref {ref}"
                   + (" and its excerpt occurs in no tool result" if excerpt else ""))
    if excerpt:
        return out("unverified", "its excerpt occurs in no tool result")
    return out("unverified", "citation has neither evidence_ref nor excerpt")
