"""Other clients' searches and installs, answered from our registry, read-only and anonymous.

- ``npx skills find`` (npm ``skills`` 1.7.x) asks ``$SKILLS_API_URL/api/search?q=&limit=`` for
  ``{"skills": [{name, id, source, installs}]}`` and suggests ``skills add <source>@<name>``.
  Our ``source`` is the skill's catalog URL, and ``/skills/<name>[@<name>]/.well-known/
  agent-skills/index.json`` is an index of that one skill, so the suggested ``add`` (which reads
  the index under the path it is given) installs exactly that skill from us.
- ``clawhub`` (npm ``clawhub`` 0.23.x) finds ``/.well-known/clawhub.json`` (``{"apiBase"}``) and
  calls ``<apiBase>/api/v1/...``: ``search``, ``skills`` (explore), ``skills/<slug>`` (inspect,
  install, update), ``.../versions``, ``.../versions/<v>``, ``.../file``, ``resolve`` (which
  version a folder's files are, by clawhub's fingerprint) and ``download`` (the skill's files
  with SKILL.md at the root), in the shapes of the schemas the package ships (dist/schema/).

Public skills only, ranked by the one search (registry/search.py); a version the scan found
malicious does not exist here (DESIGN §13), and a default version the scan warns about is
``moderation.isSuspicious`` (clawhub asks before installing it, or wants ``--force``).
"""

from __future__ import annotations

import hashlib
import unicodedata

from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import artifacts, search, selectors
from registry.access import Actor
from registry.api.serializers import absolute_url
from registry.api.wellknown import DISCOVERY_SCHEMA_V2, agent_skill_entry
from registry.errors import NotFound
from registry.models import Skill, SkillVersion
from registry.served import make_inert, skill_file_response
from registry.trust import MALICIOUS

CACHE = "public, max-age=60"
FIND_LIMIT, MAX_LIMIT = 20, 200  # the skills CLI asks for 20; clawhub clamps its --limit to 200
CLAWHUB_PREFIX = "compat/clawhub"  # under this path clawhub's apiBase answers its /api/v1 routes


def _anonymous() -> Actor:
    return Actor.anonymous()


def _limit(request, default: int) -> int:  # noqa: ANN001
    try:
        return max(1, min(int(request.query_params.get("limit", default)), MAX_LIMIT))
    except ValueError:
        return default


def _found(request, default_limit: int) -> list[Skill]:  # noqa: ANN001
    """The public skills a query finds, best first, as every other surface ranks them."""
    q = request.query_params.get("q", "")
    owner = request.query_params.get("owner", "")
    return list(search.skill_search(actor=_anonymous(), q=q, owner=owner)[: _limit(request, default_limit)])


class _Anonymous(APIView):
    authentication_classes: list = []


class SkillsFind(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request):
        """``npx skills find``: public skills for ``q``, with where ``skills add`` takes them from."""
        skills = _found(request, FIND_LIMIT) if request.query_params.get("q", "").strip() else []
        found = [
            {
                "name": skill.name,
                "id": f"{skill.owner.name}/{skill.name}",
                "source": absolute_url(request, reverse("catalog:skill", kwargs={"name": skill.name})),
                "installs": skill.downloads,
            }
            for skill in skills
        ]
        response = Response({"skills": found})
        response["Cache-Control"] = CACHE
        return response


def _public_default(name: str) -> tuple[Skill, SkillVersion]:
    """A public skill and its default version (never a blocked one), or 404."""
    try:
        skill = selectors.skill_get_visible(actor=_anonymous(), name=name)
    except NotFound:
        raise Http404("no such public skill") from None
    version = selectors.skill_latest_versions(skill_ids=[skill.id]).get(skill.id)
    found = [v for v in selectors.skill_versions(skill=skill, actor=_anonymous()) if v.version == version]
    if not found or found[0].scan_verdict == MALICIOUS:
        raise Http404("no such public skill")
    return skill, found[0]


