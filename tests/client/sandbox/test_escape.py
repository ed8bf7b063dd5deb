"""Escape attempts: each payload proves it started, attacks, and nothing reaches the host."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox


def test_host_env_and_secret_files_are_unreadable(last_report, run_payload, tmp_path, monkeypatch):
    canary = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("SKILLYARD_TEST_SECRET", canary)
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(canary)
    result = run_payload(f"""
        found = {{}}
        for path in ["/etc/shadow", "/root", "{Path.home()}", "/home", "/var/run/docker.sock",
                     "/run/docker.sock", "{secret_file}"]:
            found[path] = attempt(lambda: os.listdir(path) if os.path.isdir(path) else open(path).read())
        report(found=found, env=dict(os.environ))
    """)
    assert result.status == "ok", result.stderr
    data = last_report(result)
    assert canary not in result.stdout
    assert "SKILLYARD_TEST_SECRET" not in data["env"]
    assert all(v.startswith("denied:") or v == "ok:[]" for v in data["found"].values()), data["found"]


def test_writes_outside_work_and_tmp_fail_while_both_work(last_report, run_payload, tmp_path):
    result = run_payload("""
        def write(path):
            with open(path, "w") as f:
                f.write("x")
            return path
        targets = ["/escape", "/etc/escape", "/usr/escape", "/skill/escape", "/skill/scripts/main.py",
                   "/var/escape", "/proc/escape", "/work/ok", "/tmp/ok"]
        report(**{t: attempt(lambda: write(t)) for t in targets})
    """)
    data = last_report(result)
    assert data.pop("/work/ok").startswith("ok:") and data.pop("/tmp/ok").startswith("ok:")
    assert all(v.startswith("denied:") for v in data.values()), data
    skill_files = sorted(p.name for p in (tmp_path / "skill0").rglob("*"))
    assert skill_files == ["SKILL.md", "main.py", "scripts"]
    assert not Path("/escape").exists() and not Path("/etc/escape").exists()


@pytest.fixture
def loopback_server():
    """A TCP service on the host's loopback that records whether anyone connected."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    hits: list[object] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                hits.append(conn)
                conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join()
    server.close()


def test_network_is_unreachable(last_report, run_payload, loopback_server):
    port, hits = loopback_server
    result = run_payload(f"""
        import socket
        def connect(host, port):
            socket.create_connection((host, port), timeout=1).close()
        report(outside=attempt(lambda: connect("1.1.1.1", 53)),
               gateway=attempt(lambda: connect("172.17.0.1", {port})),
               loopback=attempt(lambda: connect("127.0.0.1", {port})),
               dns=attempt(lambda: socket.getaddrinfo("example.com", 80)))
    """)
    data = last_report(result)
    assert all(v.startswith("denied:") for v in data.values()), data
    assert hits == []


def test_daemonised_grandchild_does_not_outlive_the_run(last_report, run_payload, host_processes_with):
    token = f"grandchild-{uuid.uuid4().hex}"
    result = run_payload(f"""
        import subprocess
        if os.fork() == 0:
            os.setsid()
            subprocess.Popen(["python3", "-c", "import time; time.sleep(300)", "{token}"],
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os._exit(0)
        os.wait()
        import time

        def grandchild_running():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    if b"{token}" in open(f"/proc/{{pid}}/cmdline", "rb").read():
                        return True
                except OSError:
                    pass
            return False

        deadline = time.monotonic() + 5
        while not grandchild_running() and time.monotonic() < deadline:
            time.sleep(0.02)
        report(spawned=True)
    """)
    assert result.status == "ok", result.stderr
    assert last_report(result) == {"spawned": True}
    deadline = time.monotonic() + 5
    while host_processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert host_processes_with(token) == []


