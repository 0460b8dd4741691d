"""The OTel mapping (``domain/otel_mapping.py``) at its edges: the limits, fallbacks,
precedences and cut lengths that ``tools/mutate.py`` found unpinned (issue 20).

Expected values are written out by hand from the rules (module docstring, SPEC 4 / 9) and
the conventions the mapping reads: OpenTelemetry GenAI (``gen_ai.operation.name``,
``gen_ai.tool.call.{id, arguments, result}``, ``gen_ai.tool.type``, ``gen_ai.input.messages``
...) and OpenInference (``openinference.span.kind``, ``input.value`` / ``output.value``,
``llm.input_messages.N.message.{role, content}``, ``message.contents.M.message_content.text``,
``retrieval.documents.N.document.{id, content, score}``).
"""

from __future__ import annotations

import json

import pytest

from reviewapp.domain import otel_mapping as m

T = "0af7651916cd43dd8448eb211c80319c"
BASE = 1_764_590_400_000_000_000  # 2025-12-01T12:00:00Z in ns
MS = 1_000_000
# Year limits of SPEC 10 / span_problem's docstring (2000-2100), in epoch seconds by hand:
# 2000-01-01 = 10,957 days after 1970-01-01; 2101-01-01 = 131 * 365 + 32 leap days = 47,847.
Y2000_NS = 946_684_800 * 1_000_000_000
Y2101_NS = 4_133_980_800 * 1_000_000_000


def sp(span_id: str = "a" * 16, name: str | None = "span", *, parent: str | None = "f" * 16,
       start: int = 0, end: int | None = 10, status: str = "UNSET", message: str = "",
       events: list | None = None, resource: dict | None = None, **attributes) -> dict:
    """A decoded span; ``start`` / ``end`` in ms after BASE (end None: not ended);
    attribute keys use ``__`` for ``.``."""
    return {"trace_id": T, "span_id": span_id, "parent_span_id": parent, "name": name,
            "start_ns": BASE + start * MS, "end_ns": BASE + end * MS if end is not None else 0,
            "status": status, "status_message": message,
            "attributes": {k.replace("__", "."): v for k, v in attributes.items()},
            "events": events or [], "resource": resource or {}}


def root(span_id: str = "1" * 16, **kw) -> dict:
    kw.setdefault("name", "invoke_agent bot")
    return sp(span_id, parent=None, **kw)


def msgs(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}
                       for role, text in pairs])


# --- span_problem ------------------------------------------------------------------------

@pytest.mark.parametrize("change,problem", [
    ({"trace_id": None}, "traceId: must be 16 bytes, not all zero"),
    ({"trace_id": T.upper()}, "traceId: must be 16 bytes, not all zero"),
    ({"trace_id": T[:-1]}, "traceId: must be 16 bytes, not all zero"),
    ({"trace_id": T + "0"}, "traceId: must be 16 bytes, not all zero"),
    ({"span_id": None}, "spanId: must be 8 bytes, not all zero"),
    ({"span_id": "A" * 16}, "spanId: must be 8 bytes, not all zero"),
    ({"span_id": "a" * 15}, "spanId: must be 8 bytes, not all zero"),
    ({"span_id": "0" * 16}, "spanId: must be 8 bytes, not all zero"),
    ({"start_ns": None}, "startTimeUnixNano: 0 is outside the years 2000-2100"),
    ({"start_ns": Y2000_NS - 1, "end_ns": 0},
     f"startTimeUnixNano: {Y2000_NS - 1} is outside the years 2000-2100"),
    ({"start_ns": Y2101_NS, "end_ns": 0},
     f"startTimeUnixNano: {Y2101_NS} is outside the years 2000-2100"),
    ({"end_ns": Y2101_NS}, f"endTimeUnixNano: {Y2101_NS} is outside the years 2000-2100"),
    ({"start_ns": Y2000_NS, "end_ns": Y2000_NS - 1},
     f"endTimeUnixNano: {Y2000_NS - 1} is outside the years 2000-2100"),
    ({"end_ns": BASE - 1}, "endTimeUnixNano: before startTimeUnixNano"),
])
def test_span_problem_names_the_field(change, problem):
    assert m.span_problem({**sp(end=None), **change}) == problem


