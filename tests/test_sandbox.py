"""The sandbox every process of the harness starts in (defects4warp.sandbox)."""

import os
import subprocess
import sys
import textwrap
import time

from defects4warp import sandbox


def _py(code: str) -> list:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_output_exit_status_and_token():
    res = sandbox.run(_py(f"""
        import os, sys
        print("out", os.environ["{sandbox.TOKEN_VAR}"] != "")
        print("err", file=sys.stderr)
        sys.exit(3)
    """), timeout_s=30)
    assert (res.returncode, res.timed_out) == (3, False)
    assert res.stdout.strip() == "out True" and res.stderr.strip() == "err"
    assert res.leftovers == 0 and res.wall_s > 0


def test_a_detached_grandchild_is_killed_and_counted(tmp_path):
    flag = tmp_path / "alive"
    res = sandbox.run(_py(f"""
        import os, subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time, pathlib; time.sleep(3); pathlib.Path({str(flag)!r}).write_text('x')"],
                         start_new_session=True)
    """), timeout_s=30)
    assert res.returncode == 0 and res.leftovers == 1
    time.sleep(4)
    assert not flag.exists()  # killed before it could write


def test_timeout_kills_the_group():
    t0 = time.perf_counter()
    res = sandbox.run(_py("import time; time.sleep(60)"), timeout_s=1)
    assert res.timed_out and res.returncode is None and time.perf_counter() - t0 < 10


def test_memory_and_file_limits_apply(tmp_path):
    res = sandbox.run(_py("x = bytearray(2 * 1024**3)"), timeout_s=30, memory_bytes=512 * 1024**2)
    assert res.returncode != 0 and "MemoryError" in res.stderr
    res = sandbox.run(_py(f"open({str(tmp_path / 'big')!r}, 'wb').write(b'x' * 4_000_000)"), timeout_s=30,
                      file_bytes=1_000_000)
    assert res.returncode != 0 and os.path.getsize(tmp_path / "big") <= 1_000_000


def test_tail_is_capped_and_output_can_be_kept(tmp_path):
    res = sandbox.run(_py("print('a' * 100000)"), timeout_s=30, tail_bytes=100, output_dir=str(tmp_path))
    assert len(res.stdout) == 100
    assert os.path.getsize(tmp_path / "stdout") == 100001


def test_the_wait_ends_with_the_process_without_polling(monkeypatch):
    """sandbox._wait returns the exit status when the process ends and raises TimeoutExpired when it
    does not end in time; with a pidfd it never falls back on Popen.wait's 50 ms polling (a wait with
    a timeout)."""
    if not hasattr(os, "pidfd_open"):
        import pytest

        pytest.skip("no pidfd_open on this system")
    calls = []
    real = subprocess.Popen.wait

    def wait(self, timeout=None):
        calls.append(timeout)
        return real(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", wait)
    proc = subprocess.Popen(_py("import sys, time; time.sleep(0.3); sys.exit(5)"))
    t0 = time.perf_counter()
    assert sandbox._wait(proc, 30) == 5
    assert 0.25 < time.perf_counter() - t0 < 10 and calls == [None]
    proc = subprocess.Popen(_py("import time; time.sleep(60)"))
    try:
        t0 = time.perf_counter()
        try:
            sandbox._wait(proc, 0.5)
            raise AssertionError("no TimeoutExpired")
        except subprocess.TimeoutExpired as exc:
            assert exc.timeout == 0.5 and 0.45 < time.perf_counter() - t0 < 10
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
