"""The rows of a run page's tool-call timeline made in Python (issue 18): one row per
call, up to 250 on a page, was a loop of ~40 template steps each (a third of the run
page's rendering). ``timeline_rows`` writes them with one format per row, byte for byte
what the loop of ``runs/_timeline_rows.html`` rendered before (the reference markup is
kept in ``tests/web/test_timeline_rows_quick.py``, which renders both, hostile ids,
names and errors included). Every value goes out as a template's ``{{ }}`` sends it:
bidi controls made visible, then escaped (``filters.shown_text``)."""

from __future__ import annotations

from typing import Any

from jinja2.utils import url_quote

from ..domain.times import format_duration
from ..services.runs.targets import tool_call_name
from ..services.runs.timeline import TOOL_CALL
from .filters import (
    BIDI_CONTROLS,
    UNRATED_THUMBS,
    dom_id,
    has_bidi_control,
    shown_text,
    soft_wrap,
    thumbs_page,
    unrated_thumbs,
)

_ROW = (
    '\n    <li class="tl-row tl-{status}{compensated}" id="{row_id}"{data_call}>'
    '\n      <details class="tl-call" hx-get="{url}" hx-trigger="toggle once" hx-target="find .tl-body"'
    ' hx-swap="innerHTML">'
    '\n        <summary>'
    '\n          <span class="tl-name">'
    '\n            <span class="tl-index">{index}</span>'
    '\n            <code>{name}</code>{step}'
    '\n          </span>'
    '\n          <span class="tl-flags">{flags}'
    '\n          </span>{error}'
    '\n          <span class="tl-track">{track}'
    '\n          </span>'
    '\n          <span class="tl-dur">{duration}</span>'
    '\n        </summary>'
    '\n        <div class="tl-body"><p class="muted small"><a href="{url}">Show the arguments and the result</a></p></div>'
    '\n      </details>'
    '\n      {thumbs}'
    '\n    </li>')

_BAR = (
    '\n            <svg class="tl-svg" viewBox="0 0 1000 16" preserveAspectRatio="none" aria-hidden="true"'
    ' focusable="false"><rect class="tl-gridline" x="0" y="7.5"'
    '\n                width="1000" height="1"/><rect'
    '\n                    class="bar bar-{status}{compensated}{open}"'
    '\n                        x="{x}" y="2" width="{width}" height="12" rx="2" vector-effect="non-scaling-stroke"/></svg>')

_STATUS_BADGES = {
    "completed": '<span class="badge badge-completed">✓ completed</span>',
    "failed": '<span class="badge badge-failed">✗ failed</span>',
}
_NO_END_BADGE = '<span class="badge badge-started">⋯ no end event</span>'
_COMPENSATED_BADGE = ' <span class="badge badge-compensated">compensated (duration approximate)</span>'
_MATCH_BADGES = {
    "L0": ' <span class="badge badge-l0" title="Exact retrieval hit">L0 exact',
    "L1": ' <span class="badge badge-l1" title="Semantic retrieval hit">L1 semantic',
}
_NO_HIT_BADGE = ' <span class="badge badge-nohit" title="Retrieval without a hit">retrieval: no hit</span>'


def _flags(status: str, compensated: bool, match_level: Any, hits: Any) -> str:
    flags = _STATUS_BADGES.get(status, _NO_END_BADGE)
    if compensated:
        flags += _COMPENSATED_BADGE
    badge = _MATCH_BADGES.get(match_level)
    if badge is not None:
        flags += badge
        if hits is not None:
            flags += f" · {shown_text(hits)} hit{'' if hits == 1 else 's'}"
        flags += "</span>"
    elif hits is not None:
        flags += _NO_HIT_BADGE
    return flags


def _duration(status: str, bar: Any, compensated: bool, duration_ms: Any) -> str:
    if status == "started":
        return '<span class="muted">no end event</span>'
    shown = shown_text(format_duration(duration_ms))
    if bar.ended_before_start:
        return shown + ' <span class="small backwards">ended before it started</span>'
    return "≈ " + shown if compensated else shown


def _markup_shown(html: str) -> str:
    """Markup (a thumbs control) as ``{{ }}`` shows a ``Markup``: nothing escaped, bidi
    controls made visible (``shown_text(Markup(html))`` without making the ``Markup``)."""
    if not html.isascii() and has_bidi_control(html):
        return html.translate(BIDI_CONTROLS)
    return str(html)


def _braced(text: str) -> str:
    """``text`` as literal text of a ``str.format`` pattern."""
    return text.replace("{", "{{").replace("}", "}}")


