"""Each field of DESIGN section 3 into the normalised manifest, with its shorthands and errors."""

from __future__ import annotations

import pytest
import yaml

from skillctl.format import normalise
from skillctl.format.extensions import normalise_version
from skillctl.format.manifest import ConditionalNext, InstallSpec, McpSpec, RuntimeSpec, VarSpec
from skillctl.format.parse import parse_skill_md

BASE = {"name": "demo", "description": "Does a thing. Then more.", "license": "MIT"}


def manifest_of(extra: dict | None = None, **kw):
    manifest, findings = normalise({**BASE, **(extra or {})}, **kw)
    return manifest, {f.code for f in findings}, {f.code for f in findings if f.is_error}


def m(extra: dict):
    return manifest_of(extra)[0]


# --- specification fields ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, code",
    [("", "name.missing"), (None, "name.missing"), ("a" * 65, "name.too_long"), ("Demo", "name.pattern"),
     ("de--mo", "name.pattern"), ("-demo", "name.pattern"), ("de_mo", "name.pattern"), (12, "field.type")],
)  # fmt: skip
def test_bad_names_are_errors(name, code):
    assert code in manifest_of({"name": name})[2]


def test_missing_name_is_an_error():
    _, _, errors = manifest_of()
    manifest, findings = normalise({"description": "d"})
    assert "name.missing" in {f.code for f in findings if f.is_error}


@pytest.mark.parametrize(
    "desc, code", [("", "description.missing"), ("x" * 1025, "description.too_long"), (["a"], "field.type")]
)
def test_bad_descriptions_are_errors(desc, code):
    assert code in manifest_of({"description": desc})[2]


def test_compatibility_limit_and_type():
    assert "compatibility.too_long" in manifest_of({"compatibility": "x" * 501})[2]
    assert "field.type" in manifest_of({"compatibility": ["a"]})[2]
    assert m({"compatibility": "Python 3.11"}).compatibility == "Python 3.11"


def test_no_license_is_a_warning():
    manifest, findings = normalise({"name": "demo", "description": "d"})
    assert {f.code for f in findings} == {"license.missing"} and not any(f.is_error for f in findings)


def test_allowed_tools_string_and_list():
    assert m({"allowed-tools": "Read Bash(git add:*) Write"}).allowed_tools == ["Read", "Bash(git add:*)", "Write"]
    assert m({"allowed-tools": ["Read", "Grep"]}).allowed_tools == ["Read", "Grep"]


def test_metadata_non_string_values_warn():
    manifest, all_codes, errors = manifest_of({"metadata": {"a": "b", "n": 1}})
    assert manifest.metadata == {"a": "b", "n": 1}
    assert "metadata.value_type" in all_codes and not errors
    assert "field.type" in manifest_of({"metadata": "x"})[2]


def test_name_folder_mismatch_is_a_warning():
    _, all_codes, errors = manifest_of(folder_name="other")
    assert "name.folder_mismatch" in all_codes and not errors


# --- version ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, expected, normalised",
    [("1.2.3", "1.2.3", False), ("0.1.0-rc.1", "0.1.0-rc.1", False), ("1.0.0+build.5", "1.0.0+build.5", False),
     ("v1.2.3", "1.2.3", True), ("1.0", "1.0.0", True), ("2", "2.0.0", True), ("1.0.0-foo", None, False),
     ("1.2.3.4", None, False), ("latest", None, False), ("01.2.3", None, False)],
)  # fmt: skip
def test_normalise_version(raw, expected, normalised):
    assert normalise_version(raw) == (expected, normalised if expected else False)


def test_version_field():
    assert m({"version": "1.2.3"}).version == "1.2.3"
    manifest, all_codes, _ = manifest_of({"version": 1.0})
    assert manifest.version == "1.0.0" and "version.normalised" in all_codes
    manifest, _, errors = manifest_of({"version": "banana"})
    assert manifest.version == "" and "version.invalid" in errors
    assert "field.type" in manifest_of({"version": ["1"]})[2]


