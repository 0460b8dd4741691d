"""Untrusted Markdown (answers, reports) to safe HTML (SPEC 3: the answer is untrusted),
bounded in cost whatever its size (SPEC 10).

Two well-kept libraries, each doing one job: markdown-it-py parses CommonMark with raw
HTML turned off (``<script>`` in an answer stays visible text), then nh3 (ammonia)
sanitises the result against an allow-list, so nothing a model writes can add a script,
an event handler, a style or a ``javascript:`` URL. Images never load: each becomes a
plain link to its address (no request leaves the page when it renders).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import nh3
from flask import current_app, g
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "noopener noreferrer nofollow"


def _image_as_link(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = "".join(child.content for child in (token.children or [])) or "image"
    return f'<a href="{escape(src)}">[image: {escape(alt)}]</a>'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image_as_link)
    return md


_MD = _parser()


def render_markdown(text: str | None) -> Markup:
    """Sanitised HTML for ``text`` (CommonMark + tables + strikethrough); "" for None.

    Links keep only http / https / mailto (and relative) addresses and get
    ``rel="noopener noreferrer nofollow"``; everything else outside the allow-list is
    dropped, its text kept.
    """
    if not text:
        return Markup("")
    if len(text) <= _CACHED_TEXT_MAX:
        return Markup(_sanitised_cached(text))  # sanitised by nh3
    return Markup(_sanitised(text))  # sanitised by nh3


# A run page renders the same answer and report on every view: the HTML of recent texts
# is kept (a pure function of the text), bounded in entries and in text size.
_CACHED_TEXT_MAX = 16_384  # characters
_CACHED_TEXTS = 256


def _sanitised(text: str) -> str:
    html = _MD.render(text)
    return nh3.clean(
        html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
        link_rel=LINK_REL, clean_content_tags={"script", "style"},
    )


_sanitised_cached = lru_cache(maxsize=_CACHED_TEXTS)(_sanitised)


# --------------------------------------------------------------------------------------
# Bounded rendering (SPEC 10: "Markdown rendering ... capped on pages", "no ingested
# content makes a page take more than about a second").
#
# markdown-it-py costs up to ~26 us per character on adversarial input ("![" repeated:
# each bracket scans ahead for a link label), so one page renders at most
# ``MARKDOWN_PAGE_BUDGET_CHARS`` characters as Markdown, shared by its texts in page
# order (answer first); the rest of a text is shown as plain, escaped text behind "Show
# the rest", and a text longer than ``PAGE_TEXT_CAP_CHARS`` is cut there with a visible
# "cut at N of M characters" (the trace API and the exports hold the whole text).
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prose:
    """A text as a page shows it: ``html`` (its first part as sanitised Markdown), ``rest``
    (the part after that, as plain text; "" when none), ``shown`` characters of ``total``."""

    html: Markup
    rest: str
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        """True when the page shows less than the whole text."""
        return self.shown < self.total


def _split_at_line(text: str, limit: int) -> int:
    """Where to end the Markdown part: ``limit``, or the last line break in its last
    quarter (a cut inside a line would break a table row or a word)."""
    if len(text) <= limit:
        return len(text)
    cut = text.rfind("\n", limit * 3 // 4, limit)
    return cut + 1 if cut >= 0 else limit


def prose(text: str | None) -> Prose:
    """``text`` split for a page within this request's Markdown budget (module note)."""
    text = text or ""
    config = current_app.config
    remaining = g.get("markdown_budget", config["MARKDOWN_PAGE_BUDGET_CHARS"])
    cap = config["PAGE_TEXT_CAP_CHARS"]
    visible = text[:cap]
    split = _split_at_line(visible, remaining)
    g.markdown_budget = max(0, remaining - split)
    return Prose(render_markdown(visible[:split]), visible[split:], len(visible), len(text))


@dataclass(frozen=True)
class Capped:
    """A plain text cut for a page: ``text`` (at most the cap), ``shown`` of ``total``
    characters."""

    text: str
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        """True when the page shows less than the whole text."""
        return self.shown < self.total


def capped(text: str | None, total: int | None = None) -> Capped:
    """``text`` cut at ``PAGE_TEXT_CAP_CHARS``; ``total`` is the original length when the
    stored text was already cut (tool-call results), else ``len(text)``."""
    text = text or ""
    shown = text[: current_app.config["PAGE_TEXT_CAP_CHARS"]]
    return Capped(shown, len(shown), max(total or 0, len(text)))
