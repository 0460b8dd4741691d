"""The timeline's rows made in Python (``web/timeline_html.timeline_rows``, issue 18) are
byte for byte what the template loop they replace rendered: the loop is kept here as the
reference and both are rendered for calls in every state (failed with an error line,
no end event, compensated, a clock that ran backwards, no time on an axis, retrieval
badges), hostile ids, tool names, step labels and errors, a live run, the page's and a
Markup address, and thumbs controls unrated, rated, rated by others and just saved."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from flask import g
from markupsafe import Markup

from reviewapp.domain.timeline import Bar, Layout
from reviewapp.services.runs.timeline import Timeline, TimelineCall, TimelineRow
from reviewapp.web.filters import ThumbsPage

HOSTILE = "<img src=x onerror=alert(1)>\u202egnp.exe\u202c \"'&amp; {x} ünï"

HEAD = """{%- from "feedback/_thumbs.html" import thumbs, UNRATED %}
{%- set t = timeline %}
  {%- set call_url = url_for('runs.tool_call', run_pk=t.run_pk) ~ '?call_id=' %}
  {%- set run_url = here if here is defined else url_for('runs.detail', run_pk=t.run_pk) %}
  {%- set sep = '&' if '?' in run_url else '?' %}
  {%- set call_link = run_url ~ sep ~ 'call=' %}