class ScopedAgentSkillsIndex(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request, scope: str):
        """The agent-skills index of one skill, at ``/skills/<name>`` (or ``<name>@<name>``, what
        ``skills find`` prints), so ``skills add`` of that URL installs that skill alone."""
        skill, version = _public_default(scope.partition("@")[0])
        response = Response({"$schema": DISCOVERY_SCHEMA_V2, "skills": [agent_skill_entry(request, skill, version)]})
        response["Cache-Control"] = CACHE
        return response


# --- clawhub ---------------------------------------------------------------------------------


def clawhub_discovery(request):  # noqa: ANN001
    """``/.well-known/clawhub.json``: where clawhub finds our compatibility API."""
    base = absolute_url(request, "/" + CLAWHUB_PREFIX)
    response = JsonResponse({"apiBase": base})
    response["Cache-Control"] = CACHE
    return response


def _ms(moment) -> int:  # noqa: ANN001
    return int(moment.timestamp() * 1000)


def _version_out(version: SkillVersion) -> dict:
    return {"version": version.version, "createdAt": _ms(version.published_at), "changelog": version.changelog or ""}


def _skill_out(skill: Skill, version: SkillVersion | None) -> dict:
    return {
        "slug": skill.name,
        "displayName": skill.name,
        "summary": skill.description or None,
        "tags": {"latest": version.version} if version else {},
        "stats": {"downloads": skill.downloads},
        "createdAt": _ms(skill.created_at),
        "updatedAt": _ms(skill.updated_at),
    }


def _moderation(version: SkillVersion) -> dict:
    """clawhub's moderation block: a warn verdict is suspicious; malicious versions are not shown."""
    suspicious = version.scan_verdict == "warn"
    return {
        "isSuspicious": suspicious,
        "isMalwareBlocked": False,
        "verdict": "suspicious" if suspicious else "clean",
        "reasonCodes": [f"scan.{version.scan_verdict}"] if suspicious else [],
    }


def _defaults(skills: list[Skill]) -> dict[int, SkillVersion]:
    """Each skill's default version row (one query)."""
    latest = selectors.skill_latest_versions(skill_ids=[s.id for s in skills])
    rows = SkillVersion.objects.live().filter(skill_id__in=list(latest)).exclude(scan_verdict=MALICIOUS)
    return {v.skill_id: v for v in rows.defer("body", "manifest", "warnings") if latest.get(v.skill_id) == v.version}


class ClawhubSearch(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request):
        """``clawhub search``: ranked results with their score."""
        skills = _found(request, 25)
        defaults = _defaults(skills)
        results = [
            {
                "slug": s.name,
                "displayName": s.name,
                "summary": s.description or None,
                "version": defaults[s.id].version if s.id in defaults else None,
                "score": s.match.to_dict()["score"] if hasattr(s, "match") else 0.0,
                "downloads": s.downloads,
                "updatedAt": _ms(s.updated_at),
                "ownerHandle": s.owner.name,
            }
            for s in skills
        ]
        return Response({"results": results})


class ClawhubSkills(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request):
        """``clawhub explore`` (and ``search --prefix``): public skills, newest or most downloaded."""
        sort = {"downloads": "downloads", "installs": "downloads"}.get(request.query_params.get("sort", ""), "updated")
        skills = search.skill_search(actor=_anonymous(), sort=sort)
        if prefix := request.query_params.get("prefix", "").strip().lower():
            skills = skills.filter(name__startswith=prefix)
        page = list(skills[: _limit(request, 25)])
        defaults = _defaults(page)
        items = []
        for skill in page:
            version = defaults.get(skill.id)
            items.append(
                {**_skill_out(skill, version), **({"latestVersion": _version_out(version)} if version else {})}
            )
        return Response({"items": items, "nextCursor": None})


class ClawhubSkill(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request, slug: str):
        """``clawhub inspect``, and what ``install``/``update`` read first."""
        skill, version = _public_default(slug)
        return Response(
            {
                "skill": _skill_out(skill, version),
                "latestVersion": _version_out(version),
                "owner": {"handle": skill.owner.name, "displayName": skill.owner.name},
                "moderation": _moderation(version),
            }
        )


