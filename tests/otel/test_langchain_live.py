"""A LangChain agent (langchain-core, a fake chat model, real tools and a retriever) with
``ReviewappCallbackHandler`` against a live reviewapp; read back through the trace API."""

from __future__ import annotations

import logging
import threading

import pytest
import requests
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import ToolException, tool

from reviewapp.client import ReviewappClient
from reviewapp.langchain_handler import ReviewappCallbackHandler


@tool
def query_logs(service: str) -> str:
    """Search the logs of a service."""
    return f"{service}: 37 OOMKilled lines"


@tool
def query_metrics(metric: str) -> str:
    """Read a metric."""
    raise TimeoutError("prometheus did not answer")


@tool
def restart_pod(pod: str) -> str:
    """Restart a pod."""
    raise ToolException(f"permission denied for {pod}")


restart_pod.handle_tool_error = True  # the failure comes back as a ToolMessage(status="error")


class Runbooks(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager=None) -> list[Document]:
        return [Document(id="rb-12", page_content="checkout pods are OOM-killed above 2 GiB",
                         metadata={"source": "kb://runbooks/checkout"})]


TOOLS = {t.name: t for t in (query_logs, query_metrics, restart_pod)}
PLAN = AIMessage(content="", tool_calls=[
    {"name": "query_logs", "args": {"service": "checkout"}, "id": "call_logs"},
    {"name": "query_metrics", "args": {"metric": "mem"}, "id": "call_metrics"},
    {"name": "restart_pod", "args": {"pod": "checkout-1"}, "id": "call_restart"},
])
ANSWER = "The checkout pods were OOM-killed."


def agent(inputs: dict, config: RunnableConfig) -> dict:
    """A tool-calling loop: plan, run each tool, read a runbook, answer."""
    model = FakeMessagesListChatModel(responses=[PLAN, AIMessage(content=ANSWER)])
    messages = [HumanMessage(inputs["input"])]
    plan = model.invoke(messages, config)
    messages.append(plan)
    for call in plan.tool_calls:
        try:
            messages.append(TOOLS[call["name"]].invoke(call, config))
        except TimeoutError as exc:
            messages.append(ToolMessage(str(exc), tool_call_id=call["id"], status="error"))
    docs = Runbooks().invoke("checkout memory", config)
    messages.append(HumanMessage(docs[0].page_content))
    return {"output": model.invoke(messages, config).content}


@pytest.fixture
def token(make, ws):
    return make.token(ws, "langchain")