@pytest.mark.parametrize("change", [
    {"start_ns": Y2000_NS, "end_ns": Y2000_NS},          # the first nanosecond of 2000
    {"start_ns": Y2101_NS - 1, "end_ns": Y2101_NS - 1},  # the last nanosecond of 2100
    {"start_ns": BASE, "end_ns": 0},                     # not ended
    {"start_ns": BASE, "end_ns": None},
    {"start_ns": BASE, "end_ns": BASE},                  # zero length
    {"trace_id": "0" * 31 + "1", "span_id": "0" * 15 + "1"},
])
def test_usable_spans_at_the_limits(change):
    assert m.span_problem({**sp(), **change}) is None


# --- times ---------------------------------------------------------------------------------

def test_iso_keeps_microseconds_and_drops_the_rest():
    assert m.iso(BASE + 1_234_567) == "2025-12-01T12:00:00.001234+00:00"
    assert m.iso(BASE + 999) == "2025-12-01T12:00:00+00:00"
    assert m.iso(Y2000_NS) == "2000-01-01T00:00:00+00:00"
    assert m.iso(0) is None
    assert m.iso(None) is None


# --- which spans ---------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,tool", [
    ({"gen_ai__tool__call__arguments": "{}"}, True),
    ({"gen_ai__tool__call__result": "ok"}, True),
    ({"gen_ai__tool__type": "function"}, True),
    ({"openinference__span__kind": "tool"}, True),       # the kind is read in upper case
    ({"openinference__span__kind": "RETRIEVER"}, True),
    ({"openinference__span__kind": "retriever"}, True),
    ({"gen_ai__operation__name": "chat"}, False),
    ({"openinference__span__kind": "LLM"}, False),
    ({"tool__name": "x"}, False),                        # OpenInference tool.name alone: not a call
    ({}, False),
])
def test_more_tool_spans(attrs, tool):
    assert m.is_tool(sp(**attrs)) is tool


@pytest.mark.parametrize("attrs,retrieval", [
    ({"gen_ai__operation__name": "retrieval"}, True),
    ({"openinference__span__kind": "RETRIEVER"}, True),
    ({"openinference__span__kind": "reranker"}, True),
    ({"gen_ai__operation__name": "execute_tool"}, False),
    ({"openinference__span__kind": "TOOL"}, False),
    ({}, False),
])
def test_which_spans_are_retrievals(attrs, retrieval):
    assert m.is_retrieval(sp(**attrs)) is retrieval


def test_a_root_has_no_parent_id():
    assert m.is_root(sp(parent=None)) is True
    assert m.is_root(sp(parent="")) is True
    assert m.is_root(sp(parent="b" * 16)) is False


# --- tool name, call id, arguments, result ---------------------------------------------------

def test_tool_name_fallbacks_and_cut():
    assert m.tool_name(sp(name="execute_tool a", gen_ai__tool__name="")) == "a"
    assert m.tool_name(sp(name="search", gen_ai__tool__name="  b  ")) == "b"
    assert m.tool_name(sp(name="search")) == "search"
    assert m.tool_name(sp(name=None)) == "tool"
    assert m.tool_name(sp(name="   ")) == "tool"
    assert m.tool_name(sp(name="x", gen_ai__tool__name=7)) == "7"
    assert m.tool_name(sp(name="x", gen_ai__tool__name="n" * 250)) == "n" * 200
    assert m.tool_name(sp(name="execute_tool " + "n" * 250)) == "n" * 200


def test_call_id_precedence_zero_and_cut():
    assert m.call_id(sp(tool__id="t", tool_call__id="tc"), T) == f"{T}/t"
    assert m.call_id(sp(gen_ai__tool__call__id="", tool_call__id="tc"), T) == f"{T}/tc"
    assert m.call_id(sp(gen_ai__tool__call__id=0), T) == f"{T}/0"
    long = m.call_id(sp(gen_ai__tool__call__id="c" * 300), T)
    assert long == f"{T}/" + "c" * (160 - 33)
    assert len(long) == 160


def test_arguments_and_result_precedence_and_json_reading():
    assert m.tool_arguments(sp(input__value='{"i": 1}', tool__parameters='{"p": 2}')) == {"i": 1}
    assert m.tool_arguments(sp(gen_ai__tool__call__arguments="", input__value="x")) == "x"
    assert m.tool_arguments(sp()) is None
    assert m.tool_arguments(sp(input__value="{not json")) == "{not json"
    assert m.tool_arguments(sp(input__value=" [1]")) == " [1]"   # JSON only from its first character
    assert m.tool_arguments(sp(input__value={"already": "decoded"})) == {"already": "decoded"}
    assert m.tool_result(sp(gen_ai__tool__call__result="", output__value='{"o": 1}')) == {"o": 1}
    assert m.tool_result(sp()) is None


