"""Layering (STYLE 3): services, domain and queries import nothing from the web side;
views write only through services; services import at module top; each vocabulary's
codes are written out only in its registry and the code of its own (issue 12)."""

from __future__ import annotations

import ast
import importlib
import os
import re
import sys
from pathlib import Path

import pytest

from reviewapp.domain.import_formats import IMPORT_FORMATS
from reviewapp.domain.target_types import TARGET_TYPES
from reviewapp.extensions import db

from . import package_guard

PACKAGE = Path(__file__).resolve().parent.parent / "reviewapp"
FORBIDDEN = ("flask", "flask_login", "flask_wtf", "werkzeug", "reviewapp.web", "reviewapp.api")
PURE_FORBIDDEN = FORBIDDEN + ("sqlalchemy", "reviewapp.models", "reviewapp.services",
                              "reviewapp.extensions")


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The import nodes under ``if TYPE_CHECKING:`` (annotations, never run)."""
    return {inner for node in ast.walk(tree)
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            for stmt in node.body for inner in ast.walk(stmt)}


def _imports(path: Path, root: Path = PACKAGE.parent, *, runtime_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    package_parts = path.relative_to(root).with_suffix("").parts[:-1]
    skipped = _type_checking_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                module = ".".join(base + ((node.module,) if node.module else ()))
                names.add(module)
                names.update(f"{module}.{alias.name}" for alias in node.names)
            else:
                names.add(node.module or "")
    return names


def _violations(files: list[Path], forbidden: tuple[str, ...],
                root: Path = PACKAGE.parent) -> list[str]:
    found = []
    for path in files:
        for name in _imports(path, root):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(root)} imports {name}")
    return found


def _local_imports(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """``file:line`` of every import inside a function or method body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.append(f"{path.relative_to(root)}:{inner.lineno}")
    return found


def test_services_and_queries_import_no_web_layer():
    files = sorted((PACKAGE / "services").rglob("*.py")) + [PACKAGE / "queries.py"]
    assert files
    assert _violations(files, FORBIDDEN) == []


@pytest.mark.parametrize("layer", ["web", "api"])
def test_no_module_imports_another_modules_private_names(layer):
    """A helper two modules share is public where it lives (tidy walk, 2026-12-04:
    ``web/queue_items.py`` took ``_int`` and ``_valid`` from ``web/queues.py``,
    ``web/timeline_html.py`` three names from ``web/filters.py``)."""
    found = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("reviewapp")):
                found += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert found == []


def test_domain_is_pure_standard_library():
    files = sorted((PACKAGE / "domain").rglob("*.py"))
    assert files
    assert _violations(files, PURE_FORBIDDEN) == []


@pytest.mark.parametrize("layer", ["web", "api"])
def test_views_do_not_touch_the_session_directly(layer):
    """Views call services; no ``db.session.`` use or ``select(`` in web/ and api/ (STYLE 7.2)."""
    offenders = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        source = path.read_text()
        for needle in ("db.session.add", "db.session.commit", "db.session.execute",
                       "db.session.scalar", "select("):
            if needle in source:
                offenders.append(f"{path.name}: {needle}")
    assert offenders == []


def test_services_import_at_module_top():
    """A function-local import hides a dependency (and a cycle, if one appears): services
    import at the top, where the layering test reads them."""
    offenders = [hit for path in sorted((PACKAGE / "services").rglob("*.py"))
                 for hit in _local_imports(path)]
    assert offenders == []


def _mapped_classes_imported(path: Path) -> list[str]:
    """The SQLAlchemy model classes a web / api module imports (constants and enums of
    ``reviewapp.models`` are fine: they are vocabulary, not a way to write rows)."""
    found = []
    for name in sorted(_imports(path, runtime_only=True)):
        if not name.startswith("reviewapp.models"):
            continue
        module_name, _, attr = name.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError):
            continue
        if isinstance(obj, type) and issubclass(obj, db.Model):
            found.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return found


@pytest.mark.parametrize("layer", ["web", "api"])
def test_views_import_no_model_classes(layer):
    """Views and API handlers write through services only (STYLE 3): no model class."""
    offenders = [hit for path in sorted((PACKAGE / layer).rglob("*.py"))
                 for hit in _mapped_classes_imported(path)]
    assert offenders == []


