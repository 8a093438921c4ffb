"""Triggering check of one mined case variant, run inside a per-release interpreter.

Maintainer tooling (called by ``scripts/mined.py``; never imported by the
harness). It imports only the standard library, NumPy and Warp, so it runs in
any per-release environment (``~/.cache/defects4warp/envs/warp-X``) without the
harness installed there.

Usage::

    python scripts/mined_trigger.py VARIANT_DIR CHECK_JSON
    python scripts/mined_trigger.py --debug VARIANT_DIR

The second form is the debug-mode run of mined admission: Warp's
``wp.config.mode = "debug"`` (kernels built with bounds-checked array access)
before the first kernel, then ``objective()`` and one ``gradient()`` call of
``make_problem("cpu", "small")``. How a failed native assertion shows on CPU
depends on the release: 1.7.2 prints ``Assertion failed: 'i >= 0 && i <
arr.shape[0]'`` and the file and line to the process's stderr and goes on,
so the run reads its own stderr (file descriptor 2, redirected to a
temporary file) and fails on any such line; 1.19.0 stops the process with
SIGILL (exit status -4 in the caller, no record printed), which the caller
counts as a failure (measured). It passes when both calls return and no
assertion failed (exit 0; 1 on a failed assertion; a Python exception exits
2). Whether every value is finite is recorded (``finite``) but not required:
a buggy variant's gradient may be NaN by design (a where_nan case). It
prints ``{"passed": bool, "warp_version": str, "mode": "debug",
"assertions": [first lines], "finite": bool, "seconds": float}``.

``VARIANT_DIR`` is a case variant folder holding ``problem.py`` with
``make_problem(device, scale)``; ``CHECK_JSON`` is the ``mined.trigger``
record of the case as JSON:

* ``{"kind": "expected_gradient", "gradient": {param: nested list}, "atol": A, "rtol": R}``:
  the fix's own test assertion, ``|g_ad - g_expected| <= atol + rtol |g_expected|``
  elementwise (``numpy.allclose`` semantics);
* ``{"kind": "central_difference", "eps": h, "atol": A, "rtol": R, "calls": n}``:
  a central difference ``(f(p + h e_k) - f(p - h e_k)) / 2h`` of ``objective()``
  on every coordinate of every parameter, against ``gradient()``, with the
  same ``allclose`` rule; the truncation error of a central difference is
  O(h^2 f''') (Nocedal & Wright, Numerical Optimization, 2nd ed., sec. 8.1).

Either kind calls ``gradient()`` ``calls`` times (default 1) and checks every
call, so a gradient that accumulates across calls fails from the second.

Prints one JSON line: ``{"passed": bool, "warp_version": str, "max_abs_error":
float, "calls": [...], "seconds": float}``; exit status 0 when the check
passed, 1 when it failed, 2 when the program could not run (the message is in
``"error"``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time


def _load(variant_dir: str):
    sys.path.insert(0, variant_dir)
    spec = importlib.util.spec_from_file_location("problem", f"{variant_dir}/problem.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _central_difference(problem, key: str, eps: float):
    import numpy as np

    arr = problem.params[key]
    base = arr.numpy().copy()
    flat = base.reshape(-1).astype(np.float64)
    grad = np.zeros_like(flat)
    for k in range(flat.size):
        for sign in (+1.0, -1.0):
            p = flat.copy()
            p[k] += sign * eps
            arr.assign(p.reshape(base.shape).astype(base.dtype))
            f = float(problem.objective())
            grad[k] += sign * f
        grad[k] /= 2.0 * eps
    arr.assign(base)
    return grad.reshape(base.shape)


def run(variant_dir: str, check: dict) -> dict:
    """Run the check; returns the result record (see the module docstring)."""
    import numpy as np
    import warp as wp

    t0 = time.perf_counter()
    wp.config.quiet = True
    wp.init()  # releases before 1.1.1 need it before the first array (the harness's worker does the same)
    mod = _load(variant_dir)
    problem = mod.make_problem("cpu", "small")
    atol = float(check.get("atol", 1e-5))
    rtol = float(check.get("rtol", 1e-4))
    calls = int(check.get("calls", 1))
    if check["kind"] == "expected_gradient":
        ref = {k: np.asarray(v, dtype=np.float64) for k, v in check["gradient"].items()}
    elif check["kind"] == "central_difference":
        ref = {k: _central_difference(problem, k, float(check.get("eps", 1e-3))) for k in problem.params}
    else:
        raise ValueError(f"unknown trigger kind {check['kind']!r}")
    out = []
    worst = 0.0
    ok = True
    for _ in range(calls):
        g = problem.gradient()
        rec = {}
        for k, r in ref.items():
            a = np.asarray(g[k], dtype=np.float64).reshape(r.shape)
            err = float(np.max(np.abs(a - r))) if r.size else 0.0
            worst = max(worst, err)
            good = bool(np.allclose(a, r, atol=atol, rtol=rtol))
            ok = ok and good
            rec[k] = {"ad": a.reshape(-1)[:8].tolist(), "reference": r.reshape(-1)[:8].tolist(), "ok": good}
        out.append(rec)
    return {"passed": ok, "warp_version": wp.config.version, "max_abs_error": worst, "calls": out,
            "seconds": round(time.perf_counter() - t0, 3)}


def run_debug(variant_dir: str) -> dict:
    """Debug-mode run (see the module docstring): objective and one gradient
    call with ``wp.config.mode = "debug"``; ``passed`` is False when a native
    assertion failed (read from this process's stderr; on releases where it
    traps, the process dies here instead), ``finite`` says whether every value
    was finite."""
    import numpy as np
    import warp as wp

    import os
    import tempfile

    t0 = time.perf_counter()
    wp.config.quiet = True
    wp.config.mode = "debug"
    wp.init()
    mod = _load(variant_dir)
    problem = mod.make_problem("cpu", "small")
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as err:
        os.dup2(err.fileno(), 2)
        try:
            f = float(problem.objective())
            g = problem.gradient()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            err.seek(0)
            text = err.read().decode(errors="replace")
    sys.stderr.write(text)
    asserts = [line.strip() for line in text.splitlines() if line.startswith("Assertion failed")]
    finite = bool(np.isfinite(f)) and all(bool(np.all(np.isfinite(np.asarray(v, dtype=np.float64))))
                                          for v in g.values())
    return {"passed": not asserts, "warp_version": wp.config.version, "mode": "debug",
            "assertions": sorted(set(asserts))[:5], "finite": finite,
            "seconds": round(time.perf_counter() - t0, 3)}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--debug":
        try:
            res = run_debug(argv[1])
        except Exception as exc:  # the program raised in debug mode: reported, not a pass
            print(json.dumps({"passed": False, "mode": "debug", "error": f"{type(exc).__name__}: {exc}"}))
            return 2
        print(json.dumps(res))
        return 0 if res["passed"] else 1
    variant_dir, check = argv[0], json.loads(argv[1])
    try:
        res = run(variant_dir, check)
    except Exception as exc:  # the program could not run on this release: reported, not a pass
        print(json.dumps({"passed": False, "error": f"{type(exc).__name__}: {exc}"}))
        return 2
    print(json.dumps(res))
    return 0 if res["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
