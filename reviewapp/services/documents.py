"""Shape checks of ingest documents against the published JSON Schemas (SPEC 9, 10).

The schemas live in ``reviewapp/schemas/`` (``run_document.schema.json``,
``tool_event.schema.json``) and are validated with ``jsonschema`` (Draft 2020-12). Every
problem becomes ``ValidationFailed`` whose field is the failing path, e.g.
``messages[1].metadata.citatons`` for an unknown field, ``tool_calls[0].status`` for a
bad value. The same checks run for the API and for file imports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..domain.ids import id_problem
from ..domain.json_text import find_problem, join_path
from ..errors import ValidationFailed

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


@cache
def schema(name: str) -> dict[str, Any]:
    """The published JSON Schema ``name`` (``run_document`` | ``tool_event``)."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


def _inline_refs(node: Any, defs: Mapping[str, Any]) -> Any:
    # Local "#/$defs/x" references replaced by their target (the schemas are not
    # recursive): jsonschema's reference lookups were a third of its time on big documents.
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) <= 2:
            target = _inline_refs(defs[ref[len("#/$defs/"):]], defs)
            return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


@cache
def _validator(name: str) -> Draft202012Validator:
    published = schema(name)
    return Draft202012Validator(_inline_refs(published, published.get("$defs", {})))


def _path(prefix: str, parts: Any) -> str:
    path = prefix
    for part in parts:
        path = join_path(path, part)
    return path


def _prefixed(prefix: str, path: str) -> str:
    if path == "$":
        return prefix or "$"
    if not prefix or path.startswith("["):
        return prefix + path
    return f"{prefix}.{path}"


def _describe(error: ValidationError, prefix: str) -> tuple[str, str]:
    """(field path, short message) for one schema error; never echoes the whole value."""
    path = _path(prefix, error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = set(error.schema.get("properties", {}))
        unknown = sorted(str(k) for k in error.instance if k not in allowed)
        if unknown:
            return join_path(path, unknown[0]), "unknown field"
    if kind == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else ""
        return join_path(path, missing) if missing else path, "is required"
    if kind == "type":
        types = error.validator_value
        names = types if isinstance(types, list) else [types]
        return path, "must be " + " or ".join(str(n) for n in names)
    if kind == "enum":
        options = ", ".join("null" if v is None else str(v) for v in error.validator_value)
        return path, f"must be one of: {options}"
    if kind == "maxLength":
        return path, f"must be at most {error.validator_value} characters"
    if kind == "minLength" or (kind == "pattern" and error.validator_value == r"\S"):
        return path, "must not be empty"
    if kind == "pattern":
        return path, run_id_rule() if error.validator_value == run_id_pattern().pattern \
            else f"must match {error.validator_value}"
    if kind == "maxItems":
        return path, f"must hold at most {error.validator_value} items"
    if kind in ("minimum", "maximum"):
        return path, f"out of range ({kind} {error.validator_value})"
    if kind == "anyOf" and error.context:
        if all(e.validator == "type" for e in error.context):
            names: list[str] = []
            for branch in error.validator_value:
                branch_types = branch.get("type", [])
                for name in branch_types if isinstance(branch_types, list) else [branch_types]:
                    if name not in names:
                        names.append(str(name))
            return path, "must be " + " or ".join(names)
        inner = best_match(error.context)
        return _describe(inner, prefix) if inner is not None else (path, "invalid value")
    return path or "$", str(error.message)[:200]


_EVENT_KEYS = frozenset(("id", "run_id", "event", "tool_name", "arguments", "output", "error",
                         "timestamp", "step_id", "retrieval"))


def _id(value: Any, limit: int = 160) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit and not value.isspace()


@cache
def run_id_pattern() -> re.Pattern[str]:
    """The published run id pattern (``run_document.schema.json`` ``$defs.run_id``)."""
    return re.compile(schema("run_document")["$defs"]["run_id"]["pattern"])


def run_id_rule() -> str:
    """The one wording of the run id rule, for every refusal of a run id (the run API,
    tool events, the schemas' pattern)."""
    return ("must match " + run_id_pattern().pattern
            + " (letters, digits and . _ : @ -, at most 160 characters, no /)")


def valid_run_id(value: Any) -> bool:
    """True when ``value`` is a run id the schemas allow (whole-string match: a trailing
    newline, which ``$`` alone would let through, is refused)."""
    return isinstance(value, str) and len(value) <= 160 and run_id_pattern().fullmatch(value) is not None


def _plainly_valid_event(event: Any) -> bool:
    """True only for events that certainly satisfy ``tool_event.schema.json`` (a stricter,
    hand-written subset: no retrieval facts). Anything else goes through jsonschema, which
    also words the error. Saves most of the validation time of big batches."""
    if not isinstance(event, dict) or not event.keys() <= _EVENT_KEYS:
        return False
    stamp = event.get("timestamp")
    tool = event.get("tool_name")
    step = event.get("step_id")
    return (
        _id(event.get("id")) and valid_run_id(event.get("run_id"))
        and event.get("event") in ("started", "completed", "failed", "delta")
        and (tool is None or _id(tool, 200)) and (step is None or _id(step))
        and event.get("retrieval") is None
        and (stamp is None or (isinstance(stamp, str) and len(stamp) <= 64)
             or (type(stamp) in (int, float) and stamp >= 0))
    )


_FAST_PATHS = {"tool_event": _plainly_valid_event}


# The identifier fields of each document (``domain.ids``: one rule for all), as paths;
# ``*`` stands for every index of a list.
_ID_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "run_document": (("session_id",), ("steps", "*", "id"), ("tool_calls", "*", "id"),
                     ("tool_calls", "*", "tool_name"), ("tool_calls", "*", "step_id")),
    "tool_event": (("id",), ("tool_name",), ("step_id",)),
}


