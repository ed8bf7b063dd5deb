"""Categories and tags: ``/categories`` lists every category (and the most used tags) with how
many skills the viewer may see in each; the browse page's category filter offers the same list.

Counts come from ``Skill.objects.visible_to``, so a private skill counts only for its members and
a skill whose every version is blocked counts for nobody else (DESIGN §13).
"""

from __future__ import annotations

from collections import Counter

from django.db.models import Count
from django.db.models.functions import Lower
from django.shortcuts import render

from registry.models import Skill

TAGS_SHOWN = 60  # the most used tags; a long tail of one-skill tags is noise on a page


def category_counts(user) -> list[tuple[str, int]]:  # noqa: ANN001
    """(category, visible skills in it), by name; the filter compares case-insensitively, so do we."""
    rows = (
        Skill.objects.visible_to(user, None)
        .exclude(category="")
        .values(folded=Lower("category"))
        .annotate(count=Count("id"))
        .order_by("folded")
    )
    return [(row["folded"], row["count"]) for row in rows]


def tag_counts(user) -> list[tuple[str, int]]:  # noqa: ANN001
    """(tag, visible skills carrying it), most used first."""
    counts: Counter[str] = Counter()
    for tags in Skill.objects.visible_to(user, None).exclude(tags_index="").values_list("tags", flat=True):
        counts.update({str(tag).lower() for tag in tags or []})
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TAGS_SHOWN]


def categories_page(request):
    return render(
        request,
        "catalog/categories.html",
        {"categories": category_counts(request.user), "tags": tag_counts(request.user)},
    )
