"""Layering (STYLE 3): services, domain and queries import nothing from the web side;
views write only through services; services import at module top."""

from __future__ import annotations

import ast
import importlib
import os
import sys
from pathlib import Path

import pytest

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
