"""`skillctl publish PATH|ARCHIVE` against a fake registry edge."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from email.parser import BytesParser
from email.policy import HTTP

import httpx
import pytest

from skillctl.cli.main import main
from skillctl.registry_client import RegistryClient

TOKEN = "sky_publish_token_1"


@pytest.fixture(autouse=True)
def home(home, monkeypatch):
    """The isolated home of cli/conftest.py, logged in through the environment."""
    monkeypatch.setenv("SKILLYARD_TOKEN", TOKEN)
    return home


def parse_multipart(request: httpx.Request) -> dict[str, tuple[str | None, bytes]]:
    raw = b"Content-Type: " + request.headers["Content-Type"].encode() + b"\r\n\r\n" + request.read()
    message = BytesParser(policy=HTTP).parsebytes(raw)
    return {
        part.get_param("name", header="content-disposition"): (part.get_filename(), part.get_payload(decode=True))
        for part in message.iter_parts()
    }


class FakeRegistry:
    """Answers publishes with `status`; remembers each upload."""

    def __init__(self, status: int = 201, body: dict | None = None, sha_override: str | None = None):
        self.status, self.body, self.sha_override = status, body, sha_override
        self.uploads: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        fields = parse_multipart(request)
        self.uploads.append({"path": request.url.path, "auth": request.headers.get("Authorization"), "fields": fields})
        archive = fields["archive"][1]
        body = self.body or {
            "name": "hello",
            "version": "1.0.0",
            "sha256": self.sha_override or hashlib.sha256(archive).hexdigest(),
        }
        return httpx.Response(self.status, json=body)


@pytest.fixture
def fake(monkeypatch):
    registry = FakeRegistry()
    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(lambda r: registry(r)))
    return registry


@pytest.fixture
def skill(tmp_path):
    folder = tmp_path / "hello"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Say hello.\nversion: 1.0.0\nlicense: MIT\n---\n\n# Hello\n"
    )
    (folder / "scripts" / "run.py").write_text("print('hello')\n")
    return folder


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_publish_folder_packs_and_uploads_the_archive(capsys, fake, skill):
    code, out, err = run(capsys, "publish", str(skill))
    assert code == 0, err
    assert "Published hello 1.0.0" in err
    [upload] = fake.uploads
    assert upload["path"] == "/api/v1/skills/hello/versions"
    assert upload["auth"] == f"Bearer {TOKEN}"
    filename, archive = upload["fields"]["archive"]
    assert filename == "hello.zip"
    names = zipfile.ZipFile(io.BytesIO(archive)).namelist()
    assert "SKILL.md" in names and "scripts/run.py" in names
    assert upload["fields"]["version"][1] == b"1.0.0"
    assert "visibility" not in upload["fields"] and "owner" not in upload["fields"]
    assert TOKEN not in out + err


def test_publish_is_reproducible_same_folder_same_sha(capsys, fake, skill):
    run(capsys, "publish", str(skill), "--json")
    run(capsys, "publish", str(skill), "--json")
    first, second = (u["fields"]["archive"][1] for u in fake.uploads)
    assert first == second


def test_publish_options_are_sent(capsys, fake, skill):
    code, _, err = run(
        capsys,
        "publish",
        str(skill),
        "--version",
        "1.0.0",
        "--owner",
        "acme",
        "--private",
        "--changelog",
        "Fixes the *greeting*.",
    )
    assert code == 0, err
    fields = fake.uploads[0]["fields"]
    assert (fields["version"][1], fields["owner"][1], fields["visibility"][1]) == (b"1.0.0", b"acme", b"private")
    assert fields["changelog"][1] == b"Fixes the *greeting*."


def test_a_version_other_than_skill_md_s_is_refused_before_any_upload(capsys, fake, skill):
    code, out, err = run(capsys, "publish", str(skill), "--version", "1.2.0", "--json")
    assert code == 2 and fake.uploads == []
    assert json.loads(out)["error"] == "publish.version_mismatch" and "--bump" in err


def test_publish_an_archive_as_is(capsys, fake, skill, tmp_path):
    from skillctl.format import pack_skill

    packed = pack_skill(skill, tmp_path / "hello-1.0.0.tar.gz")
    code, out, _ = run(capsys, "publish", str(packed.path), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["sha256"] == packed.sha256 and doc["created"] is True
    assert fake.uploads[0]["fields"]["archive"] == ("hello-1.0.0.tar.gz", packed.path.read_bytes())


def test_identical_bytes_again_says_nothing_changed(capsys, fake, skill):
    fake.status = 200
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 0 and "nothing changed" in err


def test_same_version_other_bytes_is_conflict_with_hint(capsys, fake, skill):
    fake.status, fake.body = (
        409,
        {
            "title": "Conflict",
            "detail": "hello 1.0.0 exists with other bytes",
            "errors": [{"code": "version.exists", "message": "immutable", "path": "version"}],
        },
    )
    code, out, err = run(capsys, "publish", str(skill))
    assert code == 1
    assert "version.exists" in err and "bump" in err
    code, out, _ = run(capsys, "publish", str(skill), "--json")
    doc = json.loads(out)
    assert doc["error"] == "registry.conflict" and doc["errors"][0]["code"] == "version.exists"


def test_validation_refusal_lists_every_finding(capsys, fake, skill):
    errors = [
        {"code": "name.pattern", "message": "bad", "path": "name"},
        {"code": "scan.secret", "message": "a secret", "path": "scripts/run.py"},
    ]
    fake.status, fake.body = 422, {"title": "Invalid", "detail": "invalid skill", "errors": errors}
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 1 and "name.pattern" in err and "scan.secret" in err and "hint:" in err


def test_forbidden_owner_has_a_login_hint(capsys, fake, skill):
    fake.status, fake.body = 403, {"detail": "no publish right on acme"}
    code, _, err = run(capsys, "publish", str(skill), "--owner", "acme")
    assert code == 1 and "no publish right on acme" in err and "skillctl login" in err


def test_registry_storing_other_bytes_is_an_integrity_error(capsys, fake, skill):
    fake.sha_override = "0" * 64
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 4 and "hint:" in err


def test_invalid_folder_is_refused_before_any_upload(capsys, fake, tmp_path):
    bad = tmp_path / "Bad_Name"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad_Name\n---\n")
    code, _, err = run(capsys, "publish", str(bad))
    assert code == 1 and "name.pattern" in err and "skillctl validate" in err
    assert fake.uploads == []


def test_no_version_is_a_usage_error_before_any_upload(capsys, fake, skill):
    text = (skill / "SKILL.md").read_text().replace("version: 1.0.0\n", "")
    (skill / "SKILL.md").write_text(text)
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 2 and "--version" in err and fake.uploads == []
    code, _, err = run(capsys, "publish", str(skill), "--version", "one")
    assert code == 2 and "semantic version" in err and fake.uploads == []


def test_not_logged_in_is_refused_with_login_hint(capsys, fake, skill, monkeypatch):
    monkeypatch.delenv("SKILLYARD_TOKEN")
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 1 and "skillctl login" in err and fake.uploads == []


def test_missing_path_and_non_archive_file_are_usage_errors(capsys, fake, tmp_path):
    assert run(capsys, "publish", str(tmp_path / "nope"))[0] == 2
    other = tmp_path / "notes.txt"
    other.write_text("x")
    code, _, err = run(capsys, "publish", str(other))
    assert code == 2 and "hint:" in err


def test_unreachable_registry_exits_3(capsys, skill, monkeypatch):
    def handler(request):
        raise httpx.ConnectError("refused")

    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(handler))
    code, _, err = run(capsys, "publish", str(skill))
    assert code == 3 and "hint:" in err


def test_an_unchanged_init_skeleton_is_refused_before_any_upload(capsys, fake, tmp_path):
    assert run(capsys, "init", "fresh", "--path", str(tmp_path))[0] == 0
    code, _, err = run(capsys, "publish", str(tmp_path / "fresh"))
    assert code == 1 and "description.placeholder" in err
    assert fake.uploads == []