def test_langchain_agent_with_the_handler_makes_a_reviewable_run(live_server, token):
    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)
    result = RunnableLambda(agent).invoke(
        {"input": "Why is checkout returning 502?"},
        config={"callbacks": [handler], "metadata": {"reviewapp_run_id": "lc-run-1",
                                                     "session_id": "conv-lc"}})
    assert result == {"output": ANSWER}
    assert client.flush(30)
    client.close()
    assert (client.dropped, client.rejected) == (0, 0)

    t = requests.get(f"{live_server}/api/runs/lc-run-1/trace",
                     headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
    run = t["run"]
    assert (run["status"], run["sessionId"], run["query"], run["answer"]) == (
        "SUCCESS", "conv-lc", "Why is checkout returning 502?", ANSWER)
    calls = {c["toolName"]: c for c in t["toolCalls"]}
    assert set(calls) == {"query_logs", "query_metrics", "restart_pod", "Runbooks"}
    logs, metrics, restart, kb = (calls[n] for n in ("query_logs", "query_metrics", "restart_pod",
                                                      "Runbooks"))
    assert (logs["id"], logs["status"], logs["arguments"]) == (
        "lc-run-1/call_logs", "completed", {"service": "checkout"})
    assert "37 OOMKilled lines" in logs["resultSummary"]
    assert (metrics["status"], metrics["errorMessage"]) == (
        "failed", "TimeoutError: prometheus did not answer")
    assert restart["status"] == "failed" and "permission denied for checkout-1" in restart["errorMessage"]
    assert (kb["status"], kb["matchLevel"], kb["hitCount"]) == ("completed", "L1", 1)
    assert kb["evidenceRefs"] == [{"ref": "rb-12", "excerpt": "checkout pods are OOM-killed above 2 GiB"}]
    for call in calls.values():
        assert call["durationMs"] is not None and call["durationMs"] >= 0
        assert not call["compensated"]
    assert t["selfEvaluation"]["rule_evaluation"]["evidence_score"] == 50  # +30 ok, +20 L1


def test_a_root_chain_error_fails_the_run_and_an_interrupt_does_not(live_server, token):
    class GraphInterrupt(Exception):  # LangGraph's name; langgraph itself is not needed
        pass

    def boom(inputs: dict) -> dict:
        raise RuntimeError("model unavailable")

    def pause(inputs: dict) -> dict:
        raise GraphInterrupt("waiting for a human")

    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)
    for run_id, fn in (("lc-fail", boom), ("lc-pause", pause)):
        with pytest.raises((RuntimeError, GraphInterrupt)):
            RunnableLambda(fn).invoke({"input": "q"}, config={
                "callbacks": [handler], "metadata": {"reviewapp_run_id": run_id}})
    client.close()
    statuses = {run_id: requests.get(f"{live_server}/api/runs/{run_id}/trace", timeout=30,
                                     headers={"Authorization": f"Bearer {token}"}).json()["run"]["status"]
                for run_id in ("lc-fail", "lc-pause")}
    assert statuses == {"lc-fail": "FAILED", "lc-pause": "RUNNING"}
    # an interrupted root is forgotten like an ended one (a long-lived handler must not grow)
    assert (handler._roots, handler._owner, handler._calls) == ({}, {}, {})


def test_one_handler_shared_by_agents_on_many_threads(live_server, token):
    """Thread-safe: eight agents invoked at once on eight threads through one handler and
    one client each end as their own complete run."""
    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            RunnableLambda(agent).invoke({"input": f"question {n}"}, config={
                "callbacks": [handler], "metadata": {"reviewapp_run_id": f"lc-thread-{n}"}})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    client.close()
    assert (client.dropped, client.rejected) == (0, 0)
    for n in range(8):
        t = requests.get(f"{live_server}/api/runs/lc-thread-{n}/trace", timeout=30,
                         headers={"Authorization": f"Bearer {token}"}).json()
        assert (t["run"]["status"], t["run"]["query"]) == ("SUCCESS", f"question {n}")
        assert sorted(c["status"] for c in t["toolCalls"]) == [
            "completed", "completed", "failed", "failed"]
        assert {c["id"].split("/")[0] for c in t["toolCalls"]} == {f"lc-thread-{n}"}


def test_thread_id_is_the_session_and_the_langchain_run_id_the_run(live_server, token):
    """Without ``reviewapp_run_id`` the run is the root's LangChain run id; LangGraph's
    ``thread_id`` is the session when no ``session_id`` is given."""
    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)

    def answer(inputs: dict) -> dict:
        return {"output": "ok"}

    run_id = "9b0f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    RunnableLambda(answer).invoke({"input": "q"}, config={
        "callbacks": [handler], "run_id": run_id, "metadata": {"thread_id": "thread-3"}})
    client.close()
    assert client.dropped == 0
    t = requests.get(f"{live_server}/api/runs/{run_id}/trace", timeout=30,
                     headers={"Authorization": f"Bearer {token}"}).json()
    assert (t["run"]["runId"], t["run"]["sessionId"], t["run"]["status"], t["run"]["answer"]) == (
        run_id, "thread-3", "SUCCESS", "ok")


