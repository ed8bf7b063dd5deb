"""Resource limits: each payload proves it started, then hits one limit; the run ends as expected."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

TIMEOUT = 3.0  # SUITE_CAPS.default_timeout_seconds
SLACK = 3.0  # start-up and teardown of a run, on a loaded CI machine


def test_memory_bomb_is_oom(run_payload, last_report):
    result = run_payload("""
        hog = []
        while True:
            hog.append(bytearray(4 << 20))
    """)
    assert result.stdout.startswith("started")
    assert result.status == "oom", (result.exit_code, result.stderr[-500:])


def test_a_payload_that_kills_itself_is_killed_not_oom(run_payload):
    # SIGKILL is also how the OOM killer ends a run: the status must come from the kernel's report.
    result = run_payload("""
        import signal
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert result.stdout.startswith("started")
    assert result.status == "killed", (result.exit_code, result.stderr[-500:])


def test_an_oom_kill_reported_after_the_exit_is_still_oom():
    # The daemon learns of the exit and of the OOM kill on separate paths; the exit can come first.
    from skillctl.sandbox import docker_backend

    class LateReport:  # the daemon's API as seen after the exit: the OOM event lands 0.3 s later
        def __init__(self):
            self.reported_at = time.monotonic() + 0.3

        def inspect_container(self, container):
            return {"State": {"OOMKilled": False}}

        def events(self, **query):
            assert query["filters"] == {"container": "c1", "event": "oom"}
            return (
                e for e in ([{"Action": "oom"}] if time.monotonic() >= self.reported_at else [])
            )  # closable, as docker-py's stream

    client = type("Client", (), {"api": LateReport()})()
    assert not docker_backend._oom_killed(client, "c1", 0, patient=False)  # a run we killed: no wait
    assert docker_backend._oom_killed(client, "c1", 0, patient=True)
    client.api.reported_at = float("inf")  # a SIGKILL that was never an OOM kill
    started = time.monotonic()
    assert not docker_backend._oom_killed(client, "c1", 0, patient=True)
    assert time.monotonic() - started >= docker_backend.OOM_REPORT_GRACE


@pytest.mark.parametrize("attack", ["while True: pass", "import time; time.sleep(10**6)"], ids=["busy", "sleep"])
def test_busy_loop_and_sleeping_forever_time_out(run_payload, attack):
    result = run_payload(attack + "\n")
    assert result.stdout.startswith("started")
    assert result.status == "timeout"
    assert result.duration_ms < (TIMEOUT + SLACK) * 1000


def test_fork_bomb_is_contained(run_payload):
    result = run_payload("""
        children = 0
        while True:
            try:
                if os.fork() == 0:
                    import time; time.sleep(60); os._exit(0)
                children += 1
            except OSError:
                print("fork refused after", children, flush=True)
                raise SystemExit(3)
    """)
    assert result.stdout.startswith("started")
    assert result.status == "error", (result.status, result.stderr[-500:])
    refused_after = int(result.stdout.split("fork refused after")[1].split()[0])
    assert refused_after <= 32


def test_thread_bomb_is_contained(run_payload):
    result = run_payload("""
        import threading, time
        threads = 0
        try:
            while True:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
                threads += 1
        except (RuntimeError, MemoryError) as err:
            print("threads refused after", threads, type(err).__name__, flush=True)
            os._exit(3)
    """)
    assert result.stdout.startswith("started")
    assert result.status in ("error", "oom"), (result.status, result.stderr[-500:])
    assert int(result.stdout.split("refused after")[1].split()[0]) <= 32


def test_file_over_the_size_limit_is_cut(run_payload, last_report):
    result = run_payload("""
        def write(path):
            with open(path, "wb") as f:
                for _ in range(8):
                    f.write(b"x" * (1 << 20))
        report(work=attempt(lambda: write("/work/big")), size=os.path.getsize("/work/big"))
    """)
    data = last_report(result)
    assert data["work"].startswith("denied:")
    assert data["size"] <= 4 << 20


def test_filling_tmp_stops_at_its_size(run_payload, last_report):
    result = run_payload("""
        written = 0
        def fill():
            global written
            for n in range(100):
                with open(f"/tmp/fill{n}", "wb") as f:
                    for _ in range(4):
                        f.write(b"x" * (1 << 20))
                        written += 1 << 20
        report(fill=attempt(fill), written=written)
    """)
    data = last_report(result)
    assert data["fill"].startswith("denied:")
    assert data["written"] <= 8 << 20


