"""Client configuration: registries, credentials 0600, environment overrides, dotted keys."""

from __future__ import annotations

import os
import stat

import pytest

from skillctl import config as cfg
from skillctl.errors import ExitCode, SkillctlError, UsageError


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLYARD_REGISTRY", raising=False)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    return tmp_path / "home"


def test_empty_config_has_the_local_default_registry():
    config = cfg.load_config()
    reg = config.registry()
    assert reg.name == cfg.DEFAULT_REGISTRY_NAME
    assert reg.url == cfg.DEFAULT_REGISTRY_URL
    assert reg.token is None


def test_several_named_registries_and_a_default():
    cfg.add_registry("public", "https://public.example/")
    cfg.add_registry("work", "https://skills.corp.example/api/v1", default=True)
    config = cfg.load_config()
    assert config.default_registry == "work"
    assert config.registry().url == "https://skills.corp.example"
    assert config.registry("public").url == "https://public.example"


def test_unknown_registry_is_a_usage_error_with_hint():
    with pytest.raises(UsageError) as info:
        cfg.load_config().registry("nope")
    assert info.value.code == "config.unknown_registry"
    assert info.value.exit_code == ExitCode.USAGE
    assert "add-registry" in info.value.hint


def test_token_is_stored_in_credentials_file_with_mode_0600(home):
    cfg.add_registry("work", "https://w.example")
    cfg.save_token("work", "sky_secret123")
    creds = home / "config" / "credentials.toml"
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    assert "sky_secret123" not in (home / "config" / "config.toml").read_text()
    assert cfg.load_config().registry("work").token == "sky_secret123"


def test_credentials_file_is_never_created_readable_by_others(home, monkeypatch):
    # Even with a permissive umask, the temp file is 0600 before the first byte is written.
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(stat.S_IMODE(os.stat(src).st_mode))
        return real_replace(src, dst)

    monkeypatch.setattr(cfg.os, "replace", spy)
    old = os.umask(0)
    try:
        cfg.save_token("local", "sky_x")
    finally:
        os.umask(old)
    assert seen == [0o600]
    assert stat.S_IMODE((home / "config" / "credentials.toml").stat().st_mode) == 0o600


def test_delete_token_forgets_it():
    cfg.save_token("local", "sky_x")
    assert cfg.delete_token("local") is True
    assert cfg.load_config().registry().token is None
    assert cfg.delete_token("local") is False


def test_env_registry_replaces_the_default_and_env_token_goes_with_it(monkeypatch):
    cfg.add_registry("work", "https://w.example", default=True)
    cfg.save_token("work", "sky_work")
    monkeypatch.setenv("SKILLYARD_REGISTRY", "https://ci.example/")
    monkeypatch.setenv("SKILLYARD_TOKEN", "sky_ci")
    reg = cfg.load_config().registry()
    assert (reg.url, reg.token) == ("https://ci.example", "sky_ci")


def test_explicit_registry_wins_over_env_and_never_gets_the_env_token(monkeypatch):
    cfg.add_registry("public", "https://p.example")
    cfg.add_registry("work", "https://w.example", default=True)
    monkeypatch.setenv("SKILLYARD_REGISTRY", "https://ci.example")
    monkeypatch.setenv("SKILLYARD_TOKEN", "sky_ci")
    reg = cfg.load_config().registry("public")
    assert (reg.url, reg.token) == ("https://p.example", None)


def test_env_token_applies_to_the_default_registry_without_env_url(monkeypatch):
    monkeypatch.setenv("SKILLYARD_TOKEN", "sky_ci")
    assert cfg.load_config().registry().token == "sky_ci"


def test_env_registry_matching_a_configured_one_keeps_its_name_and_token(monkeypatch):
    cfg.add_registry("work", "https://w.example")
    cfg.save_token("work", "sky_work")
    monkeypatch.setenv("SKILLYARD_REGISTRY", "https://w.example/api/v1")
    reg = cfg.load_config().registry()
    assert (reg.name, reg.token) == ("work", "sky_work")


def test_registry_for_url_maps_a_lock_url_back_to_credentials():
    cfg.add_registry("work", "https://w.example")
    cfg.save_token("work", "sky_work")
    config = cfg.load_config()
    assert config.registry_for_url("https://w.example/").token == "sky_work"
    assert config.registry_for_url("https://other.example").token is None


def test_set_and_get_dotted_values_parse_toml_literals():
    assert cfg.set_value("skills.hello.enabled", "false") is False
    assert cfg.set_value("browser.timeout", "30") == 30
    assert cfg.set_value("skills.hello.env.API_URL", "https://x.example") == "https://x.example"
    config = cfg.load_config()
    assert config.skills["hello"]["enabled"] is False
    assert config.get("browser.timeout") == 30
    assert config.get("missing.key", "d") == "d"


def test_set_and_add_registry_keep_the_comments_of_config_toml():
    path = cfg.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# team settings: see the wiki\n[skills.hello]\nenabled = true  # needed by CI\n")
    cfg.set_value("skills.hello.env.API_URL", "https://x.example")
    cfg.add_registry("work", "https://skills.example.com")
    text = path.read_text()
    assert text.startswith("# team settings: see the wiki\n")
    assert "enabled = true  # needed by CI" in text
    config = cfg.load_config()
    assert config.skills["hello"]["env"]["API_URL"] == "https://x.example"
    assert config.registry("work").url == "https://skills.example.com"


def test_set_refuses_tokens_in_config_toml():
    with pytest.raises(UsageError) as info:
        cfg.set_value("registries.local.token", "sky_x")
    assert "login" in info.value.hint


def test_set_through_a_scalar_is_a_usage_error():
    cfg.set_value("a", "1")
    with pytest.raises(UsageError):
        cfg.set_value("a.b", "2")


def test_add_registry_validates_the_url():
    with pytest.raises(UsageError):
        cfg.add_registry("x", "ftp://nope")


def test_invalid_toml_is_an_error_with_hint(home):
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text("this is = = not toml")
    with pytest.raises(SkillctlError) as info:
        cfg.load_config()
    assert info.value.code == "config.invalid"
    assert info.value.hint


def test_masked_hides_tokens_api_keys_and_env_values():
    values = {
        "registries": {"w": {"url": "u", "token": "sky_abc"}},
        "skills": {"s": {"apiKey": "k-123", "env": {"URL": "plain"}, "enabled": True}},
    }
    shown = repr(cfg.masked(values))
    for secret in ("sky_abc", "k-123", "plain"):
        assert secret not in shown
    assert cfg.masked(values)["skills"]["s"]["enabled"] is True
    assert cfg.masked(values)["registries"]["w"]["url"] == "u"
