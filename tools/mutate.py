"""Mutation testing of the pure rules (``reviewapp/domain/``, ``services/secret_scan.py``).

How much of a rule do the tests pin? Change the rule one small step at a time and see
whether a test fails. For each *mutant* (one change of one module) the tests of that module
run in a fresh process; a mutant is *caught* when they fail (or time out), *survived* when
they pass. A survivor is a behaviour no test pins: add a test that fails on it, or, when the
mutant behaves exactly like the original (an *equivalent* mutant), list it with its reason
in ``tools/mutate_equivalents.toml``, which takes it out of the score.

Operators (standard-library ``ast``; every constant, table and pattern of the module is
mutated, module-level tables included, docstrings and annotations are not):

* comparison flipped: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``, ``in`` <->
  ``not in``, ``is`` <-> ``is not``;
* constant shifted by one: an int or float n -> n + 1 and n - 1, ``True`` <-> ``False``, a
  string or bytes s -> s + ``XX`` (a pattern switched off, a label or a key changed);
* ``and`` <-> ``or``;
* condition negated: the test of ``if`` / ``while`` / ``x if c else y`` / a comprehension's
  ``if`` becomes ``not (c)``;
* return value replaced: ``return ""`` in a function annotated ``-> str``, ``return 0``
  for ``-> int`` / ``-> float``, ``return not (x)`` for ``-> bool``, else ``return None``.

The package is never modified: the mutant is compiled in memory and an import hook
(a ``sys.meta_path`` finder) loads it in place of the module inside the test process only.
By default each test process is forked from this one after the third-party modules the
tests use are imported (pytest, Flask, SQLAlchemy, RE2 ...; never ``reviewapp``), which
makes a mutant cost its tests instead of a full interpreter start; ``--no-fork`` starts a
new interpreter per mutant instead. A first (unmutated) run must pass; a second records the
lines each test executes: a mutant runs only the tests that execute its line (all of them
for a line run at import, such as a module-level table), and a mutant on a line no test
executes is reported as *survived, not covered* without running.

Usage (from the repository root; ``make mutate`` runs every module)::

    .venv/bin/python tools/mutate.py                         # reviewapp/domain/* + secret_scan
    .venv/bin/python tools/mutate.py gatekeeper redaction    # by short name, dotted name or path
    .venv/bin/python tools/mutate.py times --tests tests/unit/test_times.py tests/services
    .venv/bin/python tools/mutate.py feedback --toml         # survivors as equivalents stanzas

The tests of a module, unless ``--tests`` names them: the files of ``tests/unit`` that
import it, or import a ``reviewapp`` module that imports it (a wrapper such as
``services.secret_scan``). ``tests/unit/test_redaction_linear.py`` is left out by default:
it measures time, which a mutant does not change.

Exit status: 0 when every module reaches ``--min`` (default 0: report only), 1 otherwise,
2 when an unmutated run fails (fix the tests first).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.abc
import importlib.util
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EQUIVALENTS = ROOT / "tools" / "mutate_equivalents.toml"
DEFAULT_MODULES = ("reviewapp/domain", "reviewapp/services/secret_scan.py")
# Measure time, not rules; a mutant cannot change what they check but makes them slow.
SLOW_TESTS = ("tests/unit/test_redaction_linear.py",)
# The preloaded plugins (hypothesis ...) cannot be assertion-rewritten any more, which pytest
# warns about (an error under filterwarnings=error); their asserts are not what is tested.
PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--assert=plain",
               "-W", "ignore::pytest.PytestAssertRewriteWarning")

# Outcomes of one mutant.
CAUGHT, SURVIVED, TIMEOUT, NOT_COVERED, EQUIVALENT = (
    "caught", "survived", "timeout", "not covered", "equivalent")


# ------------------------------------------------------------------------ mutants

@dataclass
class Mutant:
    """One change of one module: ``index`` is its place in the enumeration order."""

    index: int
    kind: str
    where: str  # qualified name of the enclosing function or class, "<module>" at top level
    lineno: int
    end_lineno: int
    before: str  # the changed source line(s), as written (stripped)
    after: str  # the same with the change applied
    outcome: str = ""
    seconds: float = 0.0

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies it in the equivalents file (line numbers move, text rarely)."""
        return (self.where, self.before, self.after)

    def diff(self, filename: str) -> str:
        """One line: ``file:line where: before  =>  after``."""
        return f"{filename}:{self.lineno} {self.where}: {self.before}  =>  {self.after}"


