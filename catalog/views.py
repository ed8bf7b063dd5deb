"""The catalog's pages: small views over the registry's selectors and services (DESIGN §11).

Visibility is the registry's own rule (``visible_to``): a private skill is a 404 on every page
for anyone who is not a member, exactly as if it did not exist.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from catalog import rendering
from catalog.categories import category_counts
from catalog.files import file_tree_html, file_view
from catalog.versions import checks_running, install_lines, newer_version, published_message, version_rows
from registry import mirrors, search, selectors, services, trust
from registry.access import Actor
from registry.errors import NotFound, RegistryError
from registry.models import MAX_OWNER_DESCRIPTION, Skill
from skillctl.format.limits import MAX_REASON_CHARS

PAGE_SIZE = 20
SORTS = ["downloads", "updated", "name"]  # without a query (relevance needs one)
NEAREST_NAMED = 3  # "no close match; nearest: a, b, c"


def _actor(request) -> Actor:
    return Actor(request.user)


def home(request):
    skills = Skill.objects.visible_to(request.user, None).select_related("owner")
    recent = list(skills.order_by("-updated_at")[:8])
    # Without downloads "Most downloaded" would repeat "Recently updated" with zeros.
    popular = list(skills.filter(downloads__gt=0).order_by("-downloads", "name")[:8])
    return render(
        request,
        "catalog/home.html",
        {"count": skills.count(), "recent": recent, "popular": popular, **_card_context(recent + popular)},
    )


def _card_context(skills) -> dict:  # noqa: ANN001
    """What a skill card shows beside the skill row: its default version and that version's
    deprecation message (its checks' results are on the row)."""
    latest = selectors.skill_latest_versions(skill_ids={s.id for s in skills})
    return {"latest": latest, "deprecated": selectors.skill_default_deprecations(latest=latest)}


def browse(request):
    q = request.GET.get("q", "").strip()[: search.MAX_QUERY_CHARS]
    category, owner = request.GET.get("category", "")[:64], request.GET.get("owner", "")[:64]
    tag = request.GET.get("tag", "")[:64]
    sort = request.GET.get("sort") or ("relevance" if q else "downloads")
    results = search.skill_search(actor=_actor(request), q=q, owner=owner, category=category, tag=tag, sort=sort)
    page = Paginator(results, PAGE_SIZE).get_page(request.GET.get("page"))
    ranked = results if isinstance(results, search.Ranked) else None
    return render(
        request,
        "catalog/browse.html",
        {
            "page": page,
            "q": q,
            "category": category,
            "categories": [name for name, _ in category_counts(request.user)],
            "tag": tag,
            "owner": owner,
            "sort": sort,
            **_card_context(list(page.object_list)),
            "sorts": list(search.SORTS) if q else SORTS,
            "read_as": ranked.read_as if ranked else "",
            # Nothing routing would pick: the page says so and names the nearest.
            "nearest": ranked.names[:NEAREST_NAMED] if ranked and ranked.weak else [],
        },
    )


def _default_version(request, name: str) -> str:  # noqa: ANN001
    """The version a skill's own URLs show: its ``latest`` tag, else its newest version."""
    actor = _actor(request)
    found = mirrors.skill_get_visible_or_mirrored(actor=actor, name=name)
    versions = selectors.skill_versions(skill=found, actor=actor)
    tags = selectors.skill_dist_tags(skill=found, versions=versions)
    default = tags.get("latest") or (versions[0].version if versions else None)
    if default is None:
        raise Http404("no version")
    return default


def skill(request, name: str):
    try:
        default = _default_version(request, name)
    except (NotFound, mirrors.MirrorFailed) as missing:
        if missing.code != "skill.not_found" and not isinstance(missing, mirrors.MirrorFailed):
            raise
        suggestions = selectors.skill_name_suggestions(actor=_actor(request), name=name)
        return render(request, "404.html", {"suggestions": suggestions}, status=404)
    return version_page(request, name, default)


def default_file_view(request, name: str, path: str):
    return file_view(request, name, _default_version(request, name), path)


def version_page(request, name: str, version: str):
    actor = _actor(request)
    sv = selectors.skill_version_get_visible(actor=actor, name=name, version=version)
    found = sv.skill
    versions = selectors.skill_versions(skill=found, actor=actor)
    manifest, checks = sv.manifest or {}, selectors.skill_version_checks(version=sv)
    dist_tags = selectors.skill_dist_tags(skill=found, versions=versions)
    return render(
        request,
        "catalog/skill.html",
        {
            "skill": found,
            "sv": sv,
            "versions": version_rows(versions, dist_tags),
            "newer": newer_version(sv.version, dist_tags),
            "manifest": manifest,
            "body_html": rendering.render_markdown(sv.body or ""),
            "changelog_html": rendering.render_markdown(sv.changelog) if sv.changelog else "",
            "requires": manifest.get("requires") or {},
            "checks": checks,
            "checks_running": checks_running(checks),
            "labels": trust.version_labels(sv),
            "dist_tags": dist_tags,
            "files_tree": file_tree_html(sv),
            **install_lines(
                name=found.name, version=sv.version, registry_url=f"{request.scheme}://{request.get_host()}"
            ),
            "is_member": selectors.owner_members_visible(actor=actor, owner=found.owner) is not None,
            "can_manage": _role_at_least(request.user, found.owner, "admin"),
            "download_allowed": selectors.skill_version_download_allowed(actor=actor, version=sv),
            "max_reason_chars": MAX_REASON_CHARS,
        },
    )


@login_required
@require_http_methods(["POST"])
def manage_version(request, name: str, version: str):
    """Owner actions on a version page: yank, unyank, deprecate, point a dist-tag at it."""
    actor, action = _actor(request), request.POST.get("action", "")
    try:
        if action == "yank":
            services.skill_version_yank(actor=actor, name=name, version=version, reason=request.POST.get("reason", ""))
        elif action == "unyank":
            services.skill_version_unyank(actor=actor, name=name, version=version)
        elif action == "deprecate":
            services.skill_version_deprecate(
                actor=actor, name=name, version=version, message=request.POST.get("message", "")
            )
        elif action == "tag":
            services.skill_dist_tag_set(
                actor=actor, name=name, tag=request.POST.get("tag", "").strip(), version=version
            )
        else:
            raise Http404("no such action")
    except RegistryError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        return render(request, "catalog/problem.html", {"problem": f"{exc.code}: {exc.message}"}, status=exc.status)
    return redirect("catalog:version", name=name, version=version)


@login_required
@require_http_methods(["POST"])
def manage_members(request, owner: str):
    """Org owners and admins add, change and remove members."""
    org, actor = selectors.owner_get(name=owner), _actor(request)
    try:
        if request.POST.get("remove"):
            services.org_member_remove(actor=actor, org=org, username=request.POST["remove"])
        else:
            services.org_member_set(
                actor=actor,
                org=org,
                username=request.POST.get("username", "").strip(),
                role=request.POST.get("role", "reader"),
            )
    except RegistryError as exc:
        return render(request, "catalog/problem.html", {"problem": f"{exc.code}: {exc.message}"}, status=exc.status)
    return redirect("catalog:owner", owner=owner)


def owner_page(request, owner: str):
    """Who they are, their skills (most downloaded first) with the totals, an org's size; its
    members to members; the description form to admins."""
    actor, found = _actor(request), selectors.owner_get(name=owner)
    skills = list(selectors.skill_list_visible(actor=actor, owner=found.name))
    admin = _role_at_least(request.user, found, "admin")
    visible = selectors.owner_members_visible(actor=actor, owner=found)
    members = None if visible is None else list(visible)
    return render(
        request,
        "catalog/owner.html",
        {
            "owner": found,
            "skills": skills,
            "stats": selectors.owner_stats(actor=actor, owner=found),
            "members": members,
            "has_sso_members": members is not None and any(m.source == "sso" for m in members),
            **_card_context(skills),
            "can_manage": found.kind == "org" and admin,
            "can_describe": admin,
            "max_description": MAX_OWNER_DESCRIPTION,
        },
    )


@login_required
@require_http_methods(["POST"])
def owner_describe(request, owner: str):
    found = selectors.owner_get(name=owner)
    try:
        services.owner_describe(actor=_actor(request), owner=found, description=request.POST.get("description", ""))
    except RegistryError as exc:
        return render(request, "catalog/problem.html", {"problem": f"{exc.code}: {exc.message}"}, status=exc.status)
    messages.success(request, "Description saved.")
    return redirect("catalog:owner", owner=owner)


def publishers(request):
    """Every owner with skills the viewer may see, most downloaded first."""
    rows = selectors.owner_list_publishing(actor=_actor(request))
    return render(
        request, "catalog/publishers.html", {"page": Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))}
    )