# --- failures --------------------------------------------------------------------------------

def exc(**attrs) -> dict:
    return {"name": "exception", "attributes": attrs}


@pytest.mark.parametrize("span,error", [
    (sp(events=[exc(**{"exception.type": "ValueError"})]), "ValueError"),
    (sp(events=[exc(**{"exception.message": "bad"})]), "bad"),
    (sp(events=[exc(**{"exception.type": "", "exception.message": "bad"})]), "bad"),
    (sp(events=[exc()]), "exception"),
    (sp(events=[{"name": "exception"}]), "exception"),
    (sp(events=[{"name": "log", "attributes": {"exception.type": "X"}}]), None),
    (sp(events=[{"name": "log"}, exc(**{"exception.type": "A"}), exc(**{"exception.type": "B"})]), "A"),
    # the exception event is the error even when the status says something else
    (sp(status="ERROR", message="boom", events=[exc(**{"exception.type": "E"})]), "E"),
    (sp(error__type="TimeoutError", message="slow"), "TimeoutError: slow"),
    (sp(status="ERROR", error__type=""), "status ERROR"),
    (sp(error__type=""), None),
    (sp(status="OK", message="fine"), None),
    (sp(status="UNSET", message="note"), None),
])
def test_failure_rules_in_order(span, error):
    assert m.tool_error(span) == error


def test_a_span_without_events_or_attributes():
    span = {"trace_id": T, "span_id": "a" * 16, "start_ns": BASE, "end_ns": BASE + MS,
            "events": None, "attributes": None}
    assert m.tool_error(span) is None
    assert m.is_tool(span) is False
    assert m.tool_name(span) == "tool"


# --- documents and evidence ------------------------------------------------------------------

def test_genai_documents_as_a_list_keep_only_id_content_score():
    span = sp(gen_ai__retrieval__documents=[{"id": "d", "content": "c", "score": 1, "x": 2},
                                            "junk", {"content": "only"}])
    assert m.documents(span) == [{"id": "d", "content": "c", "score": 1},
                                 {"id": None, "content": "only", "score": None}]


def test_genai_documents_that_are_no_list_fall_back_to_openinference():
    span = sp(gen_ai__retrieval__documents='{"id": "d"}',
              **{"retrieval.documents.0.document.id": "oi"})
    assert m.documents(span) == [{"id": "oi", "content": None, "score": None}]


def test_openinference_documents_skip_other_keys():
    span = sp(**{"retrieval.documents.x.document.id": "bad index",
                 "retrieval.documents.0.document.metadata": "{}",
                 "retrieval.documents.1.document.score": 0.5,
                 "retrieval.documents.10.document.id": "ten",
                 "retrieval.documents.2.id": "no document part",
                 "other.documents.0.document.id": "other"})
    assert m.documents(span) == [{"id": None, "content": None, "score": 0.5},
                                 {"id": "ten", "content": None, "score": None}]
    assert m.documents(sp()) == []


def test_retriever_documents_win_over_reranker_output():
    span = sp(**{"retrieval.documents.0.document.id": "r",
                 "reranker.output_documents.0.document.id": "k"})
    assert m.documents(span) == [{"id": "r", "content": None, "score": None}]


def test_evidence_refs_ids_contents_and_cuts():
    facts = m.evidence([{"id": 7, "content": "seven"},
                        {"content": "c" * 250},
                        {"id": "", "content": ""},          # neither: no ref, still a hit
                        {"id": "i" * 2100, "content": {"k": "é"}}])
    assert facts["hit_count"] == 4
    assert facts["match_level"] == "L1"
    assert facts["evidence_refs"] == [
        {"ref": "7", "excerpt": "seven"},
        {"ref": "c" * 200, "excerpt": "c" * 250},
        {"ref": "i" * 2000, "excerpt": '{"k": "é"}'}]


@pytest.mark.parametrize("docs,given,level", [
    ([], "L0", "L0"), ([], "L1", "L1"), ([], "L2", None), ([], None, None),
    ([{"id": "a"}], "L2", "L1"), ([{"id": "a"}], "l0", "L1"), ([{"id": "a"}], "L0", "L0"),
])
def test_match_level_given_or_derived(docs, given, level):
    assert m.evidence(docs, given)["match_level"] == level


