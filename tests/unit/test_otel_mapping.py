"""The OTel mapping (``domain/otel_mapping.py``), one test per row of the README's table."""

from __future__ import annotations

import json

import pytest

from reviewapp.domain import otel_mapping as m

T = "0af7651916cd43dd8448eb211c80319c"
BASE = 1_764_590_400_000_000_000  # 2025-12-01T12:00:00Z in ns
MS = 1_000_000


def sp(span_id: str = "a" * 16, name: str = "span", *, parent: str | None = "f" * 16,
       start: int = 0, end: int | None = 10, status: str = "UNSET", message: str = "",
       events: list | None = None, resource: dict | None = None, **attributes) -> dict:
    """A decoded span; ``start`` / ``end`` in ms after BASE (end None: not ended);
    attribute keys use ``__`` for ``.``."""
    return {"trace_id": T, "span_id": span_id, "parent_span_id": parent, "name": name,
            "start_ns": BASE + start * MS, "end_ns": BASE + end * MS if end is not None else 0,
            "status": status, "status_message": message,
            "attributes": {k.replace("__", "."): v for k, v in attributes.items()},
            "events": events or [], "resource": resource or {}}


def root(**kw) -> dict:
    kw.setdefault("name", "invoke_agent bot")
    return sp("1" * 16, parent=None, **kw)


def msgs(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text},
                                                {"type": "tool_call", "name": "x"}]}])


# --- run identity -------------------------------------------------------------------------

def test_session_from_conversation_id_else_session_id():
    assert m.session_id([root(gen_ai__conversation__id="conv", session__id="s")]) == "conv"
    assert m.session_id([root(), sp(session__id="s")]) == "s"
    assert m.session_id([root()]) is None
    assert "session_id" not in m.run_document([root()])


def test_agent_from_genai_name_else_openinference_else_root_name():
    assert m.agent_name([root(), sp(gen_ai__agent__name="planner", agent__name="oi")]) == "planner"
    assert m.agent_name([root(), sp(agent__name="oi")]) == "oi"
    assert m.agent_name([root(name="my-agent")]) == "my-agent"


def test_service_name_and_version_from_the_resource():
    doc = m.run_document([root(resource={"service.name": "svc", "service.version": "1.2"})])
    assert doc["orchestration_trace"]["service"] == {"name": "svc", "version": "1.2"}
    assert doc["orchestration_trace"]["trace_id"] == T


# --- query and answer ---------------------------------------------------------------------

def test_query_answer_from_genai_messages_of_the_root():
    spans = [root(gen_ai__input__messages=msgs("user", "Q"), gen_ai__output__messages=msgs("assistant", "A"))]
    assert m.query_and_answer(spans)[:2] == ("Q", "A")


def test_query_answer_from_an_invoke_agent_span_when_the_root_has_none():
    agent = sp(gen_ai__operation__name="invoke_agent", gen_ai__input__messages=msgs("user", "Q"),
               gen_ai__output__messages=msgs("assistant", "A"))
    assert m.query_and_answer([root(name="http"), agent])[:2] == ("Q", "A")


def test_query_answer_from_openinference_input_output_value():
    spans = [root(input__value=json.dumps({"input": "Q"}), input__mime_type="application/json",
                  output__value="A")]
    assert m.query_and_answer(spans)[:2] == ("Q", "A")


def test_query_answer_from_llm_messages_first_query_last_answer():
    first = sp("2" * 16, start=1, openinference__span__kind="LLM",
               **{"llm.input_messages.0.message.role": "system",
                  "llm.input_messages.0.message.content": "be nice",
                  "llm.input_messages.1.message.role": "user",
                  "llm.input_messages.1.message.content": "Q",
                  "llm.output_messages.0.message.role": "assistant",
                  "llm.output_messages.0.message.content": "thinking"})
    last = sp("3" * 16, start=5, openinference__span__kind="LLM",
              **{"llm.output_messages.0.message.role": "assistant",
                 "llm.output_messages.0.message.contents.0.message_content.text": "A"})
    assert m.query_and_answer([root(), last, first])[:2] == ("Q", "A")