_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


def _negate(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(op=ast.Not(), operand=test)


def _is_generator(fn: ast.AST) -> bool:
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


class _Mutator(ast.NodeTransformer):
    """Walks a module in a fixed order and offers every mutation in turn: with
    ``target=None`` it records them all (``sites``), else it applies the one numbered
    ``target`` and leaves everything else as it was."""

    def __init__(self, source: str, target: int | None) -> None:
        self.lines = source.splitlines()
        self.target = target
        self.count = 0
        self.sites: list[Mutant] = []
        self.applied: Mutant | None = None
        self.scope: list[str] = []
        self.functions: list[tuple[str, bool]] = []  # (return annotation, is generator)

    # -- bookkeeping

    def _describe(self, index: int, kind: str, old: ast.AST, new: ast.AST) -> Mutant:
        lineno, end = old.lineno, old.end_lineno or old.lineno
        where = ".".join(self.scope) or "<module>"
        if lineno == end:
            line = self.lines[lineno - 1].encode()
            replacement = ast.unparse(new).encode()
            after = line[: old.col_offset] + replacement + line[old.end_col_offset:]
            return Mutant(index, kind, where, lineno, end, line.decode().strip(),
                          after.decode().strip())
        before, after = ast.unparse(old), ast.unparse(new)
        return Mutant(index, kind, where, lineno, end, " ".join(before.split()),
                      " ".join(after.split()))

    def _offer(self, node: ast.AST, offers: Sequence[tuple[str, Callable[[], ast.AST]]]
               ) -> ast.AST:
        for kind, make in offers:
            new = make()
            if ast.dump(new) == ast.dump(node):
                continue
            index = self.count
            self.count += 1
            if self.target is None:
                self.sites.append(self._describe(index, kind, node, new))
            elif index == self.target:
                self.applied = self._describe(index, kind, node, new)
                return ast.copy_location(new, node)
        return node

    # -- what is not mutated

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # a docstring, or a string used as a comment
        return self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        # the text of an f-string is a message; its expressions are mutated
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                value.value = self.visit(value.value)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node  # annotations

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names and all(n in ("__all__", "__slots__") for n in names):
            return node
        return self.generic_visit(node)

    def visit_If(self, node: ast.If) -> ast.AST:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return node
        self.generic_visit(node)
        node.test = self._offer(node.test, [("negate", lambda: _negate(node.test))])
        return node

    # -- scopes

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [d if d is None else self.visit(d)
                                 for d in node.args.kw_defaults]
        self.scope.append(node.name)
        annotation = ast.unparse(node.returns) if node.returns is not None else ""
        self.functions.append((annotation, _is_generator(node)))
        body = []
        for stmt in node.body:
            new = self.visit(stmt)
            body.extend(new if isinstance(new, list) else [new])
        node.body = body
        self.functions.pop()
        self.scope.pop()
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.functions.append(("", False))
        self.generic_visit(node)
        self.functions.pop()
        return node

    # -- operators

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            return self._offer(node, [("constant", lambda: ast.Constant(not value))])
        if isinstance(value, (int, float)):
            return self._offer(node, [("constant", lambda: ast.Constant(value + 1)),
                                      ("constant", lambda: ast.Constant(value - 1))])
        if isinstance(value, str):
            return self._offer(node, [("constant", lambda: ast.Constant(value + "XX"))])
        if isinstance(value, bytes):
            return self._offer(node, [("constant", lambda: ast.Constant(value + b"XX"))])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        offers = []
        for i, op in enumerate(node.ops):
            flip = _FLIPS.get(type(op))
            if flip is not None:
                def make(i: int = i, flip: type = flip) -> ast.AST:
                    ops = list(node.ops)
                    ops[i] = flip()
                    return ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                offers.append(("comparison", make))
        return self._offer(node, offers)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return self._offer(node, [("and/or", lambda: ast.BoolOp(op=other, values=node.values))])

    def visit_While(self, node: ast.While) -> ast.AST:
        self.generic_visit(node)
        node.test = self._offer(node.test, [("negate", lambda: _negate(node.test))])
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        node.test = self._offer(node.test, [("negate", lambda: _negate(node.test))])
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.ifs = [self._offer(test, [("negate", lambda test=test: _negate(test))])
                    for test in node.ifs]
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if node.value is None or not self.functions:
            return node
        annotation, generator = self.functions[-1]
        value = node.value
        if generator or (isinstance(value, ast.Constant) and value.value is None):
            return node
        if annotation == "str":
            new: ast.expr = ast.Constant("")
        elif annotation in ("int", "float"):
            new = ast.Constant(0)
        elif annotation == "bool":
            new = _negate(value)
        else:
            new = ast.Constant(None)
        return self._offer(node, [("return", lambda: ast.Return(value=new))])


def enumerate_mutants(source: str) -> list[Mutant]:
    """Every mutant of ``source``, in a fixed order (``Mutant.index``)."""
    mutator = _Mutator(source, None)
    mutator.visit(ast.parse(source))
    # The same change of the same text twice in one function (two ``score = 0`` lines):
    # the second is "where#2", so the equivalents file can name exactly one of them.
    seen: dict[tuple[str, str, str], int] = {}
    for m in mutator.sites:
        seen[m.key] = seen.get(m.key, 0) + 1
        if seen[m.key] > 1:
            m.where = f"{m.where}#{seen[m.key]}"
    return mutator.sites


def mutated_tree(source: str, index: int) -> ast.Module:
    """The module with mutant ``index`` applied (every other node as written)."""
    mutator = _Mutator(source, index)
    tree = mutator.visit(ast.parse(source))
    if mutator.applied is None:
        raise IndexError(f"no mutant {index}")
    return ast.fix_missing_locations(tree)


# ------------------------------------------------------------------- equivalents

@dataclass
class Equivalent:
    module: str
    where: str
    mutant: str  # "before  =>  after", as the survivor line prints it
    reason: str
    used: bool = False

    def matches(self, module: str, m: Mutant) -> bool:
        return (self.module == module and self.where == m.where
                and " ".join(self.mutant.split()) == " ".join(f"{m.before} => {m.after}".split()))


def load_equivalents(path: Path) -> list[Equivalent]:
    """``[[equivalent]]`` tables with ``module``, ``where``, ``mutant`` and a ``reason``."""
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text())
    found = []
    for i, item in enumerate(data.get("equivalent", [])):
        missing = [k for k in ("module", "where", "mutant", "reason") if not item.get(k)]
        if missing:
            raise SystemExit(f"{path}: equivalent #{i + 1} has no {', '.join(missing)}")
        found.append(Equivalent(item["module"], item["where"], item["mutant"], item["reason"]))
    return found