def test_metadata_version_counts_and_only_warns_when_invalid():
    assert m({"metadata": {"version": "2.1.0"}}).version == "2.1.0"
    assert m({"version": "1.0.0", "metadata": {"version": "2.0.0"}}).version == "1.0.0"
    manifest, all_codes, errors = manifest_of({"metadata": {"version": "draft"}})
    assert manifest.version == "" and "version.invalid" in all_codes and not errors


# --- simple extension fields ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "key, attr, value",
    [("homepage", "homepage", "https://example.org"), ("emoji", "emoji", "🦀"), ("primaryEnv", "primary_env", "API_KEY"),
     ("primary_env", "primary_env", "API_KEY"), ("skillKey", "skill_key", "demo-key"), ("next_skill", "next_skill", "other"),
     ("brief_description", "brief_description", "Short."), ("category", "category", "dev")],
)  # fmt: skip
def test_string_fields(key, attr, value):
    assert getattr(m({key: value}), attr) == value
    assert "field.type" in manifest_of({key: {"x": 1}})[2]


@pytest.mark.parametrize(
    "key, attr, default",
    [("always", "always", False), ("default_enabled", "default_enabled", True), ("user-invocable", "user_invocable", True),
     ("disable-model-invocation", "disable_model_invocation", False)],
)  # fmt: skip
def test_boolean_fields(key, attr, default):
    assert getattr(m({}), attr) is default
    assert getattr(m({key: not default}), attr) is (not default)
    assert getattr(m({key: "true"}), attr) is True
    assert "field.type" in manifest_of({key: [1]})[2]


def test_brief_description_defaults_to_first_sentence():
    assert m({}).brief_description == "Does a thing."
    assert m({"description": "No full stop here"}).brief_description == "No full stop here"


def test_skill_key_falls_back_to_name():
    assert m({}).key == "demo" and m({"skillKey": "k"}).key == "k"


def test_tags_list_or_comma_string():
    assert m({"tags": ["a", "b"]}).tags == ["a", "b"]
    assert m({"tags": "a, b"}).tags == ["a", "b"]


@pytest.mark.parametrize("raw, expected", [(["macos", "Linux"], ["darwin", "linux"]), ("windows", ["win32"]),
                                           (["darwin", "osx", "win32"], ["darwin", "win32"])])  # fmt: skip
def test_os_is_normalised(raw, expected):
    assert m({"os": raw}).os == expected


def test_unknown_os_is_a_warning_and_dropped():
    manifest, all_codes, errors = manifest_of({"os": ["beos", "linux"]})
    assert manifest.os == ["linux"] and "field.value" in all_codes and not errors


# --- requires -------------------------------------------------------------------------------------
def test_requires_full_form():
    req = m(
        {
            "requires": {
                "bins": ["jq"],
                "anyBins": ["rg", "grep"],
                "env": ["TOKEN"],
                "config": ["x.y"],
                "skills": ["other"],
            }
        }
    ).requires
    assert (req.bins, req.any_bins, req.env, req.config, req.skills) == (
        ["jq"],
        ["rg", "grep"],
        ["TOKEN"],
        ["x.y"],
        ["other"],
    )


@pytest.mark.parametrize("alias", ["binary", "binaries", "commands"])
def test_requires_bins_aliases(alias):
    assert m({"requires": {alias: ["jq"]}}).requires.bins == ["jq"]


def test_requires_shorthands():
    assert m({"requires": {"binary": "jq"}}).requires.bins == ["jq"]
    assert m({"requires": ["jq", "curl"]}).requires.bins == ["jq", "curl"]
    assert m({"requires": {"env": {"TOKEN": "the token"}}}).requires.env == ["TOKEN"]
    assert m({"requires": {"mcp": ["rube"]}}).requires.mcp == ["rube"]


def test_requires_bad_types_are_errors():
    assert "field.type" in manifest_of({"requires": 5})[2]
    assert "field.type" in manifest_of({"requires": {"bins": 5}})[2]


