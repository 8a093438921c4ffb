"""The capture's reading of a script, exported as data: the *replay record* the oracle replays.

The independent oracle (:mod:`defects4warp.oracle.replay`) shares no code with the capture. What it takes
from the capture is the *interpretation* of a script, as plain JSON: which arrays are the params (allocation
sites), where the modelled iteration starts (a count of hooked calls), which backwards carry the loss, how
the update hands the gradient over, and the capture's own objective and gradient at the given point (the
oracle reproduces both before it measures anything). The format is described in docs/oracle.md ("Script
variants").

:func:`replay_record` exports a record from a :class:`~defects4warp.capture.CapturedProblem`;
``python -m defects4warp.capture.record FOLDER --script JSON --out FILE`` captures and writes one (in the
interpreter of the Warp release measured); :func:`record_script` runs that command sandboxed from the
parent process. Module-level imports are the standard library only (the capture itself is imported in
the child).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback

import numpy as np

from .. import sandbox
from ..kernel_cache import private_kernel_cache
from ..paths import child_pythonpath, module
from .spec import ScriptSpec
from .targets import module_file

#: Version of the record's format (docs/oracle.md, "Script variants").
RECORD_FORMAT = 1


def _flat(values) -> list:
    """A NumPy array as a flat list of Python floats (NaN and inf kept: Python's JSON writes them)."""
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def replay_record(cap) -> dict:
    """The replay record of a capture (before its objective and gradient are evaluated: see :func:`main`).

    Parameters
    ----------
    cap : CapturedProblem
        A capture as :func:`defects4warp.capture.capture_problem` returns it, its params at the given point.

    Returns
    -------
    dict
        JSON-able: ``format``, ``entry``, ``module``, ``entry_file`` (relative to the folder), ``args``,
        ``iteration``, ``params`` (``[{"name", "site": [file, line, occurrence], "shape", "x0"}]``: ``shape``
        the ``numpy()`` shape, ``x0`` the flat float64 values), ``inject_step``, ``first_backward``,
        ``backwards_per_iteration``, ``gradient_after_backward``, ``objective_offsets``, ``term_weights``
        (offset of a counted backward, as a string -> weights of its seeded arrays' sums, or null),
        ``external_terms`` (``[{"n", "inject_step"}]``: earlier backwards whose loss the objective adds),
        ``hand_seed_sites``, ``consume`` (param name -> ``{"step", "offset", "is_grad", "array_site", "site",
        "summed"}``), ``continue_chain``, ``stochastic`` and ``summary`` (the capture summary).
    """
    entry = os.path.relpath(str(cap.entry), str(cap.folder))
    params = []
    for name, arr in cap.params.items():
        v = np.asarray(arr.numpy())
        params.append({"name": name, "site": list(cap.sites[name]), "shape": [int(s) for s in v.shape],
                       "x0": _flat(v)})
    def where(part):
        return {"is_grad": bool(part["is_grad"]),
                "array_site": None if part.get("array_site") is None else list(part["array_site"])}

    consume = {}
    for name, c in cap.consume.items():
        consume[name] = {"step": int(c["step"]), "offset": int(c["offset"]), **where(c),
                         "site": None if c.get("site") is None else list(c["site"][:2]),
                         "summed": None if not c.get("summed") else [where(part) for part in c["summed"]]}
    tw = getattr(cap, "term_weights", None)
    return {"format": RECORD_FORMAT, "entry": cap.spec.entry, "module": bool(cap.spec.module), "entry_file": entry,
            "args": list(cap.spec.args), "iteration": int(cap.iteration), "params": params,
            "inject_step": int(cap.inject_step), "first_backward": int(cap.k),
            "backwards_per_iteration": int(cap.per_iteration), "gradient_after_backward": int(cap.grad_after),
            "objective_offsets": [int(o) for o in cap.obj_offsets],
            "term_weights": None if tw is None else {str(int(off)): None if w is None else [float(x) for x in w]
                                                     for off, w in tw.items()},
            "external_terms": [{"n": int(t["n"]), "inject_step": int(t["inject_step"])}
                               for t in getattr(cap, "external_terms", None) or ()],
            "hand_seed_sites": sorted(list(s) for s in cap.hand_seed_sites),
            "consume": consume, "continue_chain": bool(cap.carried or cap.stale_seed),
            "stochastic": bool(cap.stochastic), "summary": cap.capture_summary()}


def main(argv=None) -> int:
    """``python -m defects4warp.capture.record FOLDER --script JSON --out FILE [--device cpu] [--timeout S]``.

    Captures the script, exports :func:`replay_record`, then evaluates the capture's ``objective()`` and
    ``gradient()`` once each at the given point (``check``: ``{"objective", "gradient": {name: flat
    list}}``). A capture that fails writes ``{"format", "entry", "module", "args", "entry_file",
    "iteration", "error": {"type", "message", "cause", "traceback"}}`` instead (the oracle then runs the
    script itself to judge a refusal). Exit status 0 whenever a file is written.
    """
    ap = argparse.ArgumentParser(prog="python -m defects4warp.capture.record")
    ap.add_argument("folder")
    ap.add_argument("--script", required=True, help="JSON of a ScriptSpec")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run of the script")
    a = ap.parse_args(argv)
    kcache = private_kernel_cache()
    try:
        doc = _record(a)
    finally:
        if kcache is not None:
            kcache.cleanup()
    tmp = a.out + ".part"
    with open(tmp, "w") as f:
        json.dump(doc, f, default=str)
    os.replace(tmp, a.out)
    return 0


def _record(a) -> dict:
    spec = ScriptSpec.from_json(a.script)
    entry = module_file(a.folder, spec.entry) if spec.module else os.path.join(a.folder, spec.entry)
    where = {"entry": spec.entry, "module": bool(spec.module), "args": list(spec.args),
             "entry_file": os.path.relpath(str(entry or spec.entry), a.folder), "iteration": spec.iteration}
    try:
        # Warp and the capture's core (which imports Warp) load here, in the recording subprocess only: the
        # parent harness imports this module for record_script and never imports Warp
        import warp as wp

        wp.config.quiet = True
        wp.init()
        from .core import DEFAULT_TIMEOUT_S, capture_problem

        cap = capture_problem(a.folder, spec, a.device, timeout_s=a.timeout or DEFAULT_TIMEOUT_S)
        doc = replay_record(cap)
    except Exception as exc:  # noqa: BLE001 - written down for the oracle, which judges it itself
        cause = exc.__cause__
        return {"format": RECORD_FORMAT, **where, "error": {
            "type": type(exc).__name__, "message": str(exc).strip()[:2000],
            "cause": None if cause is None else f"{type(cause).__name__}: {str(cause).strip()[:500]}",
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))[-3000:]}}
    check = {}
    try:
        check["objective"] = float(cap.objective())
        check["gradient"] = {k: _flat(v) for k, v in cap.gradient().items()}
    except Exception as exc:  # noqa: BLE001 - the oracle reproduces what it can and says what it could not
        check["error"] = f"{type(exc).__name__}: {str(exc).strip()[:500]}"
    doc["check"] = check
    return doc