def _id_values(node: Any, path: tuple[str, ...], at: str) -> Iterator[tuple[str, str]]:
    if not path:
        if isinstance(node, str):
            yield at, node
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for index, child in enumerate(node if isinstance(node, list) else ()):
            yield from _id_values(child, rest, join_path(at, index))
    elif isinstance(node, dict) and head in node:
        yield from _id_values(node[head], rest, join_path(at, head))


def _document_order(document: Any, path: Any) -> tuple[int, ...]:
    """Where ``path`` (an error's ``absolute_path``) sits in ``document``: each step's
    position, a list's index or a key's place in its object's own key order."""
    node, order = document, []
    for part in path:
        if isinstance(node, Mapping):
            order.append(next((i for i, key in enumerate(node) if key == part), len(node)))
        else:
            order.append(part if isinstance(part, int) else 0)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return tuple(order)


def first_error(document: Any, errors: Iterable[ValidationError]) -> ValidationError | None:
    """The schema error a refusal names: among the errors nearest the root (fewest path
    steps), the first in document order, then ``jsonschema``'s ``best_match`` among the
    errors at that one place (a stronger keyword, the branch of an ``anyOf``). ``None``
    when there is none. ``best_match`` alone prefers the *greater* path among siblings,
    so 300 bad tool calls named ``tool_calls[299]`` (user walk)."""
    found = list(errors)
    if not found:
        return None
    nearest = min(len(e.absolute_path) for e in found)
    top = [e for e in found if len(e.absolute_path) == nearest]
    first = min(top, key=lambda e: _document_order(document, e.absolute_path))
    return best_match([e for e in top if e.absolute_path == first.absolute_path])


def check_ids(name: str, document: Any, prefix: str = "") -> None:
    """The identifier rule (``domain.ids.id_problem``) on the document's id fields
    (``_ID_PATHS``). Raises ``ValidationFailed`` naming the first refused one's path."""
    for path in _ID_PATHS.get(name, ()):
        for at, value in _id_values(document, path, prefix):
            problem = id_problem(value)
            if problem is not None:
                raise ValidationFailed(at, problem)


def check(name: str, document: Any, prefix: str = "") -> None:
    """Validate ``document`` against schema ``name`` and its text (valid Unicode, no NUL,
    nesting at most 64 deep). Raises ``ValidationFailed(path, message)`` for the first
    problem; ``prefix`` is put in front of paths (``[3]`` for the fourth event of a batch).
    """
    problem = find_problem(document)
    if problem is not None:
        path, message = problem
        raise ValidationFailed(_prefixed(prefix, path), message)
    fast = _FAST_PATHS.get(name)
    if fast is None or not fast(document):
        error = first_error(document, _validator(name).iter_errors(document))
        if error is not None:
            path, message = _describe(error, prefix)
            raise ValidationFailed(path or "$", message)
    check_ids(name, document, prefix)
