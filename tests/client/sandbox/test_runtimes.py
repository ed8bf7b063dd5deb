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


def _js_skill(tmp_path, code: str):
    skill = tmp_path / "js"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: js\ndescription: d\n---\n")
    (skill / "scripts" / "main.js").write_text(code)
    return skill


def test_a_node_skill_runs_within_the_memory_limit(backend, tmp_path):
    """The image has node; under bubblewrap, V8's reserved address space is not its memory."""
    from skillctl.sandbox import RunRequest, run_skill
    from tests.client.sandbox.conftest import SUITE_CAPS

    skill = _js_skill(tmp_path, "console.log('from node ' + process.versions.node)\n")
    spec = RuntimeSpec(runtime="node20", entrypoint="scripts/main.js")
    result = run_skill(RunRequest(skill_dir=skill, runtime=spec, backend=backend, caps=SUITE_CAPS))
    assert result.ok and result.stdout.startswith("from node "), (result.exit_code, result.stderr[-500:])


def test_a_node_memory_bomb_is_oom(backend, tmp_path):
    from skillctl.sandbox import RunRequest, run_skill
    from tests.client.sandbox.conftest import SUITE_CAPS

    bomb = "console.log('started'); const hog = []; for (;;) hog.push(Buffer.alloc(4 << 20, 1));\n"
    skill = _js_skill(tmp_path, bomb)
    spec = RuntimeSpec(runtime="node", entrypoint="scripts/main.js")
    result = run_skill(RunRequest(skill_dir=skill, runtime=spec, backend=backend, caps=SUITE_CAPS))
    assert result.stdout.startswith("started")
    if backend == "bwrap" and result.status != "oom":
        # Under rlimits an allocation fails and the program decides what happens: node reports
        # it (oom, most runs) or, when V8 itself cannot commit memory, crashes on it; then the run
        # says so (no cgroup here to tell memory from other crashes).
        assert result.exit_code in (128 + 11, 128 + 6, 128 + 5), (result.exit_code, result.stderr[-500:])
        assert "memory limit can end this way" in result.stderr
        return
    assert result.status == "oom", (result.exit_code, result.stderr[-500:])


def test_a_missing_interpreter_says_which_and_what_to_do(backend, tmp_path):
    from skillctl.sandbox import RunRequest, run_skill
    from tests.client.sandbox.conftest import SUITE_CAPS

    skill = _js_skill(tmp_path, "")
    result = run_skill(
        RunRequest(skill_dir=skill, command=["ruby", "scripts/main.rb"], backend=backend, caps=SUITE_CAPS)
    )
    assert result.exit_code == 127
    assert "no `ruby`" in result.stderr
    assert ("install it on this machine" if backend == "bwrap" else "SKILLYARD_SANDBOX_IMAGE") in result.stderr
