"""The unrated thumbs control made in one step (``filters.unrated_thumbs``, issue 18)
is byte for byte what the ``thumbs`` macro renders for it, for hostile values too; a
control in any other state is the macro's."""

from __future__ import annotations

import pytest
from flask import g
from markupsafe import Markup

from reviewapp.services.runs.targets import TargetState
from reviewapp.web.filters import ThumbsPage, unrated_thumbs

HOSTILE = "<img src=x onerror=alert(1)>\u202egnp.exe\u202c \"'&amp; ünï"


def _states():
    for target_type, target_id, subject, name in [
        ("chat_message", 7, "", None), ("tool_call", 12, "call-3", "tool call search"),
        ("tool_call", 12, HOSTILE, "tool call " + HOSTILE), ("citation", 9, "../../admin", None),
        ("tool_call", 12, "kb://doc/1 & more", "tool call x_y.z"),
    ]:
        yield TargetState(target_type, target_id, subject, 3, None, None, ["a"], (("a", "A"),), (),
                          name=name)


def _render(app, state, next_url, compact, quick, rated=None):
    with app.test_request_context("/runs/3"):
        g._thumbs_page = ThumbsPage("/feedback", "tok&en\"<>", rated, None)
        module = app.jinja_env.get_template("feedback/_thumbs.html").make_module(
            {"unrated_thumbs": unrated_thumbs if quick else (lambda *a: None)})
        return str(module.thumbs(state, next_url=next_url, compact=compact))


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("next_url", ["/runs/3#call-x", "/runs/3?call=" + HOSTILE,
                                      Markup("/runs/3?a=1&amp;b=\u202e2")])
def test_unrated_control_is_the_macros_markup(app, compact, next_url):
    for state in _states():
        slow = _render(app, state, next_url, compact, quick=False)
        assert _render(app, state, next_url, compact, quick=True) == slow
        assert "<img" not in slow and "\u202e" not in slow  # escaped, bidi shown


def test_other_states_are_left_to_the_macro(app):
    state = next(_states())
    with app.test_request_context("/runs/3"):
        g._thumbs_page = ThumbsPage("/feedback", "t", None, None)
        assert unrated_thumbs(state, "/", False, Markup("")) is not None
        rated = TargetState(*[getattr(state, f) for f in ("target_type", "target_id", "subject_key",
                                                         "run_pk")], object(), None, [])
        assert unrated_thumbs(rated, "/", False, Markup("")) is None
        others = TargetState(state.target_type, state.target_id, "", 3, None, object(), [])
        assert unrated_thumbs(others, "/", False, Markup("")) is None
        g._thumbs_page = ThumbsPage("/feedback", "t", "fb-chat_message-7-0", None)
        assert unrated_thumbs(state, "/", False, Markup("")) is None  # just saved: the macro says so