def test_the_checkers_see_violations(tmp_path):
    """The walkers themselves work, on a copy of the layout outside the package (a test
    never writes into ``reviewapp/``: parallel workers import from it)."""
    sample = tmp_path / "reviewapp" / "services" / "_probe_for_test.py"
    sample.parent.mkdir(parents=True)
    sample.write_text("from flask import request\n\n\ndef f():\n    from . import runs\n")
    assert _violations([sample], FORBIDDEN, root=tmp_path) == [
        "reviewapp/services/_probe_for_test.py imports flask"
    ]
    assert _local_imports(sample, root=tmp_path) == ["reviewapp/services/_probe_for_test.py:5"]
    view = PACKAGE / "services" / "feedback" / "verdict.py"  # imports model classes
    assert _mapped_classes_imported(view) != []


def test_template_lines_fit_a_screen():
    """Templates stay readable side by side with their view (issue 12): no line over 160
    characters; long tags wrap between attributes, long Jinja lines inside the tag."""
    templates = PACKAGE.parent / "templates"
    long_lines = [f"{path.relative_to(templates)}:{number}"
                  for path in sorted(templates.rglob("*.html"))
                  for number, line in enumerate(path.read_text().splitlines(), start=1)
                  if len(line) > 160]
    assert long_lines == []


def _htmx_header_literals(path: Path) -> list[int]:
    """Lines of the ``HX-*`` header names a module spells out in code (docstrings aside)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings and node.value.lower().startswith("hx-")]


def test_htmx_headers_go_through_web_htmx(tmp_path):
    """Every ``HX-*`` request or response header is read or set in ``web/htmx.py`` only
    (issue 12): a view says what it wants (``htmx.trigger`` ...), not the header."""
    offenders = [f"{path.relative_to(PACKAGE)}:{line}"
                 for layer in ("web", "api") for path in sorted((PACKAGE / layer).rglob("*.py"))
                 if path != PACKAGE / "web" / "htmx.py" for line in _htmx_header_literals(path)]
    assert offenders == []
    probe = tmp_path / "view.py"
    probe.write_text('"""Sets HX-Trigger (a docstring)."""\n\ndef f(r):\n    r.headers["HX-Trigger"] = "x"\n')
    assert _htmx_header_literals(probe) == [4]


# Issue 12: no service module over ~450 lines (every one is within since the review
# queues and the verdict were split).
SERVICE_MODULE_LINES = 450


def test_service_modules_stay_small():
    """No service module grows past ~450 lines (issue 12): a bigger one is a package split
    by concern (``services/runs/``, ``feedback/``, ``triage/``, ``tool_calls/``)."""
    services = PACKAGE / "services"
    too_long = {}
    for path in sorted(services.rglob("*.py")):
        name = path.relative_to(services).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > SERVICE_MODULE_LINES:
            too_long[name] = lines
    assert too_long == {}


def test_the_package_guard_sees_writes_into_the_package():
    """The net of ``tests/package_guard.py`` (a test never writes into ``reviewapp/``):
    a write-mode open, a rename into or out of the tree, a removal are seen, by the audit
    hook the conftest installs; a read, a byte-code cache and a path outside are not."""
    inside = str(PACKAGE / "services" / "_probe.txt")
    assert package_guard.written_paths("open", (inside, "w", os.O_WRONLY | os.O_CREAT)) == [
        "reviewapp/services/_probe.txt"]
    assert package_guard.written_paths("open", (inside, "r", os.O_RDONLY)) == []
    assert package_guard.written_paths("os.replace", ("/tmp/x", inside, -1, -1)) == [
        "reviewapp/services/_probe.txt"]
    assert package_guard.written_paths("os.remove", (inside, None)) == [
        "reviewapp/services/_probe.txt"]
    cache = str(PACKAGE / "__pycache__" / "x.pyc")
    assert package_guard.written_paths("open", (cache, "wb", os.O_WRONLY)) == []
    assert package_guard.written_paths("open", ("/tmp/elsewhere", "w", os.O_WRONLY)) == []
    package_guard.take_violations()
    sys.audit("os.remove", inside, None)  # an event, not a removal: the hook is installed
    assert package_guard.take_violations() == [("os.remove", "reviewapp/services/_probe.txt")]
    assert package_guard.changes({"a.py", "b.py"}, {"a.py", "c.py"}) == ["added c.py", "removed b.py"]


# Issue 12: no service function's code (its docstring aside) over 50 lines; the longest
# were split into named private helpers (set_run_verdict, upsert_feedback, the ingest's
# _upsert, the triage item page, the dashboard, the roll-up rebuild).
SERVICE_FUNCTION_LINES = 50


def _long_functions(path: Path, limit: int, root: Path = PACKAGE) -> dict[str, int]:
    """``file:function -> lines`` of each function (or method) in ``path`` whose body,
    from its first statement after the docstring to its last line, exceeds ``limit``."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        lines = body[-1].end_lineno - body[0].lineno + 1 if body else 0
        if lines > limit:
            found[f"{path.relative_to(root).as_posix()}:{node.name}"] = lines
    return found


