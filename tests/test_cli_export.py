"""``flask export cases|feedback|evalset`` (SPEC 8): same rows as the download, to a file."""

from __future__ import annotations

import csv
import io
import json

from reviewapp.actors import Role


def test_cli_export_cases_csv_matches_the_http_download(runner, client, login, make, tmp_path):
    ws = make.workspace(slug="acme")
    make.case(ws, title="=1+1 formula", root_cause="数据库 🚀\nהפריסה")
    make.case(ws, title="plain")
    out = tmp_path / "cases.csv"
    result = runner.invoke(args=["export", "cases", "--format", "csv", "--out", str(out), "--bom"])
    assert result.exit_code == 0, result.output
    assert "2 cases row(s) written" in result.output
    assert not (tmp_path / "cases.csv.part").exists()
    login(make.user(ws, Role.ADMIN))
    downloaded = client.get("/exports/cases.csv?bom=1").get_data()
    assert out.read_bytes() == downloaded
    rows = list(csv.DictReader(io.StringIO(out.read_text("utf-8-sig"), newline="")))
    assert {r["title"] for r in rows} == {"'=1+1 formula", "plain"}


def test_cli_export_feedback_jsonl_with_filters(runner, make, tmp_path):
    ws, other = make.workspace(slug="one"), make.workspace(slug="two")
    reviewer = make.user(ws)
    run = make.run(ws)
    wanted = make.feedback_row(run, reviewer, reason="incorrect", comment="评论")
    make.feedback_row(run, make.user(ws), rating="positive")
    make.feedback_row(make.run(other), make.user(other), reason="incorrect")
    out = tmp_path / "fb.jsonl"
    result = runner.invoke(args=["export", "feedback", "--format", "jsonl", "--out", str(out),
                                 "--workspace", "one", "--rating", "negative"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [(line["feedback_id"], line["comment"], line["workspace"]) for line in lines] == [
        (wanted.id, "评论", "one")]


def test_cli_evalset_is_jsonl_by_default_and_refuses_csv(runner, make, tmp_path):
    ws = make.workspace()
    run = make.run(ws)
    make.feedback_row(run, make.user(ws), correction="better answer")
    out = tmp_path / "eval.jsonl"
    assert runner.invoke(args=["export", "evalset", "--out", str(out)]).exit_code == 0
    assert json.loads(out.read_text("utf-8"))["corrections"][0]["correction"] == "better answer"
    refused = runner.invoke(args=["export", "evalset", "--format", "csv", "--out", str(out)])
    assert refused.exit_code != 0 and "the eval set: jsonl" in refused.output


def test_cli_export_rejects_bad_input(runner, make, tmp_path):
    out = tmp_path / "x.csv"
    unknown = runner.invoke(args=["export", "cases", "--out", str(out), "--workspace", "nope"])
    assert unknown.exit_code != 0 and "no workspace with slug 'nope'" in unknown.output
    bad_day = runner.invoke(args=["export", "feedback", "--out", str(out), "--date-from", "monday"])
    assert bad_day.exit_code != 0 and "date_from" in bad_day.output
    make.workspace()
    bad_reason = runner.invoke(args=["export", "feedback", "--out", str(out), "--reason", "bogus"])
    assert bad_reason.exit_code != 0
    assert "reason: must be one of Incorrect (incorrect)," in bad_reason.output
    assert not out.exists()
    assert not out.exists()


def test_cli_export_of_an_empty_database_writes_just_the_header(runner, tmp_path):
    out = tmp_path / "empty.csv"
    result = runner.invoke(args=["export", "feedback", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text("utf-8").startswith("feedback_id,workspace,run_id,")
    assert out.read_bytes().count(b"\r\n") == 1


def test_cli_choices_are_the_vocabularies_the_services_check():
    """Issue 12: the CLI's choices derive from the vocabularies (spelled out here), so a
    code added there is offered and none is offered that the service would refuse."""
    import click

    from reviewapp.cli import export_cli, runs_cli

    def choices(command, option):
        (param,) = [p for p in command.params if p.name == option]
        assert isinstance(param.type, click.Choice)
        return tuple(param.type.choices)

    feedback, cases = export_cli.commands["feedback"], export_cli.commands["cases"]
    assert choices(feedback, "rating") == ("positive", "negative")
    assert choices(feedback, "kind") == ("chat", "aiops")
    assert choices(feedback, "target_type") == (
        "chat_message", "citation", "diagnostic_step", "diagnostic_report", "tool_call",
        "conversation_turn")
    assert choices(cases, "source_type") == ("AUTO", "MANUAL")
    for command in export_cli.commands.values():
        assert choices(command, "fmt") == ("csv", "jsonl")
    assert choices(runs_cli.commands["import"], "fmt") == (
        "auto", "native", "openai-messages", "tau-bench", "claude-code", "codex", "copilot",
        "gemini", "opencode", "stratus", "sregym-result")