def test_excerpt_cut_at_a_thousand():
    facts = m.evidence([{"id": "a", "content": "x" * 1001}, {"id": "b", "content": "y" * 1000}])
    assert [len(r["excerpt"]) for r in facts["evidence_refs"]] == [1000, 1000]


# --- tool events -------------------------------------------------------------------------------

def test_tool_events_carry_every_field():
    span = sp("b" * 16, "execute_tool grep", parent="c" * 16, start=5, end=25,
              gen_ai__tool__call__id="call_9", gen_ai__tool__call__arguments='{"q": "x"}',
              gen_ai__tool__call__result="found")
    started, completed = m.tool_events(span, T, {"c" * 16})
    assert started == {"id": f"{T}/call_9", "run_id": T, "event": "started", "tool_name": "grep",
                       "arguments": {"q": "x"}, "timestamp": "2025-12-01T12:00:00.005000+00:00",
                       "step_id": "c" * 16}
    assert completed == {"id": f"{T}/call_9", "run_id": T, "tool_name": "grep",
                         "event": "completed", "output": "found",
                         "timestamp": "2025-12-01T12:00:00.025000+00:00"}


def test_failed_tool_event_has_the_error_and_retrieval_facts():
    span = sp(parent=None, gen_ai__operation__name="retrieval", status="ERROR", message="down")
    started, failed = m.tool_events(span, T, {"f" * 16})
    assert "step_id" not in started
    assert failed["event"] == "failed"
    assert failed["error"] == "down"
    assert failed["retrieval"] == {"match_level": None, "hit_count": 0, "evidence_refs": []}


# --- query and answer --------------------------------------------------------------------------

def test_genai_messages_take_the_last_user_and_assistant_texts():
    value = json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "first"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "a1"}]},
        {"role": "user", "parts": [{"type": "text", "content": "one"},
                                   {"type": "image", "content": "img"},
                                   {"type": "text", "content": ""},
                                   "junk",
                                   {"type": "text", "content": "two"}]},
        {"role": "user", "parts": []},                        # empty: skipped
        {"role": "system", "content": "legacy content"},
        "junk"])
    spans = [root(gen_ai__input__messages=value)]
    # the query is the last user text; the answer comes from the output messages only
    assert m.query_and_answer(spans) == ("one\ntwo", None, spans[0])


def test_genai_message_without_role_is_the_assistant_and_content_may_be_plain():
    out = json.dumps([{"content": "plain answer"}, {"role": "assistant", "content": 5}])
    spans = [root(gen_ai__output__messages=out)]
    assert m.query_and_answer(spans) == (None, "plain answer", spans[0])


def test_genai_messages_as_decoded_lists_and_non_lists():
    spans = [root(gen_ai__input__messages=[{"role": "user", "content": "Q"}],
                  gen_ai__output__messages='{"role": "assistant"}')]
    assert m.query_and_answer(spans) == ("Q", None, spans[0])


@pytest.mark.parametrize("value,query", [
    ('{"input": "i", "query": "q"}', "i"),
    ('{"query": "q", "question": "x"}', "q"),
    ('{"question": "x"}', "x"),
    ('{"input": "", "query": 5, "question": "x"}', "x"),
    ('{"other": 1}', '{"other": 1}'),
    ('[1, 2]', "[1, 2]"),
    ("plain", "plain"),
    (42, "42"),
])
def test_input_value_query(value, query):
    spans = [root(input__value=value)]
    assert m.query_and_answer(spans) == (query, None, spans[0])


@pytest.mark.parametrize("value,answer", [
    ('{"output": "o", "answer": "a"}', "o"),
    ('{"answer": "a", "content": "c"}', "a"),
    ('{"content": "c"}', "c"),
])
def test_output_value_answer(value, answer):
    spans = [root(output__value=value)]
    assert m.query_and_answer(spans) == (None, answer, spans[0])


def test_empty_input_value_is_no_query():
    assert m.query_and_answer([root(input__value="")]) == (None, None, None)
    assert m.query_and_answer([]) == (None, None, None)


def test_genai_messages_win_over_input_value_on_the_same_span():
    spans = [root(gen_ai__output__messages=msgs(("assistant", "A")), input__value="Q2")]
    assert m.query_and_answer(spans) == (None, "A", spans[0])