def _role_at_least(user, owner, role: str) -> bool:  # noqa: ANN001
    from registry.access import ROLE_RANK, owner_role

    held = owner_role(user=user, owner=owner)
    return held is not None and ROLE_RANK[held] >= ROLE_RANK[role]


def badge(request, name: str):
    """The worst of the default version's scan and tests, in a word and a colour (registry/trust.py)."""
    found = selectors.skill_get_visible(actor=_actor(request), name=name)
    latest = selectors.skill_latest_versions(skill_ids=[found.id])
    deprecated = selectors.skill_default_deprecations(latest=latest).get(found.id, "")
    right, color = trust.badge(
        version=latest.get(found.id),
        scan_verdict=found.scan_verdict,
        test_result=found.test_result,
        deprecated=deprecated,
    )
    left_width, right_width = 62, 8 + 7 * len(right)
    svg = render(
        request,
        "catalog/badge.svg",
        {
            "left": "skillyard",
            "right": right,
            "color": color,
            "lw": left_width,
            "rw": right_width,
            "width": left_width + right_width,
            "lx": left_width // 2,
            "rx": left_width + right_width // 2,
        },
        content_type="image/svg+xml",
    )
    svg["Cache-Control"] = "public, max-age=300" if not found.is_private else "private, no-cache"
    return svg


