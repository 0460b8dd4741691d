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


def test_gatekeeper_finds_an_excerpt_at_the_very_start_of_the_first_text():
    calls = [ToolEvidence("call-1", "query_logs", None, "OOMKilled at 10:02, then restarted")]
    item = _one({"id": "c", "excerpt": "oomkilled"}, calls)
    assert (item["status"], item["reason"]) == (
        "verified", "excerpt found in the result of query_logs (call-1)")


def test_gatekeeper_reads_tool_calls_given_as_a_generator_once():
    calls = (c for c in [ToolEvidence("call-1", "kb", [{"ref": "r1"}], "disk full on node-3")])
    result = check_citations([CitedMessage(1, [{"id": "a", "evidence_ref": "r1"},
                                               {"id": "b", "excerpt": "disk full"}])], calls)
    assert [c["reason"] for c in result["citations"]] == [
        "evidence_ref r1 returned by kb (call-1)", "excerpt found in the result of kb (call-1)"]


def test_gatekeeper_evidence_item_with_a_ref_but_no_excerpt():
    calls = [ToolEvidence("call-1", "kb", [{"ref": "kb://a"}, {"excerpt": None}], None)]
    # The ref alone is evidence: a citation of another ref is told that ref is missing,
    # and an excerpt is looked up in texts that do not exist (no crash).
    assert _one({"id": "c", "evidence_ref": "kb://b", "excerpt": "x"}, calls)["reason"] == (
        "no tool returned evidence_ref kb://b and its excerpt occurs in no tool result")
    assert _one({"id": "c", "excerpt": "anything"}, calls)["reason"] == (
        "its excerpt occurs in no tool result")


def test_gatekeeper_ignores_refs_that_are_not_strings():
    calls = [ToolEvidence("call-1", "kb", [{"ref": 502}, {"ref": ""}], None)]
    # 502 and "" are no evidence: the run has none at all.
    item = _one({"id": "c", "evidence_ref": "502"}, calls)
    assert (item["status"], item["reason"]) == ("unverified", "no tool call has retrieval evidence")
    cited = _one({"id": "c", "evidence_ref": 502, "excerpt": "disk full"},
                 [ToolEvidence("call-2", "logs", None, "Disk  full")])
    assert cited == {"message_id": 7, "citation_id": "c", "status": "verified",
                     "reason": "excerpt found in the result of logs (call-2)",
                     "evidence_ref": None}


def test_gatekeeper_nul_characters_count_as_spaces_in_texts_and_excerpts():
    calls = [ToolEvidence("call-1", "logs", None, "disk\x00full")]
    assert _one({"id": "c", "excerpt": "disk full"}, calls)["status"] == "verified"
    assert _one({"id": "c", "excerpt": "disk\x00full"},
                [ToolEvidence("call-1", "logs", None, "disk full")])["status"] == "verified"


def test_gatekeeper_names_the_right_source_after_a_text_of_nothing_but_nul():
    calls = [ToolEvidence("call-1", "first", None, "\x00"),
             ToolEvidence("call-2", "second", None, "disk full")]
    assert _one({"id": "c", "excerpt": "disk full"}, calls)["reason"] == (
        "excerpt found in the result of second (call-2)")


def test_gatekeeper_numbers_citations_after_a_malformed_one_by_their_place():
    result = check_citations(
        [CitedMessage(4, ["junk", {"excerpt": "disk full"}, {"id": "", "evidence_ref": "r"}])],
        [ToolEvidence("call-1", "logs", [{"ref": "r"}], "disk full")])
    assert [(c["citation_id"], c["status"]) for c in result["citations"]] == [
        ("#2", "verified"), ("#3", "verified")]
    assert (result["verified"], result["unverified"]) == (2, 0)
