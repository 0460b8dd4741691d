"""The failure rules of tool results (domain/tool_failure.py): each rule fires on its
convention, and nothing else is a failure."""

from __future__ import annotations

import dataclasses
import json

import pytest

from reviewapp.domain.tool_failure import (
    FAILURE_RULES,
    failure_rule,
    footer_exit_code,
    header_exit_code,
)
from reviewapp.domain.vocabulary import UnknownValue


@pytest.mark.parametrize("message", [
    {"role": "tool", "error": True}, {"is_error": True}, {"isError": True}, {"status": "error"},
    {"status": "FAILED"}, {"success": False}, {"error": "timeout after 30 s"},
])
def test_flag_rule_reads_the_envelope(message):
    assert failure_rule("fine output", message) == "flag"


@pytest.mark.parametrize("message", [
    {"role": "tool", "error": False}, {"is_error": False}, {"status": "success"}, {"status": "completed"},
    {"success": True}, {"error": ""}, {"error": None}, None,
])
def test_flag_rule_ignores_non_failure_envelopes(message):
    assert failure_rule("fine output", message) is None


@pytest.mark.parametrize("text", [
    "Chunk ID: 3b5a22\nWall time: 2.7 seconds\nProcess exited with code 1\nOutput:\n",
    "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nbash: syntax error",
    "Exit code 127\ncommand not found", "exit status 3",
])
def test_exit_code_rule_reads_the_header(text):
    assert failure_rule(text) == "exit_code"


@pytest.mark.parametrize("text", [
    "Chunk ID: 1\nProcess exited with code 0\nOutput:\nok",
    # a container's exit code quoted in the program's output is not the tool's
    "Output:\nName: geo\n  Last State: Terminated\n    Exit Code: 1\n",
    "Name: geo\nNamespace: x\nStatus: Running\nIP: 1\nNode: n\nLabels: a\nExit Code: 1",
])
def test_exit_code_rule_ignores_zero_and_quoted_codes(text):
    assert failure_rule(text) is None


def test_exit_code_given_beside_the_result_or_in_json():
    assert failure_rule("anything", exit_code=2) == "exit_code"
    assert failure_rule("anything", exit_code="0") is None
    assert failure_rule(json.dumps({"output": "x", "metadata": {"exit_code": 1}})) == "exit_code"
    assert failure_rule(json.dumps({"output": "x", "exitCode": 0})) is None
    assert failure_rule({"returncode": 1, "stdout": ""}) == "exit_code"


# Gemini CLI's shell tool reports after the output: "Exit Code: N", then its report lines
# (Signal, Background PIDs, Process Group PGID), inside a wrapper tag in SREGym's log.
GEMINI_TAIL = "Output: Error from server (Forbidden)\n</html>\nExit Code: {code}\nProcess Group PGID: 190\n"


@pytest.mark.parametrize(("text", "code"), [
    (GEMINI_TAIL.format(code=1), 1),
    ("<untrusted_context>\n" + GEMINI_TAIL.format(code=28) + "</untrusted_context>", 28),
    ("Output: x\nExit Code: 2\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 7", 2),
    ("Output: ok\nExit Code: 0\nProcess Group PGID: 3\n", 0),
])
def test_exit_code_rule_reads_a_shell_tools_report_footer(text, code):
    assert footer_exit_code(text) == code
    assert failure_rule(text) == ("exit_code" if code else None)


@pytest.mark.parametrize("text", [
    # no report line after it: an exit code the program printed (kubectl describe's, at the end)
    "Name: geo\nNamespace: x\nStatus: Running\nIP: 1\nNode: n\nLabels: a\nExit Code: 1\n",
    # indented: quoted inside the output
    "Output: x\n    Exit Code: 1\nProcess Group PGID: 4\n",
    # output after the report lines: not the footer
    "Output: x\nExit Code: 1\nProcess Group PGID: 4\nmore output\n",
    "x" * 10_000,
])
def test_a_footer_needs_its_report_lines_at_the_end(text):
    assert footer_exit_code(text) is None
    assert failure_rule(text) is None


def test_error_prefix_rule():
    assert failure_rule("Error: flight HAT030 not available") == "error_prefix"
    assert failure_rule("  Error: leading space") == "error_prefix"
    assert failure_rule("No Error: here") is None
    assert failure_rule("error: lower case is output, not the convention") is None


def test_traceback_rule():
    text = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: no'
    assert failure_rule(text) == "traceback"
    assert failure_rule("the log says: Traceback (most recent call last):") is None


@pytest.mark.parametrize("result", [
    json.dumps({"error": "not found"}), json.dumps({"error": {"code": 404}}), {"error": "x"},
    json.dumps({"error": True, "data": None}),
])
def test_json_error_rule(result):
    assert failure_rule(result) == "json_error"


@pytest.mark.parametrize("result", [
    json.dumps({"error": None, "data": 1}), json.dumps({"error": ""}), json.dumps({"errors": []}),
    json.dumps({"error": []}), json.dumps([{"error": "in a list"}]), "{not json", json.dumps({"ok": 1}),
])
def test_json_error_rule_needs_a_non_empty_error_field(result):
    assert failure_rule(result) is None


