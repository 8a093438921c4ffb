"""Float64 NumPy twin check of a script case: compare the gradient a training script hands its update
with the derivative of an independent NumPy model of the same loss.

Every twin lives in ``scripts/twins/<case-id>.py`` (never inside a case folder, so no engine sees it:
engines get a neutral copy of one variant folder, ``defects4warp.blind.neutral_copy``) and defines

* ``ENTRY``, ``ARGS``: the script and its arguments (as in the case's ``script:`` block, possibly
  with more iterations so that a bug that shows late is reached);
* ``HOOK``: where the update consumes the gradient, one of
  ``("kernel", kernel_key, [param_arg, ...], [grad_arg, ...])`` (argument names of a Warp kernel
  launched by the update), optionally followed by ``point_key, [param_arg, ...]``: the parameters
  are then taken at the latest launch of the kernel ``point_key`` before the update (for a script
  that changes the parameters between its forward pass and the update), or ``("optim",)`` (``warp.optim.SGD.step`` / ``Adam.step``: the ``grad``
  list and the optimizer's ``params``);
* ``loss(params) -> float``: the loss the script reports, as a function of the list of parameter
  arrays (float64 NumPy, written without Warp), **or** ``grad(params) -> list[np.ndarray]``: an
  analytic gradient (used for deliberate surrogates, where finite differences of the hard forward
  are not the intended gradient);
* optionally ``combine(grads) -> list[np.ndarray]``: the gradient per parameter from the arrays the
  update reads (e.g. a data term and a prior term it adds).

The runner executes each variant of the case as ``__main__`` in its own process (variant folder
first on ``sys.path``), records at every update the parameters just before it and the gradient it
consumes, and compares that gradient with the twin's: central differences of ``loss`` with the
step ``h = 1e-6 * max(1, |x_i|)`` (float64 truncation error about h^2 |f'''|, round-off about
1e-16 |f| / h; Nocedal & Wright, Numerical Optimization, 2nd ed., sec. 8.1), or ``grad``.

Relative error of update k: ``max_i |g_script - g_twin| / max_i |g_twin|`` over all parameter
elements. Output: one JSON object per variant on stdout (``--json FILE`` writes all of them).

Usage::

    python scripts/twin_check.py CASE_ID [--json out.json]
    python scripts/twin_check.py all --json scripts/twins/results-1.19.0.json   # every twin

Run it with another release's interpreter (e.g. ``~/.cache/defects4warp/envs/warp-1.12.1/bin/python``)
to measure on that release.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TWINS = Path(__file__).resolve().parent / "twins"


def _twin(case_id: str):
    spec = importlib.util.spec_from_file_location(f"twin_{case_id.replace('-', '_')}", TWINS / f"{case_id}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def case_dir(case_id: str) -> Path:
    """The case folder in ``corpus/`` or ``corpus-pending/``; FileNotFoundError if neither."""
    for root in ("corpus", "corpus-pending"):
        d = ROOT / root / case_id
        if d.is_dir():
            return d
    raise FileNotFoundError(f"no case {case_id} under corpus/ or corpus-pending/")


def record(variant_dir: Path, entry: str, args: list, hook: tuple) -> list:
    """Run the script in this process; return ``[(params, grads), ...]`` per update (lists of arrays)."""
    import warp as wp

    records = []
    if hook[0] == "kernel":
        _, key, pnames, gnames = hook[:4]
        point_key, point_names = hook[4:6] if len(hook) >= 6 else (None, None)
        orig = wp.launch
        point = []

        def launch(kernel, *a, **kw):
            k = getattr(kernel, "key", None)
            if k in (key, point_key):
                inputs = list(kw.get("inputs", a[1] if len(a) > 1 else []))
                outputs = list(kw.get("outputs", a[2] if len(a) > 2 else []))
                names = [arg.label for arg in kernel.adj.args]
                vals = dict(zip(names, inputs + outputs))
                if k == point_key:
                    point[:] = [np.array(vals[n].numpy(), dtype=np.float64) for n in point_names]
                if k == key:
                    params = list(point) if point_key else [np.array(vals[n].numpy(), dtype=np.float64) for n in pnames]
                    records.append((params, [np.array(vals[n].numpy(), dtype=np.float64) for n in gnames]))
            return orig(kernel, *a, **kw)

        wp.launch = launch
    elif hook[0] == "optim":
        import warp.optim

        for cls in (warp.optim.SGD, warp.optim.Adam):
            orig_step = cls.step

            def step(self, grad, _orig=orig_step):
                records.append(([np.array(p.numpy(), dtype=np.float64) for p in self.params],
                                [np.array(g.numpy(), dtype=np.float64) for g in grad]))
                return _orig(self, grad)

            cls.step = step
    else:
        raise ValueError(f"unknown hook {hook!r}")
    sys.path.insert(0, str(variant_dir))
    os.chdir(variant_dir)
    sys.argv = [entry] + list(args)
    runpy.run_path(str(variant_dir / entry), run_name="__main__")
    return records


def central_difference(loss, params: list, rel_step: float = 1e-6) -> list:
    """Central differences of ``loss(params)`` on every element, float64."""
    out = []
    for k, p in enumerate(params):
        g = np.zeros_like(p, dtype=np.float64)
        flat = g.reshape(-1)
        for i in range(p.size):
            h = rel_step * max(1.0, abs(float(p.reshape(-1)[i])))
            plus = [q.astype(np.float64).copy() for q in params]
            minus = [q.astype(np.float64).copy() for q in params]
            plus[k].reshape(-1)[i] += h
            minus[k].reshape(-1)[i] -= h
            flat[i] = (loss(plus) - loss(minus)) / (2.0 * h)
        out.append(g)
    return out


def compare(twin, records: list) -> list:
    """Per update: relative error of the script's gradient against the twin's, and the twin's norm."""
    rows = []
    for k, (params, grads) in enumerate(records, start=1):
        if hasattr(twin, "combine"):
            grads = twin.combine(grads)
        ref = twin.grad(params) if hasattr(twin, "grad") else central_difference(twin.loss, params)
        a = np.concatenate([g.reshape(-1) for g in grads])
        b = np.concatenate([np.asarray(r, dtype=np.float64).reshape(-1) for r in ref])
        scale = float(np.max(np.abs(b)))
        err = float(np.max(np.abs(a - b)) / scale) if scale > 0 else float(np.max(np.abs(a)))
        rows.append({"iteration": k, "relative_error": err, "twin_max_abs": scale,
                     "ratio_median": float(np.median(a[np.abs(b) > 1e-3 * scale] / b[np.abs(b) > 1e-3 * scale]))
                     if scale > 0 else None})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case_id", help="a case id with a twin in scripts/twins/, or 'all'")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write the results to this file (for 'all': one object per case)")
    ns = ap.parse_args()
    if ns.case_id == "all" and not ns.one:
        import warp

        results = {"warp": warp.__version__, "cases": {}}
        for twin_file in sorted(TWINS.glob("*.py")):
            proc = subprocess.run([sys.executable, __file__, twin_file.stem, "--json", "/dev/stdout"],
                                  capture_output=True, text=True, timeout=1200)
            text = proc.stdout
            start = text.find("{")
            results["cases"][twin_file.stem] = json.loads(text[start:]) if start >= 0 else {"error": proc.stderr[-2000:]}
            print(text[:start] if start >= 0 else proc.stderr[-500:], end="", flush=True)
        if ns.json:
            tmp = Path(ns.json).with_suffix(".tmp")
            tmp.write_text(json.dumps(results, indent=1))
            tmp.replace(ns.json)
        return 0
    twin = _twin(ns.case_id)
    if ns.one:
        recs = record(Path(ns.one), twin.ENTRY, twin.ARGS, twin.HOOK)
        print("@@TWIN@@" + json.dumps(compare(twin, recs)))
        return 0
    cdir = case_dir(ns.case_id)
    out = {"case": ns.case_id, "variants": {}}
    for v in sorted(p for p in cdir.iterdir() if p.is_dir() and (p / twin.ENTRY).is_file()):
        proc = subprocess.run([sys.executable, __file__, ns.case_id, "--one", str(v)], capture_output=True,
                              text=True, timeout=600)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@TWIN@@")]
        if proc.returncode != 0 or not line:
            out["variants"][v.name] = {"error": proc.stderr[-2000:]}
        else:
            out["variants"][v.name] = json.loads(line[-1][len("@@TWIN@@"):])
    for name, rows in out["variants"].items():
        if isinstance(rows, dict):
            print(f"{ns.case_id}/{name}: ERROR {rows['error']}")
            continue
        text = "  ".join(f"it{r['iteration']}={r['relative_error']:.2e}" for r in rows)
        print(f"{ns.case_id}/{name}: {text}")
    if ns.json:
        if ns.json == "/dev/stdout":
            print(json.dumps(out))
        else:
            Path(ns.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