def test_query_answer_from_deprecated_prompt_and_completion():
    assert m.query_and_answer([root(), sp(gen_ai__prompt="Q", gen_ai__completion="A")])[:2] == ("Q", "A")
    flat = sp(**{"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Q",
                 "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "A"})
    assert m.query_and_answer([root(), flat])[:2] == ("Q", "A")


def test_conversation_messages_from_llm_spans():
    llm = sp("2" * 16, start=1, gen_ai__operation__name="chat",
             gen_ai__output__messages=msgs("assistant", "let me check the logs"))
    final = sp("3" * 16, start=5, gen_ai__operation__name="chat",
               gen_ai__output__messages=msgs("assistant", "A"))
    doc = m.run_document([root(gen_ai__input__messages=msgs("user", "Q"),
                               gen_ai__output__messages=msgs("assistant", "A")), llm, final])
    assert [(x["role"], x["content"]) for x in doc["messages"]] == [
        ("user", "Q"), ("assistant", "let me check the logs"), ("assistant", "A")]
    assert doc["messages"][1]["id"] == "otel:" + "2" * 16


# --- tool calls ---------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,tool", [
    ({"gen_ai__operation__name": "execute_tool"}, True),
    ({"openinference__span__kind": "TOOL"}, True),
    ({"gen_ai__tool__name": "x"}, True),
    ({"gen_ai__tool__call__id": "x"}, True),
    ({"gen_ai__operation__name": "retrieval"}, True),
    ({"openinference__span__kind": "RERANKER"}, True),
    ({"gen_ai__tool__definitions": "[]", "gen_ai__operation__name": "chat"}, False),
    ({"openinference__span__kind": "CHAIN"}, False),
])
def test_which_spans_are_tool_calls(attrs, tool):
    assert m.is_tool(sp(**attrs)) is tool


def test_tool_name_from_attributes_else_span_name():
    assert m.tool_name(sp(name="execute_tool a", gen_ai__tool__name="b", tool__name="c")) == "b"
    assert m.tool_name(sp(name="execute_tool a", tool__name="c")) == "c"
    assert m.tool_name(sp(name="execute_tool query_logs")) == "query_logs"


def test_call_id_from_attributes_else_span_id_namespaced_by_run():
    assert m.call_id(sp(gen_ai__tool__call__id="call_1", tool__id="t"), T) == f"{T}/call_1"
    assert m.call_id(sp(tool__id="t"), T) == f"{T}/t"
    assert m.call_id(sp("b" * 16), T) == f"{T}/{'b' * 16}"


def test_arguments_and_result_from_attributes_json_read():
    assert m.tool_arguments(sp(gen_ai__tool__call__arguments='{"a": 1}', input__value="x")) == {"a": 1}
    assert m.tool_arguments(sp(input__value="plain")) == "plain"
    assert m.tool_arguments(sp(tool__parameters='{"p": 2}')) == {"p": 2}
    assert m.tool_result(sp(gen_ai__tool__call__result="[1]", output__value="o")) == [1]
    assert m.tool_result(sp(output__value="o")) == "o"


def test_tool_events_start_and_end_from_the_span():
    events = m.tool_events(sp(start=5, end=25, gen_ai__operation__name="execute_tool"), T)
    assert [(e["event"], e["timestamp"]) for e in events] == [
        ("started", "2025-12-01T12:00:00.005000+00:00"), ("completed", "2025-12-01T12:00:00.025000+00:00")]


def test_an_unended_tool_span_gives_only_started():
    assert [e["event"] for e in m.tool_events(sp(end=None, gen_ai__tool__name="x"), T)] == ["started"]