"""
# runs/_timeline_rows.html's loop before issue 18 made the rows in Python.
REFERENCE = HEAD + """  {#- what every row reads, looked up once (a lookup costs as much as a short output) #}
  {%- set live, has_axis, first_calls, unrated_compact = t.live, t.layout.has_axis, t.first_calls, UNRATED[true] %}
    {%- for row in t.rows %}
    {%- set c = row.call %}
    {%- set status, compensated, hits, bar = c.status, c.compensated, c.hit_count, row.bar %}
    {%- set url = call_url ~ c.id|urlencode %}
    {%- set row_id = 'call-' ~ c.id|dom_id %}
    <li class="tl-row tl-{{ status }}{% if compensated %} tl-compensated{% endif %}" id="{{ row_id }}"
      {%- if live %} data-call="{{ c.id }}"{% endif %}>
      <details class="tl-call" hx-get="{{ url }}" hx-trigger="toggle once" hx-target="find .tl-body" hx-swap="innerHTML">
        <summary>
          <span class="tl-name">
            <span class="tl-index">{{ row.index }}</span>
            <code>{{ c.tool_name|soft_wrap }}</code>
            {%- if row.step_label %} <span class="tl-step muted small">step {{ row.step_label }}</span>{% endif %}
          </span>
          <span class="tl-flags">
            {%- if status == 'completed' %}<span class="badge badge-completed">✓ completed</span>
            {%- elif status == 'failed' %}<span class="badge badge-failed">✗ failed</span>
            {%- else %}<span class="badge badge-started">⋯ no end event</span>{% endif %}
            {%- if compensated %} <span class="badge badge-compensated">compensated (duration approximate)</span>{% endif %}
            {%- if c.match_level == 'L0' %} <span class="badge badge-l0" title="Exact retrieval hit">L0 exact
              {%- if hits is not none %} · {{ hits }} hit{{ '' if hits == 1 else 's' }}{% endif %}</span>
            {%- elif c.match_level == 'L1' %} <span class="badge badge-l1" title="Semantic retrieval hit">L1 semantic
              {%- if hits is not none %} · {{ hits }} hit{{ '' if hits == 1 else 's' }}{% endif %}</span>
            {%- elif hits is not none %} <span class="badge badge-nohit" title="Retrieval without a hit">retrieval: no hit</span>{% endif %}
          </span>
          {%- if status == 'failed' and c.error_line %}
          <span class="tl-error small" dir="auto">{{ c.error_line }}</span>
          {%- endif %}
          <span class="tl-track">
            {%- if bar.timed %}
            <svg class="tl-svg" viewBox="0 0 1000 16" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect class="tl-gridline" x="0" y="7.5"
                width="1000" height="1"/><rect
                    class="bar bar-{{ status }}{% if compensated %} bar-compensated{% endif %}{% if bar.open_ended %} bar-open{% endif %}"
                        x="{{ bar.x }}" y="2" width="{{ bar.width }}" height="12" rx="2" vector-effect="non-scaling-stroke"/></svg>
            {%- elif has_axis %}<span class="muted small">no time recorded</span>{% endif %}
          </span>
          <span class="tl-dur">
            {%- if status == 'started' %}<span class="muted">no end event</span>
            {%- elif bar.ended_before_start %}{{ c.duration_ms|duration }} <span class="small backwards">ended before it started</span>
            {%- elif compensated %}≈ {{ c.duration_ms|duration }}
            {%- else %}{{ c.duration_ms|duration }}{% endif -%}
          </span>
        </summary>
        <div class="tl-body"><p class="muted small"><a href="{{ url }}">Show the arguments and the result</a></p></div>
      </details>
      {%- set next_url = (call_link ~ c.id|urlencode if row.index > first_calls else run_url) ~ '#' ~ row_id %}
      {%- set state = t.target(row) %}
      {#- an unrated control without the macro's call (filters.unrated_thumbs; the macro does the same) #}
      {{ unrated_thumbs(state, next_url, true, unrated_compact) or thumbs(state, next_url=next_url, compact=True) }}
    </li>
    {%- endfor %}
"""
NEW = HEAD + "  {{- timeline_rows(t, call_url, call_link, run_url, thumbs, UNRATED[true]) }}\n"

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _call(i, call_id, status="completed", name="search_flights", **kw):
    values = dict(id=call_id, tool_name=name, status=status, started_at=AT, completed_at=AT,
                  duration_ms=kw.pop("duration_ms", 1250 * i), compensated=False, match_level=None,
                  hit_count=None, step_pk=None, updated_at=AT, error_head=None)
    values.update(kw)
    return TimelineCall(**values)


def _rows():
    bar = Bar(12.5, 3.25, True, False, 0)
    specs = [
        (_call(1, "c-1", "failed", error_head="\n  \nboom <b>&amp;\u202e</b> " + "x" * 300), bar, None),
        (_call(2, HOSTILE, name=HOSTILE, match_level="L0", hit_count=1), bar, HOSTILE),
        (_call(3, "../..", "started", name="a.b/c_d", match_level="L1", hit_count=3), Bar(0.0, 0.4, True, True, 0), "1. step"),
        (_call(4, "x?y#z&call_id=1", compensated=True, hit_count=0), bar, None),
        (_call(5, "kb://doc/1", "failed", compensated=True, match_level="L0", hit_count=None), bar, None),
        (_call(6, "back", duration_ms=None), Bar(5.0, 0.0, True, False, 0, ended_before_start=True), None),
        (_call(7, "untimed", started_at=None, completed_at=None), Bar(0, 0, False, False, None), None),
        (_call(8, "", "failed"), bar, "2. <i>"),
        (_call(9, "rated-by-me"), bar, None),
        (_call(10, "rated-by-others"), bar, None),
        (_call(11, "just-saved"), bar, None),
        (_call(12, "refused"), bar, None),
    ]
    return [TimelineRow(call, b, label, index) for index, (call, b, label) in enumerate(specs, 1)]


def _timeline(live, has_axis, first_calls):
    mine = SimpleNamespace(id=5, rating="negative", reason="incorrect", comment=HOSTILE,
                           correction=None, updated_at=AT)
    summary = SimpleNamespace(positive=1, negative=2, positive_initials=["AB"],
                              negative_initials=["C", "D"], positive_reviewers=[HOSTILE],
                              negative_reviewers=["c", "d"], disagree=True)
    return Timeline(7, "RUNNING" if live else "SUCCESS", live, _rows(),
                    Layout(has_axis, AT, 1000, [], []), "v1",
                    my_feedback={"rated-by-me": mine}, summary={"rated-by-others": summary},
                    reasons=["incorrect"], reason_choices=(("incorrect", "Incorrect"),),
                    total=30, failed=3, first_calls=first_calls)


@pytest.mark.parametrize("live", [False, True])
@pytest.mark.parametrize("has_axis", [False, True])
@pytest.mark.parametrize("here", [None, "/runs/7?kind=chat&q=" + HOSTILE, Markup("/runs/7?a=1&amp;b=2")])
def test_rows_are_the_loops_markup(app, live, has_axis, here):
    timeline = _timeline(live, has_axis, first_calls=4)
    context = {"timeline": timeline} if here is None else {"timeline": timeline, "here": here}
    with app.test_request_context("/runs/7"):
        g._thumbs_page = ThumbsPage("/feedback", "tok&en\"<>{}", "fb-tool_call-7-just-saved",
                                    "fb-tool_call-7-refused")
        reference = app.jinja_env.from_string(REFERENCE).render(context)
        made = app.jinja_env.from_string(NEW).render(context)
    assert made == reference
    assert "<img" not in made and "\u202e" not in made  # escaped, bidi shown
    assert made.count('<li class="tl-row') == 12 and "rated rated-negative" in made and "is-saved" in made


def test_no_rows_no_markup(app):
    timeline = _timeline(False, True, 50)
    empty = Timeline(**{**timeline.__dict__, "rows": []})
    with app.test_request_context("/runs/7"):
        assert app.jinja_env.from_string(NEW).render(timeline=empty) == \
            app.jinja_env.from_string(REFERENCE).render(timeline=empty) == ""


def test_bidi_check_finds_exactly_the_controls():
    """``filters.has_bidi_control`` (the quick check before ``translate``) answers as the
    table of controls does for every code point, alone and deep in a long text."""
    from reviewapp.web.filters import BIDI_CONTROLS, has_bidi_control, show_bidi_controls

    for cp in range(0x110000):
        assert has_bidi_control("ab" + chr(cp)) == (cp in BIDI_CONTROLS), hex(cp)
    long = "✓ ünï " * 10_000
    assert show_bidi_controls(long) is long
    assert show_bidi_controls(long + "\u2067x") == long + "[U+2067]x"


def test_rows_are_sent_as_shown_without_a_second_search(app, monkeypatch):
    """The rows come out as ``ShownRows`` (issue 18): the page's ``{{ }}`` does not search
    them for bidi controls again, and they hold none (every value went through ``shown_text``,
    the hostile id, name and error included); nothing can be appended to them unseen."""
    from reviewapp.web import filters
    from reviewapp.web.timeline_html import ShownRows, timeline_rows

    timeline = _timeline(False, True, first_calls=4)
    with app.test_request_context("/runs/7"):
        g._thumbs_page = ThumbsPage("/feedback", "tok", None, None)
        rows = timeline_rows(timeline, "/runs/7/call?call_id=", "/runs/7?call=", "/runs/7",
                             lambda *a, **k: Markup("<i>rated</i>"), Markup("<b>u</b>"))
        assert isinstance(rows, ShownRows) and not isinstance(rows, str)
        assert "[U+202E]" in rows.html and not filters.has_bidi_control(rows.html)
        with pytest.raises(TypeError):
            rows + "\u202e"  # not a string: no unshown text can be added
        searched = []
        monkeypatch.setattr(filters, "has_bidi_control",
                            lambda text: searched.append(len(text)) or False)
        page = app.jinja_env.from_string("{{ rows }}").render(rows=rows)
        assert page == rows.html and searched == []
