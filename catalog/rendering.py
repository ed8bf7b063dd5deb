"""SKILL.md and skill files as safe HTML: markdown-it-py, Pygments for code, then nh3.

Everything an author wrote is hostile until nh3 has cleaned it: no script, no event handlers,
no iframes or objects, no javascript:/data: URLs, and links get rel="nofollow noopener".
Frontmatter is never rendered as Markdown (the templates show its fields, autoescaped), and a
URL field in it becomes a link only when it is http(s) (``link_url``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name, guess_lexer_for_filename
from pygments.util import ClassNotFound

MAX_HIGHLIGHT_BYTES = 256 * 1024  # beyond this a file is shown plain: Pygments is slow on megabytes
_FORMATTER = HtmlFormatter(nowrap=True)
ALLOWED_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "details",
    "div",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "span",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "code": {"class"},
    "div": {"class"},
    "pre": {"class"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}
# A frontmatter field (homepage) becomes a link only as a web address; anything else is text.
LINK_SCHEMES = {"http", "https"}


def _fence(md: MarkdownIt):  # noqa: ANN202
    def render(renderer, tokens, idx, options, env):  # noqa: ANN001, ANN202
        token = tokens[idx]
        language = (token.info or "").strip().split(" ")[0]
        return f'<pre class="code"><code>{highlight_code(token.content, language=language)}</code></pre>\n'

    return render


def _image(renderer, tokens, idx, options, env):  # noqa: ANN001, ANN202
    """An image as a link to it, never loaded: a remote image in a SKILL.md is a tracking pixel
    that tells its author who viewed the skill (and the CSP allows no remote images anyway)."""
    token = tokens[idx]
    alt = escapeHtml(renderer.renderInlineAsText(token.children or [], options, env) or "image")
    src = link_url(token.attrGet("src"))
    if src is None:
        return f"[image: {alt}]"
    return f'<a href="{escapeHtml(src)}">[image: {alt}]</a>'


_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
_MD.add_render_rule("fence", _fence(_MD))
_MD.add_render_rule("image", _image)


def highlight_code(text: str, *, language: str = "", filename: str = "") -> str:
    """HTML-escaped, highlighted code (spans with Pygments classes); plain when unknown or huge."""
    lexer = TextLexer()
    # Neither a language nor a file name (a bare ``` fence): plain. Guessing from an empty name
    # matches no lexer, after trying every lexer's file patterns (~4 ms a fence).
    if len(text) <= MAX_HIGHLIGHT_BYTES and (language or filename):
        try:
            lexer = get_lexer_by_name(language) if language else guess_lexer_for_filename(filename, text[:4096])
        except (ClassNotFound, ValueError):
            lexer = TextLexer()
    return highlight(text, lexer, _FORMATTER)


def sanitize(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener noreferrer",
        strip_comments=True,
    )


def link_url(value: object) -> str | None:
    """``value`` when it is an http(s) address with a host that a link may point at, else None
    (the caller shows it as escaped text). Browsers drop tabs, newlines and leading control
    characters from a scheme ("java<tab>script:"), so a value holding any of them is never a link."""
    text = value if isinstance(value, str) else ""
    if not text or any(ch.isspace() or not ch.isprintable() for ch in text):
        return None
    parts = urlsplit(text)
    return text if parts.scheme.lower() in LINK_SCHEMES and parts.hostname else None


def render_markdown(text: str) -> str:
    """Markdown (raw HTML off, then sanitised anyway) to safe HTML."""
    return sanitize(_MD.render(text))


def render_file(text: str, filename: str) -> str:
    """A text file as safe highlighted HTML lines (no Markdown: files are shown as written)."""
    return sanitize(highlight_code(text, filename=filename))


def pygments_css() -> str:
    return (
        HtmlFormatter(style="default").get_style_defs(".code")
        + "\n@media (prefers-color-scheme: dark) {\n"
        + HtmlFormatter(style="monokai").get_style_defs(".code")
        + "\n}\n"
    )