def test_root_before_agent_spans_and_agents_in_start_order():
    agent1 = sp("2" * 16, start=1, openinference__span__kind="AGENT", output__value="A1")
    agent2 = sp("3" * 16, start=2, gen_ai__operation__name="invoke_agent", output__value="A2")
    assert m.query_and_answer([agent2, root(), agent1]) == (None, "A1", agent1)
    with_root = root(output__value="R")
    assert m.query_and_answer([agent1, with_root]) == (None, "R", with_root)
    plain = sp("4" * 16, start=0, output__value="not an agent")
    assert m.query_and_answer([plain, root(), agent2]) == (None, "A2", agent2)


def test_the_earliest_root_is_the_root():
    late = root("2" * 16, start=5, output__value="late")
    early = root("3" * 16, start=1, output__value="early")
    assert m.root_span([late, early]) is early
    tie_b, tie_a = root("b" * 16, start=1), root("a" * 16, start=1)
    assert m.root_span([tie_b, tie_a]) is tie_a
    assert m.root_span([sp()]) is None
    unstarted = {**root("c" * 16), "start_ns": None}
    assert m.root_span([early, unstarted]) is unstarted


def test_llm_spans_by_kind_or_operation():
    for attrs in ({"openinference__span__kind": "llm"}, {"gen_ai__operation__name": "chat"},
                  {"gen_ai__operation__name": "text_completion"},
                  {"gen_ai__operation__name": "generate_content"}):
        span = sp(gen_ai__output__messages=msgs(("assistant", "A")), **attrs)
        assert m.query_and_answer([root(), span]) == (None, "A", span), attrs
    other = sp(gen_ai__operation__name="embeddings", gen_ai__output__messages=msgs(("assistant", "A")))
    assert m.query_and_answer([root(), other]) == (None, None, None)


def test_llm_query_only_has_no_carrier():
    llm = sp(gen_ai__operation__name="chat", gen_ai__input__messages=msgs(("user", "Q")))
    assert m.query_and_answer([root(), llm]) == ("Q", None, None)


