"""Template filters of the review pages (Markdown, pretty JSON, DOM ids, initials) and the
vocabulary registries as template globals."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from flask import Flask, current_app, g, request, url_for
from flask_wtf.csrf import generate_csrf
from markupsafe import Markup, escape

from ..domain import fault_categories, triage_flow
from ..domain.redaction import SUMMARY_LIMIT  # a result / error summary's cut at ingest (SPEC 4)
from ..domain.target_types import TARGET_TYPES, answer_noun
from ..domain.times import duration_ms, format_duration
from ..domain.verdicts import VERDICTS, VERIFIER_VERDICTS
from ..services.feedback import rating_version
from .markdown import capped, prose, render_markdown

PREVIEW_CHARS = 600

# Unicode bidi embedding / override / isolate controls (U+202A-U+202E, U+2066-U+2069):
# invisible, they reorder the text around them, so a model's "gnp.exe" can read as
# "exe.png" ("Trojan Source", CVE-2021-42574). Pages show them as visible code points
# instead. The marks U+200E / U+200F stay: RTL text uses them and they reorder nothing.
BIDI_CONTROLS = {cp: f"[U+{cp:04X}]" for cp in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_BIDI_CHARS = tuple(map(chr, BIDI_CONTROLS))


def has_bidi_control(text: str) -> bool:
    """Whether ``text`` holds a bidi control: nine substring searches, ~50 times faster than
    ``translate`` or a regular expression's character class over a long text (the
    timeline's rows made in Python are one value of tens of KiB, issue 18)."""
    for char in _BIDI_CHARS:
        if char in text:
            return True
    return False


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON; a string holding JSON is parsed first (tool results
    are stored as JSON text, possibly cut at 2,000 characters: then shown as is)."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
        if isinstance(value, str):
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


_ID_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9_-]")


def dom_id(value: Any) -> str:
    """A safe HTML id part for any value (citation ids are the agent's free text): the
    value's letters, digits, ``-`` and ``_``, plus a short hash when anything was dropped
    so two different values never share an id."""
    text = "" if value is None else str(value)
    if 0 < len(text) <= 40 and _ID_CHARS.fullmatch(text):  # nothing to drop (most ids)
        return text
    safe = _NOT_ID_CHAR.sub("", text)[:40]
    if safe == text and safe:
        return safe
    return f"{safe}-{hashlib.sha1(text.encode()).hexdigest()[:8]}" if text else "0"


def initials(value: Any) -> str:
    """Reviewer initials as text, from a list or a string."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    return ", ".join(str(v) for v in value)


def preview(value: str | None, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of ``value`` (a collapsed long result)."""
    text = value or ""
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def as_datetime(value: Any) -> Any:
    """An ISO-8601 string (as services put in error details) as an aware UTC datetime;
    datetimes pass through; anything unparseable gives ``None``."""
    if isinstance(value, str):
        from ..domain.times import parse_timestamp

        try:
            return parse_timestamp(value, "value")
        except (TypeError, ValueError):
            return None
    return value


def show_bidi_controls(value: Any) -> Any:
    """``value`` with every bidi embedding / override / isolate control replaced by a
    visible ``[U+202E]``-style marker; a ``Markup`` stays ``Markup`` (the markers hold no
    HTML), anything that is not text is returned as is. Jinja calls it on every ``{{ }}``
    output (``finalize``), so no template can forget it."""
    if isinstance(value, str) and not value.isascii() and has_bidi_control(value):
        return value.translate(BIDI_CONTROLS)
    return value


_WRAP_AFTER = re.compile(r"([_./])(?=.)")


def soft_wrap(value: Any) -> Markup:
    """``value`` escaped, with a line-break opportunity (``<wbr>``) after each ``_``, ``.``
    and ``/`` but the last character: a long identifier such as ``get_reservation_details``
    wraps between its words on a phone, never inside one. (A short plain string's result
    is kept: a timeline shows the same few tool names on every row.)"""
    if type(value) is str and len(value) <= _WRAP_KEPT_CHARS:
        return _soft_wrapped(value)
    return Markup(_WRAP_AFTER.sub(r"\1<wbr>", str(Markup.escape(value))))


_WRAP_KEPT_CHARS = 200


