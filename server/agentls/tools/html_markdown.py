"""HTML to markdown for WebFetch: the page's text, headings, lists, links and code, without
its scripts, styles, navigation and forms, which cost the model tokens and say nothing.

beautifulsoup4 and markdownify are imported on first use: the daemon starts without them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Elements that never carry the page's content.
NOISE = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "nav",
    "footer",
    "form",
    "button",
    "select",
    "input",
    "textarea",
)
# A <main> shorter than this is not trusted to hold the whole page (some sites use it for
# a banner); the <body> is converted instead.
MIN_MAIN_CHARS = 200
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


@dataclass(frozen=True, slots=True)
class Page:
    title: str | None
    markdown: str


def html_to_markdown(html: bytes, encoding: str | None) -> Page:
    """The page's title and its content as markdown; `encoding` from the HTTP header wins
    over the page's own <meta charset>."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser", from_encoding=encoding)
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup.find_all([*NOISE, _is_navigation]):
        tag.decompose()
    _drop_inline_data(soup)
    root: Any = _content_root(soup)
    converter = MarkdownConverter(heading_style="ATX", bullets="-", code_language="")
    markdown = converter.convert_soup(root)
    return Page(title or None, _BLANK_LINES.sub("\n\n", markdown).strip())


def _is_navigation(tag: Any) -> bool:
    return bool(getattr(tag, "attrs", None)) and tag.get("role") in ("navigation", "banner")


def _drop_inline_data(soup: Any) -> None:
    """Images inlined as data: URIs would put kilobytes of base64 in the text; keep the alt."""
    for image in soup.find_all("img"):
        if str(image.get("src", "")).startswith("data:"):
            image.replace_with(str(image.get("alt", "")))
    for link in soup.find_all("a"):
        if str(link.get("href", "")).lower().startswith(("javascript:", "data:")):
            link.unwrap()


def _content_root(soup: Any) -> Any:
    mains = soup.find_all("main")
    if len(mains) == 1 and len(mains[0].get_text(strip=True)) >= MIN_MAIN_CHARS:
        return mains[0]
    return soup.body or soup
