"""The catalog's advisory pages: every public advisory, one advisory, and the owner's form on a
skill's page to file or withdraw one. Reads and writes are the registry's (the API calls the
same services); the banner on version pages comes through a template tag (catalog_tags)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from catalog import rendering
from registry import selectors, services
from registry.access import Actor
from registry.errors import RegistryError

PAGE_SIZE = 50  # advisories are short rows; a page reads as one list


def advisory_list(request):
    page = Paginator(selectors.advisory_list_public(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "catalog/advisories.html", {"page": page})


def advisory_page(request, osv_id: str):
    try:
        advisory = selectors.advisory_get_visible(actor=Actor(request.user), osv_id=osv_id)
    except RegistryError:
        raise Http404("no such advisory") from None
    osv = selectors.advisories_osv(advisories=[advisory])[0]
    context = {
        "advisory": advisory,
        "osv": osv,
        "affected": osv["affected"][0],
        "details_html": rendering.render_markdown(advisory.details) if advisory.details else "",
    }
    return render(request, "catalog/advisory.html", context)


@login_required
@require_http_methods(["POST"])
def manage(request, name: str):
    """File (``action=file``) or withdraw (``action=withdraw``, ``advisory=<id>``) an advisory."""
    actor, action = Actor(request.user), request.POST.get("action", "")
    try:
        if action == "file":
            services.advisory_create(
                actor=actor,
                name=name,
                summary=request.POST.get("summary", ""),
                severity=request.POST.get("severity", ""),
                affected=request.POST.get("affected", ""),
                details=request.POST.get("details", ""),
                aliases=request.POST.get("aliases", "").replace(",", " ").split(),
            )
        elif action == "withdraw":
            services.advisory_withdraw(actor=actor, osv_id=request.POST.get("advisory", ""))
        else:
            raise Http404("no such action")
    except RegistryError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        return render(request, "catalog/problem.html", {"problem": f"{exc.code}: {exc.message}"}, status=exc.status)
    return redirect("catalog:skill", name=name)
