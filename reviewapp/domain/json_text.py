"""Checks on decoded JSON before anything is stored (SPEC 10): valid Unicode text, no NUL
characters, finite numbers, bounded nesting. Pure; paths are written like ``messages[2].content``."""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64  # containers inside containers; deeper input is refused, not recursed into


def join_path(path: str, key: str | int) -> str:
    """``join_path("a", 0) == "a[0]"``, ``join_path("a", "b") == "a.b"``, ``join_path("", "b") == "b"``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


_SEGMENT = re.compile(r"\[\d+\]|\.?[^.\[]+")


def short_path(path: str, head: int = 6, tail: int = 2) -> str:
    """``path`` (as ``join_path`` writes it) for a message: one of more than ``head`` +
    ``tail`` + 2 segments keeps its first ``head`` and last ``tail``, the ones between
    counted: ``a[0].b.c.d[0]…(56 levels)…value.x``. A problem 64 levels deep otherwise
    names every level."""
    starts = [match.start() for match in _SEGMENT.finditer(path)]
    if len(starts) <= head + tail + 2:
        return path
    return (f"{path[:starts[head]]}…({len(starts) - head - tail} levels)…"
            f"{path[starts[-tail]:].removeprefix('.')}")


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character, which cannot be stored"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains a lone surrogate; text must be valid Unicode"
    return None


def _too_deep(value: Any, max_depth: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= max_depth:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _clean(value: Any, max_depth: int, check_text: bool) -> bool:
    """Fast pass without paths: True when nothing is wrong (the usual case). Text and
    numbers are checked on one C-level serialisation (NUL shows as ``\\u0000``, a lone
    surrogate fails to encode, ``allow_nan=False`` fails on an infinite number); a false
    alarm only costs the exact walk."""
    if isinstance(value, (dict, list)) and _too_deep(value, max_depth):
        return False
    if not check_text:
        return True
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
        text.encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return False
    return "\\u0000" not in text


def find_problem(value: Any, max_depth: int = MAX_DEPTH, check_text: bool = True) -> tuple[str, str] | None:
    """The first ``(path, problem)`` in a decoded JSON ``value``, or ``None`` when it is fine.

    Problems: nesting deeper than ``max_depth``; with ``check_text``, a string or key that
    holds a lone surrogate (a ``\\ud800`` escape without its pair) or a NUL character
    (PostgreSQL text cannot hold it), and a number that is not finite (``1e400`` reads
    as infinity, which no JSON column can store). The root's path is ``$``. Iterative: a hostile,
    deeply nested document cannot exhaust the stack here.
    """
    if _clean(value, max_depth, check_text):
        return None
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if check_text:
                problem = _text_problem(item)
                if problem:
                    return path or "$", problem
        elif isinstance(item, float):
            if check_text and not math.isfinite(item):
                return path or "$", "number out of range (not finite)"
        elif isinstance(item, dict):
            if depth >= max_depth:
                return path or "$", f"nested more than {max_depth} levels deep"
            for key, child in reversed(list(item.items())):
                key = str(key)
                if check_text:
                    problem = _text_problem(key)
                    if problem:
                        return join_path(path, "<key>"), problem
                stack.append((child, join_path(path, key), depth + 1))
        elif isinstance(item, list):
            if depth >= max_depth:
                return path or "$", f"nested more than {max_depth} levels deep"
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], join_path(path, index), depth + 1))
    return None
