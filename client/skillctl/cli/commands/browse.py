"""Looking at a registry: ``search`` and ``show NAME[@spec]``."""

from __future__ import annotations

from typing import Any

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.account import REGISTRY_OPTION
from skillctl.errors import ExitCode, SkillctlError
from skillctl.format.coerce import dict_at

DESCRIPTION_WIDTH = 60


def _owner(entry: dict) -> str:
    owner = entry.get("owner")
    if isinstance(owner, dict):
        return str(owner.get("name") or owner.get("username") or "")
    return str(owner or "")


def _latest(entry: dict) -> str:
    tags = dict_at(entry, "dist_tags")
    return str(entry.get("latest_version") or entry.get("version") or tags.get("latest") or "")


def _short(text: Any, width: int = DESCRIPTION_WIDTH) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command()
@click.argument("query", nargs=-1)
@REGISTRY_OPTION
@click.option("--owner", default="", help="Only this user's or organisation's skills.")
@click.option("--category", default="", help="Only skills of this category.")
@click.option("--tag", default="", help="Only skills with this tag.")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True, help="Result page.")
@json_option
@pass_app
def search(
    app: App,
    query: tuple[str, ...],
    registry_name: str | None,
    owner: str,
    category: str,
    tag: str,
    page: int,
    as_json: bool,
) -> int:
    """Search a registry for skills, as its catalog's search does: by what you want done
    ("rotate a pdf"), an exact name first. Weak matches are said as such."""
    from skillctl.registry_client import RegistryClient

    reg = app.config.registry(registry_name)
    q = " ".join(query)
    with RegistryClient(reg) as client:
        data = client.search(q, page=page, owner=owner, category=category, tag=tag)
    results = [r for r in data.get("results") or [] if isinstance(r, dict)]
    if as_json:
        console.out_json({"registry": reg.name, "query": q, "page": page, **data})
        return 0
    if not results:
        console.info(f"No skills match {q!r} on {reg.name}." if q else f"No skills on {reg.name}.")
        return 0
    if q and all(_strength(r) == "weak" for r in results):
        console.info(f"No close match for {q!r} on {reg.name}; nearest:")
    rows = [[r.get("name"), _latest(r), _owner(r), _short(r.get("description"))] for r in results]
    console.table(["NAME", "VERSION", "OWNER", "DESCRIPTION"], rows)
    total = data.get("count")
    if isinstance(total, int) and total > len(results):
        console.info(f"{len(results)} of {total} shown; see more with --page {page + 1}.")
    return 0


def _strength(entry: dict) -> str:
    """strong | weak; a registry that does not say (an older one) is taken at its word: strong."""
    return str(dict_at(entry, "match").get("strength") or "strong")


def split_ref(ref: str) -> tuple[str, str]:
    """``name@spec`` -> (name, spec); a bare name has the empty (default) spec."""
    name, _, spec = ref.partition("@")
    return name.strip(), spec.strip()


def requirements(manifest: dict) -> dict[str, Any]:
    """The gating-relevant part of a version's manifest (as the registry serialises it)."""
    requires = dict_at(manifest, "requires")
    install = [i for i in manifest.get("install") or [] if isinstance(i, dict)]
    return {
        "os": list(manifest.get("os") or []),
        "bins": list(requires.get("bins") or []),
        "any_bins": list(requires.get("any_bins") or requires.get("anyBins") or []),
        "env": list(requires.get("env") or []),
        "config": list(requires.get("config") or []),
        "skills": list(requires.get("skills") or []),
        "primary_env": manifest.get("primary_env") or manifest.get("primaryEnv") or "",
        "install": [_install_command(i) for i in install],
    }


def _install_command(spec: dict) -> str:
    from skillctl.format.manifest import InstallSpec

    fields = {k: spec[k] for k in ("kind", "package", "bins", "label", "os", "id") if k in spec}
    return InstallSpec(**{"kind": "", **fields}).command()


@click.command()
@click.argument("ref", metavar="NAME[@SPEC]")
@REGISTRY_OPTION
@click.option("--files", "with_files", is_flag=True, help="List the version's files (path, size).")
@click.option("--readme", is_flag=True, help="Print the version's SKILL.md instructions.")
@json_option
@pass_app
def show(app: App, ref: str, registry_name: str | None, with_files: bool, readme: bool, as_json: bool) -> int:
    """Show a skill's versions (yanked marked), dist-tags and requirements.

    SPEC picks the version whose requirements are shown: 1.2.3, ^1.2, ~1.2, >=1,<2 or a tag.
    Exit 1 when no version matches SPEC.
    """
    from skillctl.format.versions import parse_spec, resolve, sort_key
    from skillctl.registry_client import RegistryClient

    name, spec = split_ref(ref)
    parse_spec(spec)  # a bad spec is a usage error before any request
    reg = app.config.registry(registry_name)
    with RegistryClient(reg) as client:
        detail = client.skill(name)
        versions = [v for v in detail.get("versions") or [] if isinstance(v, dict)]
        tags = dict_at(detail, "dist_tags")
        resolved = resolve(spec, versions, dist_tags=tags)
        version_detail = client.version(name, resolved) if resolved else {}
        manifest = version_detail.get("manifest") or {}
    versions.sort(key=lambda v: sort_key(str(v.get("version"))), reverse=True)
    data = {
        "registry": reg.name,
        "name": detail.get("name", name),
        "description": detail.get("description") or manifest.get("description", ""),
        "owner": _owner(detail),
        "visibility": detail.get("visibility", ""),
        "dist_tags": tags,
        "spec": spec,
        "resolved": resolved,
        "versions": versions,
        "requirements": requirements(manifest) if resolved else None,
        "notices": _notices(str(detail.get("name", name)), version_detail) if resolved else [],
    }
    if with_files:
        data["files"] = [{"path": f.get("path"), "size": f.get("size")} for f in version_detail.get("files") or []]
    if readme:
        data["readme"] = version_detail.get("body") or ""
    if as_json:
        console.out_json(data)
    else:
        _print_show(data)
        if with_files and resolved:
            console.out(f"files of {resolved}:")
            console.table(["path", "size"], [[f["path"], f["size"]] for f in data["files"]])
        if readme and resolved:
            console.out(f"--- SKILL.md of {data['name']} {resolved} ---")
            console.out(data["readme"].strip())
    if resolved is None:
        console.error(
            f"no version of {name} matches {spec or 'the default (latest)'!r}",
            "Pick one of the versions listed; yanked versions are installed only when pinned exactly.",
        )
        return int(ExitCode.FAILURE)
    return 0


