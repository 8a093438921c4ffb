"""Running a variant's measurement in its own subprocess.

A variant may raise, hang, segfault or eat memory. :func:`run_worker` starts
``python -m harness.measure.worker`` in a new session (process group) with a
wall-clock timeout and an address-space limit, and always returns what was
measured: the worker rewrites its JSON after every probe, so a crash half-way
keeps the probes that finished.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Default wall-clock limit of one variant's measurement, seconds. A small case
#: takes 2-10 s on a 2-core CPU including one kernel compile.
DEFAULT_TIMEOUT_S = 300.0

#: Default address-space limit (RLIMIT_AS) of the worker on CPU, bytes. Warp's
#: CPU runtime maps ~1.5 GiB of virtual memory at start-up; 16 GiB leaves room for
#: any small case and stops a runaway allocation before it takes the machine.
#: No limit is applied for CUDA devices (the driver maps huge virtual ranges).
DEFAULT_MEMORY_BYTES = 16 * 1024**3


@dataclass
class WorkerResult:
    """What came back from one measurement subprocess.

    Attributes
    ----------
    doc : dict or None
        The worker's JSON document (possibly partial), None if it wrote none.
    returncode : int or None
        Exit status; negative for a signal (e.g. -11 segfault); None on timeout.
    timed_out : bool
    stderr_tail : str
        Last 4000 characters of the worker's stderr/stdout.
    """

    doc: dict | None
    returncode: int | None
    timed_out: bool
    stderr_tail: str

    @property
    def died(self) -> str | None:
        """How the worker died (timeout or signal) and in which probe, else None."""
        where = (self.doc or {}).get("running")
        at = f" during probe {where}" if where else ""
        if self.timed_out:
            return f"timeout: the variant did not finish in time{at}"
        if self.returncode is not None and self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"crashed: the worker died with signal {name}{at}"
        return None

    @property
    def essentials(self) -> bool:
        """True when the determinism and finite-difference probes finished."""
        doc = self.doc or {}
        probes = doc.get("options", {}).get("probes") or ["fd"]
        return "gradient_norms" in doc.get("determinism", {}) and ("fd" in doc or "fd" not in probes)

    @property
    def failure(self) -> str | None:
        """A one-line reason when the measurement cannot be judged, else None.

        A worker that died in a late probe (after determinism and finite
        differences finished) is not a failure: what it measured is kept and
        :attr:`died` says what was lost."""
        if self.died and not self.essentials:
            return self.died
        if not self.essentials and self.doc is not None and not self.doc.get("errors"):
            return (f"the worker exited (status {self.returncode}) before the determinism and "
                    "finite-difference probes finished (does the program call sys.exit or os._exit?)")
        if self.doc is None:
            return f"no result: worker exited with status {self.returncode}"
        errs = [e for e in self.doc.get("errors", []) if e["probe"] in ("load", "determinism")]
        if errs:
            return f"{errs[0]['probe']} failed: {errs[0]['error']}"
        if self.returncode not in (0, None) and self.returncode > 0:
            return f"worker exited with status {self.returncode}"
        return None


def _limit(memory_bytes):
    def preexec():
        if memory_bytes:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return preexec


def run_worker(
    path: str | Path,
    device: str = "cpu",
    scale: str = "small",
    options: dict | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
    python: str | None = None,
) -> WorkerResult:
    """Measure the variant folder ``path`` in a subprocess.

    Parameters
    ----------
    path : path-like
        A (neutral copy of a) variant folder holding ``problem.py``.
    device, scale : str
        Passed to ``make_problem``.
    options : dict, optional
        Worker options (:mod:`harness.measure.worker`: ``probes``, ``knobs``, ``seed``).
    timeout_s : float
        Wall-clock limit; the whole process group is killed when it passes.
    memory_bytes : int or None
        RLIMIT_AS for the worker on CPU devices; None for no limit.
    python : str, optional
        Interpreter to use (default: this one).
    """
    with tempfile.TemporaryDirectory(prefix="d4w-out-") as tmp:
        out = os.path.join(tmp, "result.json")
        log = os.path.join(tmp, "output.log")
        cmd = [
            python or sys.executable, "-m", "harness.measure.worker", str(Path(path).resolve()),
            "--device", device, "--scale", scale, "--out", out,
            "--options", json.dumps(options or {}),
        ]
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONHASHSEED", "0")
        mem = memory_bytes if device.startswith("cpu") else None
        # output goes to a file, not a pipe: a grandchild the program detaches
        # would hold a pipe open and defeat the timeout
        with open(log, "wb") as sink:
            proc = subprocess.Popen(
                cmd, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=tmp, env=env, start_new_session=True, preexec_fn=_limit(mem),
            )
            _ACTIVE.add(proc)
            timed_out = False
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc)
                proc.wait()
            except BaseException:
                _kill(proc)
                raise
            finally:
                _ACTIVE.discard(proc)
        doc = None
        if os.path.exists(out):
            try:
                with open(out) as f:
                    doc = json.load(f)
            except (OSError, json.JSONDecodeError):
                doc = None
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 8000))
            text = f.read().decode("utf-8", "replace")
        return WorkerResult(doc, None if timed_out else proc.returncode, timed_out, text[-4000:])


#: Worker processes running now (killed by :func:`kill_all` on interruption).
_ACTIVE: set = set()


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_all() -> None:
    """Kill every running worker's process group (on Ctrl-C or SIGTERM, so no
    measurement outlives the command that started it)."""
    for proc in list(_ACTIVE):
        _kill(proc)