def test_service_functions_stay_short(tmp_path):
    """Each rule of a service is a function a reader takes in at once (issue 12): no
    function in ``services/`` has more than 50 lines of code, its docstring aside."""
    too_long = {}
    for path in sorted((PACKAGE / "services").rglob("*.py")):
        too_long.update(_long_functions(path, SERVICE_FUNCTION_LINES))
    assert too_long == {}
    probe = tmp_path / "m.py"
    probe.write_text('def f():\n    """Doc\n\n    more."""\n' + "    x = 1\n" * 3
                     + "\n\ndef g():\n    return 1\n")
    assert _long_functions(probe, 2, root=tmp_path) == {"m.py:f": 3}
    assert _long_functions(probe, 3, root=tmp_path) == {}


# --- One registry per vocabulary (issue 12) ----------------------------------------------
#
# What adding a feedback target type or an import format takes (issue 12, "one registry
# per vocabulary"): its row in the registry plus its own code. Every place that lists all
# the codes derives from the registry (CHECK constraint, enum, validation, CLI and form
# choices, re-ingest keep-lists, labels) or is a table the registry checks at import
# (``Registry.check_covered``), so a missing entry fails loudly.
#
# Adding a target type ``x`` touches:
#
# 1. ``reviewapp/domain/target_types.py``: its row (model, label, parent / key columns,
#    subject, answer level);
# 2. a migration for the ``user_feedback.target_type`` CHECK constraint (migrations are
#    frozen history, so they spell the codes out; tests/test_migrations.py compares the
#    migrated CHECK constraints with the models', which derive from the registry);
# 3. ``reviewapp/api/openapi.yaml``: the one ``TargetType`` enum every ``targetType``
#    refers to (a static document; tests/api/test_openapi.py compares it with the
#    registry);
# 4. its own code, only where the type behaves differently: the template that places its
#    thumbs control, an extra owner check (``services/feedback/_targets.py``), a rule of
#    its own (``OWN_CODE`` below lists today's); a type with a subject also names its
#    subjects on the triage item page (``services/triage/detail.py``), and a type of a
#    model no type rated before lists that model's rows there (``_ROWS_OF``) and says how a
#    re-ingest keeps them (``services/runs/ingest.py``). The app does not import while
#    one of these is missing.
#
# A message-, step- or report-level type without a subject and without a check of its own
# is thus 4 files: the registry row, the migration, one line of the OpenAPI enum and the
# template line that places its control. Before this work it was 6 (also the re-ingest
# keep-lists in ``services/runs/ingest.py`` and the triage labels), with the OpenAPI enum
# written three times; commit 866f787 (two types) touched 8 application files.
#
# Adding an import format ``y`` touches ``reviewapp/domain/import_formats.py`` (its row),
# its adapter module under ``services/importers/`` and ``services/importers/reading.py``
# (its adapter and its detector, both tables checked against the registry at import).
#
# These tests read every module and template for the codes written out and fail when a
# file names one outside the places listed here: derive it from the registry instead, or,
# when it is that type's own behaviour, add the file below with the reason.

ROOT = PACKAGE.parent

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