def test_mcp_is_error_rule():
    assert failure_rule(json.dumps({"content": [{"type": "text", "text": "boom"}], "isError": True})) == "mcp_is_error"
    assert failure_rule({"content": [], "isError": False}) is None


def test_every_rule_is_registered_and_first_rule_wins():
    assert [r.code for r in FAILURE_RULES] == ["flag", "exit_code", "error_prefix", "traceback",
                                                "json_error", "mcp_is_error"]
    assert failure_rule("Error: x", {"is_error": True}) == "flag"


def test_header_exit_code_stops_at_the_output():
    assert header_exit_code("Process exited with code 7\nOutput:\n") == 7
    assert header_exit_code("Output:\nProcess exited with code 7") is None
    assert header_exit_code("x" * 10_000) is None


# The MCP isError rule is one function: the importers' failure_rule and the OTLP mapping's
# tool_error agree on every result, the error text coming from the result's text parts.
@pytest.mark.parametrize("result, text", [
    ({"isError": True, "content": [{"type": "text", "text": "no such file"},
                                   {"type": "image", "data": "..."},
                                   {"type": "text", "text": "(ENOENT)"}]}, "no such file (ENOENT)"),
    ({"isError": True, "content": []}, "MCP tool result isError: true"),
    ({"isError": True}, "MCP tool result isError: true"),
    ({"isError": "true", "content": [{"type": "text", "text": "x"}]}, None),  # not the boolean
    ({"isError": 1, "content": []}, None),
    ({"isError": False, "content": [{"type": "text", "text": "fine"}]}, None),
    ({"content": [{"type": "text", "text": "fine"}]}, None),
])
def test_mcp_is_error_is_one_rule_for_importers_and_otlp(result, text):
    from reviewapp.domain import otel_mapping
    from reviewapp.domain.tool_failure import mcp_error_text

    assert mcp_error_text(result) == text
    assert failure_rule(result) == ("mcp_is_error" if text else None)
    assert failure_rule(json.dumps(result)) == ("mcp_is_error" if text else None)
    span = {"trace_id": "1" * 32, "span_id": "a" * 16, "parent_span_id": None, "name": "t",
            "start_ns": 0, "end_ns": 10, "status": "UNSET", "status_message": "",
            "attributes": {"gen_ai.operation.name": "execute_tool",
                           "gen_ai.tool.call.result": json.dumps(result)},
            "events": [], "resource": {}}
    assert otel_mapping.tool_error(span) == text


def test_a_failure_status_is_a_flag():
    assert failure_rule("done", {"status": "Failure"}) == "flag"


@pytest.mark.parametrize("key", ["exit_code", "exitCode", "returncode", "return_code"])
def test_each_json_exit_code_key(key):
    assert failure_rule(json.dumps({key: 2, "stdout": ""})) == "exit_code"
    assert failure_rule({"metadata": {key: "3"}}) == "exit_code"
    assert failure_rule(json.dumps({key: 0})) is None


@pytest.mark.parametrize(("text", "code"), [
    ("exit status 4\nout", 4), ("exit status: 5", 5), ("exit code 6", 6), ("Exit code: 7", 7),
    ("exited with code 8", 8), ("Process exited with code 9", 9),
    ("Exit code 2 after 3.1s\n", 2), ("exit code: -1", -1)])
def test_each_header_form_and_the_first_word_after_it(text, code):
    assert header_exit_code(text) == code


def test_the_header_may_be_any_of_the_first_six_lines():
    five = "Running\n" * 5
    assert header_exit_code(five + "Exit code: 1\n") == 1  # line 6
    assert header_exit_code(five + "more\nExit code: 1\n") is None  # line 7


def test_only_the_first_600_characters_are_read():
    filler = "x" * 588 + "\n"  # 589 characters
    assert header_exit_code(filler + "exit code 1") == 1  # its last character is the 600th
    assert header_exit_code(filler + "exit code 12") == 1  # the 601st is not read
    assert header_exit_code("x" * 589 + "\nexit code 1") is None  # "1" would be the 601st


def test_a_json_text_of_up_to_a_million_characters_is_read():
    def sized(n: int) -> str:
        head = '{"error": "boom", "pad": "'
        return head + "a" * (n - len(head) - 2) + '"}'
    assert len(sized(1_000_000)) == 1_000_000
    assert failure_rule(sized(1_000_000)) == "json_error"
    assert failure_rule(sized(1_000_001)) is None


@pytest.mark.parametrize(("result", "exit_code"), [
    ([1, 2], None), (5, None), (None, None), ("ok", True), ("ok", "X1"), ("ok", 1.5),
    ({"exit_code": True}, None), ({"exit_code": "-"}, None)])
def test_odd_values_are_not_failures_and_never_raise(result, exit_code):
    assert failure_rule(result, exit_code=exit_code) is None


def test_the_rules_cannot_be_changed_and_an_unknown_one_names_the_field():
    with pytest.raises(dataclasses.FrozenInstanceError):
        FAILURE_RULES.get("flag").label = "x"
    with pytest.raises(UnknownValue) as error:
        FAILURE_RULES.get("timeout")
    assert error.value.name == "failure_rule"
