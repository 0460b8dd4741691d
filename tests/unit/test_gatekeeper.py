"""Citation gatekeeper (SPEC 5.4) on plain values."""

from __future__ import annotations

from reviewapp.domain.gatekeeper import CitedMessage, ToolEvidence, check_citations

KB = ToolEvidence("call-1", "knowledge_search",
                  [{"ref": "kb://runbooks/502", "excerpt": "A 502 at the ingress means restarts."}],
                  '{"hits": 1}')
LOGS = ToolEvidence("call-2", "query_logs", None,
                    "37 events. Reason:   OOMKilled container\ncheckout-service")


def _one(citation, calls=(KB, LOGS)):
    result = check_citations([CitedMessage(7, [citation])], list(calls))
    return result["citations"][0]


def test_gatekeeper_verifies_a_returned_evidence_ref():
    item = _one({"id": "c1", "evidence_ref": "kb://runbooks/502", "excerpt": "unrelated"})
    assert item == {"message_id": 7, "citation_id": "c1", "status": "verified",
                    "reason": ("evidence_ref kb://runbooks/502 returned by knowledge_search "
                               "(call-1)"),
                    "evidence_ref": "kb://runbooks/502"}


def test_gatekeeper_verifies_an_excerpt_found_in_a_result_whitespace_and_case_normalised():
    item = _one({"id": "c2", "excerpt": "reason: oomkilled CONTAINER checkout-service"})
    assert item["status"] == "verified"
    assert item["reason"] == "excerpt found in the result of query_logs (call-2)"
    assert item["evidence_ref"] is None


def test_gatekeeper_verifies_an_excerpt_found_in_an_evidence_excerpt_when_the_ref_differs():
    item = _one({"id": "c3", "evidence_ref": "kb://other", "excerpt": "502 at the ingress"})
    assert item["status"] == "verified"
    assert item["reason"] == "excerpt found in an evidence excerpt of knowledge_search (call-1)"


def test_gatekeeper_unverified_ref_names_the_missing_ref():
    item = _one({"id": "c4", "evidence_ref": "deploy://8841", "excerpt": "cache size raised"})
    assert item["status"] == "unverified"
    assert item["reason"] == ("no tool returned evidence_ref deploy://8841 and its excerpt "
                              "occurs in no tool result")
    assert _one({"id": "c5", "evidence_ref": "deploy://8841"})["reason"] == \
        "no tool returned evidence_ref deploy://8841"


def test_gatekeeper_unverified_excerpt_without_ref():
    item = _one({"id": "c6", "excerpt": "not in any result"})
    assert (item["status"], item["reason"]) == (
        "unverified", "its excerpt occurs in no tool result")


def test_gatekeeper_without_any_evidence_says_so():
    calls = [ToolEvidence("call-9", "vault_read", None, None)]
    item = _one({"id": "c1", "evidence_ref": "kb://x", "excerpt": "y"}, calls)
    assert (item["status"], item["reason"]) == ("unverified", "no tool call has retrieval evidence")
    assert _one({"id": "c1"}, [])["reason"] == "no tool call has retrieval evidence"


def test_gatekeeper_citation_with_nothing_to_check():
    item = _one({"id": "c7", "title": "a title only"})
    assert (item["status"], item["reason"]) == (
        "unverified", "citation has neither evidence_ref nor excerpt")


def test_gatekeeper_counts_every_citation_of_every_message_in_order():
    messages = [
        CitedMessage(3, [{"id": "a", "evidence_ref": "kb://runbooks/502"}, {"id": "b"}]),
        CitedMessage(5, [{"evidence_ref": "nope"}, "not an object"]),
    ]
    result = check_citations(messages, [KB])
    assert (result["source"], result["verified"], result["unverified"]) == ("gatekeeper", 1, 2)
    assert [(c["message_id"], c["citation_id"], c["status"]) for c in result["citations"]] == [
        (3, "a", "verified"), (3, "b", "unverified"), (5, "#1", "unverified")]


def test_gatekeeper_without_citations_returns_none():
    assert check_citations([CitedMessage(1, [])], [KB]) is None
    assert check_citations([], [KB]) is None


def test_gatekeeper_excerpt_never_matches_across_two_results():
    calls = [ToolEvidence("a", "t1", None, "the pool is"),
             ToolEvidence("b", "t2", None, "exhausted now")]
    assert _one({"id": "c", "excerpt": "pool is exhausted"}, calls)["status"] == "unverified"
    found = _one({"id": "c", "excerpt": "EXHAUSTED"}, calls)
    assert found["reason"] == "excerpt found in the result of t2 (b)"


def test_gatekeeper_accepts_plain_tuples_for_tool_calls():
    result = check_citations([(1, [{"id": "x", "evidence_ref": "r"}])],
                             [("call-7", "kb", [{"ref": "r"}], None)])
    assert result["citations"][0]["reason"] == "evidence_ref r returned by kb (call-7)"
