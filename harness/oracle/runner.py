"""Running the oracle worker in a contained subprocess.

One variant runs in ``python -m defects4warp.oracle.worker`` (the interpreter of
the Warp release measured), in a new session (its own process group, so a
hang is killed with everything it started), under a wall-clock timeout and an
address-space limit (``RLIMIT_AS``; not applied on CUDA devices, whose driver
reserves far more virtual address space than it uses). The package alone is
put on ``PYTHONPATH`` (:func:`defects4warp.paths.import_root`, none of this
environment's site-packages); bytecode is not written into the variant folder.

This is deliberately separate from :mod:`defects4warp.isolation` (the engine's
runner), so the oracle shares no code with what it judges.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..paths import child_pythonpath, module

#: Default address-space limit of a worker on CPU: 16 GiB.
DEFAULT_MEMORY_LIMIT = 16 * 2 ** 30

_LIVE: set = set()
_LOCK = threading.Lock()


def kill_all() -> None:
    """Kill the process group of every worker still running (Ctrl-C, SIGTERM)."""
    with _LOCK:
        procs = list(_LIVE)
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if getattr(p, "token", None) and os.path.isdir("/proc"):
            _kill_token(p.token, p.pid, rounds=1)


#: Size limit of any one file the worker writes (RLIMIT_FSIZE), bytes: a
#: program that tries to fill the disk gets EFBIG (Python ignores SIGXFSZ).
DEFAULT_FILE_LIMIT = 2 ** 30

#: Environment variable with a token unique to one worker: every process the
#: program starts inherits it, so children that detached (new session, double
#: fork) are found in /proc and killed when the worker ends.
TOKEN_VAR = "DEFECTS4WARP_ORACLE_TOKEN"


def _limit(nbytes, file_bytes=DEFAULT_FILE_LIMIT):
    def apply():
        import resource

        if nbytes:
            resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
        if file_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        try:  # die with the harness (PR_SET_PDEATHSIG = 1), so kill -9 of it leaves no worker
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    return apply


def _kill_token(token: str, exclude: int | None = None, rounds: int = 5) -> int:
    """SIGKILL every process whose environment holds ``TOKEN_VAR=token``;
    returns how many (other than ``exclude``) were found."""
    import time

    needle = f"{TOKEN_VAR}={token}".encode()
    seen = set()
    for _ in range(rounds):
        found = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            if pid == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(pid)
            except OSError:
                continue
        if not found:
            break
        for pid in found:
            seen.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    return len(seen - {exclude})


def run_worker(path, *, device: str = "cpu", scale: str = "small", python: str | None = None,
               timeout_s: float = 300.0, knobs: dict | None = None, point: str | None = None,
               arrays: bool = False, memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
               script: dict | None = None) -> tuple:
    """Measure one variant folder in a subprocess.

    Parameters
    ----------
    path : str or Path
        Folder holding ``problem.py``.
    device, scale : str
        Passed to ``make_problem``.
    python : str, optional
        Interpreter (default: this one); a per-release environment's python
        for another Warp release (:func:`defects4warp.envs.python_for`).
    timeout_s : float, default 300.0
        Wall-clock seconds before the worker's process group is killed.
    knobs : dict, optional
        Overrides of :data:`defects4warp.oracle.worker.DEFAULT_KNOBS`.
    point : str, optional
        An ``.npz`` with ``x0/<param>`` arrays: measure at that point.
    arrays : bool, default False
        Also return the raw arrays (``x0/<param>``, ``ad`` (calls, n), ``fd``,
        ``uncertainty``, ``coords`` ...) as a dict of NumPy arrays.
    memory_limit : int or None, default 16 GiB
        ``RLIMIT_AS`` in bytes; None or a CUDA device: no limit.
    script : dict, optional
        The fields of a ``defects4warp.capture.ScriptSpec`` (entry, args,
        iteration, params): ``path`` holds the user's script and the Problem
        is captured from it instead of ``make_problem``.

    Returns
    -------
    (doc, raw) : tuple[dict, dict | None]
        The worker's JSON document; when the worker died, timed out or wrote
        nothing, a document with ``verdict: "error"`` and a ``message``.
    """
    import numpy as np

    python = python or sys.executable
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)  # this package only, not this environment's site-packages
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    token = os.urandom(16).hex()
    env[TOKEN_VAR] = token
    if device != "cpu":
        memory_limit = None
    with tempfile.TemporaryDirectory(prefix="d4w-oracle-") as tmp:
        out = os.path.join(tmp, "doc.json")
        raw_path = os.path.join(tmp, "raw.npz")
        cmd = [python, "-m", module("oracle.worker"), str(Path(path).resolve()), "--out", out, "--device", device, "--scale", scale,
               "--knobs", json.dumps(knobs or {})]
        if arrays:
            cmd += ["--arrays", raw_path]
        if point:
            cmd += ["--point", str(Path(point).resolve())]
        if script is not None:
            cmd += ["--script", json.dumps(script)]
        # stderr goes to a file, not a pipe: a child the program detaches would
        # hold a pipe open and keep communicate() waiting until the timeout
        err_path = os.path.join(tmp, "stderr.log")
        err_file = open(err_path, "wb")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, env=env, cwd=tmp,
                                start_new_session=True, preexec_fn=_limit(memory_limit))
        proc.token = token
        with _LOCK:
            _LIVE.add(proc)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        finally:
            with _LOCK:
                _LIVE.discard(proc)
            err_file.close()
            if os.path.isdir("/proc"):
                _kill_token(token, proc.pid)
        with open(err_path, "rb") as f:
            f.seek(max(0, os.path.getsize(err_path) - 8000))
            err = f.read()
        tail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-5:]
        if timed_out:
            return _failed(f"timed out after {timeout_s:g} s", device, scale), None
        if not os.path.isfile(out):
            rc = proc.returncode
            why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            return _failed(f"worker {why} without a result: {' | '.join(tail)[-400:]}", device, scale), None
        with open(out) as f:
            doc = json.load(f)
        raw = None
        if arrays and os.path.isfile(raw_path):
            with np.load(raw_path) as z:
                raw = {k: z[k] for k in z.files}
        return doc, raw


def _failed(message: str, device: str, scale: str) -> dict:
    return {"verdict": "error", "message": message, "device": device, "scale": scale, "warp_version": None,
            "failure": {"stage": "process", "type": None, "first_line": message}, "cost": {}}
