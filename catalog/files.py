"""A skill's files in the catalog: the file tree on a version page, one file's page (numbered,
highlighted, long lines wrapped) and its raw bytes.

The raw bytes leave through registry/served.py like every other response carrying a skill's
files: text/plain or an attachment, ``nosniff``, a ``sandbox`` CSP: a skill's HTML or SVG is
never a page of this origin.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import PurePosixPath

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from catalog import rendering
from registry import selectors
from registry.access import Actor
from registry.models import SkillVersion
from registry.served import is_text, skill_file_response
from registry.storage import archive_open

MAX_FILE_VIEW_BYTES = 1024 * 1024  # larger files are offered raw or in the archive, not shown


def file_view(request, name: str, version: str, path: str):
    sv, entry = _visible_file(request, name, version, path)
    allowed = selectors.skill_version_download_allowed(actor=Actor(request.user), version=sv)
    text = None
    if entry["size"] <= MAX_FILE_VIEW_BYTES and allowed:
        data = read_member(sv, path)
        if data is not None and is_text(data):
            text = data.decode("utf-8")
    return render(
        request,
        "catalog/file.html",
        {
            "skill": sv.skill,
            "sv": sv,
            "entry": entry,
            "raw_allowed": allowed,
            "code_html": numbered(rendering.render_file(text, PurePosixPath(path).name)) if text is not None else None,
        },
    )


def raw_file(request, name: str, version: str, path: str) -> HttpResponse:
    """One file's bytes, inert (registry/served.py); never for a version that is not served."""
    sv, _ = _visible_file(request, name, version, path)
    if not selectors.skill_version_download_allowed(actor=Actor(request.user), version=sv):
        raise Http404("not served")
    data = read_member(sv, path)
    if data is None:
        raise Http404("no such file")
    return skill_file_response(data, path)


def _visible_file(request, name: str, version: str, path: str) -> tuple[SkillVersion, dict]:  # noqa: ANN001
    sv = selectors.skill_version_get_visible(actor=Actor(request.user), name=name, version=version)
    entry = next((f for f in sv.files if f["path"] == path), None)
    if entry is None:
        raise Http404("no such file")
    return sv, entry


def numbered(code_html: str) -> SafeString:
    """Highlighted HTML (Pygments closes its spans at each line end) as one span per line;
    site.css numbers them with a counter, so a copy of the code carries no numbers."""
    lines = code_html.removesuffix("\n").split("\n")
    return format_html_join("", '<span class="line">{}</span>', ((mark_safe(line),) for line in lines))  # noqa: S308


def read_member(sv: SkillVersion, path: str) -> bytes | None:
    """One file of the stored (validated) archive, under its single root folder if it has one."""
    from skillctl.format import inspect_archive

    with archive_open(sv.archive_key) as handle:
        data = handle.read()
    root = inspect_archive(data).root
    wanted = f"{root}/{path}" if root else path
    if sv.archive_kind == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.read(wanted) if wanted in archive.namelist() else None
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.removeprefix("./") == wanted:
                extracted = archive.extractfile(member)
                return extracted.read() if extracted else None
    return None


def file_tree_html(sv: SkillVersion) -> SafeString:
    """The version's files as a tree of folders, each file linked to its page."""
    return _tree_html(file_tree(sv.files), name=sv.skill.name, version=sv.version)


def file_tree(files: list[dict]) -> dict:
    """A file list as folders: ``{"dirs": {name: tree}, "files": [entry]}``."""
    root: dict = {"dirs": {}, "files": []}
    for entry in sorted(files, key=lambda f: f["path"]):
        node = root
        *folders, _ = entry["path"].split("/")
        for folder in folders:
            node = node["dirs"].setdefault(folder, {"dirs": {}, "files": []})
        node["files"].append(entry)
    return root


def _tree_html(tree: dict, *, name: str, version: str) -> SafeString:
    """Nested lists, folders first (each a <details> open by default), files linked to their page."""
    dirs = format_html_join(
        "",
        '<li class="dir"><details open><summary>{}/</summary>{}</details></li>',
        ((folder, _tree_html(sub, name=name, version=version)) for folder, sub in sorted(tree["dirs"].items())),
    )
    files = format_html_join(
        "",
        '<li><a href="{}">{}</a> <span class="muted">{}</span></li>',
        (
            (reverse("catalog:file", args=[name, version, f["path"]]), f["path"].rsplit("/", 1)[-1], _size(f["size"]))
            for f in tree["files"]
        ),
    )
    return format_html('<ul class="file-tree">{}{}</ul>', dirs, files)


def _size(size: int) -> str:
    from django.template.defaultfilters import filesizeformat

    return filesizeformat(size)