def _notices(name: str, version_detail: dict) -> list[dict]:
    """What the registry says about the resolved version: deprecated, failing tests, scan warns."""
    from skillctl.trust import listed_notices, test_summary

    tests = (version_detail.get("checks") or {}).get("tests")
    return [n.to_dict() for n in listed_notices(name, version_detail, test_summary=test_summary(tests))]


def _print_show(data: dict) -> None:
    console.out(f"{data['name']}: {_short(data['description'], 200)}")
    facts = [
        f"owner: {data['owner']}" if data["owner"] else "",
        f"visibility: {data['visibility']}" if data["visibility"] else "",
        f"registry: {data['registry']}",
    ]
    console.out("  ".join(f for f in facts if f))
    if data["dist_tags"]:
        console.out("dist-tags: " + ", ".join(f"{k}={v}" for k, v in sorted(data["dist_tags"].items())))
    if data["resolved"]:
        console.out(f"resolved: {data['spec'] or '(latest)'} -> {data['resolved']}")
    console.out("")
    rows = [_version_row(v, data["resolved"]) for v in data["versions"]]
    console.table(["", "VERSION", "PUBLISHED", "SIZE", "STATUS", "SCAN", "TESTS", "YANKED", "DEPRECATED"], rows)
    for notice in data["notices"]:
        console.out(f"note: {notice['message']}")
    if data["requirements"]:
        _print_requirements(data["resolved"], data["requirements"])


def _version_row(v: dict, resolved: str | None) -> list:
    yanked = ""
    if v.get("yanked"):
        yanked = "yanked" + (f": {v['yanked_reason']}" if v.get("yanked_reason") else "")
    published = str(v.get("published_at") or "")[:10]
    marker = "*" if str(v.get("version")) == resolved else ""
    scan, tests = v.get("scan_verdict") or "pending", v.get("test_result") or "pending"
    deprecated = _short(v.get("deprecated"), 40)
    row = [marker, v.get("version"), published, _size(v.get("size")), v.get("status", ""), scan, tests, yanked]
    return [*row, deprecated]


def _size(size: Any) -> str:
    if not isinstance(size, int):
        return ""
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KiB"


def _print_requirements(version: str, req: dict) -> None:
    lines = []
    labels = [
        ("os", "os"),
        ("bins", "bins"),
        ("any_bins", "any of bins"),
        ("env", "env"),
        ("config", "config"),
        ("skills", "skills"),
        ("install", "install"),
    ]
    for key, label in labels:
        if req[key]:
            lines.append(f"  {label}: {', '.join(req[key])}")
    if req["primary_env"]:
        lines.append(f"  primary env: {req['primary_env']}")
    console.out("")
    console.out(f"requirements of {version}:" if lines else f"requirements of {version}: none")
    for line in lines:
        console.out(line)


@click.command()
@click.argument("ref", metavar="NAME[@SPEC]")
@REGISTRY_OPTION
@click.option("--force", is_flag=True, help="Use a version the registry's scan warns about.")
@json_option
@pass_app
def use(app: App, ref: str, registry_name: str | None, force: bool, as_json: bool) -> int:
    """Print a registry skill's instructions for an agent, without installing it.

    The archive is downloaded (sha256 checked, malicious versions refused, like install) and
    unpacked into skillctl's cache, so the paths the instructions mention can be read; nothing
    changes in the project: no skills.toml, lock or agent links.
    """
    from skillctl import prompt
    from skillctl.discovery import load_installed
    from skillctl.installer.arguments import Source, SourceKind
    from skillctl.installer.cache import unpacked
    from skillctl.installer.preparer import Preparer
    from skillctl.installer.resolution import RegistryResolver
    from skillctl.reporting import ConsoleReporter

    name, spec = split_ref(ref)
    reporter = ConsoleReporter(progress=not as_json)
    resolver = RegistryResolver(config=app.config, reporter=reporter, force=force)
    fetched = Preparer(resolver).fetch(Source(SourceKind.REGISTRY, name=name, spec=spec, registry=registry_name or ""))
    folder = unpacked(fetched.archive, fetched.sha256, name)
    skill = load_installed("registry", folder)
    if skill is None:
        raise SkillctlError(f"{name} {fetched.version} has no readable SKILL.md", code="install.invalid_skill")
    full = prompt.load_full(skill, config=app.config)
    if as_json:
        console.out_json(
            {
                "name": name,
                "version": fetched.version,
                "sha256": fetched.sha256,
                "path": str(folder),
                "instructions": full.instructions,
                "resources": list(full.resources),
                "notices": [n.to_dict() for n in fetched.notices],
            }
        )
    else:
        console.out(prompt.full([full], "xml"))
    return 0