# --- metadata.openclaw / clawdbot / moltbot -----------------------------------------------------
GATING = {
    "emoji": "🐙",
    "homepage": "https://h",
    "os": ["darwin"],
    "primaryEnv": "GH_TOKEN",
    "always": True,
    "skillKey": "gh",
    "requires": {"bins": ["gh"], "anyBins": ["a", "b"], "env": ["GH_TOKEN"], "config": ["c"]},
    "install": [{"id": "brew", "kind": "brew", "formula": "gh", "bins": ["gh"], "label": "Install gh"}],
}


@pytest.mark.parametrize("block", ["openclaw", "clawdbot", "moltbot", "clawdis"])
def test_gating_blocks_map_into_the_manifest(block):
    manifest, _, errors = manifest_of({"metadata": {block: GATING}})
    assert not errors
    assert (manifest.emoji, manifest.homepage, manifest.os, manifest.primary_env) == (
        "🐙",
        "https://h",
        ["darwin"],
        "GH_TOKEN",
    )
    assert manifest.always is True and manifest.skill_key == "gh"
    assert manifest.requires.bins == ["gh"] and manifest.requires.any_bins == ["a", "b"]
    assert manifest.requires.env == ["GH_TOKEN"] and manifest.requires.config == ["c"]
    assert manifest.install == [InstallSpec(kind="brew", package="gh", bins=["gh"], label="Install gh", id="brew")]


@pytest.mark.parametrize("block", ["openclaw", "clawdbot", "moltbot"])
def test_gating_block_as_inline_json_in_skill_md(block):
    text = (
        f'---\nname: demo\ndescription: d\nmetadata: {{"{block}":{{"emoji":"x","requires":{{"bins":["jq"]}}}}}}\n---\n'
    )
    report = parse_skill_md(text)
    assert report.valid and report.manifest.requires.bins == ["jq"] and report.manifest.emoji == "x"


def test_top_level_field_wins_over_gating_block():
    assert m({"emoji": "top", "metadata": {"openclaw": {"emoji": "block"}}}).emoji == "top"


def test_type_errors_inside_gating_blocks_are_warnings():
    manifest, all_codes, errors = manifest_of({"metadata": {"openclaw": {"requires": 5, "primaryEnv": ["x"]}}})
    assert "field.type" in all_codes and not errors


def test_gating_block_version_counts():
    assert m({"metadata": {"clawdbot": {"version": "1.4.0"}}}).version == "1.4.0"


# --- install ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, kind, package",
    [({"kind": "brew", "formula": "jq"}, "brew", "jq"), ({"kind": "apt", "package": "jq"}, "apt", "jq"),
     ({"kind": "node", "package": "x"}, "npm", "x"), ({"kind": "npm", "package": "x"}, "npm", "x"),
     ({"kind": "go", "module": "a/b@latest"}, "go", "a/b@latest"), ({"kind": "uv", "package": "ruff"}, "uv", "ruff"),
     ({"kind": "download", "url": "https://x/y.tgz"}, "download", "https://x/y.tgz")],
)  # fmt: skip
def test_install_kinds(spec, kind, package):
    (install,) = m({"install": [spec]}).install
    assert (install.kind, install.package) == (kind, package)
    assert install.command()


def test_install_shorthands():
    assert m({"install": {"kind": "brew", "formula": "jq"}}).install[0].package == "jq"
    specs = m({"install": {"brew": "jq", "pip": ["a", "b"]}}).install
    assert [(s.kind, s.package) for s in specs] == [("brew", "jq"), ("uv", "a"), ("uv", "b")]


def test_install_unknown_kind_warns_and_bad_type_errors():
    manifest, all_codes, errors = manifest_of({"install": [{"kind": "cargo", "package": "x"}]})
    assert manifest.install[0].kind == "cargo" and "field.value" in all_codes and not errors
    assert "field.type" in manifest_of({"install": "brew jq"})[2]
    assert "field.type" in manifest_of({"install": [{"formula": "jq"}]})[2]


