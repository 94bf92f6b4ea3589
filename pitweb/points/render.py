"""A point's Markdown as HTML a page may show: rendered by CommonMark (with tables), then
sanitised with nh3 on an allowlist. ``<details>`` and ``<summary>`` work; scripts, event
handlers, styles and ``javascript:`` links do not survive."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark").enable("table")

TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "em", "h3", "h4", "h5",
    "h6", "hr", "i", "li", "ol", "p", "pre", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "abbr": {"title"}}
URL_SCHEMES = {"http", "https", "mailto"}


def markdown_html(text: str) -> str:
    """Safe HTML of a point's Markdown."""
    return nh3.clean(
        _MARKDOWN.render(text),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
