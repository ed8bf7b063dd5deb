"""The publish contract (issue 3, acceptance 1): every answer, and nothing stored on rejection."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile

import pytest

from registry.models import AuditEvent, Skill, SkillVersion
from tests.registry.conftest import make_tar_gz, make_zip, stored_archives, upload, version_count

pytestmark = pytest.mark.django_db


def test_publish_new_skill_is_201_with_digest_and_files(alice_api):
    data = make_zip("pdf-tools", files={"scripts/run.py": "print('hi')\n"})
    response = alice_api.publish("pdf-tools", data)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["version"] == "1.0.0"
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert body["size"] == len(data)
    assert {f["path"] for f in body["files"]} == {"SKILL.md", "scripts/run.py"}
    assert all(len(f["sha256"]) == 64 for f in body["files"])
    assert body["manifest"]["name"] == "pdf-tools"
    assert response["Location"].endswith("/api/v1/skills/pdf-tools/versions/1.0.0")
    assert len(stored_archives()) == 1
    assert stored_archives()[0] == f"archives/sha256/{body['sha256'][:2]}/{body['sha256'][2:4]}/{body['sha256']}.zip"
    assert AuditEvent.objects.filter(action="version.publish", skill="pdf-tools", version="1.0.0").exists()


def test_publish_tar_gz_is_accepted(alice_api):
    response = alice_api.publish("tar-skill", make_tar_gz("tar-skill"), filename="s.tar.gz")
    assert response.status_code == 201, response.json()
    assert stored_archives()[0].endswith(".tar.gz")


def test_publish_identical_bytes_again_is_200(alice_api):
    data = make_zip("pdf-tools")
    assert alice_api.publish("pdf-tools", data).status_code == 201
    again = alice_api.publish("pdf-tools", data)
    assert again.status_code == 200
    assert version_count("pdf-tools") == 1
    assert len(stored_archives()) == 1


def test_publish_same_version_with_other_bytes_is_409(alice_api):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    before = stored_archives()
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", body="# changed\n"))
    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "version.exists"
    assert version_count("pdf-tools") == 1
    assert stored_archives() == before


def test_publish_invalid_archive_is_422_listing_every_finding(alice_api):
    bad = make_zip("Bad_Name", text="---\nname: Bad_Name\nversion: 1.0.0\ncompatibility: 12\n---\nbody\n")
    response = alice_api.publish("Bad_Name", bad)
    assert response.status_code == 422
    problem = response.json()
    codes = {e["code"] for e in problem["errors"]}
    assert {"name.pattern", "description.missing", "field.type"} <= codes
    assert all(set(e) == {"code", "message", "path"} for e in problem["errors"])
    assert Skill.objects.count() == 0 and SkillVersion.objects.count() == 0
    assert stored_archives() == []


def test_publish_unsafe_archive_is_422_with_archive_codes(alice_api):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("evil/SKILL.md", "---\nname: evil\ndescription: x\nversion: 1.0.0\n---\n")
        archive.writestr("evil/../../etc/passwd", "root")
    response = alice_api.publish("evil", buffer.getvalue())
    assert response.status_code == 422
    assert "archive.path_traversal" in {e["code"] for e in response.json()["errors"]}
    assert SkillVersion.objects.count() == 0 and stored_archives() == []


def test_publish_not_an_archive_is_422(alice_api):
    response = alice_api.publish("pdf-tools", b"this is not a zip at all")
    assert response.status_code == 422
    assert "archive.not_archive" in {e["code"] for e in response.json()["errors"]}
    assert stored_archives() == []


def test_publish_name_in_url_different_from_manifest_is_422(alice_api):
    response = alice_api.publish("other-name", make_zip("pdf-tools"))
    assert response.status_code == 422
    assert response.json()["code"] == "name.url_mismatch"
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_without_any_version_is_422(alice_api):
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version=None))
    assert response.status_code == 422
    assert response.json()["code"] == "version.missing"
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_version_field_is_used_when_skill_md_has_none(alice_api):
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version=None), version="2.1.0")
    assert response.status_code == 201
    assert response.json()["version"] == "2.1.0"


def test_publish_metadata_version_is_used(alice_api):
    data = make_zip("pdf-tools", version=None, extra='metadata:\n  version: "3.0.1"')
    response = alice_api.publish("pdf-tools", data)
    assert response.status_code == 201, response.json()
    assert response.json()["version"] == "3.0.1"


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("1.0", "version.invalid"),
        ("01.0.0", "version.invalid"),
        ("1.0.0+build.5", "version.build_metadata"),
        ("1.0.1", "version.mismatch"),
    ],
)
def test_publish_bad_version_field_is_422(alice_api, given, code):
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version="1.0.0"), version=given)
    assert response.status_code == 422
    assert response.json()["code"] == code
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_without_token_is_401(anon_api):
    response = anon_api.publish("pdf-tools", make_zip("pdf-tools"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_to_a_public_skill_of_another_owner_is_409_name_unavailable(alice_api, bob_api):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    before = stored_archives()
    response = bob_api.publish("pdf-tools", make_zip("pdf-tools", version="1.1.0"))
    assert response.status_code == 409
    assert response.json()["code"] == "name.unavailable"
    assert version_count("pdf-tools") == 1 and stored_archives() == before


def test_publish_to_an_owner_without_rights_is_403(alice_api, bob_api):
    assert alice_api.post("/api/v1/orgs", {"name": "acme"}).status_code == 201
    response = bob_api.publish("acme-skill", make_zip("acme-skill"), owner="acme")
    assert response.status_code == 403
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_to_a_private_skill_of_another_owner_is_the_same_409_as_a_public_one(alice_api, bob_api):
    assert alice_api.publish("secret", make_zip("secret"), visibility="private").status_code == 201
    response = bob_api.publish("secret", make_zip("secret", version="2.0.0"))
    assert response.status_code == 409 and response.json()["code"] == "name.unavailable"
    assert version_count("secret") == 1


def test_publish_too_large_is_413(alice_api, settings):
    settings.SKILLYARD_MAX_UPLOAD_BYTES = 1000
    data = make_zip("pdf-tools", files={"assets/blob.txt": os.urandom(3000).hex()})
    assert len(data) > 1000
    response = alice_api.publish("pdf-tools", data)
    assert response.status_code == 413
    assert response.json()["code"] == "archive.too_large"
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_declaring_a_body_beyond_the_limit_is_413_before_reading_it(alice_api, settings):
    # The body is a small valid archive: only the declared length can have refused it.
    settings.SKILLYARD_MAX_UPLOAD_BYTES = 100_000
    declared = 100_000 + settings.SKILLYARD_UPLOAD_OVERHEAD_BYTES + 1
    client = alice_api.client
    body = {"archive": upload(make_zip("pdf-tools"))}
    response = client.post("/api/v1/skills/pdf-tools/versions", body, format="multipart", CONTENT_LENGTH=str(declared))
    assert response.status_code == 413
    assert response.json()["code"] == "archive.too_large"
    assert Skill.objects.count() == 0 and stored_archives() == []


def test_publish_missing_archive_field_is_400_with_field_error(alice_api):
    response = alice_api.client.post("/api/v1/skills/pdf-tools/versions", {"version": "1.0.0"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "archive"


def test_publish_owner_is_fixed_after_first_publish(alice_api):
    assert alice_api.post("/api/v1/orgs", {"name": "acme"}).status_code == 201
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    response = alice_api.publish("pdf-tools", make_zip("pdf-tools", version="1.1.0"), owner="acme")
    assert response.status_code == 422
    assert response.json()["code"] == "skill.owner_mismatch"


def test_publish_keeps_warnings_and_latest_summary(alice_api):
    assert (
        alice_api.publish("pdf-tools", make_zip("pdf-tools", version="2.0.0", description="Second.")).status_code == 201
    )
    assert (
        alice_api.publish("pdf-tools", make_zip("pdf-tools", version="1.5.0", description="Older.")).status_code == 201
    )
    assert Skill.objects.get(name="pdf-tools").description == "Second."
    detail = alice_api.get("/api/v1/skills/pdf-tools/versions/1.5.0").json()
    assert isinstance(detail["warnings"], list)


def test_failed_row_write_removes_the_archive_it_wrote(alice_api, monkeypatch):
    from registry.services import publish

    def explode(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(publish, "_version_create", explode)
    with pytest.raises(RuntimeError):
        alice_api.publish("pdf-tools", make_zip("pdf-tools"))
    assert SkillVersion.objects.count() == 0
    assert stored_archives() == []