def _toml_string(text: str) -> str:
    if "'" not in text and "\n" not in text:
        return f"'{text}'"
    if "'''" not in text and not text.endswith("'"):
        return f"'''{text}'''"
    return json.dumps(text)


def toml_stanza(module: str, m: Mutant) -> str:
    return ("[[equivalent]]\n"
            f"module = {_toml_string(module)}\n"
            f"where = {_toml_string(m.where)}\n"
            f"mutant = {_toml_string(f'{m.before}  =>  {m.after}')}\n"
            'reason = "TODO: why it behaves exactly like the original"\n')


# ----------------------------------------------------------------- test process

class _MutantLoader(importlib.abc.Loader):
    """Loads the compiled mutant as the module, with the original file name."""

    loaded = False

    def __init__(self, code: object, origin: str) -> None:
        self.code = code
        self.origin = origin

    def create_module(self, spec: object) -> None:
        return None

    def exec_module(self, module: object) -> None:
        _MutantLoader.loaded = True
        exec(self.code, module.__dict__)  # noqa: S102 - the mutant of our own module


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, loader: _MutantLoader) -> None:
        self.name = name
        self.loader = loader

    def find_spec(self, fullname: str, path: object, target: object = None) -> object:
        if fullname != self.name:
            return None
        spec = importlib.util.spec_from_loader(fullname, self.loader, origin=self.loader.origin)
        spec.has_location = True
        return spec


