"""Checking a converted case: the Problem captured from a variant's script
equals the one its ``problem.py`` adapter builds.

A *converted* case (``tags.form: both``, docs/case-format.md) keeps its
adapter next to the user's script. :func:`compare_variant` measures both, each
in its own subprocess (``python -m defects4warp.corpus.conversion --snapshot``) on a neutral copy of
the variant folder (the script's copy holds no ``problem.py``), and compares
(every converted case: ``defects4warp maint conversion``):

* **params**: every captured param is matched to an adapter param of the
  same shape and values (``numpy.allclose`` with ``rtol`` :data:`VALUE_RTOL`,
  ``atol`` 0: the two start from the same seeded data, so the values are the
  same bits unless the adapter casts), greedily in capture order; a param
  left unmatched on either side is a disagreement;
* **objective**: ``|f_capture - f_adapter| <= OBJECTIVE_RTOL * max(|f_adapter|, 1e-30)``
  (the capture reads the script's loss at its first backward, or the
  seed-weighted sum when the script seeds ``grads={...}``; an adapter that
  reports another quantity than the seeded one disagrees here, which is
  itself evidence of a seed mismatch);
* **gradient**: for each matched pair, ``||g_c - g_a|| <= GRADIENT_RTOL * max(||g_a||, 1e-30)``.

Tolerances: both sides run the same kernels on the same data in the same
order, so they agree to the last bit on CPU; 1e-6 (relative) leaves room for
a float32 adapter that reduces in another order and is 10x above float32's
unit roundoff (6e-8), far below any gradient bug in the corpus (the smallest
measured buggy/fixed relative difference is above 1e-3, docs/version-matrix.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import sandbox
from ..isolation import DEFAULT_FILE_BYTES, DEFAULT_MEMORY_BYTES

#: Relative tolerance on param values when matching captured to adapter params.
VALUE_RTOL = 1e-6
#: Relative tolerance on the objective (see the module docstring).
OBJECTIVE_RTOL = 1e-6
#: Relative tolerance on the 2-norm of each matched param's gradient difference.
GRADIENT_RTOL = 1e-6
#: Wall-clock limit of one side's subprocess, seconds.
DEFAULT_TIMEOUT_S = 300.0


def _snapshot(kind: str, folder: str, device: str, scale: str, spec: dict | None, out: str) -> None:
    """Child side: measure one program and write ``out`` (npz) and ``out.json``."""
    import warp as wp

    wp.config.quiet = True
    wp.init()
    t0 = time.perf_counter()
    meta = {"kind": kind}
    if kind == "adapter":
        from ..problem import import_variant

        problem = import_variant(folder).make_problem(device, scale)
    else:
        from ..capture import ScriptSpec, capture_problem

        problem = capture_problem(folder, ScriptSpec(**spec), device)
    meta["load_s"] = time.perf_counter() - t0
    params = {k: np.array(v.numpy(), copy=True) for k, v in problem.params.items()}
    t1 = time.perf_counter()
    f = float(problem.objective())
    meta["objective_s"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    g = {k: np.asarray(v, dtype=np.float64) for k, v in problem.gradient().items()}
    meta["gradient_s"] = time.perf_counter() - t1
    meta["objective"] = f
    meta["names"] = list(params)
    meta["dtypes"] = {k: str(v.dtype) for k, v in params.items()}
    if kind == "script" and hasattr(problem, "capture_summary"):
        meta["capture"] = problem.capture_summary()
    arrays = {f"p/{i}": params[k] for i, k in enumerate(params)}
    arrays.update({f"g/{i}": g[k] for i, k in enumerate(params) if k in g})
    np.savez(out, **arrays)
    with open(out + ".json", "w") as fh:
        json.dump(meta, fh, default=str)


def _side(kind: str, folder: Path, device: str, scale: str, spec: dict | None, timeout_s: float,
          python: str | None) -> dict:
    """Parent side: run :func:`_snapshot` in a subprocess on a neutral copy; return
    ``{"meta", "params": {name: array}, "grad": {name: array}}`` or ``{"error": str}``."""
    from ..blind import neutral_copy

    from ..paths import child_pythonpath

    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with neutral_copy(folder, drop=("problem.py",) if kind == "script" else ()) as copy, \
            tempfile.TemporaryDirectory(prefix="d4w-conv-") as tmp:
        out = os.path.join(tmp, "snap.npz")
        cmd = [python or sys.executable, "-m", "defects4warp.corpus.conversion", "--snapshot", kind, str(copy),
               "--out", out, "--device", device, "--scale", scale, "--spec", json.dumps(spec)]
        t0 = time.perf_counter()
        res = sandbox.run(cmd, timeout_s=timeout_s, env=env, cwd=tmp, memory_bytes=DEFAULT_MEMORY_BYTES,
                          file_bytes=DEFAULT_FILE_BYTES)
        if res.timed_out:
            return {"error": f"{kind}: timed out after {timeout_s:g} s"}
        wall = time.perf_counter() - t0
        if res.returncode != 0 or not os.path.isfile(out + ".json"):
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            return {"error": f"{kind}: exit {res.returncode}: {' | '.join(tail)[-600:]}"}
        with open(out + ".json") as fh:
            meta = json.load(fh)
        meta["wall_s"] = wall
        with np.load(out) as z:
            names = meta["names"]
            params = {n: z[f"p/{i}"] for i, n in enumerate(names)}
            grad = {n: z[f"g/{i}"] for i, n in enumerate(names) if f"g/{i}" in z.files}
    return {"meta": meta, "params": params, "grad": grad}


def match_params(captured: dict, adapter: dict, rtol: float = VALUE_RTOL) -> tuple:
    """Match captured params to adapter params by shape and values.

    Parameters
    ----------
    captured, adapter : dict[str, numpy.ndarray]
        Param values by name.
    rtol : float
        ``numpy.allclose`` relative tolerance (``atol`` 0).

    Returns
    -------
    (pairs, unmatched_captured, unmatched_adapter) : tuple[dict, list, list]
        ``pairs`` maps a captured name to its adapter name.
    """
    left = dict(adapter)
    pairs = {}
    for cn, cv in captured.items():
        for an, av in list(left.items()):
            if np.shape(av) == np.shape(cv) and np.allclose(np.asarray(cv, np.float64), np.asarray(av, np.float64),
                                                            rtol=rtol, atol=0.0, equal_nan=True):
                pairs[cn] = an
                del left[an]
                break
    return pairs, [c for c in captured if c not in pairs], list(left)


def compare_variant(folder, spec: dict, *, device: str = "cpu", scale: str = "small",
                    timeout_s: float = DEFAULT_TIMEOUT_S, python: str | None = None) -> dict:
    """Measure a converted variant's adapter and script and compare them.

    Parameters
    ----------
    folder : path-like
        Variant folder holding ``problem.py`` and the script.
    spec : dict
        The ``ScriptSpec`` fields (``ScriptBlock.to_json()``).
    device, scale : str
        Passed to ``make_problem`` (the script runs at the size its ``args`` give).
    timeout_s : float
        Limit of each side's subprocess, seconds.
    python : str, optional
        Interpreter (default: this one).

    Returns
    -------
    dict
        ``agrees`` (bool), ``reasons`` (list of str, empty when it agrees),
        ``pairs`` (captured name -> adapter name), ``unmatched_captured``,
        ``unmatched_adapter``, ``objective`` (``{"capture", "adapter",
        "relative_difference"}``), ``gradient`` (per captured name:
        ``{"adapter", "shape", "relative_difference"}``), ``capture``
        (the capture summary), ``seconds`` (per side), ``error`` when a side
        failed, and ``refused`` (with ``agrees`` True) when this Warp release
        refuses to build both alike (``WarpCodegenError`` on both sides).
    """
    folder = Path(folder)
    a = _side("adapter", folder, device, scale, None, timeout_s, python)
    c = _side("script", folder, device, scale, spec, timeout_s, python)
    out = {"agrees": False, "reasons": [], "pairs": {}, "unmatched_captured": [], "unmatched_adapter": [],
           "objective": None, "gradient": {}, "capture": (c.get("meta") or {}).get("capture"),
           "seconds": {"adapter": (a.get("meta") or {}).get("wall_s"), "script": (c.get("meta") or {}).get("wall_s")}}
    refusal = "WarpCodegenError"
    if "error" in a and "error" in c and refusal in a["error"] and refusal in c["error"]:
        # this Warp release refuses to build the program: both sides alike (a refused label)
        out.update(agrees=True, refused=True, note="both the adapter and the script are refused by this Warp "
                   "release (WarpCodegenError)")
        return out
    for side in (a, c):
        if "error" in side:
            out["error"] = side["error"]
            out["reasons"].append(side["error"])
    if out["reasons"]:
        return out
    pairs, uc, ua = match_params(c["params"], a["params"])
    out.update(pairs=pairs, unmatched_captured=uc, unmatched_adapter=ua)
    for n in uc:
        out["reasons"].append(f"captured param {n} {list(np.shape(c['params'][n]))} matches no adapter param by "
                              "shape and value")
    for n in ua:
        out["reasons"].append(f"adapter param {n} {list(np.shape(a['params'][n]))} was not captured")
    fa, fc = a["meta"]["objective"], c["meta"]["objective"]
    rel = abs(fc - fa) / max(abs(fa), 1e-30)
    out["objective"] = {"capture": fc, "adapter": fa, "relative_difference": rel}
    if not rel <= OBJECTIVE_RTOL:
        kind = ((out["capture"] or {}).get("objective") or {}).get("kind")
        out["reasons"].append(f"objective {fc!r} (capture{', seed-weighted' if kind == 'seeded' else ''}) vs "
                              f"{fa!r} (adapter): relative difference {rel:.3g}")
    for cn, an in pairs.items():
        gc, ga = c["grad"].get(cn), a["grad"].get(an)
        if gc is None or ga is None or np.shape(gc) != np.shape(ga):
            out["reasons"].append(f"gradient of {cn}: shapes {np.shape(gc)} vs {np.shape(ga)}")
            continue
        d = float(np.linalg.norm(gc - ga))
        r = d / max(float(np.linalg.norm(ga)), 1e-30)
        if not np.isfinite(r):
            r = 0.0 if np.array_equal(gc, ga, equal_nan=True) else float("inf")
        out["gradient"][cn] = {"adapter": an, "shape": list(np.shape(gc)), "relative_difference": r}
        if not r <= GRADIENT_RTOL:
            out["reasons"].append(f"gradient of {cn} (adapter {an}): relative difference {r:.3g}")
    out["agrees"] = not out["reasons"]
    return out


def compare_case(case, *, device: str = "cpu", timeout_s: float = DEFAULT_TIMEOUT_S, python: str | None = None) -> dict:
    """:func:`compare_variant` on every variant of a loaded case that holds
    both programs; ``{variant name: result}``."""
    return {v.name: compare_variant(v.path, v.script.to_json(), device=device, timeout_s=timeout_s, python=python)
            for v in case.variants if v.form == "both"}


def check_corpus(targets=(), *, device: str = "cpu", json_path=None, on_result=None) -> tuple[dict, int]:
    """:func:`compare_case` on the case folders ``targets`` (default: every case of the
    bundled corpus tagged ``form: both``), what ``defects4warp maint conversion`` runs.

    ``on_result(case_id, variant, result)`` is called after each variant; with
    ``json_path`` the document ``{case: {variant: result}}`` is rewritten
    (atomically) after each case, so a killed run keeps the cases it finished.
    Returns ``(document, number of variants that disagree)``."""
    from .case import default_corpus, load_case, load_corpus
    from ..jsonio import write_json_atomic

    cases = [load_case(t) for t in targets] if targets else \
        [c for c in load_corpus(default_corpus())[0] if c.form == "both"]
    doc, bad = {}, 0
    for c in cases:
        doc[c.id] = compare_case(c, device=device)
        for v, r in doc[c.id].items():
            bad += not r["agrees"]
            if on_result:
                on_result(c.id, v, r)
        if json_path:
            write_json_atomic(json_path, doc)
    return doc, bad


def main(argv=None) -> int:
    """The measured child of :func:`compare_variant` (``--snapshot adapter|script FOLDER --out OUT``).
    The comparison itself is ``defects4warp maint conversion``."""
    ap = argparse.ArgumentParser(prog="python -m defects4warp.corpus.conversion",
                                 description="Child process of `defects4warp maint conversion`: snapshot one program")
    ap.add_argument("targets", nargs="*", help="the variant folder")
    ap.add_argument("--snapshot", choices=["adapter", "script"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--scale", default="small")
    ap.add_argument("--spec", default="null")
    a = ap.parse_args(argv)
    _snapshot(a.snapshot, a.targets[0], a.device, a.scale, json.loads(a.spec), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
