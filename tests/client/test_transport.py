"""The client against hostile HTTP servers on loopback (issue: tokens over plain http, redirects
to anywhere, endless downloads kept in the cache, a 300 MB JSON held in memory, git options).
No request ever leaves loopback: refusals are proven to happen before any connection."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import httpx
import pytest

from skillctl.config import Registry
from skillctl.errors import NetworkError, SkillctlError, UsageError
from skillctl.installer import cache
from skillctl.installer.arguments import parse_source
from skillctl.installer.fetchers import fetch_git, fetch_url
from skillctl.registry_client import RegistryClient
from skillctl.transport import url_problem

OUTSIDE = "198.51.100.7"  # TEST-NET-2: never contacted, only named in a Location header


class Recording(httpx.HTTPTransport):
    """The real transport, remembering every URL it was asked to connect to."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_request(self, request):
        self.urls.append(str(request.url))
        return super().handle_request(request)


@pytest.fixture
def hostile():
    """A loopback server whose answers the test scripts: ``hostile.routes[path] = fn(handler)``."""
    routes: dict = {}
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
            route = routes.get(self.path.split("?")[0])
            if route is None:
                self.send_response(404)
                self.end_headers()
                return
            try:
                route(self)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.routes, server.seen = routes, seen
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def redirect_to(location: str):
    def answer(handler):
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def endless(chunk: bytes, content_type: str = "application/octet-stream", prefix: bytes = b""):
    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.end_headers()
        handler.wfile.write(prefix)
        while True:
            handler.wfile.write(chunk)

    return answer


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://skills.example.com", True),
        ("http://127.0.0.1:8000", True),
        ("http://localhost", True),
        ("http://[::1]:9", True),
        ("http://127.8.9.10", True),
        ("http://skills.example.com", False),
        ("http://10.0.0.5", False),
        ("ftp://skills.example.com", False),
        ("file:///etc/passwd", False),
    ],
)
def test_the_rule_https_or_loopback(url, ok):
    assert (url_problem(url) is None) is ok


def test_a_token_is_never_attached_for_plain_http_to_another_host():
    with pytest.raises(SkillctlError) as err:
        RegistryClient(Registry("work", "http://skills.example.com", token="sky_secret"))
    assert err.value.code == "transport.insecure_token"


def test_add_registry_and_login_refuse_plain_http_before_any_token_is_asked(tmp_path, monkeypatch):
    env = {"SKILLYARD_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}

    def skillctl(*args, stdin=""):
        return subprocess.run(
            [sys.executable, "-m", "skillctl", *args],
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": ":".join(sys.path)},
            input=stdin,
            timeout=60,
        )

    added = skillctl("config", "add-registry", "work", "http://skills.example.com")
    assert added.returncode == 2 and "https" in added.stderr
    config = tmp_path / "home" / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[registries.work]\nurl = "http://skills.example.com"\n')  # written by hand
    login = skillctl("login", "--registry", "work", stdin="sky_secret\n")
    assert login.returncode == 2 and "https" in login.stderr


def test_a_redirect_to_plain_http_elsewhere_is_refused_before_connecting(hostile):
    hostile.routes["/api/v1/skills/x"] = redirect_to(f"http://{OUTSIDE}/steal")
    recording = Recording()
    reg = RegistryClient(Registry("local", hostile.url, token="sky_secret"), transport=recording)
    with pytest.raises(SkillctlError) as err:
        reg.skill("x")
    assert err.value.code == "transport.insecure_url"
    assert not any(OUTSIDE in url for url in recording.urls)


def test_a_redirect_to_another_origin_does_not_carry_the_token(hostile):
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), hostile.RequestHandlerClass)  # same routes
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        hostile.routes["/api/v1/skills/x"] = redirect_to(f"http://127.0.0.1:{other.server_address[1]}/api/v1/skills/x2")
        hostile.routes["/api/v1/skills/x2"] = lambda h: (
            h.send_response(200),
            h.send_header("Content-Length", "2"),
            h.end_headers(),
            h.wfile.write(b"{}"),
        )
        RegistryClient(Registry("local", hostile.url, token="sky_secret")).skill("x")
        assert [s["auth"] for s in hostile.seen] == ["Bearer sky_secret", None]  # the second hop: no token
    finally:
        other.shutdown()
        other.server_close()