@dataclass
class Job:
    """What one test process does (a dict of plain values: it crosses to ``--child``)."""

    module: str
    path: str
    index: int | None  # None: the module as written
    source: str  # the module as read when its mutants were numbered
    tests: list[str]
    stop_first: bool = True
    noconftest: bool = False  # unit tests that need no fixture of tests/conftest.py
    trace_out: str | None = None  # write the executed line numbers of ``path`` here
    modules_out: str | None = None  # write the imported third-party module names here


def _child(job: Job) -> int:
    """Run the tests against the mutant (in a forked or a new process); the exit status
    is pytest's, 97 when the tests never imported the module."""
    import pytest

    for name in [n for n in sys.modules if n == job.module or n.startswith(job.module + ".")]:
        del sys.modules[name]
    if job.index is not None:
        code = compile(mutated_tree(job.source, job.index), job.path, "exec")
        sys.meta_path.insert(0, _MutantFinder(job.module, _MutantLoader(code, job.path)))
    # line -> the tests that ran it ("" while no test runs: import and collection)
    lines: dict[int, set[str]] = {}
    current = [""]
    durations: dict[str, float] = {}  # seconds per test (traced, so on the slow side)
    plugins = []
    if job.trace_out:
        target = job.path

        class Track:
            @pytest.hookimpl(wrapper=True)
            def pytest_runtest_protocol(self, item, nextitem):  # noqa: ANN001, ANN202
                current[0] = f"{item.path}::{item.nodeid.split('::', 1)[1]}"
                began = time.monotonic()
                try:
                    return (yield)
                finally:
                    durations[current[0]] = time.monotonic() - began
                    current[0] = ""

        def local(frame, event, arg):  # noqa: ANN001, ANN202
            lines.setdefault(frame.f_lineno, set()).add(current[0])
            return local

        def tracer(frame, event, arg):  # noqa: ANN001, ANN202
            if frame.f_code.co_filename == target:
                return local(frame, event, arg)
            return None

        plugins.append(Track())
        sys.settrace(tracer)
        import threading
        threading.settrace(tracer)
    args = [*PYTEST_ARGS, *job.tests]
    if not job.stop_first:
        args.remove("-x")
    if job.noconftest:
        args.append("--noconftest")
    status = int(pytest.main(args, plugins=plugins))
    sys.settrace(None)
    if job.trace_out:
        Path(job.trace_out).write_text(json.dumps({
            "lines": {n: sorted(t) for n, t in lines.items()}, "durations": durations}))
    if job.modules_out:
        def ours(module: object) -> bool:  # the project's files (its venv is not)
            path = str(getattr(module, "__file__", "") or "")
            return path.startswith(str(ROOT)) and not path.startswith(sys.prefix)

        names = [n for n, m in list(sys.modules.items())
                 if m is not None and not ours(m) and n != "__main__"
                 and not n.startswith(job.module.split(".")[0])]
        Path(job.modules_out).write_text(json.dumps(sorted(names)))
    if job.index is not None and not _MutantLoader.loaded and status == 0:
        return 97
    return status


