"""The compare page, ``/skills/<name>/diff/<from>/<to>``: what a careful user reads before
updating (registry/diff.py computes it; this shows it, each file's diff highlighted)."""

from __future__ import annotations

from django.shortcuts import render

from catalog import rendering
from registry import selectors, trust
from registry.access import Actor
from registry.diff import compare_visible


def diff_page(request, name: str, old: str, new: str):
    compared = compare_visible(actor=Actor(request.user), name=name, from_version=old, to_version=new)
    files = [
        {"file": f, "html": rendering.sanitize(rendering.highlight_code(f.diff, language="diff")) if f.diff else ""}
        for f in compared.diff.files
    ]
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