def test_llm_flat_messages_win_over_genai_messages():
    llm = sp(openinference__span__kind="LLM",
             gen_ai__input__messages=msgs(("user", "genai Q")),
             gen_ai__output__messages=msgs(("assistant", "genai A")),
             **{"llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "flat Q",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "flat A"})
    assert m.query_and_answer([root(), llm]) == ("flat Q", "flat A", llm)


def test_llm_flat_messages_parts_roles_and_indices():
    llm = sp(openinference__span__kind="LLM", **{
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.1.message_content.text": "second",
        "llm.input_messages.0.message.contents.0.message_content.text": "first",
        "llm.input_messages.0.message.contents.x.message_content.text": "bad index",
        "llm.input_messages.0.message.contents.2.message_content.type": "text",
        "llm.input_messages.x.message.content": "bad message index",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": 5,               # not a text: its parts (none)
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.content": "not a user",
        "llm.output_messages.0.message.content": "no role is the assistant",
        "llm.output_messages.1.message.role": "user",
        "llm.output_messages.1.message.content": "a user in the output"})
    assert m.query_and_answer([root(), llm]) == ("first\nsecond", "no role is the assistant", llm)


def test_llm_flat_messages_ten_after_two():
    llm = sp(openinference__span__kind="LLM", **{
        "llm.output_messages.10.message.role": "assistant",
        "llm.output_messages.10.message.content": "ten",
        "llm.output_messages.2.message.role": "assistant",
        "llm.output_messages.2.message.content": "two"})
    assert m.query_and_answer([root(), llm])[1] == "ten"


def test_several_llm_spans_first_query_last_answer_in_start_order():
    a = sp("2" * 16, start=1, gen_ai__operation__name="chat",
           gen_ai__input__messages=msgs(("user", "Q1")), gen_ai__output__messages=msgs(("assistant", "A1")))
    b = sp("3" * 16, start=2, gen_ai__operation__name="chat",
           gen_ai__input__messages=msgs(("user", "Q2")), gen_ai__output__messages=msgs(("assistant", "A2")))
    c = sp("4" * 16, start=3, gen_ai__operation__name="chat",
           gen_ai__input__messages=msgs(("user", "Q3")))
    assert m.query_and_answer([c, b, root(), a]) == ("Q1", "A2", b)


def test_deprecated_prompt_and_completion_details():
    only_prompt = sp(gen_ai__prompt="Q")
    assert m.query_and_answer([root(), only_prompt]) == ("Q", None, None)
    structured = sp(gen_ai__prompt=[{"role": "user", "content": "Q"}], gen_ai__completion="")
    assert m.query_and_answer([root(), structured]) == ('[{"content": "Q", "role": "user"}]', None, None)
    flat = sp(gen_ai__prompt="plain", **{"gen_ai.prompt.0.role": "system",
                                         "gen_ai.prompt.0.content": "sys",
                                         "gen_ai.completion.0.content": "A"})
    assert m.query_and_answer([root(), flat]) == ("plain", "A", flat)
    first = sp("2" * 16, start=1, gen_ai__completion="first")
    second = sp("3" * 16, start=2, gen_ai__completion="second")
    assert m.query_and_answer([second, root(), first]) == (None, "first", first)


# --- citations ---------------------------------------------------------------------------------

def test_citations_positions_texts_cuts_and_fallback_span():
    cited = ["junk", {"id": "", "title": 5, "source": None}, {"id": 9, "excerpt": {"a": 1}},
             {"id": "i" * 200, "evidence_ref": "r"}]
    answer = sp("2" * 16, start=2, gen_ai__operation__name="chat",
                gen_ai__output__messages=msgs(("assistant", "A")))
    holder = sp("3" * 16, start=1, reviewapp__citations=json.dumps(cited))
    doc = m.run_document([root(), holder, answer])
    assert doc["messages"][-1]["metadata"]["citations"] == [
        {"id": "c2", "title": "5"}, {"id": "9", "excerpt": '{"a": 1}'},
        {"id": "i" * 160, "evidence_ref": "r"}]


def test_citations_of_the_carrier_win_and_an_empty_list_is_no_metadata():
    carrier = root(gen_ai__output__messages=msgs(("assistant", "A")),
                   reviewapp__citations=json.dumps([{"id": "mine"}]))
    other = sp("0" * 15 + "1", start=-5, reviewapp__citations=json.dumps([{"id": "other"}]))
    assert m.citations(carrier, [other, carrier]) == [{"id": "mine"}]
    assert m.citations(None, [carrier, other]) == [{"id": "other"}]
    assert m.citations(None, [sp(reviewapp__citations="not json")]) == []
    none_cited = root(gen_ai__output__messages=msgs(("assistant", "A")), reviewapp__citations="[]")
    assert m.run_document([none_cited])["messages"][-1] == {
        "id": "otel:answer", "role": "assistant", "content": "A"}


# --- run identity ------------------------------------------------------------------------------

def test_attribute_preference_beats_span_order():
    spans = [root(session__id="s"), sp(gen_ai__conversation__id="conv")]
    assert m.session_id(spans) == "conv"
    spans = [root(agent__name="oi"), sp(gen_ai__agent__name="genai")]
    assert m.agent_name(spans) == "genai"


def test_root_then_start_order_for_the_same_attribute():
    spans = [sp("2" * 16, start=-5, session__id="early"), root(start=0, session__id="r")]
    assert m.session_id(spans) == "r"
    spans = [sp("3" * 16, start=3, session__id="late"), sp("2" * 16, start=1, session__id="early")]
    assert m.session_id(spans) == "early"
    assert m.session_id([root(session__id=""), sp(session__id="s")]) == "s"


def test_session_id_text_and_cut():
    assert m.session_id([root(session__id=12)]) == "12"
    assert m.session_id([root(session__id="s" * 200)]) == "s" * 160
    assert m.session_id([]) is None


def test_agent_name_without_a_root():
    assert m.agent_name([sp(name="child")]) is None
    assert m.agent_name([sp(agent__name=["a", "b"])]) == '["a", "b"]'


# --- evaluations -------------------------------------------------------------------------------

def test_evaluations_skip_other_events_and_follow_start_order():
    ev = {"name": "gen_ai.evaluation.result", "attributes": {"gen_ai.evaluation.name": "n"}}
    spans = [sp("3" * 16, start=5, events=[ev]),
             sp("2" * 16, start=1, events=[{"name": "other"}, ev],
                **{"annotations.b": 2, "annotations.a": 1, "other.c": 3})]
    assert m.evaluations(spans) == [
        {"name": "n", "score": None, "label": None, "explanation": None, "span_id": "2" * 16,
         "source": "gen_ai.evaluation.result"},
        {"attributes": {"annotations.a": 1, "annotations.b": 2}, "span_id": "2" * 16,
         "source": "openinference"},
        {"name": "n", "score": None, "label": None, "explanation": None, "span_id": "3" * 16,
         "source": "gen_ai.evaluation.result"}]
    assert list(m.evaluations(spans)[1]["attributes"]) == ["annotations.a", "annotations.b"]
    assert m.evaluations([sp(events=[{"name": "gen_ai.evaluation.result"}])])[0]["name"] is None
    assert "agent_evaluations" not in m.run_document([root()])["orchestration_trace"]


# --- steps -------------------------------------------------------------------------------------

def test_step_status_summary_and_cuts():
    spans = [root(end=100),
             sp("2" * 16, "running", start=1, end=None),
             sp("3" * 16, "raised", start=2, events=[exc(**{"exception.type": "KeyError"})],
                message="ignored"),
             sp("4" * 16, None, start=3, message="m" * 600),
             sp("5" * 16, "n" * 400, start=4, openinference__span__kind="LLM",
                llm__model_name="m1", **{"llm.output_messages.0.message.content": "out"}),
             sp("6" * 16, "llm no model", start=5, gen_ai__operation__name="chat",
                gen_ai__response__model="r", gen_ai__request__model="q"),
             sp("7" * 16, "llm nothing", start=6, gen_ai__operation__name="chat"),
             sp("8" * 16, "plain", start=7)]
    steps = m.run_document(spans)["steps"]
    got = [(s["id"][0], s["name"], s["status"], s["summary"], s["finished_at"]) for s in steps]
    assert got == [
        ("2", "running", "running", None, None),
        ("3", "raised", "failed", "KeyError", "2025-12-01T12:00:00.010000+00:00"),
        ("4", "span", "completed", "m" * 500, "2025-12-01T12:00:00.010000+00:00"),
        ("5", "n" * 300, "completed", "m1 out", "2025-12-01T12:00:00.010000+00:00"),
        ("6", "llm no model", "completed", "q", "2025-12-01T12:00:00.010000+00:00"),
        ("7", "llm nothing", "completed", None, "2025-12-01T12:00:00.010000+00:00"),
        ("8", "plain", "completed", None, "2025-12-01T12:00:00.010000+00:00")]
    assert steps[0]["started_at"] == "2025-12-01T12:00:00.001000+00:00"


def test_a_running_step_that_raised_is_running():
    spans = [root(), sp("2" * 16, end=None, status="ERROR",
                        events=[exc(**{"exception.type": "E"})])]
    (step,) = m.run_document(spans)["steps"]
    assert (step["status"], step["summary"]) == ("running", "E")


def test_step_spans_leave_out_tools_and_roots():
    spans = [root(), root("2" * 16, start=3), sp("3" * 16, gen_ai__tool__name="t"),
             sp("4" * 16, start=2), sp("5" * 16, start=1)]
    assert [s["span_id"] for s in m.step_spans(spans)] == ["5" * 16, "4" * 16]


# --- the run document ----------------------------------------------------------------------------

def test_run_times_from_the_root_or_the_earliest_start():
    doc = m.run_document([root(start=3, end=50), sp(start=1)])
    assert (doc["started_at"], doc["finished_at"]) == (
        "2025-12-01T12:00:00.003000+00:00", "2025-12-01T12:00:00.050000+00:00")
    doc = m.run_document([sp("2" * 16, start=7), sp("3" * 16, start=4)])
    assert doc["started_at"] == "2025-12-01T12:00:00.004000+00:00"
    assert "finished_at" not in doc
    doc = m.run_document([sp(start=7)], earliest_start_ns=BASE + 2 * MS)
    assert doc["started_at"] == "2025-12-01T12:00:00.002000+00:00"
    doc = m.run_document([sp(start=1)], earliest_start_ns=BASE + 2 * MS)
    assert doc["started_at"] == "2025-12-01T12:00:00.001000+00:00"
    doc = m.run_document([root(start=5)], earliest_start_ns=BASE + 2 * MS)
    assert doc["started_at"] == "2025-12-01T12:00:00.005000+00:00"


def test_an_empty_trace():
    doc = m.run_document([])
    assert doc == {"kind": "chat", "query": None, "answer": None, "status": "RUNNING",
                   "started_at": None, "messages": [], "steps": [],
                   "orchestration_trace": {"source": "otlp", "trace_id": None, "agent": None,
                                           "service": {"name": None, "version": None}}}
    assert m.run_document([], earliest_start_ns=BASE)["started_at"] == "2025-12-01T12:00:00+00:00"


def test_the_resource_of_the_root_else_of_the_first_span():
    spans = [sp("3" * 16, start=1, resource={"service.name": "late"}),
             sp("2" * 16, start=0, resource={"service.name": "first", "service.version": "9"})]
    assert m.run_document(spans)["orchestration_trace"]["service"] == {"name": "first", "version": "9"}
    spans.append(root(start=5, resource={"service.name": "root"}))
    assert m.run_document(spans)["orchestration_trace"]["service"] == {"name": "root", "version": None}


def test_a_repeated_span_id_keeps_the_last_copy():
    first, again = root(end=None), root(end=20, status="ERROR")
    assert m.run_document([first, again])["status"] == "FAILED"
    assert m.run_document([again, first])["status"] == "RUNNING"


def test_kind_and_session_on_the_document():
    doc = m.run_document([root(reviewapp__run__kind="aiops", gen_ai__conversation__id="c")])
    assert (doc["kind"], doc["session_id"]) == ("aiops", "c")
    assert m.run_document([sp(reviewapp__run__kind="aiops")])["kind"] == "chat"


def test_messages_query_turns_and_answer():
    chat = sp("2" * 16, start=1, gen_ai__operation__name="chat",
              gen_ai__output__messages=msgs(("assistant", "turn")))
    same = sp("3" * 16, start=2, gen_ai__operation__name="chat",
              gen_ai__output__messages=msgs(("assistant", "A")))
    silent = sp("4" * 16, start=3, gen_ai__operation__name="chat")
    not_llm = sp("5" * 16, start=4, gen_ai__output__messages=msgs(("assistant", "no llm")))
    doc = m.run_document([root(gen_ai__input__messages=msgs(("user", "Q")),
                               gen_ai__output__messages=msgs(("assistant", "A"))),
                          chat, same, silent, not_llm])
    assert doc["messages"] == [
        {"id": "otel:query", "role": "user", "content": "Q"},
        {"id": "otel:" + "2" * 16, "role": "assistant", "content": "turn"},
        {"id": "otel:answer", "role": "assistant", "content": "A"}]


def test_the_llm_span_that_carries_the_answer_is_not_a_turn():
    a = sp("2" * 16, start=1, gen_ai__operation__name="chat",
           gen_ai__input__messages=msgs(("user", "Q")),
           gen_ai__output__messages=msgs(("assistant", "A1"), ("assistant", "A")))
    doc = m.run_document([root(), a])
    assert doc["messages"] == [{"id": "otel:query", "role": "user", "content": "Q"},
                               {"id": "otel:answer", "role": "assistant", "content": "A"}]
    doc = m.run_document([root(), sp(gen_ai__operation__name="chat",
                                     gen_ai__input__messages=msgs(("user", "Q")))])
    assert doc["messages"] == [{"id": "otel:query", "role": "user", "content": "Q"}]
    assert (doc["query"], doc["answer"]) == ("Q", None)


def test_an_empty_deprecated_prompt_is_no_query():
    span = sp(gen_ai__prompt="", gen_ai__completion="A")
    assert m.query_and_answer([root(), span]) == (None, "A", span)


def test_a_span_without_a_start_sorts_before_any_started_span():
    # start order falls back to the span id only between equal starts
    unstarted = {**sp("b" * 16), "start_ns": None}
    first_ns = {**sp("a" * 16), "start_ns": 1}
    assert [s["span_id"] for s in m.step_spans([first_ns, unstarted])] == ["b" * 16, "a" * 16]


def test_an_llm_steps_summary_is_its_status_message_when_it_has_one():
    spans = [root(),
             sp("2" * 16, "llm", start=1, gen_ai__operation__name="chat", message="rate limited",
                gen_ai__request__model="q", gen_ai__output__messages=msgs(("assistant", "out"))),
             sp("3" * 16, "llm", start=2, gen_ai__operation__name="chat", gen_ai__response__model="r"),
             sp("4" * 16, "not llm", start=3, gen_ai__request__model="q")]
    assert [s["summary"] for s in m.run_document(spans)["steps"]] == ["rate limited", "r", None]
