"""The workspace settings an admin edits on one page (SPEC 8), one registry row each.
Pure: stdlib only.

A ``Setting`` says where its value lives (``code``: the key in ``workspace.settings``),
how people see it (``label``, ``help``, ``widget``: ``lines`` | ``checkbox`` | ``text``),
how the page's text becomes the stored value (``parse``: raises ``ValueError`` with the
reason, naming the line) and back (``show``: from the whole settings mapping, so a
workspace that never set it shows the default the app applies), and how it reads in one
line of the audit log (``brief``: lists as their labels, comma-separated).

Adding a setting is one row in ``SETTINGS``: the page, the service (versioned writes,
the audit record) and the CLI derive from it. The consumers read the stored value with
their own registry (``reasons.workspace_reasons``, ``fault_categories.workspace_categories``,
``aiops.evidence_tool_groups``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .aiops import DEFAULT_EVIDENCE_TOOLS
from .fault_categories import CODE_RE, DEFAULT_CATEGORY, GROUPS, workspace_categories
from .reasons import DEFAULT_REASONS, POLARITIES, workspace_reasons
from .vocabulary import Registry

MAX_LINES = 100
REASON_CODE_RE = re.compile(r"^[a-z][a-z0-9_]{0,79}$")
GROUP_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
TOOL_RE = re.compile(r"^[A-Za-z0-9_.:/-]{1,120}$")
LABEL_MAX = 80
DEFAULT_TIME_ZONE = "UTC"


@dataclass(frozen=True)
class Setting:
    """One editable setting (see the module docstring)."""

    code: str
    label: str
    help: str
    widget: str
    parse: Callable[[str], Any]
    show: Callable[[Mapping[str, Any]], str]
    brief: Callable[[Mapping[str, Any]], str]

    def describe(self, stored: Any) -> str:
        """A stored value (an audit event's before / after) in one readable line
        (``brief``): a list as its labels in the setting's own vocabulary, comma-separated,
        a checkbox as ``on`` / ``off``; ``None`` (never set) as the default the app applied
        then, prefixed ``(default)``. Plain text: the page escapes it."""
        text = self.brief({} if stored is None else {self.code: stored})
        return f"(default) {text}" if stored is None else text


def _lines(text: str) -> list[tuple[int, list[str]]]:
    """Non-empty lines as (line number, ``|``-separated stripped parts)."""
    rows = [(n, [p.strip() for p in line.split("|")])
            for n, line in enumerate((text or "").splitlines(), 1) if line.strip()]
    if len(rows) > MAX_LINES:
        raise ValueError(f"at most {MAX_LINES} lines")
    return rows


def _label(n: int, parts: list[str], code: str) -> str:
    label = parts[1] if len(parts) > 1 and parts[1] else code.replace("_", " ").capitalize()
    if len(label) > LABEL_MAX:
        raise ValueError(f"line {n}: the label is longer than {LABEL_MAX} characters")
    return label


def _polarity_name(polarity: tuple[str, ...]) -> str:
    return next(name for name, value in POLARITIES.items() if value == polarity)


def parse_reasons(text: str) -> list[dict[str, str]]:
    """``code | Label | polarity`` per line (polarity ``negative``, ``positive`` or
    ``either``; omitted: the default code's, else ``negative``). A default code keeps to
    its ratings: ``incorrect`` can never accompany a positive rating. At least one line."""
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for n, parts in _lines(text):
        code = parts[0]
        if not REASON_CODE_RE.match(code):
            raise ValueError(f"line {n}: '{code[:40]}' is not a code (lowercase letters, digits, _)")
        if code in seen:
            raise ValueError(f"line {n}: '{code}' is listed twice")
        seen.add(code)
        default = DEFAULT_REASONS.get(code) if code in DEFAULT_REASONS else None
        name = parts[2].lower() if len(parts) > 2 and parts[2] else \
            (_polarity_name(default.polarity) if default else "negative")
        if name not in POLARITIES:
            raise ValueError(f"line {n}: polarity must be one of {', '.join(POLARITIES)}")
        if default and not set(POLARITIES[name]) <= set(default.polarity):
            raise ValueError(f"line {n}: '{code}' belongs to {_polarity_name(default.polarity)} "
                             f"ratings only; it cannot be {name}")
        rows.append({"code": code, "label": _label(n, parts, code), "polarity": name})
    if not rows:
        raise ValueError("list at least one reason")
    return rows


def show_reasons(settings: Mapping[str, Any]) -> str:
    return "\n".join(f"{r.code} | {r.label} | {_polarity_name(r.polarity)}"
                     for r in workspace_reasons(settings))


def parse_categories(text: str) -> list[dict[str, str]]:
    """``CODE | Label | group`` per line (group ``incident`` or ``agent``; omitted:
    ``incident``). Codes are upper-case letters, digits and ``_`` as typed (nothing is
    upper-cased for you). ``GENERAL``, the default category, is always kept. At least one
    line: an empty box is refused, not read as "only GENERAL" (a save that silently
    dropped every category; SPEC 8 lists the categories as the admin's to edit, and
    ``GENERAL`` typed alone keeps just the default)."""
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for n, parts in _lines(text):
        code = parts[0]
        if not CODE_RE.match(code):
            raise ValueError(f"line {n}: '{code[:40]}' is not a code (capital letters, digits, _)")
        if code in seen:
            raise ValueError(f"line {n}: '{code}' is listed twice")
        seen.add(code)
        group = parts[2].lower() if len(parts) > 2 and parts[2] else "incident"
        if group not in GROUPS:
            raise ValueError(f"line {n}: group must be one of {', '.join(GROUPS)}")
        rows.append({"code": code, "label": _label(n, parts, code), "group": group})
    if not rows:
        raise ValueError("list at least one category (write GENERAL to keep only the default)")
    if DEFAULT_CATEGORY not in seen:
        rows.insert(0, {"code": DEFAULT_CATEGORY, "label": "General / other", "group": "incident"})
    return rows


def show_categories(settings: Mapping[str, Any]) -> str:
    return "\n".join(f"{c.code} | {c.label} | {c.group}" for c in workspace_categories(settings))


def parse_evidence_tools(text: str) -> dict[str, list[str]]:
    """``group: tool, tool`` per line (SPEC 5.3: which tools count as evidence)."""
    groups: dict[str, list[str]] = {}
    for n, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        group, sep, names = line.partition(":")
        group = group.strip()
        if not sep or not GROUP_RE.match(group):
            raise ValueError(f"line {n}: write 'group: tool, tool' (group: lowercase letters, digits, _)")
        if group in groups:
            raise ValueError(f"line {n}: group '{group}' is listed twice")
        tools = [t.strip() for t in names.split(",") if t.strip()]
        bad = [t for t in tools if not TOOL_RE.match(t)]
        if bad or not tools:
            raise ValueError(f"line {n}: list tool names (letters, digits, _ . : / -), "
                             f"not '{(bad or [''])[0][:40]}'")
        groups[group] = tools
    if not groups:
        raise ValueError("list at least one group")
    if len(groups) > MAX_LINES:
        raise ValueError(f"at most {MAX_LINES} groups")
    return groups


def show_evidence_tools(settings: Mapping[str, Any]) -> str:
    value = settings.get("aiops_evidence_tools")
    source = value if isinstance(value, Mapping) and value else DEFAULT_EVIDENCE_TOOLS
    return "\n".join(f"{group}: {', '.join(map(str, names))}" for group, names in source.items())


def _flag(settings: Mapping[str, Any]) -> str:
    return "1" if settings.get("triage_negative_targets") is True else ""


def _zone(settings: Mapping[str, Any]) -> str:
    return str(settings.get("time_zone") or DEFAULT_TIME_ZONE)


def parse_flag(text: str) -> bool:
    """A checkbox: ``1`` / ``on`` / ``true`` is on, empty is off."""
    value = (text or "").strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("", "0", "off", "false", "no"):
        return False
    raise ValueError("must be on or off")


def parse_time_zone(text: str) -> str:
    """An IANA time zone name such as ``Europe/Berlin`` or ``UTC``."""
    name = (text or "").strip() or DEFAULT_TIME_ZONE
    try:
        if len(name) > 64 or "." in name.split("/")[0]:
            raise ValueError
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"'{name[:64]}' is not a time zone name (e.g. UTC, Europe/Berlin)") from None
    return name


def time_zone_of(settings: Mapping[str, Any] | None) -> str:
    """The IANA zone a workspace's times show in on its pages (run, triage item, case;
    each row of a list in its own workspace's zone): its ``time_zone`` setting, ``UTC``
    when unset or when a stored name no longer resolves. Raises nothing."""
    name = (settings or {}).get("time_zone")
    if not isinstance(name, str) or not name:
        return DEFAULT_TIME_ZONE
    try:
        return parse_time_zone(name)
    except ValueError:
        return DEFAULT_TIME_ZONE


SETTINGS: Registry[Setting] = Registry("setting", (
    Setting("feedback_reasons", "Reasons for ratings",
            "One per line: code | label | polarity (negative, positive or either). "
            "A default reason keeps its polarity: 'incorrect' never goes with a thumbs-up.",
            "lines", parse_reasons, show_reasons,
            lambda s: ", ".join(r.label for r in workspace_reasons(s))),
    Setting("triage_negative_targets", "Negative part ratings open triage items",
            "A thumbs-down on a citation, step or report also puts the run in the not-useful "
            "queue (Opened by: negative rating of a part).",
            "checkbox", parse_flag, _flag, lambda s: "on" if _flag(s) else "off"),
    Setting("fault_categories", "Fault categories (triage and cases)",
            "One per line: CODE | label | group (incident or agent). Triage and the case "
            "library offer exactly these; anything else is refused.",
            "lines", parse_categories, show_categories,
            lambda s: ", ".join(c.label for c in workspace_categories(s))),
    Setting("aiops_evidence_tools", "AIOps evidence tools",
            "One group per line: group: tool, tool. Tool calls by these names count as "
            "evidence in the AIOps checks (new scores; re-score older runs with "
            "flask runs rescore).",
            "lines", parse_evidence_tools, show_evidence_tools,
            lambda s: "; ".join(show_evidence_tools(s).splitlines())),
    Setting("time_zone", "Time zone",
            "An IANA name (e.g. Europe/Berlin). Applies to the times on the run, triage item and case "
            "pages as sent by the server (seen without JavaScript); lists and other pages show UTC "
            "there, and with JavaScript every time shows in the viewer's own zone.",
            "text", parse_time_zone, _zone, _zone),
))
