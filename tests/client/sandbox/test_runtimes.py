"""`runtime:` names map to interpreters (issue: `python3.11`, the seed design's form, was exec'd
directly and failed with "Permission denied" on a .py without its exec bit)."""

from __future__ import annotations

import pytest

from skillctl.format import RuntimeSpec
from skillctl.sandbox.errors import SandboxRequestError
from skillctl.sandbox.runner import entrypoint_command, interpreter_for


@pytest.mark.parametrize(
    ("runtime", "argv"),
    [
        ("python3.11", ["python3"]),
        ("python3.12", ["python3"]),
        ("python", ["python3"]),
        ("python3", ["python3"]),
        ("Python3.11", ["python3"]),
        ("node", ["node"]),
        ("node20", ["node"]),
        ("nodejs", ["node"]),
        ("node-22", ["node"]),
        ("bash", ["bash"]),
        ("sh", ["sh"]),
        ("", ["python3"]),
    ],
)
def test_runtime_names_map_to_interpreters(runtime, argv):
    assert interpreter_for(runtime) == argv


@pytest.mark.parametrize("runtime", ["ruby", "python2", "perl5", "./scripts/x", "node; rm -rf /"])
def test_an_unknown_runtime_is_a_clear_error_never_a_direct_exec(runtime):
    with pytest.raises(SandboxRequestError) as err:
        entrypoint_command(RuntimeSpec(runtime=runtime, entrypoint="scripts/main.py"))
    assert "unknown runtime" in err.value.message and err.value.hint


def test_python311_entrypoint_without_exec_bit_runs(run_payload, last_report):
    result = run_payload("report(ok=True)", runtime=RuntimeSpec(runtime="python3.11", entrypoint="scripts/main.py"))
    assert result.ok, result.stderr
    assert last_report(result) == {"ok": True}


def test_bash_runtime_runs_a_shell_script(backend, tmp_path):
    from skillctl.sandbox import RunRequest, run_skill
    from tests.client.sandbox.conftest import SUITE_CAPS

    skill = tmp_path / "shell"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: shell\ndescription: d\n---\n")
    (skill / "scripts" / "main.sh").write_text('echo "from bash $BASH_VERSION"\n')  # no exec bit
    result = run_skill(
        RunRequest(
            skill_dir=skill,
            runtime=RuntimeSpec(runtime="bash", entrypoint="scripts/main.sh"),
            backend=backend,
            caps=SUITE_CAPS,
        )
    )
    assert result.ok and result.stdout.startswith("from bash 5"), result.stderr


def test_a_missing_interpreter_says_which_and_what_to_do(backend, tmp_path):
    from skillctl.sandbox import RunRequest, run_skill

    if backend == "bwrap":
        pytest.skip("bwrap runs the host's interpreters; the local image is the one without node")

    from tests.client.sandbox.conftest import SUITE_CAPS

    skill = tmp_path / "js"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: js\ndescription: d\n---\n")
    (skill / "scripts" / "main.js").write_text("console.log('hi')\n")
    result = run_skill(
        RunRequest(
            skill_dir=skill,
            runtime=RuntimeSpec(runtime="node20", entrypoint="scripts/main.js"),
            backend=backend,
            caps=SUITE_CAPS,
            image=None,
        )
    )
    assert result.exit_code == 127
    assert "no `node`" in result.stderr and "SKILLYARD_SANDBOX_IMAGE" in result.stderr