def _unrated_control(run_pk: int, unrated: Any) -> str:
    """``filters.UNRATED_THUMBS`` with what every compact tool-call control of run
    ``run_pk`` on this page shares filled in (as ``unrated_thumbs`` fills it); left:
    ``fid``, ``label``, ``subject_key`` and ``next_url``."""
    page = thumbs_page()
    return UNRATED_THUMBS.format(
        fid="{fid}", label="{label}", subject_key="{subject_key}", next_url="{next_url}",
        rate_url=_braced(shown_text(page.rate_url)), csrf_token=_braced(shown_text(page.csrf_token)),
        target_type=TOOL_CALL, target_id=_braced(shown_text(run_pk)), buttons=_braced(shown_text(unrated)),
        compact_class=" thumbs-compact", compact_input='<input type="hidden" name="compact" value="1">')


class ShownRows:
    """HTML every character of which went out through ``shown_text`` / ``_markup_shown`` (bidi
    controls made visible, values escaped) or is this module's own markup: the template's
    ``{{ }}`` sends it as it is (``__html__``), without ``show_bidi_controls`` searching
    the tens of KiB again for what cannot be there (3 % of a run page's CPU, issue 18).
    Not a ``str``: nothing can be added to it, so nothing unshown can ride along."""

    __slots__ = ("html",)

    def __init__(self, html: str) -> None:
        self.html = html

    def __html__(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html


def timeline_rows(t: Any, call_url: str, call_link: str, run_url: str, thumbs: Any,
                  unrated: Any) -> ShownRows:
    """The ``<li>`` rows of ``t``'s calls (a ``services.runs.Timeline``) as the timeline
    shows them: ``call_url`` + the call's id (URL-quoted) opens a call, ``call_link`` +
    the id is the page down to a call past the first chunk and ``run_url`` the page (a
    plain rating's way back); ``thumbs`` is the ``feedback/_thumbs.html`` macro, for a
    control someone has rated, ``unrated`` its ``UNRATED`` compact buttons. Every value
    goes through ``shown_text`` (a control through ``_markup_shown``): ``ShownRows``."""
    live, has_axis, first_calls = t.live, t.layout.has_axis, t.first_calls
    mine, summary, page = t.my_feedback, t.summary, thumbs_page()
    control_of = _unrated_control(t.run_pk, unrated).format if t.rows else None
    fid_head = f"fb-{TOOL_CALL}-{t.run_pk}-"
    out = []
    for row in t.rows:
        c = row.call
        status, compensated, hits, bar = c.status, c.compensated, c.hit_count, row.bar
        quoted = url_quote(c.id)
        url = shown_text(call_url + quoted)
        safe_id = dom_id(c.id)
        row_id = "call-" + safe_id
        if bar.timed:
            track = _BAR.format(status=shown_text(status),
                                compensated=" bar-compensated" if compensated else "",
                                open=" bar-open" if bar.open_ended else "",
                                x=shown_text(bar.x), width=shown_text(bar.width))
        else:
            track = '<span class="muted small">no time recorded</span>' if has_axis else ""
        error = c.error_line if status == "failed" else None
        next_url = (call_link + quoted if row.index > first_calls else run_url) + "#" + row_id
        fid = fid_head + (safe_id if c.id else "0")
        if mine.get(c.id) is None and not summary.get(c.id) and fid != page.rated \
                and fid != page.refused:  # unrated_thumbs' plain state, its markup
            control = control_of(fid=shown_text(fid), label=shown_text(tool_call_name(c.tool_name)),
                                 subject_key=shown_text(c.id), next_url=shown_text(next_url))
        else:
            state = t.target(row)
            control = unrated_thumbs(state, next_url, True, unrated) or thumbs(
                state, next_url=next_url, compact=True)
        out.append(_ROW.format(
            status=shown_text(status), compensated=" tl-compensated" if compensated else "",
            row_id=shown_text(row_id), data_call=f' data-call="{shown_text(c.id)}"' if live else "",
            url=url, index=shown_text(row.index), name=shown_text(soft_wrap(c.tool_name)),
            step=(f' <span class="tl-step muted small">step {shown_text(row.step_label)}</span>'
                  if row.step_label else ""),
            flags=_flags(status, compensated, c.match_level, hits),
            error=(f'\n          <span class="tl-error small" dir="auto">{shown_text(error)}</span>'
                   if error else ""),
            track=track, duration=_duration(status, bar, compensated, c.duration_ms),
            thumbs=_markup_shown(control)))
    return ShownRows("".join(out))
