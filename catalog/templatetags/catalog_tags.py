from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString

from catalog.rendering import link_url
from registry import selectors, services
from registry.access import Actor
from registry.models import AdvisorySeverity

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


# --- advisories (catalog/advisories.py; the includes _advisory_banner.html, _advisory_manage.html)
SEVERITY_CLASS = {"critical": "malicious", "high": "malicious", "medium": "warn", "low": "warn"}


@register.filter
def severity_class(severity: str) -> str:
    """The badge colour of an advisory's severity (site.css: red for high and critical)."""
    return SEVERITY_CLASS.get(severity, "warn")


@register.simple_tag
def advisories_for(version) -> dict:  # noqa: ANN001
    """``{% advisories_for sv as advisories %}``: ``affecting`` (open advisories whose range holds
    this version) and ``other`` (the skill's other open ones)."""
    affecting, other = selectors.advisories_for_version(version=version)
    return {"affecting": affecting, "other": other}


@register.simple_tag(takes_context=True)
def advisory_manage(context, skill) -> dict:  # noqa: ANN001
    """``{% advisory_manage skill as manage %}``: may the viewer file and withdraw advisories on
    this skill (its publishers, or staff), and the skill's advisories to withdraw."""
    allowed = services.advisory_may_file(actor=Actor(context["request"].user), skill=skill)
    advisories = selectors.advisory_list_for_skill(skill=skill) if allowed else []
    return {"allowed": allowed, "advisories": advisories, "severities": AdvisorySeverity.values}


# --- version pages: compare (catalog/diff.py), versions and files (catalog/files.py)


@register.filter
def manifest_value(value) -> str:  # noqa: ANN001
    """A manifest field as the compare page shows it: lists joined, absent as a dash."""
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@register.filter
def filesizeformat_or_none(value) -> str:  # noqa: ANN001
    """A size, or a dash for a side where the file does not exist."""
    from django.template.defaultfilters import filesizeformat

    return "—" if value is None else filesizeformat(value)
