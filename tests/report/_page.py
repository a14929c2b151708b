"""Read a report page back with the standard library's HTML parser (what the tests look at)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

SVG_PREFIX = "data:image/svg+xml;charset=utf-8,"


@dataclass
class Img:
    src: str
    alt: str
    figure: str | None       # id of the enclosing <figure>
    article: str | None      # data-code of the enclosing diagnostic <article>
    width: int
    height: int


@dataclass
class Page:
    text: str
    tags: list[str] = field(default_factory=list)
    urls: list[tuple[str, str, str]] = field(default_factory=list)   # (tag, attribute, value)
    imgs: list[Img] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    articles: dict[str, list[str]] = field(default_factory=dict)     # data-code -> article texts
    meta: list[dict] = field(default_factory=list)

    def figure_ids(self) -> set[str]:
        return {i.figure for i in self.imgs if i.figure}

    def svg(self, img: Img) -> ET.Element:
        """The figure's SVG document, parsed (raises if it is not well-formed XML)."""
        assert img.src.startswith(SVG_PREFIX), img.src[:60]
        return ET.fromstring(unquote(img.src[len(SVG_PREFIX):]))


class _Parser(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.stack: list[tuple[str, dict]] = []
        self.article_text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.page.tags.append(tag)
        for key in ("src", "href", "action", "data", "poster", "srcset"):
            if key in a:
                self.page.urls.append((tag, key, a[key] or ""))
        if "id" in a:
            self.page.ids.add(a["id"])
        if tag == "meta":
            self.page.meta.append(a)
        if tag == "article" and "data-code" in a:
            self.article_text = []
            self.page.articles.setdefault(a["data-code"], []).append("")
        if tag == "img":
            fig = next((x.get("id") for t, x in reversed(self.stack) if t == "figure"), None)
            art = next((x.get("data-code") for t, x in reversed(self.stack) if t == "article"), None)
            self.page.imgs.append(Img(a.get("src", ""), a.get("alt", ""), fig, art, int(a.get("width", 0)),
                                      int(a.get("height", 0))))
        if tag not in ("img", "meta", "br", "input", "link", "hr"):
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        while self.stack:
            t, a = self.stack.pop()
            if t == "article" and "data-code" in a and self.article_text is not None:
                self.page.articles[a["data-code"]][-1] = " ".join(self.article_text)
                self.article_text = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.article_text is not None:
            self.article_text.append(data)


def parse_page(path_or_text: str | Path) -> Page:
    text = Path(path_or_text).read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    page = Page(text)
    _Parser(page).feed(text)
    return page