def test_flooding_stdout_and_stderr_is_cut_and_marked(run_payload):
    result = run_payload("""
        line = "y" * 1023 + "\\n"
        while True:
            sys.stdout.write(line)
            sys.stderr.write(line)
    """)
    assert result.status == "output_limit"
    assert result.stdout.startswith("started")
    marker = "[skillyard: output truncated after 65536 bytes]\n"
    assert result.stdout.endswith(marker) or result.stderr.endswith(marker)
    for stream in (result.stdout, result.stderr):
        assert len(stream.encode()) <= 65536 + len(marker) + 1
    assert result.duration_ms < TIMEOUT * 1000


def test_too_many_output_files_is_output_limit(run_payload):
    result = run_payload("""
        for n in range(20):
            open(f"/work/output/f{n:02}", "w").write("x")
    """)
    assert result.status == "output_limit"
    assert sum(1 for o in result.outputs if not o.skipped) == 10


def test_well_behaved_skill_is_ok_with_input_and_output(run_payload, last_report, tmp_path):
    result = run_payload(
        """
        data = json.load(open("/work/input.json"))
        open("/work/output/answer.txt", "w").write(str(data["n"] * 2))
        report(env=json.loads(os.environ["SKILL_INPUT"]), file=data, cwd=os.getcwd())
        """,
        input={"n": 21},
        output_dir=tmp_path / "out",
    )
    assert result.status == "ok" and result.exit_code == 0
    assert last_report(result) == {"env": {"n": 21}, "file": {"n": 21}, "cwd": "/work"}
    assert (tmp_path / "out" / "answer.txt").read_text() == "42"
    assert [o.path for o in result.outputs] == ["answer.txt"]


def test_failing_skill_is_error_with_its_exit_code(run_payload):
    result = run_payload("raise SystemExit(7)\n")
    assert (result.status, result.exit_code) == ("error", 7)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to start as root")
def test_bwrap_as_root_drops_privileges_and_the_process_limit_holds(
    run_payload, last_report, backend, sandbox_processes
):
    if backend != "bwrap":
        pytest.skip("about the bubblewrap backend")
    host_view: dict[int, str] = {}

    def watch() -> None:  # what the host sees while the payload runs
        while not done.is_set():
            for pid in sandbox_processes():
                try:
                    host_view[pid] = Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0]
                except (OSError, IndexError):
                    pass
            time.sleep(0.02)

    done = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run_payload("""
            import resource, time
            children = 0
            try:
                for _ in range(100):
                    if os.fork() == 0:
                        time.sleep(30); os._exit(0)
                    children += 1
            except OSError:
                pass
            time.sleep(0.5)
            report(uid=os.getuid(), euid=os.geteuid(), children=children,
                   nproc=resource.getrlimit(resource.RLIMIT_NPROC)[0])
        """)
    finally:
        done.set()
        watcher.join()
    data = last_report(result)
    assert data["uid"] != 0 and data["euid"] != 0
    assert host_view and all(uid != "0" for uid in host_view.values()), host_view
    assert len(set(host_view.values())) == 1  # one uid for the whole run
    assert data["children"] <= 32


# Writes 1 GiB into /work in files under the suite's 4 MiB file limit, then lingers so the host
# side can look at the folder while the payload still holds what it wrote.
GIGABYTE_WRITER = """
    import time
    written = 0
    try:
        for n in range(256):
            with open(f"/work/chunk{n:03}", "wb") as f:
                for _ in range(4):
                    f.write(b"x" * (1 << 20))
                    written += 1 << 20
    except OSError as err:
        print("stopped after", written, type(err).__name__, flush=True)
        time.sleep(0.5)
        raise
"""
WORK_LIMIT = 16 << 20  # SUITE_CAPS.work_size_mb
FEW_MB = 2 << 20


class HostFolderWatch:
    """Samples the run folders' /work on the host while a run goes: the most they ever held."""

    def __init__(self, root: Path) -> None:
        from skillctl.sandbox.workdisk import usage

        self.root, self.usage, self.peak, self.samples = root, usage, 0, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop)

    def _loop(self) -> None:
        while not self.done.is_set():
            for work in self.root.glob("skillyard-run-*/work"):
                self.peak = max(self.peak, self.usage(work))
                self.samples += 1
            time.sleep(0.002)

    def __enter__(self) -> HostFolderWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


