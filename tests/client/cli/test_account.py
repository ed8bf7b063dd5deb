"""`skillctl login/logout/whoami/config` through the real entry point, fake HTTP edge."""

from __future__ import annotations

import io
import json
import stat

import httpx
import pytest

from skillctl.cli.main import main
from skillctl.registry_client import RegistryClient

GOOD = "sky_good_token_123"


@pytest.fixture
def registry(monkeypatch):
    """A fake registry: /me answers 200 for GOOD, 401 otherwise; records requests."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/api/v1/me":
            if request.headers.get("Authorization") == f"Bearer {GOOD}":
                return httpx.Response(200, json={"username": "ann", "orgs": ["acme"]})
            return httpx.Response(
                401,
                json={
                    "title": "Unauthorized",
                    "detail": "invalid token",
                    "errors": [{"code": "token.invalid", "message": "invalid token", "path": ""}],
                },
            )
        return httpx.Response(404, json={"detail": "not found"})

    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(handler))
    return seen


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_login_with_token_verifies_it_and_stores_it_0600(capsys, registry, home):
    code, out, err = run(capsys, "login", "--token", GOOD)
    assert code == 0
    assert "as ann" in err
    creds = home / "config" / "credentials.toml"
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    assert GOOD in creds.read_text()
    assert GOOD not in out + err
    assert registry[0].url.path == "/api/v1/me"


def test_login_reads_the_token_from_stdin_when_not_a_terminal(capsys, registry, monkeypatch):
    code, out, err = run(capsys, "login", "--json", stdin=GOOD + "\n", monkeypatch=monkeypatch)
    assert code == 0
    assert json.loads(out)["user"]["username"] == "ann"
    assert GOOD not in out + err


def test_login_with_a_refused_token_stores_nothing(capsys, registry, home):
    code, out, err = run(capsys, "login", "--token", "sky_bad")
    assert code == 1
    assert "refused the token" in err and "hint:" in err and "Nothing was stored" in err
    assert "token.invalid" in err
    assert not (home / "config" / "credentials.toml").exists()
    assert "sky_bad" not in out + err


def test_login_with_an_empty_token_is_a_usage_error(capsys, registry, monkeypatch):
    code, _, err = run(capsys, "login", stdin="\n", monkeypatch=monkeypatch)
    assert code == 2 and "hint:" in err


def test_login_to_an_unknown_registry_is_a_usage_error(capsys, registry):
    code, _, err = run(capsys, "login", "--registry", "nope", "--token", GOOD)
    assert code == 2 and "add-registry" in err


def test_login_to_an_unnamed_env_registry_asks_to_name_it(capsys, registry, monkeypatch):
    monkeypatch.setenv("SKILLYARD_REGISTRY", "https://ci.example")
    code, _, err = run(capsys, "login", "--token", GOOD)
    assert code == 2 and "config add-registry NAME https://ci.example" in err


def test_whoami_after_login_and_logout_after(capsys, registry):
    assert run(capsys, "login", "--token", GOOD)[0] == 0
    code, out, _ = run(capsys, "whoami")
    assert code == 0 and out.startswith("ann on local")
    code, out, _ = run(capsys, "whoami", "--json")
    assert json.loads(out)["user"]["username"] == "ann"
    code, out, err = run(capsys, "logout")
    assert code == 0 and "Logged out of local" in err
    code, _, err = run(capsys, "whoami")
    assert code == 1 and "not logged in" in err and "skillctl login" in err


def test_whoami_uses_skillyard_token_from_the_environment(capsys, registry, monkeypatch):
    monkeypatch.setenv("SKILLYARD_TOKEN", GOOD)
    code, out, err = run(capsys, "whoami")
    assert code == 0 and "ann" in out
    assert GOOD not in out + err


def test_logout_json_and_env_token_warning(capsys, registry, monkeypatch):
    monkeypatch.setenv("SKILLYARD_TOKEN", GOOD)
    code, out, err = run(capsys, "logout", "--json")
    assert code == 0 and json.loads(out) == {"registry": "local", "removed": False}
    assert "SKILLYARD_TOKEN is set" in err


def test_whoami_json_error_is_one_json_line_with_hint(capsys, registry):
    code, out, _ = run(capsys, "whoami", "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["error"] == "auth.not_logged_in" and doc["hint"] and doc["exit_code"] == 1


def test_config_add_registry_set_get_and_show_masks_secrets(capsys, registry, monkeypatch):
    assert run(capsys, "config", "add-registry", "work", "https://w.example", "--default")[0] == 0
    assert run(capsys, "login", "--registry", "work", "--token", GOOD)[0] == 0
    assert run(capsys, "config", "set", "skills.hello.apiKey", "k-s3cret")[0] == 0
    assert run(capsys, "config", "set", "skills.hello.env.REGION", "eu-secretish")[0] == 0
    assert run(capsys, "config", "set", "browser.enabled", "true")[0] == 0
    monkeypatch.setenv("SKILLYARD_TOKEN", "sky_env_tok")
    outputs = []
    for argv in (
        ["config"],
        ["config", "--json"],
        ["config", "get", "skills.hello"],
        ["config", "get", "skills.hello.apiKey", "--json"],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 0
        outputs.append(out + err)
    everything = "\n".join(outputs)
    for secret in (GOOD, "k-s3cret", "eu-secretish", "sky_env_tok"):
        assert secret not in everything
    shown = json.loads(outputs[1].split("config: ")[0])
    assert shown["default_registry"] == "work"
    assert [r["token"] for r in shown["registries"] if r["name"] == "work"] == ["sky_****"]
    assert shown["values"]["browser"]["enabled"] is True
    code, out, _ = run(capsys, "config", "get", "browser.enabled")
    assert (code, out.strip()) == (0, "true")


def test_config_set_output_masks_secret_values(capsys, registry):
    code, out, err = run(capsys, "config", "set", "skills.x.apiKey", "k-hidden", "--json")
    assert code == 0 and "k-hidden" not in out + err


def test_config_set_token_is_refused_with_login_hint(capsys, registry):
    code, _, err = run(capsys, "config", "set", "registries.local.token", "sky_x")
    assert code == 2 and "skillctl login" in err


def test_config_set_default_registry_must_exist(capsys, registry):
    code, _, err = run(capsys, "config", "set", "default_registry", "ghost")
    assert code == 2 and "add-registry" in err


def test_config_get_missing_key_exits_1_with_hint(capsys, registry):
    code, _, err = run(capsys, "config", "get", "no.such.key")
    assert code == 1 and "hint:" in err


def test_registry_option_selects_a_named_registry(capsys, registry, monkeypatch):
    run(capsys, "config", "add-registry", "work", "https://w.example")
    run(capsys, "login", "--registry", "work", "--token", GOOD)
    run(capsys, "whoami", "--registry", "work")
    assert str(registry[-1].url) == "https://w.example/api/v1/me"
