"""The compare page, ``/skills/<name>/diff/<from>/<to>``: what a careful user reads before
updating (registry/diff.py computes it; this shows it, each file's diff highlighted)."""

from __future__ import annotations

from django.core.cache import cache
from django.shortcuts import render

from catalog import rendering
from registry import selectors, trust
from registry.access import Actor
from registry.diff import DIFF_CACHE_SECONDS, Compared, compare_visible


def diff_page(request, name: str, old: str, new: str):
    compared = compare_visible(actor=Actor(request.user), name=name, from_version=old, to_version=new)
    highlighted = _highlighted(compared)
    files = [{"file": f, "html": html} for f, html in zip(compared.diff.files, highlighted, strict=True)]
    sides = [
        {"sv": sv, "checks": selectors.skill_version_checks(version=sv), "labels": trust.version_labels(sv)}
        for sv in (compared.old, compared.new)
    ]
    return render(
        request,
        "catalog/diff.html",
        {
            "skill": compared.new.skill,
            "old": compared.old,
            "new": compared.new,
            "diff": compared.diff,
            "files": files,
            "sides": sides,
        },
    )


def _highlighted(compared: Compared) -> list[str]:
    """Each file's diff as safe highlighted HTML, kept like the diff itself (by both digests):
    highlighting fifty diffs is most of the page's time."""
    key = f"version-diff-html:{compared.old.sha256}:{compared.new.sha256}"
    found = cache.get(key)
    if found is None:
        found = [
            rendering.sanitize(rendering.highlight_code(f.diff, language="diff")) if f.diff else ""
            for f in compared.diff.files
        ]
        cache.set(key, found, DIFF_CACHE_SECONDS)
    return found
