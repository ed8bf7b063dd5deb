from django import template

register = template.Library()


@register.filter
def get(mapping, key):  # noqa: ANN001, ANN201
    """``mapping|get:key`` — a dict lookup by a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None
