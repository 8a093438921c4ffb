"""The loss and the whole gradient of one program on the running Warp release (the program audit's child).

Run as ``python -m defects4warp.program_gradient FOLDER --out OUT.json [--script SPEC.json]``
inside the interpreter of one release (:mod:`defects4warp.envs`) by
:func:`defects4warp.program_audit.measure_gradient`. It captures the Problem of
the training script (:func:`defects4warp.capture.capture_problem`, the
capture's public entry point) or makes it from ``problem.py`` (an adapter),
evaluates ``objective()`` once and ``gradient()`` once, and writes::

    {"warp_version", "objective" (float, or a string for NaN/inf),
     "params": {name: {"shape", "dtype", "size", "norm", "finite" (bool),
                       "values" (the flat gradient as float64 numbers, only when size <= MAX_VALUES),
                       "digest" (SHA-256 of the float64 bytes, first 16 hex digits)}},
     "kernels": [the Warp keys of the kernels the gradient call's tapes recorded],
     "functions": [their Python function names],
     "capture": the capture's summary (None for an adapter),
     "seconds": {"load", "objective", "gradient"},
     "error": None or "Type: message", "traceback": None or text}

Imports only the standard library and NumPy at module level: it runs in every
supported release's interpreter, where the harness' own dependencies (click,
rich) are absent. Never raises: a failure is written under ``error`` and the
exit status is 3.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
import traceback

import numpy as np

#: Largest param (elements) whose whole gradient is written out; a larger one is compared by its norm
#: and digest only (1e5 float64 numbers are about 2.5 MB of JSON).
MAX_VALUES = 100_000


def _num(x: float):
    """``x`` as a JSON number, or ``"nan"``/``"inf"``/``"-inf"``."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _write(path: str, doc: dict) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".json", dir=d)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, default=str)
    os.replace(tmp, path)


def measure(folder: str, device: str, script_json: str | None, capture_timeout_s: float) -> dict:
    """Measure the program in ``folder`` (see the module docstring); never raises."""
    doc = {"warp_version": None, "objective": None, "params": {}, "kernels": [], "functions": [], "capture": None,
           "seconds": {}, "error": None, "traceback": None}
    try:
        import warp as wp

        doc["warp_version"] = wp.config.version
        wp.init()
        t0 = time.perf_counter()
        if script_json:
            from defects4warp.capture import ScriptSpec, capture_problem

            problem = capture_problem(folder, ScriptSpec.from_json(script_json), device, timeout_s=capture_timeout_s)
            try:
                doc["capture"] = problem.capture_summary()
            except Exception as exc:  # noqa: BLE001 - the summary is a report, the gradient still counts
                doc["capture"] = {"error": f"{type(exc).__name__}: {exc}"}
        else:
            from defects4warp.problem import import_variant

            problem = import_variant(folder).make_problem(device, "small")
        doc["seconds"]["load"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        doc["objective"] = _num(problem.objective())
        doc["seconds"]["objective"] = time.perf_counter() - t0
        from defects4warp.probes.determinism import capture_launches

        t0 = time.perf_counter()
        with capture_launches() as launched:
            grads = problem.gradient()
        doc["seconds"]["gradient"] = time.perf_counter() - t0
        keys, funcs = set(), set()
        for entry in launched or []:
            k = entry[0]
            keys.add(str(getattr(k, "key", k)))
            fn = getattr(getattr(k, "func", None), "__name__", None)
            if fn:
                funcs.add(fn)
        doc["kernels"], doc["functions"] = sorted(keys), sorted(funcs)
        for name in problem.params:
            g = np.asarray(grads.get(name) if isinstance(grads, dict) else None, dtype=np.float64)
            flat = g.reshape(-1)
            finite = bool(np.all(np.isfinite(flat)))
            rec = {"shape": list(g.shape), "dtype": str(np.asarray(problem.params[name].numpy()).dtype),
                   "size": int(flat.size), "norm": _num(np.linalg.norm(np.nan_to_num(flat))) if flat.size else 0.0,
                   "finite": finite, "digest": hashlib.sha256(flat.tobytes()).hexdigest()[:16]}
            if flat.size <= MAX_VALUES:
                rec["values"] = [_num(v) for v in flat]
            doc["params"][name] = rec
    except BaseException as exc:  # noqa: BLE001 - a program may raise anything, even SystemExit
        doc["error"] = f"{type(exc).__name__}: {exc}"
        doc["traceback"] = traceback.format_exc(limit=12)
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", required=True)
    ap.add_argument("--script", default=None, help="a file holding a ScriptSpec as JSON (none: problem.py)")
    ap.add_argument("--capture-timeout", type=float, default=120.0, help="seconds per run of the script")
    a = ap.parse_args(argv)
    script = open(a.script).read() if a.script else None
    doc = measure(a.folder, a.device, script, a.capture_timeout)
    _write(a.out, doc)
    sys.stdout.flush()
    return 3 if doc["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