def _run_forked(job: Job, timeout: float) -> tuple[int | None, float]:
    """(exit status or None on timeout, seconds)."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 99
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            status = _child(job)
        except BaseException:  # noqa: BLE001 - any failure of the child is a status
            if os.environ.get("MUTATE_DEBUG"):
                import traceback
                Path(os.environ["MUTATE_DEBUG"]).write_text(traceback.format_exc())
            status = 98
        finally:
            os._exit(status)
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None, time.monotonic() - start
        _, raw = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(raw), time.monotonic() - start
    finally:
        os.close(fd)


def _run_subprocess(job: Job, timeout: float) -> tuple[int | None, float]:
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child"], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.stdin.write(json.dumps(job.__dict__).encode())
        proc.stdin.close()
        return proc.wait(timeout), time.monotonic() - start
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None, time.monotonic() - start


def _preload(names_file: Path, package: str) -> None:
    """Import in this (parent) process what the tests import, minus the project's own
    modules, so that every forked test process starts with them loaded."""
    warnings.simplefilter("ignore")
    for name in json.loads(names_file.read_text()):
        if name.startswith(("reviewapp", "tests", "conftest", package)):
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001, S110 - a module that will not preload is loaded later
            pass
    warnings.resetwarnings()
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


# ------------------------------------------------------------------ one module

@dataclass
class Result:
    module: str
    path: str
    tests: list[str]
    mutants: list[Mutant] = field(default_factory=list)
    baseline_seconds: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(1 for m in self.mutants if m.outcome == outcome)

    @property
    def scored(self) -> int:
        return len(self.mutants) - self.count(EQUIVALENT)

    @property
    def score(self) -> float:
        caught = self.count(CAUGHT) + self.count(TIMEOUT)
        return 100.0 * caught / self.scored if self.scored else 100.0


def module_name(path: Path) -> str:
    return ".".join(path.resolve().relative_to(ROOT).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    """Dotted names a file imports (``from a import b`` counts as ``a`` and ``a.b``)."""
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return set()
    names: set[str] = set()
    package = module_name(path).rsplit(".", 1)[0] if path.is_relative_to(ROOT) else ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def default_tests(module: str) -> list[str]:
    """The files of tests/unit that import ``module`` or a reviewapp module importing it."""
    users = {module}
    for path in (ROOT / "reviewapp").rglob("*.py"):
        if module in _imports(path):
            name = module_name(path)
            users.add(name[: -len(".__init__")] if name.endswith(".__init__") else name)
    found = []
    for path in sorted((ROOT / "tests" / "unit").glob("test_*.py")):
        rel = str(path.relative_to(ROOT))
        if rel not in SLOW_TESTS and _imports(path) & users:
            found.append(rel)
    return found


def mutate_module(path: Path, tests: list[str], equivalents: list[Equivalent], *,
                  fork: bool = True, timeout: float | None = None, module: str | None = None,
                  progress: Callable[[str], None] = lambda s: None,
                  only: set[str] | None = None, every: int = 1) -> Result:
    """Run every mutant of the module at ``path`` against ``tests`` (with ``only``: just
    the mutants whose one-line diff is in it; the others count as caught)."""
    module = module or module_name(path)
    result = Result(module, str(path), tests)
    source = path.read_text()
    result.mutants = enumerate_mutants(source)[::every]
    run = _run_forked if fork else _run_subprocess
    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        trace_out, modules_out = Path(tmp) / "lines.json", Path(tmp) / "modules.json"
        # Without tests/conftest.py (it builds the app and a database) when the tests
        # pass without it: most pure-rule tests do, and then a mutant costs 10x less.
        for noconftest in (True, False):
            job = Job(module, str(path), None, source, tests, noconftest=noconftest,
                      modules_out=str(modules_out))
            status, seconds = run(job, 600.0)
            if status == 0:
                break
        else:
            raise BaselineFailed(f"{module}: the tests fail on the unmutated module "
                                 f"(pytest status {status}): {' '.join(tests)}")
        result.baseline_seconds = seconds
        job.modules_out = None
        if fork and modules_out.exists():
            _preload(modules_out, module.split(".")[0])
            status, seconds = run(job, 600.0)
            result.baseline_seconds = seconds
        run(Job(module, str(path), None, source, tests, stop_first=False, noconftest=noconftest,
                trace_out=str(trace_out)), 600.0)
        trace = json.loads(trace_out.read_text()) if trace_out.exists() else {}
    covered: dict[int, list[str]] = {int(n): t for n, t in trace.get("lines", {}).items()}
    durations: dict[str, float] = trace.get("durations", {})
    # A mutant that loops forever is caught by the clock: 4 x what its tests took unmutated
    # (process start-up included), at least 10 s.
    startup = max(1.0, result.baseline_seconds - sum(durations.values()))
    for m in result.mutants:
        if any(e.matches(module, m) for e in equivalents):
            for e in equivalents:
                if e.matches(module, m):
                    e.used = True
            m.outcome = EQUIVALENT
            continue
        if only is not None and _plain(m.diff(path.name)) not in only:
            m.outcome = CAUGHT
            continue
        # Only the tests that run the changed line (all of them for a line run at import).
        selected = {t for n in range(m.lineno, m.end_lineno + 1) for t in covered.get(n, ())}
        if not selected and m.where.startswith("<module>") and covered:
            # Top-level code runs at import even where no line event says so (a folded
            # set display of constants reports none for its lines): every test.
            selected = {""}
        if not selected:
            m.outcome = NOT_COVERED
            continue
        run_tests = tests if "" in selected else sorted(selected)
        limit = timeout or max(10.0, 4 * (result.baseline_seconds if run_tests is tests else
                                          startup + sum(durations.get(t, 1.0) for t in run_tests)))
        status, m.seconds = run(Job(module, str(path), m.index, source, run_tests,
                                    noconftest=noconftest), limit)
        if status in (4, 5) and run_tests is not tests:  # a test id pytest cannot select
            status, m.seconds = run(Job(module, str(path), m.index, source, tests,
                                        noconftest=noconftest), limit)
        if status is None:
            m.outcome = TIMEOUT
        elif status == 0 or status == 97:
            m.outcome = SURVIVED
        elif status == 5:
            raise BaselineFailed(f"{module}: no tests collected from {' '.join(tests)}")
        else:
            m.outcome = CAUGHT
        progress(f"  [{m.index + 1}/{len(result.mutants)}] {m.outcome:<9} "
                 f"{m.diff(Path(path).name)[:150]}")
    return result


class BaselineFailed(Exception):
    pass


def _plain(diff: str) -> str:
    """A survivor line without the ``#2`` of a repeated change (older outputs lack it)."""
    return re.sub(r"^(\S+ [^:#]*)#\d+:", r"\1:", diff)