def test_step_id_is_the_parent_when_it_is_a_step():
    events = m.tool_events(sp(parent="c" * 16, gen_ai__tool__name="x"), T, {"c" * 16})
    assert events[0]["step_id"] == "c" * 16
    assert "step_id" not in m.tool_events(sp(parent="d" * 16, gen_ai__tool__name="x"), T, {"c" * 16})[0]


@pytest.mark.parametrize("span,error", [
    (sp(status="ERROR", message="boom"), "boom"),
    (sp(status="ERROR"), "status ERROR"),
    (sp(error__type="TimeoutError"), "TimeoutError"),
    (sp(events=[{"name": "exception", "attributes": {"exception.type": "ValueError",
                                                     "exception.message": "bad"}}]), "ValueError: bad"),
    (sp(gen_ai__tool__call__result=json.dumps({"isError": True, "content": [
        {"type": "text", "text": "no such file"}]})), "no such file"),
    (sp(gen_ai__tool__call__result=json.dumps({"isError": False, "content": []})), None),
    (sp(status="OK"), None),
])
def test_failure_rules(span, error):
    span["attributes"].setdefault("gen_ai.operation.name", "execute_tool")
    assert m.tool_error(span) == error
    assert m.tool_events(span, T)[-1]["event"] == ("failed" if error else "completed")


# --- evidence -----------------------------------------------------------------------------

def test_evidence_from_genai_retrieval_documents():
    span = sp(gen_ai__operation__name="retrieval", gen_ai__retrieval__documents=json.dumps(
        [{"id": "doc_1", "content": "x" * 1500, "score": 0.9}, {"id": "doc_2", "score": 0.5}]))
    facts = m.retrieval(span)
    assert (facts["match_level"], facts["hit_count"]) == ("L1", 2)
    assert facts["evidence_refs"] == [{"ref": "doc_1", "excerpt": "x" * 1000},
                                      {"ref": "doc_2", "excerpt": None}]
    assert m.tool_events(span, T)[-1]["retrieval"] == facts


def test_evidence_from_openinference_documents_in_index_order():
    span = sp(openinference__span__kind="RETRIEVER", **{
        "retrieval.documents.1.document.id": "d2", "retrieval.documents.1.document.content": "two",
        "retrieval.documents.0.document.content": "one", "retrieval.documents.0.document.score": 0.8})
    assert m.retrieval(span)["evidence_refs"] == [{"ref": "one", "excerpt": "one"},
                                                  {"ref": "d2", "excerpt": "two"}]


def test_match_level_rule():
    assert m.retrieval(sp(gen_ai__operation__name="retrieval")) == {
        "match_level": None, "hit_count": 0, "evidence_refs": []}
    exact = sp(gen_ai__operation__name="retrieval", reviewapp__retrieval__match_level="L0",
               gen_ai__retrieval__documents='[{"id": "k"}]')
    assert m.retrieval(exact)["match_level"] == "L0"


def test_citations_from_reviewapp_citations_on_the_answer_span():
    cited = json.dumps([{"id": "c1", "title": "T", "source": "s", "excerpt": "e",
                         "evidence_ref": "doc_1", "extra": 1}, {"title": "no id"}, "junk"])
    doc = m.run_document([root(gen_ai__output__messages=msgs("assistant", "A"),
                               reviewapp__citations=cited)])
    answer = doc["messages"][-1]
    assert answer["metadata"]["citations"] == [
        {"id": "c1", "title": "T", "source": "s", "excerpt": "e", "evidence_ref": "doc_1"},
        {"id": "c2", "title": "no id"}]


# --- steps, evaluations, status -----------------------------------------------------------

def test_other_spans_become_steps_in_start_order_with_duration():
    spans = [root(end=100), sp("3" * 16, "guardrail", start=50, end=55, status="ERROR", message="blocked"),
             sp("2" * 16, "chat gpt", start=10, end=40, gen_ai__operation__name="chat",
                gen_ai__request__model="gpt"),
             sp("4" * 16, "execute_tool x", gen_ai__operation__name="execute_tool")]
    steps = m.run_document(spans)["steps"]
    assert [(s["id"], s["name"], s["status"], s["summary"]) for s in steps] == [
        ("2" * 16, "chat gpt", "completed", "gpt"), ("3" * 16, "guardrail", "failed", "blocked")]
    assert (steps[0]["started_at"], steps[0]["finished_at"]) == (
        "2025-12-01T12:00:00.010000+00:00", "2025-12-01T12:00:00.040000+00:00")


