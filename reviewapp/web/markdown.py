"""Untrusted Markdown (answers, reports) to safe HTML (SPEC 3: the answer is untrusted).

Two well-kept libraries, each doing one job: markdown-it-py parses CommonMark with raw
HTML turned off (``<script>`` in an answer stays visible text), then nh3 (ammonia)
sanitises the result against an allow-list, so nothing a model writes can add a script,
an event handler, a style or a ``javascript:`` URL. Images never load: each becomes a
plain link to its address (no request leaves the page when it renders).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import nh3
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
        return Markup(_sanitised_cached(text))  # noqa: S704 - sanitised by nh3
    return Markup(_sanitised(text))  # noqa: S704 - sanitised by nh3


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