# ----------------------------------------------------------------------- report

def print_report(results: Sequence[Result], toml: bool, out: Callable[[str], None] = print
                 ) -> None:
    for r in results:
        survivors = [m for m in r.mutants if m.outcome in (SURVIVED, NOT_COVERED)]
        if not survivors and not r.count(TIMEOUT):
            continue
        out(f"\n{r.module}: {len(survivors)} survivors (tests: {' '.join(r.tests)})")
        for m in survivors:
            tag = " (not covered)" if m.outcome == NOT_COVERED else ""
            out(f"  {m.diff(Path(r.path).name)}{tag}")
        for m in r.mutants:  # caught by the clock: worth a look on a loaded machine
            if m.outcome == TIMEOUT:
                out(f"  timed out after {m.seconds:.0f} s: {m.diff(Path(r.path).name)}")
        if toml:
            out("")
            for m in survivors:
                out(toml_stanza(r.module, m))
    out("")
    header = (f"{'module':<36} {'mutants':>7} {'caught':>6} {'survived':>8} {'(not cov.)':>10} "
              f"{'timeouts':>8} {'equiv.':>6} {'score':>7}")
    out(header)
    out("-" * len(header))
    totals = Result("total", "", [])
    for r in results:
        totals.mutants.extend(r.mutants)
        _row(r, out)
    if len(results) > 1:
        out("-" * len(header))
        _row(totals, out)


def _row(r: Result, out: Callable[[str], None]) -> None:
    out(f"{r.module:<36} {len(r.mutants):>7} {r.count(CAUGHT):>6} "
        f"{r.count(SURVIVED) + r.count(NOT_COVERED):>8} {r.count(NOT_COVERED):>10} "
        f"{r.count(TIMEOUT):>8} {r.count(EQUIVALENT):>6} {r.score:>6.1f}%")