def test_install_os_is_normalised():
    assert m({"install": [{"kind": "brew", "formula": "x", "os": ["macos"]}]}).install[0].os == ["darwin"]


# --- vars ------------------------------------------------------------------------------------------
def test_vars_full_form():
    vars_ = m({"vars": {"API_KEY": {"description": "key", "required": True, "secret": True},
                        "REGION": {"default": "eu", "description": "where"}}}).vars  # fmt: skip
    assert vars_["API_KEY"] == VarSpec(description="key", default=None, required=True, secret=True)
    assert vars_["REGION"] == VarSpec(description="where", default="eu")


def test_vars_shorthands():
    assert m({"vars": {"STYLE": "balanced"}}).vars == {"STYLE": VarSpec(default="balanced")}  # seed 003
    assert m({"vars": ["A", "B"]}).vars == {"A": VarSpec(), "B": VarSpec()}
    assert m({"vars": [{"name": "A", "default": 3}]}).vars == {"A": VarSpec(default="3")}


def test_vars_bad_values():
    assert "field.type" in manifest_of({"vars": 5})[2]
    assert "field.type" in manifest_of({"vars": {"A": {"required": "maybe"}}})[2]
    manifest, all_codes, _ = manifest_of({"vars": {"not a name": "x"}})
    assert manifest.vars == {} and "field.value" in all_codes


# --- mcp -------------------------------------------------------------------------------------------
def test_mcp_full_form():
    mcp = m(
        {
            "mcp": {
                "command": "npx",
                "args": ["srv"],
                "env": {"TOKEN": "${TOKEN}"},
                "startup_timeout": 10,
                "idle_timeout": "30s",
            }
        }
    ).mcp
    assert mcp == McpSpec(
        command="npx", args=["srv"], env={"TOKEN": "${TOKEN}"}, startup_timeout=10.0, idle_timeout=30.0
    )


def test_mcp_shorthands():
    assert m({"mcp": "npx -y my-server"}).mcp == McpSpec(command="npx", args=["-y", "my-server"])
    assert m({"mcp": {"command": ["uvx", "srv"]}}).mcp == McpSpec(command="uvx", args=["srv"])
    assert m({"mcp": {"server": "https://x/mcp", "transport": "http"}}).mcp.url == "https://x/mcp"


def test_mcp_bad_types():
    assert "field.type" in manifest_of({"mcp": 5})[2]
    assert "field.type" in manifest_of({"mcp": {"command": "x", "startup_timeout": "soon"}})[2]


def test_mcp_from_openclaw_block():
    assert m({"metadata": {"openclaw": {"mcp": {"command": "npx", "args": ["v"]}}}}).mcp.command == "npx"


# --- next skills, triggers, toolsets, scripts ------------------------------------------------------
def test_conditional_next_skills():
    expected = [ConditionalNext(when="tests fail", skill="debug")]
    assert (
        m({"conditional_next_skills": [{"when": "tests fail", "skill": "debug"}]}).conditional_next_skills == expected
    )
    assert m({"conditional_next_skills": {"tests fail": "debug"}}).conditional_next_skills == expected
    assert "field.type" in manifest_of({"conditional_next_skills": [{"when": 1}]})[2]


def test_triggers_full_form_and_shorthands():
    trig = m({"triggers": {"keywords": ["pdf"], "verbs": ["merge"], "patterns": [r"\.pdf$"]}}).triggers
    assert (trig.keywords, trig.verbs, trig.patterns) == (["pdf"], ["merge"], [r"\.pdf$"])
    assert m({"triggers": ["pdf", "merge pdfs"]}).triggers.keywords == ["pdf", "merge pdfs"]
    assert m({"triggers": [{"pattern": "a+b", "description": "x"}]}).triggers.patterns == ["a+b"]


def test_invalid_trigger_pattern_is_dropped_with_a_warning():
    manifest, all_codes, errors = manifest_of({"triggers": {"patterns": ["(unclosed", "ok"]}})
    assert manifest.triggers.patterns == ["ok"] and "field.value" in all_codes and not errors