@lru_cache(maxsize=1024)
def _soft_wrapped(text: str) -> Markup:
    return Markup(_WRAP_AFTER.sub(r"\1<wbr>", str(Markup.escape(text))))


def path_segment(value: Any) -> str:
    """``value`` as ONE URL path segment: every character but unreserved ones
    percent-encoded, "/" and "." included, so an id such as ``../../admin`` stays one
    segment that no browser normalises away."""
    return quote(str(value), safe="-_~").replace(".", "%2E")


@dataclass(frozen=True)
class ShownValue:
    """A tool call's arguments, result or error as its page shows them (SPEC 10): ``text``
    (pretty JSON when the value fits the cap), ``shown`` characters of the value's
    ``total``; ``unknown_total`` for a summary stored at the 2,000-character limit before
    original lengths were kept (it may have been cut)."""

    text: str
    shown: int
    total: int
    unknown_total: bool = False

    @property
    def cut(self) -> bool:
        """True when the page (or the cut at ingest) shows less than the whole value."""
        return self.shown < self.total


def arguments_view(value: Any, length: int | None = None) -> ShownValue | None:
    """Arguments (stored whole) for the page: pretty JSON when their JSON fits
    ``TOOL_CALL_PAGE_CAP_CHARS``, else their compact JSON cut there. ``None`` when absent."""
    if value is None:
        return None
    compact = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    total = max(length or 0, len(compact))
    cap = current_app.config["TOOL_CALL_PAGE_CAP_CHARS"]
    if len(compact) <= cap:
        return ShownValue(pretty_json(value), len(compact), total)
    return ShownValue(compact[:cap], cap, total)


def summary_view(text: str | None, length: int | None = None) -> ShownValue | None:
    """A stored result / error summary (cut to 2,000 characters at ingest) with the length
    it had before the cut. ``None`` when absent."""
    if text is None:
        return None
    return ShownValue(pretty_json(text), len(text), max(length or 0, len(text)),
                      unknown_total=length is None and len(text) >= SUMMARY_LIMIT)


def thousands(value: int) -> str:
    """``5731`` -> ``5,731``."""
    return f"{value:,}"


def local_time(value: datetime | None, precise: bool = False) -> str:
    """An ISO UTC timestamp for a <time> element, to the second (``precise``: to the
    millisecond); the browser shows it in local time."""
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat(timespec="milliseconds" if precise else "seconds")


def zoned_time(value: datetime, zone: str | None = None, precise: bool = False) -> str:
    """``value`` (aware, UTC) as ``YYYY-MM-DD HH:MM UTC±HH:MM`` in the IANA ``zone`` (UTC
    when ``None``), e.g. ``2026-05-01 14:00 UTC+02:00``, and ``2026-05-01 12:00 UTC`` at no
    offset; ``precise`` (a tool call's times) adds the seconds and milliseconds,
    ``2026-05-01 14:00:05.250 UTC+02:00``. For pages without JavaScript: app.js writes a
    ``<time>`` in the viewer's zone the same way (one format with and without it)."""
    shown = value.astimezone(ZoneInfo(zone) if zone else UTC)
    clock = f"{shown.strftime('%Y-%m-%d %H:%M:%S')}.{shown.microsecond // 1000:03d}" if precise \
        else shown.strftime('%Y-%m-%d %H:%M')
    minutes = int((shown.utcoffset() or timedelta()).total_seconds()) // 60
    offset = f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}" if minutes else ""
    return f"{clock} UTC{offset}"


def age(value: datetime | None) -> str:
    """A short age like "5 min ago" relative to now (UTC)."""
    if value is None:
        return "—"
    seconds = (datetime.now(UTC) - value).total_seconds()
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def duration_between(started_at: datetime | None, ended_at: datetime | None) -> str:
    """``format_duration`` of the time from ``started_at`` to ``ended_at`` ("—" unknown)."""
    return format_duration(duration_ms(started_at, ended_at))


