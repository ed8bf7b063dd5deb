from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString

from catalog.rendering import link_url

register = template.Library()


@register.filter
def get(mapping, key):  # noqa: ANN001, ANN201
    """``mapping|get:key`` — a dict lookup by a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def external_link(value) -> SafeString:  # noqa: ANN001
    """An author's URL (``homepage``) as a link when it is http(s), else as plain escaped text:
    ``javascript:``, ``data:`` and the like never become an ``href``."""
    url = link_url(value)
    if url is None:
        return escape(value)
    return format_html('<a href="{}" rel="nofollow noopener noreferrer">{}</a>', url, url)
