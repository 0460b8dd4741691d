"""What adding a feedback target type or an import format takes (issue 12, "one registry
per vocabulary"): its row in the registry plus its own code. Every place that lists all
the codes derives from the registry (CHECK constraint, enum, validation, CLI and form
choices, re-ingest keep-lists, labels) or is a table the registry checks at import
(``Registry.check_covered``), so a missing entry fails loudly.

Adding a target type ``x`` touches:

1. ``reviewapp/domain/target_types.py``: its row (model, label, parent / key columns,
   subject, answer level);
2. a migration for the ``user_feedback.target_type`` CHECK constraint (migrations are
   frozen history, so they spell the codes out; tests/test_migrations.py compares the
   migrated CHECK constraints with the models', which derive from the registry);
3. ``reviewapp/api/openapi.yaml``: the one ``TargetType`` enum every ``targetType``
   refers to (a static document; tests/api/test_openapi.py compares it with the
   registry);
4. its own code, only where the type behaves differently: the template that places its
   thumbs control, an extra owner check (``services/feedback/_targets.py``), a rule of
   its own (``OWN_CODE`` below lists today's); a type with a subject also names its
   subjects on the triage item page (``services/triage/detail.py``), and a type of a
   model no type rated before lists that model's rows there (``_ROWS_OF``) and says how a
   re-ingest keeps them (``services/runs/ingest.py``). The app does not import while
   one of these is missing.

A message-, step- or report-level type without a subject and without a check of its own
is thus 4 files: the registry row, the migration, one line of the OpenAPI enum and the
template line that places its control. Before this work it was 6 (also the re-ingest
keep-lists in ``services/runs/ingest.py`` and the triage labels), with the OpenAPI enum
written three times; commit 866f787 (two types) touched 8 application files.

Adding an import format ``y`` touches ``reviewapp/domain/import_formats.py`` (its row),
its adapter module under ``services/importers/`` and ``services/importers/reading.py``
(its adapter and its detector, both tables checked against the registry at import).

These tests read every module and template for the codes written out and fail when a
file names one outside the places listed here: derive it from the registry instead, or,
when it is that type's own behaviour, add the file below with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reviewapp.domain.import_formats import IMPORT_FORMATS
from reviewapp.domain.target_types import TARGET_TYPES

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reviewapp"

# The registries themselves.
REGISTRY_OF_TYPES = "reviewapp/domain/target_types.py"
REGISTRY_OF_FORMATS = "reviewapp/domain/import_formats.py"

# Files that name a target type code for a reason of their own, by file: the codes, and why.
OWN_CODE: dict[str, tuple[set[str], str]] = {
    "reviewapp/services/triage/detail.py": (
        {"citation", "tool_call"}, "_SUBJECT_LABELS: how each subject is named, checked at import"),
    "reviewapp/services/answer.py": (
        {"chat_message", "diagnostic_report"}, "which rating is a run's answer rating (SPEC 6.2)"),
    "reviewapp/services/feedback/_targets.py": (
        {"chat_message", "citation", "conversation_turn", "diagnostic_report"},
        "_CHECKS: a type's owner check beyond its registry row"),
    "reviewapp/services/feedback/reads.py": (
        {"chat_message", "citation", "tool_call"}, "listing every subject of one target"),
    "reviewapp/services/feedback/ratings.py": (
        {"tool_call"}, "a tool call's rating moves the dashboard's tool rollup"),
    "reviewapp/services/rollups.py": ({"tool_call"}, "the dashboard's tool-call ratings"),
    "reviewapp/services/alignment.py": ({"tool_call"}, "tool-call ratings as a signal"),
    "reviewapp/services/review.py": ({"tool_call"}, "a tool call's control named like its row"),
    "reviewapp/services/runs/timeline.py": ({"tool_call"}, "the timeline rates tool calls"),
    "reviewapp/services/runs/_children.py": (
        {"chat_message", "citation", "diagnostic_report"},
        "a re-ingest keeps rated citations, the answer's and the report's earlier text"),
    "templates/runs/detail.html": (
        {"chat_message", "citation", "diagnostic_step", "diagnostic_report"},
        "where each type's thumbs control sits on the run page"),
    "templates/runs/_conversation.html": ({"conversation_turn"}, "a turn's thumbs control"),
    # Not target types: the same words as another vocabulary or a table.
    "reviewapp/domain/reasons.py": ({"citation"}, "the default reason code 'citation'"),
    "reviewapp/domain/suggest.py": ({"citation"}, "the reason code 'citation'"),
    "reviewapp/models/runs.py": ({"diagnostic_step", "diagnostic_report"}, "table names"),
}

# Files that name an import format, by file: the formats, and why.
OWN_FORMAT_CODE: dict[str, tuple[set[str], str]] = {
    "reviewapp/services/importers/reading.py": (
        set(IMPORT_FORMATS.codes()), "each format's adapter and detector, checked at import"),
    "reviewapp/services/importers/tau_bench.py": ({"tau-bench"}, "the outcome detail names its source"),
    "reviewapp/services/importers/gemini.py": ({"gemini"}, "a Gemini log's own event type (not the format)"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)}


def codes_named(path: Path, codes: tuple[str, ...], enum: str | None = None) -> set[str]:
    """The ``codes`` a module or template spells out: a string literal that is exactly
    one (docstrings and comments aside) or, in a module, a member of the enum ``enum``
    (``TargetType.CHAT_MESSAGE``)."""
    text = path.read_text()
    if path.suffix != ".py":
        return {c for c in codes if re.search(rf"""(?<![\w-])['"]{re.escape(c)}['"]""", text)}
    tree = ast.parse(text, filename=str(path))
    skip = _docstrings(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in codes and id(node) not in skip:
            found.add(node.value)
        elif (enum and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == enum and node.attr.lower() in codes):
            found.add(node.attr.lower())
    return found


def _app_files() -> list[Path]:
    """Every module and template of the application; migrations are frozen history."""
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "templates").rglob("*.html"),
             *(ROOT / "static").rglob("*.js")]
    return sorted(p for p in files if "migrations" not in p.relative_to(ROOT).parts)