def highlight(text: str | None, needle: str | None, width: int = 140) -> Markup | None:
    """Where a search matched ``text`` (issue 17): an escaped excerpt of about ``width``
    characters around the first case-insensitive occurrence of ``needle``, the match in
    ``<mark>``, "…" where the text was cut; ``None`` when it does not occur. The match
    is found with ``str.find`` on casefolded-by-``lower`` copies (linear time)."""
    text, needle = text or "", (needle or "").strip()
    if not needle or not text:
        return None
    at = text.lower().find(needle.lower())
    if at < 0 or len(text.lower()) != len(text):  # lower() changed the length: no safe offsets
        return None
    end = at + len(needle)
    room = max(0, width - len(needle)) // 2
    start, stop = max(0, at - room), min(len(text), end + room)
    return Markup("{}{}<mark>{}</mark>{}{}").format(
        "…" if start else "", text[start:at], text[at:end], text[end:stop],
        "…" if stop < len(text) else "")


def excerpt_html(excerpt: Any) -> Markup | None:
    """A search excerpt (``domain.search_text.Snippet``: plain text from the agent) as
    HTML: every part escaped, the match in ``<mark>``, "…" where text was left out;
    ``None`` for no excerpt."""
    if excerpt is None:
        return None
    return Markup("{}{}<mark>{}</mark>{}{}").format(
        "…" if excerpt.cut_before else "", excerpt.before, excerpt.match, excerpt.after,
        "…" if excerpt.cut_after else "")


@dataclass(frozen=True)
class ThumbsPage:
    """What every thumbs control of one response shares (``feedback/_thumbs.html``): the
    rating form's ``rate_url``, the request's ``csrf_token``, and the ``rated`` /
    ``refused`` query arguments (the control a plain POST came back to), or ``None``."""

    rate_url: str
    csrf_token: str
    rated: str | None
    refused: str | None


def thumbs_page() -> ThumbsPage:
    """The ``ThumbsPage`` of the current request, built at its first control and kept on
    ``g``: a run page has a control per part and per tool call (500 for 500 calls), and
    ``url_for``, the CSRF token and two argument reads cost more than the rest of a
    compact control (issue 18)."""
    page = g.get("_thumbs_page")
    if page is None:
        page = g._thumbs_page = ThumbsPage(url_for("feedback.rate"), generate_csrf(),
                                           request.args.get("rated"),
                                           request.args.get("refused"))
    return page


# The markup of a thumbs control nobody has rated yet, as ``feedback/_thumbs.html``
# renders it (byte for byte: tests/web/test_thumbs_quick.py renders both): a control per
# rateable part and per tool call, nearly all of them unrated, made by one format instead
# of the macro's ~30 template steps (issue 18: the controls were a third of the run page's
# rendering).
UNRATED_THUMBS = (
    '<div id="{fid}" class="thumbs{compact_class}" data-target tabindex="-1" aria-label="Your rating of {label}">\n'
    '  <form method="post" action="{rate_url}" hx-post="{rate_url}" hx-target="#{fid}" hx-swap="outerHTML"'
    ' class="thumbs-form">\n'
    '    <input type="hidden" name="csrf_token" value="{csrf_token}">\n'
    '    <input type="hidden" name="target_type" value="{target_type}">\n'
    '    <input type="hidden" name="target_id" value="{target_id}">\n'
    '    <input type="hidden" name="subject_id" value="{subject_key}">\n'
    '    <input type="hidden" name="next" value="{next_url}">\n'
    '    <input type="hidden" name="switch" value="1">{compact_input}\n'
    '    <div class="thumb-buttons" role="group" aria-label="Rate {label}">{buttons}\n'
    '      <span class="fb-status" role="status"></span>\n'
    '    </div>\n'
    '  </form>\n'
    '</div>')


_ESCAPED = re.compile("[&<>\"']")


def shown_text(value: Any) -> str:
    """``value`` as a template's ``{{ value }}`` shows it: ``show_bidi_controls`` (the
    environment's ``finalize``), then escaped unless it is ``Markup``; a plain string
    without a character to escape as it is (most ids and URLs: no escaping work), an
    ``int`` or ``float`` as ``str`` writes it (its text holds nothing to escape or
    translate: no ``Markup`` made; the timeline's places and bar positions), a ``Markup``
    without the ``escape`` call that would return it unchanged."""
    kind = type(value)
    if kind is str:
        if not value.isascii() and has_bidi_control(value):
            value = value.translate(BIDI_CONTROLS)
        return value if _ESCAPED.search(value) is None else str(escape(value))
    if kind is int or kind is float:
        return str(value)
    if kind is Markup:  # escape() would give it back as it is
        return str(show_bidi_controls(value))
    return str(escape(show_bidi_controls(value)))