def test_evaluations_are_kept_as_the_agents_own():
    event = {"name": "gen_ai.evaluation.result", "attributes": {
        "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.8,
        "gen_ai.evaluation.score.label": "relevant", "gen_ai.evaluation.explanation": "ok"}}
    spans = [root(events=[event]), sp(**{"annotations.hallucination.label": "factual",
                                         "evaluations.qa.score": 1.0})]
    evaluated = m.run_document(spans)["orchestration_trace"]["agent_evaluations"]
    assert evaluated == [
        {"name": "relevance", "score": 0.8, "label": "relevant", "explanation": "ok",
         "span_id": "1" * 16, "source": "gen_ai.evaluation.result"},
        {"attributes": {"annotations.hallucination.label": "factual", "evaluations.qa.score": 1.0},
         "span_id": "a" * 16, "source": "openinference"}]


@pytest.mark.parametrize("spans,status", [
    ([sp()], "RUNNING"),
    ([root(end=None)], "RUNNING"),
    ([root()], "SUCCESS"),
    ([root(status="OK")], "SUCCESS"),
    ([root(status="ERROR")], "FAILED"),
])
def test_run_status(spans, status):
    doc = m.run_document(spans)
    assert doc["status"] == status
    assert (doc.get("finished_at") is not None) == (status != "RUNNING")


def test_the_document_does_not_depend_on_span_order_or_repeats():
    spans = [root(gen_ai__output__messages=msgs("assistant", "A")), sp("2" * 16, start=3),
             sp("3" * 16, start=1)]
    assert m.run_document(spans) == m.run_document([spans[2], spans[0], spans[1], spans[0]])


@pytest.mark.parametrize("change,problem", [
    ({"trace_id": "0" * 32}, "traceId"), ({"trace_id": "XYZ"}, "traceId"),
    ({"span_id": "0" * 16}, "spanId"), ({"start_ns": 5}, "startTimeUnixNano"),
    ({"end_ns": BASE - 1}, "endTimeUnixNano: before"),
])
def test_unusable_spans(change, problem):
    assert problem in m.span_problem({**sp(), **change})
    assert m.span_problem(sp()) is None


# --- rows and variants without a test before ----------------------------------------------

def test_run_id_is_the_trace_id():
    assert m.run_document([root()])["orchestration_trace"]["trace_id"] == T
    events = m.tool_events(sp(gen_ai__tool__name="x"), T)
    assert {e["run_id"] for e in events} == {T}


@pytest.mark.parametrize("value,kind", [("aiops", "aiops"), ("chat", "chat"), ("AIOPS", "chat"),
                                        (None, "chat")])
def test_kind_aiops_only_when_the_root_says_so(value, kind):
    attrs = {} if value is None else {"reviewapp__run__kind": value}
    assert m.run_document([root(**attrs)])["kind"] == kind
    # on another span than the root it does not count
    assert m.run_document([root(), sp(reviewapp__run__kind="aiops")])["kind"] == "chat"


def test_call_id_from_tool_call_id_attribute():
    assert m.call_id(sp(tool_call__id="tc"), T) == f"{T}/tc"


def test_evidence_from_reranker_output_documents():
    span = sp(openinference__span__kind="RERANKER", **{
        "reranker.output_documents.0.document.id": "kept",
        "reranker.output_documents.0.document.content": "best"})
    assert m.retrieval(span) == {"match_level": "L1", "hit_count": 1,
                                 "evidence_refs": [{"ref": "kept", "excerpt": "best"}]}

