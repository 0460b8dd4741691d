"""Layering (STYLE 3): services, domain and queries import nothing from the web side."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "reviewapp"
FORBIDDEN = ("flask", "flask_login", "flask_wtf", "werkzeug", "reviewapp.web", "reviewapp.api")
PURE_FORBIDDEN = FORBIDDEN + ("sqlalchemy", "reviewapp.models", "reviewapp.services",
                              "reviewapp.extensions")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(tree):
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


def _violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in files:
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
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


def test_the_checker_sees_a_violation(tmp_path):
    """The import walker itself works: a forbidden import is reported."""
    sample = PACKAGE / "services" / "_probe_for_test.py"
    sample.write_text("from flask import request\n")
    try:
        assert _violations([sample], FORBIDDEN) == [
            "reviewapp/services/_probe_for_test.py imports flask"
        ]
    finally:
        sample.unlink()