def record_script(folder, script, *, python: str | None = None, device: str = "cpu",
                  timeout_s: float = 300.0) -> dict:
    """Capture the script in ``folder`` in a sandboxed subprocess and return its replay record.

    Parameters
    ----------
    folder : path-like
        The variant folder (a copy without ``problem.py`` when the variant has an adapter too).
    script : dict or str
        The ScriptSpec fields (or their JSON).
    python : str, optional
        Interpreter of the Warp release measured (default: this one).
    device : str, default "cpu"
    timeout_s : float, default 300.0
        Wall-clock limit of the subprocess, seconds.

    Returns
    -------
    dict
        The record (:func:`replay_record` plus ``check``), or ``{"format", "error": {...}}`` when the
        capture failed, timed out or the process died (never raises for a failing script).
    """
    text = script if isinstance(script, str) else json.dumps(script, sort_keys=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="d4w-record-") as tmp:
        out = os.path.join(tmp, "record.json")
        cmd = [python or sys.executable, "-m", module("capture.record"), os.path.abspath(str(folder)),
               "--script", text, "--out", out, "--device", device]
        res = sandbox.run(cmd, timeout_s=timeout_s, env=env, cwd=tmp)
        if os.path.isfile(out):
            with open(out) as f:
                return json.load(f)
        why = f"timed out after {timeout_s:g} s" if res.timed_out else f"exit status {res.returncode}"
        tail = " | ".join(res.stderr.strip().splitlines()[-5:])[-400:]
        return {"format": RECORD_FORMAT, "error": {"type": "process", "message": f"the capture {why}: {tail}",
                                                   "cause": None, "traceback": ""}}  # no entry: nothing to run


if __name__ == "__main__":
    sys.exit(main())