def _public_versions(slug: str) -> tuple[Skill, list[SkillVersion]]:
    skill, _ = _public_default(slug)
    return skill, [v for v in selectors.skill_versions(skill=skill, actor=_anonymous()) if v.scan_verdict != MALICIOUS]


def _public_version(slug: str, version: str | None) -> tuple[Skill, SkillVersion]:
    skill, default = _public_default(slug)
    if not version or version == default.version:
        return skill, default
    _, versions = _public_versions(slug)
    found = next((v for v in versions if v.version == version), None)
    if found is None:
        raise Http404("no such public version")
    return skill, found


class ClawhubVersions(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request, slug: str):
        """``clawhub inspect --versions``: highest first."""
        _, versions = _public_versions(slug)
        return Response({"items": [_version_out(v) for v in versions[: _limit(request, 25)]], "nextCursor": None})


class ClawhubVersion(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request, slug: str, version: str):
        """``clawhub inspect --version`` and ``install --version``: a version with its files."""
        skill, found = _public_version(slug, version)
        files = [{"path": f["path"], "size": f["size"], "sha256": f["sha256"]} for f in found.files]
        return Response(
            {
                "version": {**_version_out(found), "files": files},
                "skill": {"slug": skill.name, "displayName": skill.name},
            }
        )


class ClawhubFile(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request, slug: str):
        """``clawhub inspect --file PATH``: one file, served inert like every skill file."""
        _, found = _public_version(slug, request.query_params.get("version"))
        files = artifacts.version_files(found)
        path = request.query_params.get("path", "")
        if path not in files:
            raise Http404("no such file")
        return skill_file_response(files[path], path)


def fingerprint(files: list[dict]) -> str:
    """clawhub's fingerprint of a skill folder: sha256 over "path:sha256" lines, in its sort
    order (JavaScript's localeCompare), of the files outside dot folders."""
    kept = sorted((f for f in files if not _dotted(f["path"])), key=lambda f: _locale_key(f["path"]))
    return hashlib.sha256("\n".join(f"{f['path']}:{f['sha256']}" for f in kept).encode()).hexdigest()


def _dotted(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


# The ICU root collation's order of ASCII punctuation and symbols (all before digits and letters).
_PUNCTUATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def _locale_key(text: str) -> tuple:
    """A sort key that orders like JavaScript's ``a.localeCompare(b)`` (ICU root collation) for
    file paths: symbols, then digits, then letters without case or accents; then accents; then
    lowercase before uppercase."""
    primary, accents, case = [], [], []
    for char in text:
        base = unicodedata.normalize("NFD", char)[0]
        if base in _PUNCTUATION:
            primary.append((0, _PUNCTUATION.index(base)))
        elif base.isdigit():
            primary.append((1, ord(base)))
        elif base.isalpha():
            primary.append((2, ord(base.lower())))
        else:
            primary.append((3, ord(base)))
        accents.append(len(unicodedata.normalize("NFD", char)) > 1)
        case.append(char.isupper())
    return tuple(primary), tuple(accents), tuple(case)


class ClawhubResolve(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request):
        """``clawhub update``: which version a folder's files are (by fingerprint), and the latest."""
        _, versions = _public_versions(request.query_params.get("slug", ""))
        _, default = _public_default(request.query_params.get("slug", ""))
        wanted = request.query_params.get("hash", "")
        match = next((v for v in versions if fingerprint(v.files) == wanted), None)
        return Response(
            {"match": {"version": match.version} if match else None, "latestVersion": {"version": default.version}}
        )


class ClawhubDownload(_Anonymous):
    @extend_schema(exclude=True)  # another tool's contract (skills find, clawhub), not our API
    def get(self, request):
        """``clawhub install``/``update``: the version's files with SKILL.md at the root."""
        skill, found = _public_version(request.query_params.get("slug", ""), request.query_params.get("version"))
        response = HttpResponse(artifacts.rooted_archive(found), content_type="application/zip")
        response["Content-Disposition"] = content_disposition_header(True, f"{skill.name}-{found.version}.zip")
        return make_inert(response)
