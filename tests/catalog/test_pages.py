"""The catalog's pages through Django's test client: content, search, privacy, hostile input."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from registry import services
from registry.errors import Unauthenticated
from tests.catalog.conftest import make_zip, upload

HOSTILE = """# Title

<script>alert('x')</script>
<img src=x onerror="alert(1)">
[click](javascript:alert(1))
<iframe src="https://evil.example"></iframe>
<svg onload="alert(1)"></svg>
<a href="data:text/html,<script>alert(1)</script>">data</a>

```python
print("<b>code</b>")
```
"""


# Real tags only: escaped text (&lt;script&gt;) is what hostile input must become. The catalog's
# own scripts (static files, as the CSP allows) are the one <script> a page may hold.
UNSAFE = re.compile(
    r"<script\b(?! src=\"/static/catalog/\w+\.js\" defer></script>)|<(?:iframe|object|embed|svg)\b|"
    r"<[a-z][^>]*\son\w+\s*=|"
    r"<[a-z][^>]*\s(?:href|src)\s*=\s*\"?\s*(?:javascript|data):",
    re.I,
)


def assert_safe(html: str) -> None:
    assert not UNSAFE.search(html), UNSAFE.search(html).group(0)


def test_home_lists_skills(publish):
    publish("pdf-tools", description="Rotate, merge and split PDF files.")
    page = Client().get("/")
    assert page.status_code == 200 and b"pdf-tools" in page.content


def test_browse_and_search_rank_by_what_the_user_wants(publish):
    publish("pdf-tools", description="Rotate, merge and split the pages of PDF files.")
    publish("k8s-deploy", description="Deploy services to Kubernetes clusters.")
    found = Client().get("/skills", {"q": "rotate the pages of a pdf"})
    assert found.status_code == 200 and b"pdf-tools" in found.content and b"k8s-deploy" not in found.content
    nothing = Client().get("/skills", {"q": "bake sourdough bread"})
    assert b"No skill matches" in nothing.content and b"browse every skill" in nothing.content
    everything = Client().get("/skills", {"sort": "name"})
    assert everything.content.index(b"k8s-deploy") < everything.content.index(b"pdf-tools")


def test_search_sees_new_skills_and_new_routing_manifests_at_once(publish):
    """The compiled search index is cached; a publish or a finished manifest check changes it."""
    from registry.models import VersionCheck

    publish("pdf-tools", description="Merge and split PDF files.")
    assert b"pdf-tools" not in Client().get("/skills", {"q": "rotate scanned pages"}).content
    publish("img-tools", description="Rotate and crop scanned images.")
    assert b"img-tools" in Client().get("/skills", {"q": "rotate scanned pages"}).content

    check = VersionCheck.objects.get(version__skill__name="pdf-tools", name=VersionCheck.Name.MANIFEST)
    services.check_finish(
        check=check,
        result={
            "keywords": ["rotate", "scanned", "pages"],
            "phrases": ["rotate pages"],
            "queries": ["rotate the scanned pages of my pdf"],
            "negative": "",
            "category": "documents",
        },
    )
    assert b"pdf-tools" in Client().get("/skills", {"q": "rotate scanned pages"}).content


def test_skill_page_shows_install_versions_files_and_pending_checks(publish):
    publish(
        "pdf-tools", files={"scripts/rotate.py": "print('rotate')\n"}, extra="license: MIT\nrequires:\n  bins: [qpdf]"
    )
    page = Client().get("/skills/pdf-tools").content.decode()
    for expected in ("skillctl install pdf-tools", "1.0.0", "scripts/rotate.py", "MIT", "qpdf", "pending", "sha256"):
        assert expected in page, expected


def test_file_view_highlights_text(publish):
    publish("pdf-tools", files={"scripts/rotate.py": "import os\nprint('<rotated>')\n"})
    page = Client().get("/skills/pdf-tools/versions/1.0.0/files/scripts/rotate.py").content.decode()
    assert 'class="code"' in page and "&lt;rotated&gt;" in page and "<rotated>" not in page


def test_file_view_without_a_version_shows_the_default_version(publish):
    publish("pdf-tools", files={"scripts/rotate.py": "print('one')\n"})
    publish("pdf-tools", version="1.1.0", files={"scripts/rotate.py": "print('eleven')\n"})
    page = Client().get("/skills/pdf-tools/files/scripts/rotate.py")
    assert page.status_code == 200 and "eleven" in page.content.decode() and "1.1.0" in page.content.decode()
    assert Client().get("/skills/pdf-tools/files/scripts/missing.py").status_code == 404


def test_hostile_skill_md_is_sanitised(publish):
    publish("evil-skill", body=HOSTILE)
    response = Client().get("/skills/evil-skill")
    body = response.content.decode()
    section = body[body.index('class="skill-body"') : body.index("</section>", body.index('class="skill-body"'))]
    assert_safe(section)
    assert "&lt;script&gt;" in section  # shown as the text it is, never run
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and response["X-Frame-Options"] == "DENY"
    assert not re.search(r"<script(?![^>]*\bsrc=)", body)  # no inline script anywhere on the page


# Frontmatter values a hostile author may put where the pages show a link (YAML, as written).
HOSTILE_URLS = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    '"data:text/html,<script>alert(1)</script>"',
    "vbscript:msgbox(1)",
    '"java\\tscript:alert(1)"',
    '" javascript:alert(1)"',
    '"https:/\\\\evil.example"',
]
SAFE_HREF = re.compile(r"^(?:/|\?|#|https?://)")


def hrefs(html: str) -> list[str]:
    return re.findall(r"""\shref\s*=\s*["']?([^"'\s>]*)""", html, re.I)


@pytest.mark.parametrize("homepage", HOSTILE_URLS)
def test_hostile_frontmatter_links_are_shown_as_text_never_as_links(publish, homepage):
    publish(
        "evil-links",
        description="<script>alert('d')</script> Rotates PDFs.",
        extra=f'homepage: {homepage}\nlicense: "<b onmouseover=alert(1)>MIT</b>"',
        files={"notes.txt": "hi\n"},
    )
    for path in (
        "/",
        "/skills",
        "/skills?q=rotate",
        "/owners/alice",
        "/skills/evil-links",
        "/skills/evil-links/versions/1.0.0",
        "/skills/evil-links/versions/1.0.0/files/notes.txt",
    ):
        page = Client().get(path).content.decode()
        assert_safe(page)
        unsafe = [href for href in hrefs(page) if not SAFE_HREF.match(href)]
        assert unsafe == [], (path, unsafe)
    page = Client().get("/skills/evil-links").content.decode()
    assert re.search(r"<p>Homepage: [^<]+</p>", page)  # shown as the text it is
    assert "&lt;b onmouseover=alert(1)&gt;MIT&lt;/b&gt;" in page


def test_an_http_homepage_is_a_link(publish):
    publish("pdf-tools", extra="homepage: https://example.com/pdf-tools?a=1&b=2")
    page = Client().get("/skills/pdf-tools").content.decode()
    assert '<a href="https://example.com/pdf-tools?a=1&amp;b=2" rel="nofollow noopener noreferrer">' in page


def test_private_skill_is_404_to_others_and_visible_to_members(publish, signed_in):
    publish("secret-tool", visibility="private", files={"scripts/a.py": "print(1)\n"})
    for path in (
        "/skills/secret-tool",
        "/skills/secret-tool/versions/1.0.0",
        "/skills/secret-tool/badge.svg",
        "/skills/secret-tool/versions/1.0.0/files/scripts/a.py",
        "/skills/secret-tool/files/scripts/a.py",
    ):
        assert Client().get(path).status_code == 404, path
        assert signed_in.get(path).status_code == 200, path
    assert b"secret-tool" not in Client().get("/skills", {"q": "secret"}).content
    assert b"secret-tool" in signed_in.get("/owners/alice").content
    assert b"secret-tool" not in Client().get("/owners/alice").content


def test_badge_is_svg_with_version_and_verdict(publish):
    publish("pdf-tools")
    badge = Client().get("/skills/pdf-tools/badge.svg")
    assert badge["Content-Type"].startswith("image/svg+xml") and b"v1.0.0" in badge.content


def test_sign_in_and_out(alice):
    browser = Client()
    response = browser.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302 and "_auth_user_id" in browser.session
    assert browser.post("/accounts/logout/").status_code == 302 and "_auth_user_id" not in browser.session


def test_publish_form_redirects_to_the_skill(signed_in):  # refusals: test_publish_form.py
    good = signed_in.post("/publish", {"archive": upload(make_zip("good-skill"))})
    assert good.status_code == 302 and good["Location"] == "/skills/good-skill/versions/1.0.0"


def test_publish_needs_sign_in():
    assert Client().get("/publish").status_code == 302


def test_tokens_create_shows_the_secret_once_and_revoke(signed_in, alice):
    created = signed_in.post("/account/tokens", {"name": "laptop", "scope": "read"}).content.decode()
    secret = re.search(r'value="(sky_[^"]+)"', created).group(1)
    assert services.token_authenticate(secret=secret).user == alice
    listing = signed_in.get("/account/tokens").content.decode()
    assert secret not in listing and "laptop" in listing
    token_id = re.search(r'name="revoke" value="(\d+)"', listing).group(1)
    signed_in.post("/account/tokens", {"revoke": token_id})
    with pytest.raises(Unauthenticated):
        services.token_authenticate(secret=secret)


def test_csrf_is_required_on_forms(alice):
    browser = Client(enforce_csrf_checks=True)
    assert browser.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"}).status_code == 403


def test_every_corpus_skill_md_renders_safely(corpus_dir):
    from catalog.rendering import render_markdown
    from skillctl.format import parse_skill_md

    for path in sorted(corpus_dir.rglob("SKILL.md")):
        assert_safe(render_markdown(parse_skill_md(path.read_bytes()).body))


def test_owners_yank_deprecate_and_tag_from_the_version_page(publish, signed_in):
    publish("pdf-tools")
    page = signed_in.get("/skills/pdf-tools").content.decode()
    assert "Yank" in page and "Point dist-tag" in page
    manage = "/skills/pdf-tools/versions/1.0.0/manage"
    assert signed_in.post(manage, {"action": "yank", "reason": "broken"}).status_code == 302
    assert "yanked: broken" in signed_in.get("/skills/pdf-tools/versions/1.0.0").content.decode()
    signed_in.post(manage, {"action": "unyank"})
    signed_in.post(manage, {"action": "deprecate", "message": "use pdf-tools-2"})
    signed_in.post(manage, {"action": "tag", "tag": "stable"})
    page = signed_in.get("/skills/pdf-tools/versions/1.0.0").content.decode()
    assert "deprecated: use pdf-tools-2" in page and "stable→1.0.0" in page
    assert "Point dist-tag" not in Client().get("/skills/pdf-tools").content.decode()
    assert Client().post(manage, {"action": "yank"}).status_code == 302  # to sign in, nothing yanked


def test_manage_forms_take_the_reason_limit_from_the_format(publish, signed_in, monkeypatch):
    import catalog.views
    from skillctl.format.limits import MAX_REASON_CHARS

    publish("pdf-tools")
    page = signed_in.get("/skills/pdf-tools").content.decode()
    assert page.count(f'maxlength="{MAX_REASON_CHARS}"') == 2  # yank reason, deprecation message
    monkeypatch.setattr(catalog.views, "MAX_REASON_CHARS", 7)
    assert signed_in.get("/skills/pdf-tools").content.decode().count('maxlength="7"') == 2


def test_org_admins_manage_members(alice, signed_in):
    from registry.access import Actor

    services.user_create(username="bob")
    services.org_create(actor=Actor(alice), name="acme")
    assert signed_in.post("/owners/acme/members", {"username": "bob", "role": "publisher"}).status_code == 302
    page = signed_in.get("/owners/acme").content.decode()
    assert "bob" in page and "publisher" in page
    signed_in.post("/owners/acme/members", {"remove": "bob"})
    assert "Remove bob" not in signed_in.get("/owners/acme").content.decode()


def test_remote_images_in_a_skill_md_are_links_never_loaded(publish):
    """A remote image is a tracking pixel telling its author who viewed the skill (issue 34, 9)."""
    publish("pixel-skill", body="# Pixel\n\n![logo](https://tracker.invalid/p.gif?who=1)\n")
    response = Client().get("/skills/pixel-skill")
    body = response.content.decode()
    start = body.index('class="skill-body"')
    assert "<img" not in body[start : body.index("</section>", start)]
    assert 'href="https://tracker.invalid/p.gif?who=1"' in body and "[image: logo]" in body
    img_src = next(part for part in response["Content-Security-Policy"].split(";") if "img-src" in part)
    assert img_src.split() == ["img-src", "'self'", "data:"]


@pytest.mark.django_db
def test_signed_out_publish_redirects_to_sign_in_saying_why():
    browser = Client()
    response = browser.get("/publish", follow=True)
    assert response.redirect_chain[-1][0] == "/accounts/login/?next=/publish"
    assert '<li role="status">Sign in to publish a skill' in response.content.decode()


def test_home_has_one_search_box_and_most_downloaded_only_once_there_are_downloads(publish):
    from registry.models import Skill

    publish("pdf-tools")
    fresh = Client().get("/").content.decode()
    assert fresh.count('type="search"') == 1 and "Most downloaded" not in fresh
    Skill.objects.filter(name="pdf-tools").update(downloads=1)
    counted = Client().get("/").content.decode()
    assert "Most downloaded" in counted and "1 download ·" in counted
    assert Client().get("/skills").content.decode().count('type="search"') == 2  # header + filters


def test_every_page_links_the_svg_favicon(db):
    from django.contrib.staticfiles import finders

    page = Client().get("/").content.decode()
    assert '<link rel="icon" href="/static/catalog/favicon.svg" type="image/svg+xml">' in page
    assert finders.find("catalog/favicon.svg")


def test_the_token_list_shows_created_and_last_used(signed_in, alice):
    created = signed_in.post("/account/tokens", {"name": "laptop", "scope": "read"}).content.decode()
    listing = signed_in.get("/account/tokens").content.decode()
    assert '<td data-label="Last used">never</td>' in listing
    services.token_authenticate(secret=re.search(r'value="(sky_[^"]+)"', created).group(1))
    listing = signed_in.get("/account/tokens").content.decode()
    today = alice.date_joined.strftime("%Y-%m-%d")
    assert f'<td data-label="Created">{today}</td>' in listing
    assert re.search(rf'<td data-label="Last used">{today} \d\d:\d\d</td>', listing)


def test_the_checks_table_says_what_the_routing_keywords_are(publish):
    from tests.catalog.conftest import finish_checks

    publish("pdf-tools")
    finish_checks("pdf-tools", manifest={"source": "offline", "keywords": []})
    page = Client().get("/skills/pdf-tools").content.decode()
    assert "routing keywords" in page and "written offline from SKILL.md (no language model)" in page
    assert "manifest</th>" not in page
