"""The only place that knows about htmx request headers (STYLE 4.3)."""

from __future__ import annotations

from typing import Any

from flask import Response, get_template_attribute, make_response, render_template, request


def is_htmx() -> bool:
    """True for an htmx request that is not a history-restore request."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def sent_by_htmx() -> bool:
    """True for any request htmx sent (``HX-Request``), history-restore requests included
    (``is_htmx`` leaves those out: they get the whole page)."""
    return bool(request.headers.get("HX-Request"))


def filters_may_focus() -> bool:
    """False for an htmx filter request the person did not submit (the runs list also asks
    as one types in its search, picks an option or leaves a changed box): its refusal must
    not take the focus from where they are. app.js sends ``X-Filter-Focus: 1`` for a
    submitted form (the button, or Enter in a box)."""
    return not is_htmx() or request.headers.get("X-Filter-Focus") == "1"


def current_url() -> str | None:
    """The address of the page an htmx request was sent from (``HX-Current-URL``)."""
    return request.headers.get("HX-Current-URL")


def fragment(template: str, status: int = 200, **context: Any) -> Response:
    """Render a fragment template (htmx swaps it in); ``Vary: HX-Request``."""
    response = make_response(render_template(template, **context), status)
    response.vary.add("HX-Request")
    return response


def page_or_fragment(page_template: str, fragment_template: str, status: int = 200,
                     **context: Any) -> Response:
    """Render ``fragment_template`` for htmx, ``page_template`` otherwise; always
    ``Vary: HX-Request``."""
    template = fragment_template if is_htmx() else page_template
    response = make_response(render_template(template, **context), status)
    response.vary.add("HX-Request")
    return response


def render_macro(template: str, macro: str, status: int = 200, **kwargs: Any) -> Response:
    """Render one macro of ``template`` as a response (a repeated control's fragment)."""
    html = get_template_attribute(template, macro)(**kwargs)
    response = make_response(str(html), status)
    response.vary.add("HX-Request")
    return response


def hx_trigger(response: Response, *events: str) -> Response:
    """Add an ``HX-Trigger`` header so other fragments can refresh themselves."""
    if events:
        response.headers["HX-Trigger"] = ", ".join(events)
    return response


def retarget(response: Response, target: str, swap: str) -> Response:
    """Swap ``response`` into ``target`` with ``swap`` instead of the request's own
    target (``HX-Retarget`` / ``HX-Reswap``), e.g. an error into the message region."""
    response.headers["HX-Retarget"] = target
    response.headers["HX-Reswap"] = swap
    return response


def redirect_window(response: Response, url: str) -> Response:
    """Load ``url`` in the whole window instead of swapping a fragment (``HX-Redirect``)."""
    response.headers["HX-Redirect"] = url
    return response


def refresh_page(response: Response) -> Response:
    """Reload the whole page (``HX-Refresh``)."""
    response.headers["HX-Refresh"] = "true"
    return response