def _naming(codes: tuple[str, ...], enum: str | None, registry: str) -> dict[str, set[str]]:
    found = {}
    for path in _app_files():
        name = path.relative_to(ROOT).as_posix()
        named = codes_named(path, codes, enum)
        if named and name != registry:
            found[name] = named
    return found


def test_target_type_codes_are_written_out_only_in_their_registry_and_own_code():
    found = _naming(TARGET_TYPES.codes(), "TargetType", REGISTRY_OF_TYPES)
    assert found == {name: codes for name, (codes, _) in OWN_CODE.items()}


def test_import_format_codes_are_written_out_only_in_their_registry_and_readers():
    found = _naming(IMPORT_FORMATS.codes(), None, REGISTRY_OF_FORMATS)
    assert found == {name: codes for name, (codes, _) in OWN_FORMAT_CODE.items()}


def test_only_tables_checked_against_the_registry_list_every_code():
    """A file naming every target type or every format is a restatement of the list; the
    only ones left are tables that ``Registry.check_covered`` checks at import."""
    types = _naming(TARGET_TYPES.codes(), "TargetType", REGISTRY_OF_TYPES)
    formats = _naming(IMPORT_FORMATS.codes(), None, REGISTRY_OF_FORMATS)
    every_type = [name for name, codes in types.items() if codes == set(TARGET_TYPES.codes())]
    every_format = [name for name, codes in formats.items() if codes == set(IMPORT_FORMATS.codes())]
    assert every_type == []
    assert every_format == ["reviewapp/services/importers/reading.py"]
    for name in (*every_type, *every_format):
        assert ".check_covered(" in (ROOT / name).read_text(), name


def test_the_scan_sees_literals_and_enum_members_but_not_docstrings(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Rates chat_message and \'citation\'."""\n'
                      'A = "tool_call"\nB = TargetType.DIAGNOSTIC_STEP\nC = "tool_call_x"\n'
                      '# "citation" in a comment\n')
    assert codes_named(module, TARGET_TYPES.codes(), "TargetType") == {"tool_call", "diagnostic_step"}
    template = tmp_path / "t.html"
    template.write_text("{{ thumbs(d.target('conversation_turn', m.id)) }} {{ 'x-citation' }}\n")
    assert codes_named(template, TARGET_TYPES.codes()) == {"conversation_turn"}
    assert codes_named(template, IMPORT_FORMATS.codes()) == set()