@require_http_methods(["GET", "POST"])
def publish(request):
    if not request.user.is_authenticated:
        messages.info(request, "Sign in to publish a skill: a skill is published under your name or an organisation's.")
        return redirect_to_login(request.get_full_path())
    errors, problem, status = [], None, 200
    if request.method == "POST":
        upload = request.FILES.get("archive")
        if upload is None:
            problem, status = "Choose a .zip or .tar.gz archive of the skill.", 422
        else:
            name = _archive_name(upload)
            try:
                result = services.skill_version_publish(
                    actor=_actor(request),
                    name=name or "?",
                    archive=upload,
                    owner=request.POST.get("owner") or None,
                    visibility=request.POST.get("visibility") or None,
                )
                messages.success(request, published_message(result.version))
                return redirect("catalog:version", name=result.version.skill.name, version=result.version.version)
            except RegistryError as exc:
                # The API's status: 422 for the archive, 403 for rights, 409 for a taken name...
                problem, errors, status = f"{exc.code}: {exc.message}", exc.errors, exc.status
    owners = [m.owner for m in selectors.user_memberships(user=request.user)]
    return render(
        request,
        "catalog/publish.html",
        {"problem": problem, "errors": errors, "owners": owners},
        status=status,
    )


def _archive_name(upload) -> str | None:  # noqa: ANN001
    """The skill's name from the archive itself (the form has no name field)."""
    from skillctl.format import load_archive

    upload.seek(0)
    report = load_archive(upload)
    upload.seek(0)
    return report.name


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    secret = None
    problem = None
    actor = _actor(request)
    if request.method == "POST":
        try:
            if request.POST.get("revoke"):
                services.token_revoke(actor=actor, token_id=int(request.POST["revoke"]))
            else:
                owner = request.POST.get("owner") or None
                _, secret = services.token_create(
                    actor=actor,
                    scope=request.POST.get("scope", "read"),
                    name=request.POST.get("name", "")[:100],
                    owner=selectors.owner_get(name=owner) if owner else None,
                )
        except (RegistryError, ValueError) as exc:
            problem = str(exc)
    owners = [m.owner for m in selectors.user_memberships(user=request.user)]
    return render(
        request,
        "catalog/tokens.html",
        {
            "tokens": selectors.token_list_visible(actor=actor).filter(revoked_at__isnull=True),
            "secret": secret,
            "problem": problem,
            "owners": owners,
        },
    )


def pygments_css(request):
    response = HttpResponse(rendering.pygments_css(), content_type="text/css")
    response["Cache-Control"] = "public, max-age=86400"
    return response