def test_host_processes_are_invisible_and_unsignallable(last_report, run_payload):
    token = f"host-sleeper-{uuid.uuid4().hex}"
    sleeper = subprocess.Popen(["python3", "-c", "import time; time.sleep(60)", token])
    try:
        result = run_payload(f"""
            import signal
            cmdlines = []
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    cmdlines.append(attempt(lambda: open(f"/proc/{{pid}}/cmdline", "rb").read().decode()))
            report(cmdlines=cmdlines, kill_host=attempt(lambda: os.kill({sleeper.pid}, signal.SIGKILL)),
                   kill_init=attempt(lambda: os.kill(1, signal.SIGKILL)))
            os.kill(-1, signal.SIGKILL)
        """)
        data = last_report(result)
        assert token not in result.stdout
        assert len(data["cmdlines"]) < 10, data["cmdlines"]
        assert sleeper.poll() is None, "the sandbox killed a host process"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_no_capabilities_no_user_namespace_no_mount(last_report, run_payload):
    result = run_payload("""
        import ctypes, ctypes.util
        libc = ctypes.CDLL(None, use_errno=True)
        status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
        CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
        def unshare(flag):
            if libc.unshare(flag) != 0:
                raise OSError(ctypes.get_errno(), "unshare")
        def mount():
            if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) != 0:
                raise OSError(ctypes.get_errno(), "mount")
        def setuid0():
            os.setuid(0)
        report(cap_eff=status["CapEff"].strip(), cap_prm=status["CapPrm"].strip(),
               no_new_privs=status["NoNewPrivs"].strip(), uid=os.getuid(),
               userns=attempt(lambda: unshare(CLONE_NEWUSER)), mountns=attempt(lambda: unshare(CLONE_NEWNS)),
               mount=attempt(mount), setuid0=attempt(setuid0))
    """)
    data = last_report(result)
    assert int(data["cap_eff"], 16) == 0 and int(data["cap_prm"], 16) == 0
    assert data["no_new_privs"] == "1"
    assert data["uid"] != 0
    for key in ("userns", "mountns", "mount", "setuid0"):
        assert data[key].startswith("denied:"), data


def test_symlink_outputs_are_not_followed(last_report, run_payload, tmp_path):
    secret = tmp_path / "host-secret"
    secret.write_text("host secret")
    result = run_payload(
        f"""
        os.symlink("/etc/passwd", "/work/output/passwd")
        os.symlink("{secret}", "/work/output/secret")
        os.symlink("/etc", "/work/output/etcdir")
        os.mkdir("/work/output/sub")
        open("/work/output/sub/real.txt", "w").write("real")
        report(done=True)
    """,
        output_dir=tmp_path / "out",
    )
    assert result.status == "ok", result.stderr
    by_path = {o.path: o for o in result.outputs}
    assert {p for p, o in by_path.items() if o.skipped == "symlink"} == {
        "passwd",
        "secret",
        "etcdir",
    }
    assert by_path["sub/real.txt"].size == 4
    saved = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))
    assert saved == ["sub", "sub/real.txt"]


def test_stdin_is_closed(last_report, run_payload):
    result = run_payload("""
        report(stdin=repr(sys.stdin.read()))
    """)
    assert result.status == "ok" and last_report(result) == {"stdin": "''"}


def test_kernel_files_under_proc_and_sys_are_read_only(last_report, run_payload):
    hostname = socket.gethostname()
    result = run_payload("""
        def write(path):
            with open(path, "w") as f:
                f.write("pwned\\n")
        targets = ["/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger",
                   "/sys/kernel/uevent_helper", "/sys/fs/cgroup/cgroup.procs", "/proc/self/oom_score_adj"]
        report(**{t: attempt(lambda: write(t)) for t in targets[:-1]})
    """)
    data = last_report(result)
    assert all(v.startswith("denied:") for v in data.values()), data
    assert socket.gethostname() == hostname


def test_nothing_is_left_for_the_next_run(last_report, run_payload):
    first = run_payload("""
        open("/work/left", "w").write("x"); open("/tmp/left", "w").write("x")
        report(wrote=True)
    """)
    assert first.status == "ok", first.stderr
    second = run_payload("""
        report(work=os.path.exists("/work/left"), tmp=os.path.exists("/tmp/left"), listing=os.listdir("/work"))
    """)
    data = last_report(second)
    assert (data["work"], data["tmp"], sorted(data["listing"])) == (
        False,
        False,
        ["input.json", "output"],
    )


def test_concurrent_runs_do_not_see_each_other(last_report, run_payload):
    code = """
        import time
        me = os.environ["RUN_NAME"]
        open(f"/work/{me}", "w").write(me); open(f"/tmp/{me}", "w").write(me)
        # Not a wait for a condition: the runs cannot signal each other (that is the point), so
        # each stays alive a second for the other to (not) see it.
        time.sleep(1.0)
        procs = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    procs.append(open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace"))
                except OSError:
                    pass
        report(work=sorted(os.listdir("/work")), tmp=sorted(os.listdir("/tmp")),
               others=[p for p in procs if "RUN_NAME=" in p and f"RUN_NAME={me}" not in p])
    """
    results: dict[str, object] = {}
    threads = [
        threading.Thread(target=lambda n=n: results.__setitem__(n, run_payload(code, env={"RUN_NAME": n})))
        for n in ("alpha", "beta")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        data = last_report(results[name])
        assert other not in data["work"] and other not in data["tmp"], data
        assert data["others"] == []