def test_more_trigger_words_or_patterns_than_routing_uses_is_a_warning():
    from skillctl.format.manifest import Triggers

    words = [f"word{k}" for k in range(Triggers.MAX_WORDS + 1)]
    manifest, findings = normalise({**BASE, "triggers": {"keywords": words, "patterns": ["a"] * 20}})
    [warning] = [f for f in findings if f.code == "field.value"]
    assert f"routing uses the first {Triggers.MAX_WORDS}" in warning.message and not warning.is_error
    assert manifest.triggers.keywords == words  # kept whole: the cap is routing's, not the format's
    patterns = [f"p{k}" for k in range(Triggers.MAX_PATTERNS + 1)]
    _, findings = normalise({**BASE, "triggers": {"patterns": patterns}})
    assert any(f"routing uses the first {Triggers.MAX_PATTERNS}" in f.message for f in findings)
    _, codes, _ = manifest_of({"triggers": {"keywords": words[: Triggers.MAX_WORDS]}})
    assert "field.value" not in codes


def test_toolsets():
    assert m({"toolsets": ["pkg.mod:Tools"]}).toolsets == ["pkg.mod:Tools"]
    manifest, all_codes, _ = manifest_of({"toolsets": ["nocolon"]})
    assert manifest.toolsets == [] and "field.value" in all_codes


def test_scripts():
    assert m({"scripts": {"build": "scripts/build.sh"}}).scripts == {"build": "scripts/build.sh"}
    assert m({"scripts": ["scripts/run.py"]}).scripts == {"run": "scripts/run.py"}
    assert "field.type" in manifest_of({"scripts": 5})[2]


# --- runtime and skill.json ------------------------------------------------------------------------
RUNTIME = {"runtime": "python3", "entrypoint": "scripts/main.py", "requires_network": True,
           "requires_write_access": False, "max_memory_mb": 256, "timeout_seconds": 30, "test": "pytest"}  # fmt: skip


def test_runtime_block_in_frontmatter():
    assert m({"runtime": RUNTIME}).runtime == RuntimeSpec(
        runtime="python3",
        entrypoint="scripts/main.py",
        requires_network=True,
        max_memory_mb=256,
        timeout_seconds=30.0,
        test="pytest",
    )
    assert m({"runtime": "node"}).runtime.runtime == "node"
    assert m({}).runtime is None


def test_runtime_from_skill_json_both_shapes():
    assert manifest_of(skill_json=RUNTIME)[0].runtime.entrypoint == "scripts/main.py"
    assert manifest_of(skill_json={"runtime": RUNTIME})[0].runtime.max_memory_mb == 256


def test_frontmatter_runtime_overrides_skill_json_per_key():
    runtime = manifest_of({"runtime": {"timeout_seconds": 5}}, skill_json=RUNTIME)[0].runtime
    assert runtime.timeout_seconds == 5.0 and runtime.entrypoint == "scripts/main.py"


def test_runtime_bad_values_are_errors():
    assert "field.type" in manifest_of({"runtime": {"max_memory_mb": "lots"}})[2]
    assert "field.type" in manifest_of({"runtime": {"requires_network": "perhaps"}})[2]
    assert "field.value" in manifest_of({"runtime": {"entrypoint": "../escape.py"}})[2]


def test_skill_json_through_parse_skill_md():
    text = "---\n" + yaml.safe_dump(BASE) + "---\n"
    report = parse_skill_md(text, skill_json=b'{"runtime": {"entrypoint": "run.py"}}')
    assert report.valid and report.manifest.runtime.entrypoint == "run.py"


# --- unknown keys ----------------------------------------------------------------------------------
def test_unknown_top_level_key_warns_known_ones_do_not():
    assert "frontmatter.unknown_key" in manifest_of({"flavour": "x"})[1]
    assert "frontmatter.unknown_key" not in manifest_of({"author": "x", "argument-hint": "y"})[1]