def thumbs_id(state: Any) -> str:
    """The HTML id of the thumbs control of ``state`` (a ``TargetState``):
    ``fb-<target_type>-<target_id>-<subject_key as dom_id, or 0>``."""
    subject = state.subject_key
    return f"fb-{state.target_type}-{state.target_id}-{dom_id(subject) if subject else '0'}"


def unrated_thumbs(state: Any, next_url: Any, compact: bool, buttons: Any) -> Markup | None:
    """The thumbs control of ``state`` (a ``TargetState``) when it is in its plain state:
    no rating of the viewer's, no other reviewer's, not just saved or refused on this
    request (``ThumbsPage``); else ``None`` and the macro renders it. ``next_url`` and
    ``buttons`` (the macro's ``UNRATED`` pair) as the macro takes them; every value is
    shown as a template's ``{{ }}`` shows it (bidi controls made visible, then escaped)."""
    if state.mine is not None or state.summary:
        return None
    fid = thumbs_id(state)
    page = thumbs_page()
    if page.rated == fid or page.refused == fid:
        return None

    shown = shown_text
    return Markup(UNRATED_THUMBS.format(
        fid=shown(fid), label=shown(state.label), rate_url=shown(page.rate_url),
        csrf_token=shown(page.csrf_token), target_type=shown(state.target_type),
        target_id=shown(state.target_id), subject_key=shown(state.subject_key),
        next_url=shown(next_url), buttons=shown(buttons),
        compact_class=" thumbs-compact" if compact else "",
        compact_input='<input type="hidden" name="compact" value="1">' if compact else ""))


def register(app: Flask) -> None:
    """Add the filters to ``app``'s Jinja environment, and ``show_bidi_controls`` as its
    ``finalize`` hook."""
    app.jinja_env.finalize = show_bidi_controls
    app.add_template_filter(render_markdown, "markdown")
    app.add_template_filter(pretty_json, "pretty_json")
    app.add_template_filter(dom_id, "dom_id")
    app.add_template_filter(initials, "initials")
    app.add_template_filter(rating_version, "rating_version")
    app.add_template_filter(preview, "preview")
    app.add_template_filter(path_segment, "path_segment")
    app.add_template_filter(soft_wrap, "soft_wrap")
    app.add_template_filter(as_datetime, "as_datetime")
    app.add_template_filter(prose, "prose")
    app.add_template_filter(capped, "capped")
    app.add_template_filter(thousands, "thousands")
    app.add_template_filter(highlight, "highlight")
    app.add_template_filter(excerpt_html, "excerpt_html")
    app.jinja_env.globals["arguments_view"] = arguments_view
    app.jinja_env.globals["summary_view"] = summary_view
    app.add_template_filter(local_time, "local_time")
    app.add_template_filter(age, "age")
    app.add_template_filter(zoned_time, "zoned_time")
    app.add_template_filter(format_duration, "duration")
    app.add_template_filter(duration_between, "duration_between")
    app.jinja_env.globals["PREVIEW_CHARS"] = PREVIEW_CHARS
    app.jinja_env.globals["thumbs_page"] = thumbs_page
    app.jinja_env.globals["unrated_thumbs"] = unrated_thumbs
    app.jinja_env.globals["thumbs_id"] = thumbs_id
    # The vocabularies' registries: templates take codes and labels from them.
    app.jinja_env.globals.update(TARGET_TYPES=TARGET_TYPES, VERDICTS=VERDICTS,
                                 VERIFIER_VERDICTS=VERIFIER_VERDICTS, answer_noun=answer_noun,
                                 category_groups=fault_categories.grouped)
    # Triage states, their labels and the move buttons' wording (domain/triage_flow.py).
    app.jinja_env.globals.update(triage_state_choices=triage_flow.state_choices,
                                 TRIAGE_OPEN_STATES=triage_flow.OPEN_STATES,
                                 TRIAGE_MOVE_TARGETS=triage_flow.MOVE_TARGETS,
                                 TRIAGE_STATE_LABELS=triage_flow.STATE_LABELS,
                                 TRIAGE_OPENED=triage_flow.OPENED,
                                 triage_action_label=triage_flow.action_label)