def test_an_endless_archive_download_stops_at_the_limit_and_leaves_nothing(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    hostile.routes["/big.zip"] = endless(b"\0" * 65536)
    with pytest.raises(SkillctlError) as err:
        fetch_url(f"{hostile.url}/big.zip")
    assert err.value.code == "download.too_large"
    assert not [p for p in cache.archives_dir().rglob("*") if p.is_file()]


def test_an_archive_url_redirecting_to_plain_http_elsewhere_is_refused(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    hostile.routes["/skill.zip"] = redirect_to(f"http://{OUTSIDE}/skill.zip")
    with pytest.raises(SkillctlError) as err:
        fetch_url(f"{hostile.url}/skill.zip")
    assert err.value.code == "transport.insecure_url"


def test_a_huge_json_answer_is_refused_without_holding_it(hostile):
    hostile.routes["/api/v1/skills/x"] = endless(b"x" * 65536, "application/json", prefix=b'{"name": "')
    tracemalloc.start()
    try:
        with pytest.raises(NetworkError) as err:
            RegistryClient(Registry("local", hostile.url)).skill("x")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.value.code == "registry.response_too_large"
    assert peak < 64 * 1024 * 1024  # the cap is 16 MiB; 300 MB once took 650 MB


def test_a_declared_huge_json_is_refused_before_reading(hostile):
    def declared(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(300 * 1024 * 1024))
        handler.end_headers()

    hostile.routes["/api/v1/skills/x"] = declared
    with pytest.raises(NetworkError) as err:
        RegistryClient(Registry("local", hostile.url)).skill("x")
    assert err.value.code == "registry.response_too_large"


@pytest.mark.parametrize("arg", ["git+--upload-pack=touch {marker}#main", "git+file:///x.git#--output={marker}"])
def test_git_arguments_never_become_options(arg, tmp_path):
    marker = tmp_path / "pwned"
    source = parse_source(arg.format(marker=marker))
    with pytest.raises(UsageError) as err:
        fetch_git(source.location, source.ref, source.subdir)
    assert err.value.code == "source.invalid" and not marker.exists()


def test_git_clone_gets_double_dash_before_the_url(tmp_path, monkeypatch):
    calls = []
    import skillctl.installer.fetchers as sources

    def record(*args, what=""):
        calls.append(args)
        raise NetworkError("stop here", code="source.git_failed")

    monkeypatch.setattr(sources, "_git", record)
    with pytest.raises(NetworkError):
        fetch_git("file:///srv/repo.git", "main", "")
    assert calls[0][:4] == ("clone", "--quiet", "--no-checkout", "--") and calls[0][4] == "file:///srv/repo.git"
    assert Path(calls[0][5]).name == "repo"


CLIENT = Path(__file__).resolve().parents[2] / "client"


def _fresh_python(code: str, *, path: list[Path] = ()) -> str:
    """Run ``code`` in a new interpreter with the client (and ``path``) first on sys.path."""
    env_path = ":".join(str(p) for p in [*path, CLIENT])
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_httpx_is_imported_without_its_command_line_tool():
    # httpx's CLI (click, rich, pygments) is ~50 ms of start-up skillctl never uses.
    code = (
        "import sys, skillctl.transport as t; "
        "print(sorted(m for m in ('httpx._main', 'rich', 'pygments') if m in sys.modules)); "
        "import httpx._main; print(t.httpx.Client is httpx.Client)"
    )
    # ...and the block is lifted: importing the CLI later still works.
    assert _fresh_python(code).splitlines() == ["[]", "True"]


def test_an_httpx_that_needs_its_command_line_tool_still_imports(tmp_path):
    # A future httpx importing _main without try/except must not break skillctl.
    fake = tmp_path / "httpx"
    fake.mkdir()
    (fake / "__init__.py").write_text("from ._main import main\nClient = object\n")
    (fake / "_main.py").write_text("def main():\n    pass\n")
    code = "import skillctl.transport as t; print(t.httpx.main.__module__)"
    assert _fresh_python(code, path=[tmp_path]) == "httpx._main"
