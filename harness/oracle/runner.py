"""Running the oracle worker in a contained subprocess.

One variant runs in ``python -m defects4warp.oracle.worker`` (the interpreter of
the Warp release measured) in the sandbox (:mod:`defects4warp.sandbox`: its own
session, so a hang is killed with everything it started, under a wall-clock
timeout and an address-space limit, ``RLIMIT_AS``, not applied on CUDA devices,
whose driver reserves far more virtual address space than it uses). The package alone is
put on ``PYTHONPATH`` (:func:`defects4warp.paths.import_root`, none of this
environment's site-packages); bytecode is not written into the variant folder.

It shares the sandbox with the engine's runner (:mod:`defects4warp.isolation`):
starting a process is no measurement, and one place owns it. Nothing the
engine measures with (the probes, the recorder) is imported here.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from .. import sandbox
from ..paths import child_pythonpath, module


#: Default address-space limit of a worker on CPU: 16 GiB.
DEFAULT_MEMORY_LIMIT = 16 * 2 ** 30

#: Size limit of any one file the worker writes (RLIMIT_FSIZE), bytes: a
#: program that tries to fill the disk gets EFBIG (Python ignores SIGXFSZ).
DEFAULT_FILE_LIMIT = 2 ** 30


def run_worker(path, *, device: str = "cpu", scale: str = "small", python: str | None = None,
               timeout_s: float = 300.0, knobs: dict | None = None, point: str | None = None,
               arrays: bool = False, memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
               replay: dict | None = None) -> tuple:
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
    replay : dict, optional
        A script variant's replay record (docs/oracle.md, "Script variants";
        made by the orchestration, e.g. ``defects4warp.capture.record.record_script``):
        ``path`` holds the user's script and the oracle replays it
        (:mod:`defects4warp.oracle.replay`) instead of calling ``make_problem``.

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
        if replay is not None:
            rec_path = os.path.join(tmp, "replay.json")
            with open(rec_path, "w") as f:
                json.dump(replay, f)
            cmd += ["--replay", rec_path]
        res = sandbox.run(cmd, timeout_s=timeout_s, env=env, cwd=tmp, memory_bytes=memory_limit,
                          file_bytes=DEFAULT_FILE_LIMIT)
        tail = res.stderr.strip().splitlines()[-5:]
        if res.timed_out:
            return _failed(f"timed out after {timeout_s:g} s", device, scale), None
        if not os.path.isfile(out):
            rc = res.returncode
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
