"""Running a variant's measurement in its own subprocess.

A variant may raise, hang, segfault or eat memory. :func:`run_worker` starts
``python -m defects4warp.probes.worker`` in the sandbox (:mod:`defects4warp.sandbox`:
a new session, a wall-clock timeout, an address-space and a file-size limit,
children killed however they detach), and always returns what was
measured: the worker rewrites its JSON after every probe, so a crash half-way
keeps the probes that finished.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import sandbox
from .paths import child_pythonpath, module
from .sandbox import SIGNAL_CAUSES

#: Default wall-clock limit of one variant's measurement, seconds. A small case
#: takes 2-10 s on a 2-core CPU including one kernel compile.
DEFAULT_TIMEOUT_S = 300.0

#: Default address-space limit (RLIMIT_AS) of the worker on CPU, bytes. Warp's
#: CPU runtime maps ~1.5 GiB of virtual memory at start-up; 16 GiB leaves room for
#: any small case and stops a runaway allocation before it takes the machine.
#: No limit is applied for CUDA devices (the driver maps huge virtual ranges).
DEFAULT_MEMORY_BYTES = 16 * 1024**3

#: Default size limit of any one file the worker writes (RLIMIT_FSIZE), bytes.
#: Warp's compiled kernels are a few MiB; a variant that writes past 1 GiB is
#: killed by SIGXFSZ and recorded as filling the disk.
DEFAULT_FILE_BYTES = 1024**3

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
    leftovers: int = 0

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
            cause = SIGNAL_CAUSES.get(name)
            return f"crashed: the worker died with signal {name}{' (' + cause + ')' if cause else ''}{at}"
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
            err = errs[0]["error"]
            if "File too large" in err or "No space left on device" in err or "Disk quota exceeded" in err:
                return f"{errs[0]['probe']} failed: the program filled the disk or wrote past the file size limit (RLIMIT_FSIZE): {err}"
            if "MemoryError" in err or "Cannot allocate memory" in err or "std::bad_alloc" in err:
                return f"{errs[0]['probe']} failed: allocation past the memory cap (RLIMIT_AS): {err}"
            return f"{errs[0]['probe']} failed: {err}"
        if self.returncode not in (0, None) and self.returncode > 0:
            return f"worker exited with status {self.returncode}"
        return None


#: Fraction of a script worker's wall-clock limit given to each run of the script by the capture (the rest
#: leaves time to write its message and the measurement document before the worker would be killed).
CAPTURE_TIMEOUT_FRACTION = 0.8
#: Seconds of a script worker's limit always kept for starting Python, importing Warp and writing the document.
CAPTURE_TIMEOUT_MARGIN_S = 10.0


def run_worker(
    path: str | Path,
    device: str = "cpu",
    scale: str = "small",
    options: dict | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
    python: str | None = None,
    file_bytes: int | None = DEFAULT_FILE_BYTES,
    script=None,
) -> WorkerResult:
    """Measure the variant folder ``path`` in a subprocess.

    Parameters
    ----------
    path : path-like
        A (neutral copy of a) variant folder holding ``problem.py``, or the
        user's script files when ``script`` is given.
    device, scale : str
        Passed to ``make_problem``.
    options : dict, optional
        Worker options (:mod:`defects4warp.probes.worker`: ``probes``, ``knobs``, ``seed``).
    timeout_s : float
        Wall-clock limit; the whole process group is killed when it passes.
    memory_bytes : int or None
        RLIMIT_AS for the worker on CPU devices; None for no limit.
    python : str, optional
        Interpreter to use (default: this one).
    file_bytes : int or None
        RLIMIT_FSIZE of the worker (default :data:`DEFAULT_FILE_BYTES`); None for no limit.
    script : defects4warp.capture.ScriptSpec, optional
        Capture the Problem from this script of ``path`` (passed to the worker
        as a JSON file, :func:`defects4warp.capture.capture_problem`) instead of
        importing ``problem.py``. Unless ``options`` sets ``capture_timeout_s``,
        each run of the script gets :data:`CAPTURE_TIMEOUT_FRACTION` of
        ``timeout_s`` (at most ``timeout_s -`` :data:`CAPTURE_TIMEOUT_MARGIN_S`,
        at least 1 s), so a script that never reaches its backward ends with the
        capture's own message (what ran, where it was) rather than a kill.

    The worker runs in :func:`defects4warp.sandbox.run`: every process the
    program starts is killed when the worker ends, however it detached
    (:attr:`WorkerResult.leftovers` counts them), and the worker dies with
    this process (``PR_SET_PDEATHSIG``).
    """
    if script is not None and "capture_timeout_s" not in (options or {}):
        t = float(timeout_s)
        options = dict(options or {}, capture_timeout_s=max(1.0, min(CAPTURE_TIMEOUT_FRACTION * t,
                                                                       t - CAPTURE_TIMEOUT_MARGIN_S)))
    with tempfile.TemporaryDirectory(prefix="d4w-out-") as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [
            python or sys.executable, "-m", module("probes.worker"), str(Path(path).resolve()),
            "--device", device, "--scale", scale, "--out", out,
            "--options", json.dumps(options or {}),
        ]
        if script is not None:
            spec_file = os.path.join(tmp, "script.json")
            with open(spec_file, "w") as f:
                f.write(script.to_json() if hasattr(script, "to_json") else json.dumps(script))
            cmd += ["--script", spec_file]
        env = dict(os.environ)
        env["PYTHONPATH"] = child_pythonpath(env)  # this package only, not this environment's site-packages
        env.setdefault("PYTHONHASHSEED", "0")
        env["TMPDIR"] = tmp
        res = sandbox.run(cmd, timeout_s=timeout_s, env=env, cwd=tmp, merge_output=True,
                          memory_bytes=memory_bytes if device.startswith("cpu") else None, file_bytes=file_bytes)
        doc = None
        if os.path.exists(out):
            try:
                with open(out) as f:
                    doc = json.load(f)
            except (OSError, json.JSONDecodeError):
                doc = None
        return WorkerResult(doc, res.returncode, res.timed_out, res.stdout[-4000:], res.leftovers)
