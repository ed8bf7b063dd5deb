"""A skill's bytes are never served as active content of the registry's origin (issue 34, item 1),
and the agent-skills archive path answers 404, not 500, for what it does not serve (item 8)."""

from __future__ import annotations

import pytest

from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db

ACTIVE = {
    "assets/preview.html": "<html><script src='pwn.js'></script></html>",
    "assets/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'><script href='pwn.js'/></svg>",
    "assets/pwn.js": "fetch('/account/tokens')",
    "assets/page.xhtml": "<html xmlns='http://www.w3.org/1999/xhtml'><script>1</script></html>",
    "SKILL.md": None,  # the installer's own file: plain text too
}
BINARY = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256))


@pytest.fixture
def published(alice_api):
    files = {path: text for path, text in ACTIVE.items() if text is not None}
    archive = make_zip("lively", files={**files, "assets/blob.bin": BINARY})  # type: ignore[dict-item]
    assert alice_api.publish("lively", archive).status_code == 201
    return alice_api


def assert_inert(response) -> None:
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"


@pytest.mark.parametrize("path", ACTIVE)
def test_a_skill_file_is_plain_text_nosniff_and_sandboxed(published, anon_api, path):
    response = anon_api.get(f"/.well-known/skills/lively/{path}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert_inert(response)


def test_a_binary_skill_file_is_an_attachment_with_its_exact_bytes(published, anon_api):
    response = anon_api.get("/.well-known/skills/lively/assets/blob.bin")
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")
    assert response.content == BINARY
    assert_inert(response)


def test_a_text_file_keeps_its_exact_bytes(published, anon_api):
    response = anon_api.get("/.well-known/skills/lively/assets/preview.html")
    assert response.content == ACTIVE["assets/preview.html"].encode()


@pytest.mark.parametrize("path", ACTIVE)
def test_the_clawhub_compatibility_file_view_serves_the_same_inert_bytes(published, anon_api, path):
    from registry.api.compat import CLAWHUB_PREFIX

    response = anon_api.client.get(f"/{CLAWHUB_PREFIX}/api/v1/skills/lively/file", {"path": path})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert_inert(response)
    assert response.content == anon_api.get(f"/.well-known/skills/lively/{path}").content


@pytest.mark.parametrize(
    "path",
    [
        "/compat-download",
        "/api/v1/skills/lively/download",
        "/api/v1/skills/lively/versions/1.0.0/download",
        "/.well-known/agent-skills/lively/1.0.0.zip",
    ],
)
def test_archives_are_attachments_nosniff_and_sandboxed(published, anon_api, path):
    from registry.api.compat import CLAWHUB_PREFIX

    if path == "/compat-download":  # clawhub install's archive
        response = anon_api.get(f"/{CLAWHUB_PREFIX}/api/v1/download", slug="lively")
    else:
        response = anon_api.get(path)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    assert_inert(response)


@pytest.mark.parametrize("name", ["never-published", "hidden-one"])
def test_agent_skills_archive_of_a_missing_or_private_skill_is_404(alice_api, name):
    assert alice_api.publish("hidden-one", make_zip("hidden-one"), visibility="private").status_code == 201
    missing_version = Api().get("/.well-known/agent-skills/hidden-one/9.9.9.zip")
    response = Api().get(f"/.well-known/agent-skills/{name}/1.0.0.zip")
    assert response.status_code == 404 and missing_version.status_code == 404
    # the same answer for both: a private skill reads exactly like a missing one
    other = Api().get("/.well-known/agent-skills/never-published/1.0.0.zip")
    assert response.content.replace(name.encode(), b"X") == other.content.replace(b"never-published", b"X")