@pytest.mark.skipif(os.geteuid() != 0, reason="the /work tmpfs is mounted by a root executor")
def test_writing_a_gigabyte_to_work_ends_with_limits_disk(run_payload, sandbox_tmp):
    with HostFolderWatch(sandbox_tmp) as host:
        result = run_payload(GIGABYTE_WRITER)
    assert result.stdout.startswith("started")
    assert result.status == "limits.disk", (result.status, result.stdout[-300:], result.stderr[-500:])
    stopped_after = int(result.stdout.split("stopped after")[1].split()[0])
    assert stopped_after <= WORK_LIMIT
    assert host.samples and 0 < host.peak <= WORK_LIMIT + FEW_MB, host.peak


def test_a_run_that_fills_work_and_cleans_up_still_ends_with_limits_disk(run_payload):
    result = run_payload("""
        import glob
        try:
            for n in range(256):
                with open(f"/work/chunk{n:03}", "wb") as f:
                    f.write(b"x" * (4 << 20))
        finally:
            for path in glob.glob("/work/chunk*"):
                os.remove(path)
    """)
    assert result.stdout.startswith("started")
    assert result.status == "limits.disk", (result.status, result.stderr[-500:])


def test_one_file_past_the_file_size_limit_ends_with_limits_disk(run_payload):
    result = run_payload("""
        with open("/work/big", "wb") as f:
            for _ in range(1024):
                f.write(b"x" * (1 << 20))
    """)
    assert result.stdout.startswith("started")
    assert result.status == "limits.disk", (result.status, result.stderr[-500:])


def test_a_program_killed_by_sigxfsz_ends_with_limits_disk(run_payload):
    # Unlike Python, head does not ignore SIGXFSZ: the kernel kills it at the file size limit.
    result = run_payload("", command=["sh", "-c", "head -c 1073741824 /dev/zero > /work/big"])
    assert (result.status, result.exit_code) == ("limits.disk", 128 + 25), result.stderr[-500:]


@pytest.mark.skipif(os.geteuid() != 0, reason="the /work tmpfs is mounted by a root executor")
def test_work_size_is_configurable_per_run(run_payload, last_report):
    result = run_payload(
        """
        with open("/work/a", "wb") as f:
            f.write(b"x" * (3 << 20))
        st = os.statvfs("/work")
        report(size=st.f_blocks * st.f_frsize)
        """,
        work_size_mb=4,
    )
    assert result.status == "ok", result.stderr[-500:]
    assert last_report(result)["size"] == 4 << 20
    assert run_payload("open('/work/a', 'wb').write(b'x' * (5 << 20))\n", work_size_mb=4).status == "limits.disk"


def test_without_the_right_to_mount_a_watcher_ends_the_run(run_payload, sandbox_tmp, monkeypatch):
    # A host that refuses the tmpfs (an unprivileged skillctl run): the watcher measures /work.
    from skillctl.sandbox import workdisk

    monkeypatch.setattr(workdisk, "_mount_tmpfs", lambda *args, **kwargs: False)
    with HostFolderWatch(sandbox_tmp) as host:
        result = run_payload(GIGABYTE_WRITER.replace("time.sleep(0.5)", "time.sleep(5)"))
    assert result.status == "limits.disk", (result.status, result.stderr[-500:])
    assert result.duration_ms < TIMEOUT * 1000  # ended by the watcher, not by the timeout
    # Best effort: a fast writer gets past the limit by its speed times the watch interval.
    assert host.samples and host.peak < WORK_LIMIT + (128 << 20), host.peak


@pytest.mark.skipif(os.geteuid() != 0, reason="the /work tmpfs is mounted by a root executor")
def test_an_input_bigger_than_work_is_refused_before_the_run(run_payload, sandbox_tmp):
    from skillctl.sandbox import SandboxRequestError

    with pytest.raises(SandboxRequestError) as refused:
        run_payload("print('never')\n", input="x" * (5 << 20), work_size_mb=4)
    assert refused.value.code == "sandbox.request"
    assert not list(sandbox_tmp.glob("skillyard-run-*"))  # its folder (and tmpfs) already gone
