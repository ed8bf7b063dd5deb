"""Hostile publishes the outside audit found accepted (or answered with a 500): YAML aliases
that expand a tiny archive into a huge manifest, recursive aliases, absurd version strings.
Each is refused with 422 and a stable code, and nothing is stored."""

from __future__ import annotations

import io
import zipfile

import pytest

from registry.models import Skill
from skillctl.format.frontmatter import MAX_ALIASES, MAX_EXPANDED_CHARS
from tests.registry.conftest import make_zip, stored_archives


def deflated(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}/SKILL.md", text)
    return buffer.getvalue()


def codes(response) -> set[str]:
    return {e["code"] for e in response.json().get("errors", [])} | {response.json()["code"]}


def test_alias_expansion_archive_is_422_and_nothing_is_stored(alice_api):
    lines = ["---", "name: bomb", "description: d", "version: 1.0.0", "metadata:", "  a: &a " + "x" * 100_000]
    lines += [f"  k{i}: *a" for i in range(300)]
    data = deflated("bomb", "\n".join(lines + ["---", "# bomb"]))
    assert len(data) < 2_000  # a tiny upload...
    response = alice_api.publish("bomb", data)  # ...that would store a 30 MB manifest
    assert response.status_code == 422
    assert "frontmatter.too_complex" in codes(response)
    assert Skill.objects.count() == 0 and stored_archives() == []


def few_aliases_to(name: str, chars: int, aliases: int) -> str:
    """SKILL.md whose metadata holds one string of ``chars`` characters and ``aliases`` aliases to it."""
    lines = ["---", f"name: {name}", "description: d", "version: 1.0.0", "metadata:", "  a: &a " + "x" * chars]
    return "\n".join(lines + [f"  k{i}: *a" for i in range(aliases)] + ["---", f"# {name}", ""])


def test_a_few_aliases_expanding_past_64_kib_are_422_on_the_size_limit_alone(alice_api):
    # 4 x 30 KB = 120 KB expanded from 30 KB of text and 3 aliases, far below the alias-count limit.
    assert 3 < MAX_ALIASES and 30_000 < MAX_EXPANDED_CHARS < 4 * 30_000
    response = alice_api.publish("few", deflated("few", few_aliases_to("few", 30_000, aliases=3)))
    assert response.status_code == 422
    [error] = [e for e in response.json()["errors"] if e["code"] == "frontmatter.too_complex"]
    assert "64 KiB" in error["message"]
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_the_same_string_aliased_once_stays_under_the_limit_and_publishes(alice_api):
    response = alice_api.publish("once", deflated("once", few_aliases_to("once", 30_000, aliases=1)))
    assert response.status_code == 201, response.json()


@pytest.mark.parametrize("value", ["metadata: &m {self: *m}", "metadata:\n  x: &a [*a]"])
def test_recursive_alias_is_422_not_500(alice_api, value):
    response = alice_api.publish("loop", make_zip("loop", extra=value))
    assert response.status_code == 422
    assert "frontmatter.too_complex" in codes(response)


@pytest.mark.parametrize(
    "version",
    ["1.0.0-" + "a" * 100_000, "9" * 5_000 + ".0.0", "1.0." + "1" * 16, "1.0.0-" + "b" * 123],
)
def test_absurd_version_field_is_422_version_invalid(alice_api, version):
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version=None), version=version)
    assert response.status_code == 422, response.content[:300]
    assert response.json()["code"] == "version.invalid"
    assert len(response.content) < 4_000  # the error does not echo 100 KB back
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_absurd_version_in_skill_md_is_refused(alice_api):
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version="9" * 5_000 + ".0.0"))
    assert response.status_code == 422
    assert codes(response) & {"version.invalid", "version.missing"}
    assert Skill.objects.count() == 0


def test_a_version_of_128_characters_is_accepted(alice_api):
    version = "1.0.0-" + "a" * 122
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version=None), version=version)
    assert response.status_code == 201, response.json()
    assert response.json()["version"] == version