def resolve(spec: str) -> Path:
    """A short name (``gatekeeper``), a dotted name or a path -> the module's file."""
    candidates = [ROOT / spec, ROOT / (spec.replace(".", "/") + ".py"),
                  ROOT / "reviewapp" / "domain" / f"{spec}.py",
                  ROOT / "reviewapp" / "services" / f"{spec}.py"]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise SystemExit(f"no module {spec!r} (try a name in reviewapp/domain or a path)")


def expand(specs: Sequence[str]) -> Iterator[Path]:
    for spec in specs:
        path = ROOT / spec
        if path.is_dir():
            yield from sorted(p.resolve() for p in path.glob("*.py") if p.name != "__init__.py")
        else:
            yield resolve(spec)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", default=list(DEFAULT_MODULES),
                        help="short names, dotted names, files or folders")
    parser.add_argument("--tests", nargs="+", help="test files / folders (default: see above)")
    parser.add_argument("--equivalents", type=Path, default=DEFAULT_EQUIVALENTS)
    parser.add_argument("--timeout", type=float, help="seconds per mutant "
                        "(default: 4 x the unmutated run, at least 10)")
    parser.add_argument("--no-fork", action="store_true", help="a new interpreter per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--toml", action="store_true", help="print survivors as equivalents")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--survivors-of", type=Path, metavar="JSON",
                        help="run only the mutants that survived in this earlier --json "
                        "output, counting the rest as caught (right when tests were only "
                        "added since)")
    parser.add_argument("--every", type=int, default=1, metavar="K",
                        help="a sample: every K-th mutant only (an estimate, for big modules)")
    parser.add_argument("--min", type=float, default=0.0, help="exit 1 below this score")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(Job(**json.loads(sys.stdin.read())))
    os.chdir(ROOT)
    equivalents = load_equivalents(args.equivalents)
    results = []
    for path in expand(args.modules):
        module = module_name(path)
        if args.list:
            for m in enumerate_mutants(path.read_text()):
                print(f"{m.index:>4} {m.kind:<10} {m.diff(path.name)}")
            continue
        tests = args.tests or default_tests(module)
        if not tests:
            print(f"{module}: no test imports it; name them with --tests", file=sys.stderr)
            continue
        print(f"{module}: {len(enumerate_mutants(path.read_text()))} mutants, "
              f"tests: {' '.join(tests)}", file=sys.stderr, flush=True)
        progress = (lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose else (
            lambda s: None)
        only = None
        if args.survivors_of:
            earlier = {r["module"]: r for r in json.loads(args.survivors_of.read_text())}
            if module not in earlier:
                print(f"{module}: not in {args.survivors_of}", file=sys.stderr)
                return 2
            only = {_plain(line) for line in earlier[module]["survivors"]}
        try:
            results.append(mutate_module(path, tests, equivalents, fork=not args.no_fork,
                                         timeout=args.timeout, progress=progress, only=only,
                                         every=args.every))
        except BaselineFailed as exc:
            print(exc, file=sys.stderr)
            return 2
    if args.list:
        return 0
    print_report(results, args.toml)
    names = {r.module for r in results}
    for e in equivalents:
        if e.module in names and not e.used:
            print(f"stale equivalent (matches no mutant): {e.module} {e.where}: {e.mutant}")
    if args.json:
        args.json.write_text(json.dumps([
            {"module": r.module, "tests": r.tests, "mutants": len(r.mutants),
             "caught": r.count(CAUGHT), "survived": r.count(SURVIVED),
             "not_covered": r.count(NOT_COVERED), "timeouts": r.count(TIMEOUT),
             "equivalent": r.count(EQUIVALENT), "score": round(r.score, 1),
             "survivors": [m.diff(Path(r.path).name) for m in r.mutants
                           if m.outcome in (SURVIVED, NOT_COVERED)],
             "timed_out": [m.diff(Path(r.path).name) for m in r.mutants
                           if m.outcome == TIMEOUT]}
            for r in results], indent=1))
    return 0 if all(r.score >= args.min for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
