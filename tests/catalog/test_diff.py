"""The compare page /skills/<name>/diff/<from>/<to> and the API beside it: files added, removed and
changed with a highlighted diff, frontmatter changes called out, both versions' checks, the same
visibility as a version page, and the "compare with" link in the versions list."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.catalog.conftest import finish_checks

pytestmark = pytest.mark.django_db

MALICIOUS = {"verdict": "malicious", "findings": [{"rule": "shell.destructive_rm", "severity": "critical",
                                                   "path": "scripts/run.py", "line": 1, "message": "wipes home",
                                                   "excerpt": "rm -rf ~/"}]}  # fmt: skip
NETWORKED = """requires:
  bins: [qpdf, curl]
runtime:
  runtime: python3
  entrypoint: scripts/run.py
  requires_network: true"""


@pytest.fixture
def two_versions(publish):
    publish(
        "pdf-tools",
        files={"scripts/run.py": "print('one')\n", "notes.txt": "old notes\n"},
        extra="requires:\n  bins: [qpdf]",
    )
    publish(
        "pdf-tools",
        version="1.1.0",
        files={"scripts/run.py": "print('two')\n", "references/new.md": "# New\n"},
        extra=NETWORKED,
    )


def test_the_page_shows_each_changed_file_with_a_highlighted_diff(two_versions):
    page = Client().get("/skills/pdf-tools/diff/1.0.0/1.1.0")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="badge file-added">added' in html and "references/new.md" in html
    assert 'class="badge file-removed">removed' in html and "notes.txt" in html
    assert 'class="badge file-changed">changed' in html
    # Pygments' diff lexer: deleted and inserted lines in their own classes
    assert "<span class=\"gd\">-print('one')</span>" in html
    assert "<span class=\"gi\">+print('two')</span>" in html


def test_the_page_calls_out_new_requirements_and_network(two_versions):
    html = Client().get("/skills/pdf-tools/diff/1.0.0/1.1.0").content.decode()
    assert "change" in html and "to what the skill may do or needs" in html
    assert '<code>runtime.requires_network</code> <span class="badge warn">network</span>' in html
    assert (
        '<code>requires.bins</code> <span class="badge warn">requirements</span></th>\n        <td>qpdf</td><td>qpdf, curl</td>'
        in html
    )
    assert '<code>runtime.entrypoint</code> <span class="badge warn">permissions</span>' in html


def test_the_page_shows_both_versions_checks(two_versions):
    finish_checks("pdf-tools", "1.0.0", scan={"verdict": "pass", "findings": []})
    finish_checks("pdf-tools", "1.1.0", scan={"verdict": "warn", "findings": []})
    html = Client().get("/skills/pdf-tools/diff/1.0.0/1.1.0").content.decode()
    assert '<span class="badge pass">pass</span>' in html and '<span class="badge warn">warn</span>' in html
    assert "scan warnings: read the findings before installing" in html


def test_a_malicious_version_cannot_be_compared_by_outsiders_but_can_by_members(two_versions, alice):
    finish_checks("pdf-tools", "1.1.0", scan=MALICIOUS)
    bob = get_user_model().objects.create_user(username="bob", password="pw-bob-123")
    outsider, member = Client(), Client()
    outsider.force_login(bob)
    member.force_login(alice)
    for path in ("/skills/pdf-tools/diff/1.0.0/1.1.0", "/api/v1/skills/pdf-tools/diff/1.0.0/1.1.0"):
        assert Client().get(path).status_code == 404, path
        assert outsider.get(path).status_code == 404, path
        assert member.get(path).status_code == 200, path


def test_a_private_skill_cannot_be_compared_by_outsiders(publish):
    publish("secret-tool", visibility="private")
    publish("secret-tool", version="1.1.0")
    assert Client().get("/skills/secret-tool/diff/1.0.0/1.1.0").status_code == 404
    assert Client().get("/api/v1/skills/secret-tool/diff/1.0.0/1.1.0").status_code == 404


def test_an_unknown_version_is_404(two_versions):
    assert Client().get("/skills/pdf-tools/diff/1.0.0/9.9.9").status_code == 404
    assert Client().get("/api/v1/skills/pdf-tools/diff/0.0.1/1.1.0").status_code == 404


def test_the_api_gives_files_with_status_and_diff_text_and_frontmatter_changes(two_versions):
    body = Client().get("/api/v1/skills/pdf-tools/diff/1.0.0/1.1.0").json()
    assert (body["skill"], body["from"]["version"], body["to"]["version"]) == ("pdf-tools", "1.0.0", "1.1.0")
    files = {f["path"]: f for f in body["files"]}
    assert {p: f["status"] for p, f in files.items()} == {
        "notes.txt": "removed",
        "references/new.md": "added",
        "scripts/run.py": "changed",
        "SKILL.md": "changed",
    }
    assert "-print('one')\n+print('two')\n" in files["scripts/run.py"]["diff"]
    changes = {c["field"]: c for c in body["frontmatter"]}
    assert changes["requires.bins"] == {
        "field": "requires.bins",
        "concern": "requirements",
        "before": ["qpdf"],
        "after": ["qpdf", "curl"],
    }
    assert changes["runtime.requires_network"]["after"] is True
    assert body["from"]["checks"]["scan"]["status"] == "pending"


def test_the_versions_list_links_each_version_to_a_compare_with_the_one_before(two_versions, publish):
    publish("pdf-tools", version="1.2.0")
    html = Client().get("/skills/pdf-tools").content.decode()
    assert 'href="/skills/pdf-tools/diff/1.1.0/1.2.0">compare with 1.1.0</a>' in html
    assert 'href="/skills/pdf-tools/diff/1.0.0/1.1.0">compare with 1.0.0</a>' in html
    assert "compare with 1.2.0" not in html  # nothing above the newest; nothing below the oldest
