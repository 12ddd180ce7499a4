"""Markdown in a question's payload (a drafted document, a reply) shown as formatted text, safely.

A long text that reads as Markdown (a heading, a list, emphasis, code, a link) is rendered by
markdown-it-py with raw HTML off, then cleaned by nh3 (an allow-list of tags and attributes; links
get ``rel="noopener noreferrer"``), so nothing the workflow wrote runs or reaches the page as
markup of its own. Any other text is shown as it is.
"""

from __future__ import annotations

import re

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_MARKS = re.compile(
    r"(^|\n)\s{0,3}(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>\s?|```)"  # a heading, list, quote, fence
    r"|\*\*[^*\n]+\*\*|__[^_\n]+__|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)"  # bold, code, a link
)
_RENDER = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False})
TAGS = {
    "p", "br", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
    "em", "strong", "a", "hr",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def looks_like_markdown(text: str) -> bool:
    """Whether ``text`` uses Markdown's marks (plain prose is shown as it is)."""
    return _MARKS.search(text) is not None


def render(text: str) -> SafeString:
    """``text`` as sanitised HTML (raw HTML in it is shown as text, never as markup)."""
    html = _RENDER.render(text)
    cleaned = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
    return mark_safe(cleaned)  # nh3 keeps only the allowed tags and attributes
