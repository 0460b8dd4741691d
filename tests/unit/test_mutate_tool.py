"""tools/mutate.py, the mutation-testing script of the pure rules, on a tiny module."""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutate_tool", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
sys.modules["mutate_tool"] = mutate  # dataclasses look their module up by name
_spec.loader.exec_module(mutate)

TINY = textwrap.dedent('''\
    """A tiny rule."""

    LIMIT = 3


    def over(n: int) -> bool:
        """Docstrings are not mutated."""
        return n > LIMIT
    ''')


def test_every_operator_offers_its_mutants_in_source_order():
    source = textwrap.dedent('''\
        TABLE = {"a": 1}


        def f(x: int, ok: bool) -> str:
            if x <= 0 and ok:
                return "low"
            return "high" if x in TABLE.values() else None
        ''')
    got = [(m.kind, m.where, m.after) for m in mutate.enumerate_mutants(source)]
    assert got == [
        ("constant", "<module>", "TABLE = {'aXX': 1}"),
        ("constant", "<module>", "TABLE = {\"a\": 2}"),
        ("constant", "<module>", "TABLE = {\"a\": 0}"),
        ("constant", "f", "if x <= 1 and ok:"),
        ("constant", "f", "if x <= -1 and ok:"),
        ("comparison", "f", "if x < 0 and ok:"),
        ("and/or", "f", "if x <= 0 or ok:"),
        ("constant", "f", "return 'lowXX'"),
        ("return", "f", "return ''"),
        ("negate", "f", "if not (x <= 0 and ok):"),
        ("comparison", "f", "return \"high\" if x not in TABLE.values() else None"),
        ("constant", "f", "return 'highXX' if x in TABLE.values() else None"),
        ("negate", "f", "return \"high\" if not x in TABLE.values() else None"),
        ("return", "f", "return ''"),
    ]
    assert [m.index for m in mutate.enumerate_mutants(source)] == list(range(14))


def test_a_mutant_changes_one_node_and_leaves_the_rest():
    tree = mutate.mutated_tree(TINY, 2)  # the comparison
    assert ast.unparse(tree) == ast.unparse(ast.parse(TINY.replace("n > LIMIT", "n >= LIMIT")))
    with pytest.raises(IndexError):
        mutate.mutated_tree(TINY, 4)


def test_docstrings_annotations_and_imports_are_not_mutated():
    source = 'from x import y\n\n\ndef f(a: "int" = 1) -> "str":\n    """Doc."""\n'
    assert [m.after for m in mutate.enumerate_mutants(source)] == [
        'def f(a: "int" = 2) -> "str":', 'def f(a: "int" = 0) -> "str":']


def test_equivalents_round_trip_through_the_toml_stanza(tmp_path):
    survivor = mutate.enumerate_mutants(TINY)[0]  # LIMIT = 4
    stanza = mutate.toml_stanza("tiny", survivor).replace("TODO: why", "because")
    (tmp_path / "eq.toml").write_text(stanza)
    [equivalent] = mutate.load_equivalents(tmp_path / "eq.toml")
    assert equivalent.matches("tiny", survivor)
    assert not equivalent.matches("other", survivor)
    assert not equivalent.matches("tiny", mutate.enumerate_mutants(TINY)[1])
    (tmp_path / "eq.toml").write_text(stanza.replace('reason = "because', 'note = "'))
    with pytest.raises(SystemExit, match="no reason"):
        mutate.load_equivalents(tmp_path / "eq.toml")


def test_a_run_counts_caught_survived_and_equivalent(tmp_path):
    (tmp_path / "tiny_rule.py").write_text(TINY)
    (tmp_path / "test_tiny_rule.py").write_text(
        "from tiny_rule import over\n\n\ndef test_over():\n"
        "    assert over(5)\n    assert not over(2)\n")
    path = tmp_path / "tiny_rule.py"
    equivalent = mutate.Equivalent("tiny_rule", "<module>", "LIMIT = 3 => LIMIT = 4", "why")
    result = mutate.mutate_module(path, [str(tmp_path / "test_tiny_rule.py")], [equivalent],
                                  fork=False, module="tiny_rule")
    # LIMIT = 4 is listed as equivalent; LIMIT = 2 and n >= LIMIT keep over(5) true and
    # over(2) false: they survive; the negated return makes over(5) false: caught.
    assert [m.outcome for m in result.mutants] == [
        "equivalent", "survived", "survived", "caught"]
    assert result.score == pytest.approx(100 / 3)
    assert equivalent.used
    lines: list[str] = []
    mutate.print_report([result], toml=False, out=lines.append)
    assert lines[:4] == [
        f"\ntiny_rule: 2 survivors (tests: {tmp_path / 'test_tiny_rule.py'})",
        "  tiny_rule.py:3 <module>: LIMIT = 3  =>  LIMIT = 2",
        "  tiny_rule.py:8 over: return n > LIMIT  =>  return n >= LIMIT",
        ""]
    assert path.read_text() == TINY  # the module itself is never written


def test_the_same_change_twice_in_one_function_is_told_apart():
    source = "def f(a):\n    x = 0\n    if a:\n        x = 0\n    return x\n"
    wheres = [m.where for m in mutate.enumerate_mutants(source) if m.after == "x = 1"]
    assert wheres == ["f", "f#2"]


def test_a_constant_on_a_continuation_line_of_a_module_level_table_is_run(tmp_path):
    # Python folds a set display of constants into one constant, so its lines report no
    # line event; yet the whole table runs at import: its mutants are run against every
    # test, not reported as "not covered" (audit.SECRET_KEYS was, though a test checks
    # each key).
    (tmp_path / "keys_rule.py").write_text(
        'KEYS = frozenset({\n    "a", "b",\n    "c", "d",\n})\n\n\ndef known(k):\n    return k in KEYS\n')
    (tmp_path / "test_keys_rule.py").write_text(
        "from keys_rule import known\n\n\ndef test_known():\n"
        "    assert all(known(k) for k in 'abcd') and not known('e')\n")
    result = mutate.mutate_module(tmp_path / "keys_rule.py",
                                  [str(tmp_path / "test_keys_rule.py")], [],
                                  fork=False, module="keys_rule")
    assert [(m.after, m.outcome) for m in result.mutants] == [
        ("'aXX', \"b\",", "caught"), ('"a", \'bXX\',', "caught"), ("'cXX', \"d\",", "caught"),
        ('"c", \'dXX\',', "caught"), ("return k not in KEYS", "caught"), ("return None", "caught")]