@pytest.mark.parametrize("name", ["GraphInterrupt", "GraphBubbleUp"])
def test_a_tool_interrupted_by_langgraph_is_not_a_failure(live_server, token, name):
    """A tool that raises LangGraph's interrupt (or a bubble-up) has not failed: its call
    stays ``started``, and the run, interrupted too, stays RUNNING."""
    interrupt = type(name, (Exception,), {})

    @tool
    def ask_human(question: str) -> str:
        """Ask a human."""
        raise interrupt("waiting for a human")

    def graph(inputs: dict, config: RunnableConfig) -> dict:
        return {"output": ask_human.invoke({"question": "restart?"}, config)}

    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)
    with pytest.raises(interrupt):
        RunnableLambda(graph).invoke({"input": "q"}, config={
            "callbacks": [handler], "metadata": {"reviewapp_run_id": f"lc-{name}"}})
    client.close()
    t = requests.get(f"{live_server}/api/runs/lc-{name}/trace", timeout=30,
                     headers={"Authorization": f"Bearer {token}"}).json()
    assert t["run"]["status"] == "RUNNING"
    assert [(c["toolName"], c["status"], c["errorMessage"]) for c in t["toolCalls"]] == [
        ("ask_human", "started", None)]


def test_a_bad_event_in_a_client_batch_is_rejected_alone(live_server, token):
    """The client (and so the LangChain handler) sends tool events in batches: an event whose
    id holds a NUL character (e.g. a tool_call_id the model made up) is rejected on its own,
    counted in ``client.rejected``, and the events batched with it are stored. It used to
    make the whole batch a 400, every event of it dropped."""
    client = ReviewappClient(live_server, token)
    client.put_run("lc-batch", {"query": "q"})  # the events queue behind it: one batch
    for call_id in ("lc-batch/ok-1", "lc-batch/bad\x00", "lc-batch/ok-2"):
        client.tool_event({"id": call_id, "run_id": "lc-batch", "event": "started", "tool_name": "t"})
    assert client.flush(30)
    client.close()
    t = requests.get(f"{live_server}/api/runs/lc-batch/trace", timeout=30,
                     headers={"Authorization": f"Bearer {token}"}).json()
    assert sorted(c["id"] for c in t["toolCalls"]) == ["lc-batch/ok-1", "lc-batch/ok-2"]
    assert (client.sent, client.rejected, client.dropped) == (4, 1, 0)  # the run and 3 events


def test_an_event_the_server_refuses_with_a_400_is_rejected_not_dropped(live_server, token, caplog):
    """An infinite number in an event's arguments: the client's JSON carries ``Infinity``,
    which the server refuses with a 400 naming ``body`` before it reads any event. Alone,
    that event was refused for its content (a retry would not help): ``rejected``, not
    ``dropped``. In a batch, the client sends the batch's events again one by one, so the
    others are stored and only that one is rejected, as the per-event answer of a batch
    counts it. Both used to be counted as dropped (the whole batch)."""
    event = {"event": "started", "tool_name": "t"}
    alone = ReviewappClient(live_server, token)
    alone.put_run("lc-inf-1", {"query": "q"})
    assert alone.flush(30)
    with caplog.at_level(logging.WARNING, logger="reviewapp.client"):
        alone.tool_event({**event, "id": "lc-inf-1/bad", "run_id": "lc-inf-1",
                          "arguments": {"n": float("inf")}})
        assert alone.flush(30)
    alone.close()
    assert (alone.sent, alone.rejected, alone.dropped) == (1, 1, 0)
    assert "event lc-inf-1/bad (started) rejected: body: malformed JSON: Infinity" in caplog.text
    assert "dropped" not in caplog.text

    batched = ReviewappClient(live_server, token)
    batched.put_run("lc-inf-3", {"query": "q"})  # the events queue behind it: one batch
    for call_id, n in (("lc-inf-3/ok-1", 1.5), ("lc-inf-3/bad", float("-inf")), ("lc-inf-3/ok-2", 2)):
        batched.tool_event({**event, "id": call_id, "run_id": "lc-inf-3", "arguments": {"n": n}})
    assert batched.flush(30)
    batched.close()
    t = requests.get(f"{live_server}/api/runs/lc-inf-3/trace", timeout=30,
                     headers={"Authorization": f"Bearer {token}"}).json()
    assert sorted(c["id"] for c in t["toolCalls"]) == ["lc-inf-3/ok-1", "lc-inf-3/ok-2"]
    assert (batched.sent, batched.rejected, batched.dropped) == (3, 1, 0)
