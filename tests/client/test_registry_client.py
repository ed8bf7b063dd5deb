"""The registry client at the HTTP edge: error mapping, integrity, streaming, publish."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading

import httpx
import pytest

from skillctl.config import Registry
from skillctl.errors import ExitCode, IntegrityError, NetworkError, SkillctlError
from skillctl.registry_client import RegistryClient, RegistryError, digests_from_headers

ARCHIVE = b"PK\x03\x04 pretend zip bytes " * 1000
SHA = hashlib.sha256(ARCHIVE).hexdigest()


def client(handler, token: str | None = None) -> RegistryClient:
    reg = Registry("test", "https://reg.example/", token=token)
    return RegistryClient(reg, transport=httpx.MockTransport(handler))


def problem(status: int, detail: str, errors=()) -> httpx.Response:
    body = {"type": "about:blank", "title": detail, "status": status, "detail": detail, "errors": list(errors)}
    return httpx.Response(status, json=body, headers={"Content-Type": "application/problem+json"})


def test_skill_gets_api_v1_path_with_bearer_token():
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["url"] = str(request.url)
        seen["auth"] = request.headers.get("Authorization")
        return httpx.Response(200, json={"name": "hello", "versions": []})

    assert client(handler, token="sky_t").skill("hello")["name"] == "hello"
    assert seen == {"url": "https://reg.example/api/v1/skills/hello", "auth": "Bearer sky_t"}


def test_no_token_sends_no_authorization_header():
    def handler(request):
        assert "Authorization" not in request.headers
        return httpx.Response(200, json={})

    client(handler).me()


def test_search_passes_q_and_page_and_accepts_a_bare_list():
    def handler(request):
        assert request.url.params["q"] == "pdf tools" and request.url.params["page"] == "2"
        return httpx.Response(200, json=[{"name": "pdf"}])

    assert client(handler).search("pdf tools", page=2) == {"results": [{"name": "pdf"}], "count": 1}


@pytest.mark.parametrize(
    ("status", "code", "exit_code", "hint_word"),
    [
        (401, "registry.unauthorized", ExitCode.FAILURE, "login"),
        (403, "registry.forbidden", ExitCode.FAILURE, "login"),
        (404, "registry.not_found", ExitCode.FAILURE, "search"),
        (409, "registry.conflict", ExitCode.FAILURE, "version"),
        (413, "registry.too_large", ExitCode.FAILURE, "size limit"),
        (422, "registry.invalid", ExitCode.FAILURE, "validate"),
        (500, "registry.server_error", ExitCode.NETWORK, "retry"),
        (502, "registry.server_error", ExitCode.NETWORK, "retry"),
    ],
)
def test_error_statuses_map_to_codes_exit_codes_and_hints(status, code, exit_code, hint_word):
    with pytest.raises(SkillctlError) as info:
        client(lambda r: problem(status, "nope")).skill("hello")
    assert info.value.code == code
    assert info.value.exit_code == exit_code
    assert hint_word in info.value.hint.lower()


def test_problem_details_errors_are_shown_and_kept_for_json():
    errors = [
        {"code": "name.pattern", "message": "bad name", "path": "SKILL.md:name"},
        {"code": "description.missing", "message": "no description", "path": ""},
    ]
    with pytest.raises(RegistryError) as info:
        client(lambda r: problem(422, "invalid skill", errors)).skill("x")
    assert "name.pattern: bad name (SKILL.md:name)" in info.value.message
    assert "description.missing" in info.value.message
    assert info.value.to_dict()["errors"] == errors
    assert info.value.to_dict()["status"] == 422


def test_throttling_is_a_network_error_naming_retry_after():
    def handler(request):
        return httpx.Response(429, json={"detail": "slow down"}, headers={"Retry-After": "7"})

    with pytest.raises(NetworkError) as info:
        client(handler).skill("x")
    assert info.value.code == "registry.throttled" and "7 seconds" in info.value.hint


def test_connection_failure_is_network_error_exit_3_with_hint():
    def handler(request):
        raise httpx.ConnectError("connection refused")

    with pytest.raises(NetworkError) as info:
        client(handler).skill("x")
    assert info.value.exit_code == ExitCode.NETWORK
    assert "SKILLYARD_REGISTRY" in info.value.hint


@pytest.mark.parametrize(
    ("cause", "words"),
    [
        (ConnectionRefusedError(111, "Connection refused"), "connection refused"),
        (__import__("socket").gaierror(-2, "Name or service not known"), "name not resolved"),
        (__import__("ssl").SSLCertVerificationError(1, "certificate verify failed"), "TLS certificate not trusted"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection reset"),
    ],
)
def test_connection_failures_name_the_url_and_the_cause_in_words(cause, words):
    def handler(request):
        raise httpx.ConnectError("[Errno] low-level") from cause

    with pytest.raises(NetworkError) as info:
        client(handler).skill("x")
    assert info.value.code == "network.unreachable" and words in info.value.message
    assert "https://reg.example" in info.value.message and "ConnectError" not in info.value.message


def test_a_refused_loopback_connection_says_connection_refused():
    import socket

    from skillctl.config import Registry

    with socket.socket() as sock:  # bound, never listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        with pytest.raises(NetworkError) as info, RegistryClient(Registry("env", f"http://127.0.0.1:{port}", "")) as rc:
            rc.skill("x")
    assert info.value.message.startswith(f"cannot reach the registry at http://127.0.0.1:{port}: connection refused")


def test_timeout_is_network_error():
    def handler(request):
        raise httpx.ReadTimeout("slow")

    with pytest.raises(NetworkError) as info:
        client(handler).me()
    assert info.value.code == "network.timeout"
    assert "timed out" in info.value.message and "http" in info.value.message  # the URL, in words


def test_non_json_answer_is_network_error():
    with pytest.raises(NetworkError) as info:
        client(lambda r: httpx.Response(200, text="<html>")).skill("x")
    assert info.value.code == "registry.invalid_response"


def test_token_never_appears_in_errors():
    def handler(request):
        raise httpx.ConnectError(f"refused {request.headers}")

    with pytest.raises(NetworkError) as info:
        client(handler, token="sky_supersecret").me()
    assert "sky_supersecret" not in info.value.message + str(info.value.hint)


# --- download ----------------------------------------------------------------------------


def archive_response(headers: dict, body: bytes = ARCHIVE) -> httpx.Response:
    return httpx.Response(200, content=body, headers=headers)


SHA_B64 = base64.b64encode(bytes.fromhex(SHA)).decode()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Checksum-Sha256": SHA.upper()},
        {"Repr-Digest": f"sha-512=:AAAA:, sha-256=:{SHA_B64}:"},
        {"Digest": f"SHA-256={SHA_B64}"},
        {},
    ],
)
def test_download_accepts_every_digest_header_form(tmp_path, headers):
    def handler(request):
        assert request.url.path == "/api/v1/skills/hello/versions/1.0.0/download"
        return archive_response(headers)

    dest = tmp_path / "cache" / "hello.zip"
    assert client(handler).download("hello", "1.0.0", dest, expected_sha256=SHA) == SHA
    assert dest.read_bytes() == ARCHIVE
    assert [p.name for p in dest.parent.iterdir()] == ["hello.zip"]


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Checksum-Sha256": "0" * 64},
        {"Repr-Digest": "sha-256=:" + base64.b64encode(b"x" * 32).decode() + ":"},
        {"Digest": "sha-256=" + base64.b64encode(b"x" * 32).decode()},
    ],
)
def test_download_header_mismatch_is_integrity_error_and_leaves_nothing(tmp_path, headers):
    dest = tmp_path / "hello.zip"
    with pytest.raises(IntegrityError) as info:
        client(lambda r: archive_response(headers)).download("hello", "1.0.0", dest, expected_sha256=None)
    assert info.value.exit_code == ExitCode.INTEGRITY
    assert info.value.hint
    assert list(tmp_path.iterdir()) == []


def test_download_expected_mismatch_is_integrity_error_and_leaves_nothing(tmp_path):
    dest = tmp_path / "hello.zip"
    handler = lambda r: archive_response({"X-Checksum-Sha256": SHA})  # noqa: E731
    with pytest.raises(IntegrityError):
        client(handler).download("hello", "1.0.0", dest, expected_sha256="ab" * 32)
    assert list(tmp_path.iterdir()) == []


def test_download_404_removes_the_partial_file(tmp_path):
    with pytest.raises(RegistryError):
        client(lambda r: problem(404, "no such version")).download(
            "hello", "9.9.9", tmp_path / "x.zip", expected_sha256=None
        )
    assert list(tmp_path.iterdir()) == []


def test_download_refuses_an_archive_over_the_limit_before_reading_it(tmp_path, monkeypatch):
    from skillctl import registry_client

    monkeypatch.setattr(registry_client, "DEFAULT_LIMITS", type("L", (), {"max_archive_bytes": 100}))
    with pytest.raises(SkillctlError) as info:
        client(lambda r: archive_response({})).download("h", "1.0.0", tmp_path / "h.zip", expected_sha256=None)
    assert info.value.code == "download.too_large"
    assert list(tmp_path.iterdir()) == []


def test_digests_from_headers_parses_all_forms():
    headers = httpx.Headers({"X-Checksum-Sha256": SHA, "Repr-Digest": f"sha-256=:{SHA_B64}:"})
    assert digests_from_headers(headers) == {"X-Checksum-Sha256": SHA, "Repr-Digest": SHA}


# --- a real local HTTP server: streaming in chunks, connection cut mid-body ----------------


class _Handler(http.server.BaseHTTPRequestHandler):
    cut_after: int | None = None

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", str(len(ARCHIVE)))
        self.send_header("X-Checksum-Sha256", SHA)
        self.end_headers()
        body = ARCHIVE if self.cut_after is None else ARCHIVE[: self.cut_after]
        for i in range(0, len(body), 4096):
            self.wfile.write(body[i : i + 4096])
        if self.cut_after is not None:
            self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    _Handler.cut_after = None


def test_download_streams_from_a_real_server(server, tmp_path):
    reg = Registry("local", f"http://127.0.0.1:{server.server_address[1]}")
    with RegistryClient(reg) as rc:
        assert rc.download("hello", "1.0.0", tmp_path / "a.zip", expected_sha256=SHA) == SHA
    assert (tmp_path / "a.zip").read_bytes() == ARCHIVE


def test_download_cut_mid_body_is_network_error_and_leaves_nothing(server, tmp_path):
    _Handler.cut_after = 5000
    reg = Registry("local", f"http://127.0.0.1:{server.server_address[1]}")
    with pytest.raises(NetworkError):
        RegistryClient(reg).download("hello", "1.0.0", tmp_path / "a.zip", expected_sha256=None)
    assert list(tmp_path.iterdir()) == []


def test_progress_bar_draws_on_a_terminal_and_not_otherwise(tmp_path, monkeypatch, capsys):
    import io

    from skillctl.reporting import ConsoleReporter

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    handler = lambda r: archive_response({"Content-Length": str(len(ARCHIVE))})  # noqa: E731
    client(handler).download("hello", "1.0.0", tmp_path / "a.zip", expected_sha256=SHA, reporter=ConsoleReporter())
    assert "hello 1.0.0" in tty.getvalue()
    tty.truncate(0)
    # Library use (no reporter handed in) draws nothing, terminal or not.
    client(handler).download("hello", "1.0.0", tmp_path / "b.zip", expected_sha256=SHA)
    assert tty.getvalue().strip("\x00") == ""


# --- publish -----------------------------------------------------------------------------


def test_publish_sends_multipart_archive_and_fields(tmp_path):
    archive = tmp_path / "hello-1.0.0.zip"
    archive.write_bytes(ARCHIVE)
    seen = {}

    def handler(request):
        seen["method"] = request.method
        seen["path"] = request.url.path
        seen["body"] = request.read()
        seen["type"] = request.headers["Content-Type"]
        return httpx.Response(201, json={"name": "hello", "version": "1.0.0", "sha256": SHA})

    result = client(handler, token="sky_p").publish("hello", archive, version="1.0.0", visibility="private")
    assert result["created"] is True
    assert seen["method"] == "POST" and seen["path"] == "/api/v1/skills/hello/versions"
    assert seen["type"].startswith("multipart/form-data")
    assert b'name="archive"; filename="hello-1.0.0.zip"' in seen["body"]
    assert ARCHIVE in seen["body"]
    assert b'name="visibility"' in seen["body"] and b"private" in seen["body"]
    assert b'name="owner"' not in seen["body"]


def test_publish_identical_bytes_again_is_not_created(tmp_path):
    archive = tmp_path / "a.zip"
    archive.write_bytes(ARCHIVE)
    result = client(lambda r: httpx.Response(200, json={"version": "1.0.0"})).publish("a", archive)
    assert result["created"] is False


def test_audit_asks_at_most_500_skills_a_request_and_keeps_the_earliest_as_of():
    bodies = []

    def handler(request):
        assert (request.method, request.url.path) == ("POST", "/api/v1/audit")
        asked = json.loads(request.content)["skills"]
        bodies.append(asked)
        stamp = f"2026-11-28T10:00:0{2 - len(bodies)}Z"
        return httpx.Response(200, json={"as_of": stamp, "results": [{**s, "found": True} for s in asked]})

    pairs = [(f"s{i}", "1.0.0") for i in range(501)] + [("s0", "1.0.0")]  # a repeat is asked once
    answer = client(handler).audit(pairs)
    assert [len(b) for b in bodies] == [500, 1]
    assert len(answer["results"]) == 501 and answer["as_of"] == "2026-11-28T10:00:00Z"


def test_audit_on_an_older_registry_is_registry_not_found():
    with pytest.raises(RegistryError) as info:
        client(lambda r: problem(404, "Not Found")).audit([("hello", "1.0.0")])
    assert (info.value.status, info.value.code) == (404, "registry.not_found")


def test_advisory_create_sends_only_what_was_given_and_withdraw_posts_to_the_id():
    seen = []

    def handler(request):
        seen.append((request.method, request.url.raw_path.decode(), json.loads(request.content or b"null")))
        return httpx.Response(201 if "withdraw" not in request.url.path else 200, json={"id": "SKY-2026-0001"})

    c = client(handler, token="sky_t")
    c.advisory_create("pdf tools", summary="bad", severity="low", affected="<1.2")
    c.advisory_create("pdf", summary="bad", severity="low", affected="1.0.0", details="d", aliases=["CVE-1"])
    c.advisory_withdraw("SKY-2026-0001")
    assert seen == [
        ("POST", "/api/v1/skills/pdf%20tools/advisories", {"summary": "bad", "severity": "low", "affected": "<1.2"}),
        (
            "POST",
            "/api/v1/skills/pdf/advisories",
            {"summary": "bad", "severity": "low", "affected": "1.0.0", "details": "d", "aliases": ["CVE-1"]},
        ),
        ("POST", "/api/v1/advisories/SKY-2026-0001/withdraw", None),
    ]


def test_download_resolved_reads_deprecation_and_test_results_from_headers(tmp_path):
    headers = {
        "X-Checksum-Sha256": SHA,
        "X-Skill-Version": "1.2.0",
        "X-Skill-Deprecated": "use 2.x",
        "X-Skill-Test-Result": "failed",
        "X-Skill-Test-Summary": "FAILED (failures=1)",
    }
    got = client(lambda r: archive_response(headers)).download_resolved("hello", "", tmp_path / "a.zip")
    assert (got.deprecated, got.test_result, got.test_summary) == ("use 2.x", "failed", "FAILED (failures=1)")
    older = client(lambda r: archive_response({"X-Checksum-Sha256": SHA, "X-Skill-Version": "1.2.0"}))
    got = older.download_resolved("hello", "", tmp_path / "b.zip")
    assert (got.deprecated, got.test_result, got.test_summary) == ("", None, "")
