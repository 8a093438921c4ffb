"""Parent side of the builtins conformance suite: one release at a time, in batches, through the result store.

:func:`measure_release` enumerates the release's overloads in its own
interpreter (``python -m defects4warp.builtins.worker enumerate``), cuts the sorted
ids into batches of ``batch_size`` and measures each batch in a fresh worker
process (``... worker measure``) with a wall-clock limit. A batch whose worker
crashes or times out is split in halves and retried, down to single overloads,
which are then recorded as ``build_error`` with the reason. Every finished
batch is filed in the result store (kind ``builtins``, key: release, device,
the batch's ids, the suite's code digest, points and seed), so an interrupted
release resumes where it stopped and a measured release is reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from .. import sandbox

#: Overloads per worker process (one generated module each). On 1.19.0 a
#: kernel and its adjoint take about 1 s to compile on one CPU core, so a
#: batch of 60 takes 1-2 minutes.
BATCH_SIZE = 60
#: Wall-clock limit of one batch's worker, seconds.
BATCH_TIMEOUT_S = 900.0
#: Random points per overload and the base seed.
POINTS = 3
SEED = 0



def code_digest() -> str:
    """SHA-256 of the files that decide a cell (suite.py, check.py and worker.py)."""
    h = hashlib.sha256()
    for n in ("suite.py", "check.py", "worker.py"):
        h.update((Path(__file__).parent / n).read_bytes())
    return h.hexdigest()


def _run(python: str, args: list, timeout_s: float, log=None):
    from ..paths import child_pythonpath

    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)
    with tempfile.TemporaryDirectory(prefix="d4w-bw-") as tmp:
        out = os.path.join(tmp, "out.json")
        env["TMPDIR"] = tmp
        res = sandbox.run([python, "-m", "defects4warp.builtins.worker", *args, "--out", out], env=env,
                          timeout_s=timeout_s, cwd=tmp)
        if res.timed_out:  # the whole process tree is killed, not only the worker
            return None, f"timed out after {timeout_s:.0f} s"
        if res.returncode != 0 or not os.path.exists(out):
            tail = (res.stderr or res.stdout or "").strip().splitlines()[-1:] or [""]
            return None, f"worker exited with status {res.returncode}: {tail[0][:200]}"
        with open(out) as f:
            return json.load(f), None


def enumerate_release(python: str, *, timeout_s: float = 300.0) -> dict:
    """The worker's ``enumerate`` document for the release of ``python``.

    Raises
    ------
    RuntimeError
        When the worker fails (the message says how).
    """
    doc, err = _run(python, ["enumerate"], timeout_s)
    if doc is None:
        raise RuntimeError(f"enumerating builtins failed: {err}")
    return doc


def _measure_ids(python, ids, device, timeout_s, log):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(ids))
        idfile = f.name
    try:
        doc, err = _run(python, ["measure", "--ids", idfile, "--device", device, "--points", str(POINTS),
                                 "--seed", str(SEED)], timeout_s)
    finally:
        os.unlink(idfile)
    if doc is not None:
        return doc["cells"]
    if len(ids) == 1:
        return {ids[0]: {"state": "build_error", "message": f"worker crashed: {err}"}}
    if log:
        log(f"  batch of {len(ids)} failed ({err}); splitting")
    h = len(ids) // 2
    out = _measure_ids(python, ids[:h], device, timeout_s, log)
    out.update(_measure_ids(python, ids[h:], device, timeout_s, log))
    return out


def measure_release(release: str, python: str, *, device: str = "cpu", store=None, fresh: bool = False,
                    batch_size: int = BATCH_SIZE, timeout_s: float = BATCH_TIMEOUT_S, only=None, log=None) -> dict:
    """Measure every overload of ``release`` (interpreter ``python``) on ``device``.

    Parameters
    ----------
    release : str
        The Warp release of ``python`` (recorded; the worker reports its own too).
    python : str
        Interpreter with that release (:func:`defects4warp.envs.python_for`).
    device : str
        Warp device (default ``"cpu"``).
    store : defects4warp.run.store.ResultStore, optional
        Batches are read from and filed here (skipped when None).
    fresh : bool
        Measure again even when the store has a batch.
    batch_size, timeout_s : int, float
        See :data:`BATCH_SIZE` and :data:`BATCH_TIMEOUT_S`.
    only : callable, optional
        ``only(spec) -> bool`` restricts the overloads (tests).
    log : callable, optional
        Receives one-line progress messages.

    Returns
    -------
    dict
        ``{"warp", "device", "registry", "cells": {id: spec fields + cell}, "seconds",
        "reused_batches", "batches"}``.
    """
    t0 = time.time()
    en = enumerate_release(python)
    specs = [s for s in en["specs"] if only is None or only(s)]
    by_id = {s["id"]: s for s in specs}
    ids = sorted(by_id)
    cells, reused = {}, 0
    batches = [ids[i:i + batch_size] for i in range(0, len(ids), batch_size)]
    digest = code_digest()
    for b, chunk in enumerate(batches):
        fields = {"kind": "builtins", "warp": en["warp"], "device": device, "ids": chunk, "code": digest,
                  "points": POINTS, "seed": SEED}
        got = None if (store is None or fresh) else store.get(fields)
        if got is not None:
            reused += 1
        else:
            tb = time.time()
            got = _measure_ids(python, chunk, device, timeout_s, log)
            if store is not None:
                store.put(fields, got)
            if log:
                states = {}
                for c in got.values():
                    states[c["state"]] = states.get(c["state"], 0) + 1
                log(f"  Warp {en['warp']} batch {b + 1}/{len(batches)}: {len(chunk)} overloads in "
                    f"{time.time() - tb:.0f} s {states}")
        cells.update(got)
    merged = {}
    for i in ids:
        s = by_id[i]
        merged[i] = finalize({"builtin": s["builtin"], "family": s["family"], "dtype": s["dtype"],
                              "differentiable": s["differentiable"], **cells.get(i, {"state": "build_error",
                                                                                     "message": "not measured"})})
    return {"warp": en["warp"], "device": device, "registry": en["registry"], "cells": merged,
            "seconds": round(time.time() - t0, 1), "reused_batches": reused, "batches": len(batches)}


def finalize(cell: dict) -> dict:
    """A cell that ``agrees`` only because every coordinate with a non-zero finite difference was
    skipped as near a kink (finite differences exactly 0 on the rest: ``noise`` and ``rel_err`` 0,
    ``skipped`` > 0) is ``inconclusive``: e.g. ``tile_max`` over 8 float32 values, whose maximum
    and runner-up lie within the FD step."""
    if cell.get("state") == "agrees" and cell.get("skipped") and not cell.get("noise") and not cell.get("rel_err"):
        cell = dict(cell, state="inconclusive",
                    message="every coordinate with a non-zero finite difference sat near a kink")
    return cell


#: Fields of a cell kept in the committed data (harness/data/builtins).
DATA_FIELDS = ("builtin", "family", "dtype", "differentiable", "state", "rel_err", "noise", "message", "points")


def compact(doc: dict) -> dict:
    """The committed form of a release document: per cell only :data:`DATA_FIELDS`, numbers to 3 significant
    digits, ``points`` only for cells that do not agree (the worst one), build messages without the
    temporary file path. A ``wrong`` cell whose finite differences are all zero (relative error above
    1e6: the scale is the 1e-30 floor) gets ``rel_err`` None and ``fd_zero`` True."""
    out = {}
    for i, c in doc["cells"].items():
        c = finalize(c)
        d = {}
        for k in DATA_FIELDS:
            v = c.get(k)
            if v is None:
                continue
            if k in ("rel_err", "noise"):
                v = float(f"{v:.3g}")
            if k == "points" and (c.get("state") == "agrees" or not v):
                continue
            if k == "points":
                v = v[:1]
            if k == "message":
                v = re.sub(r" at \S+\.py:\d+", "", v)
            d[k] = v
        if d.get("state") == "wrong" and (d.get("rel_err") or 0) > 1e6:
            # the finite differences are zero (a piecewise-constant builtin): no relative error to speak of
            d["rel_err"] = None
            d["fd_zero"] = True
        out[i] = d
    return {"warp": doc["warp"], "device": doc["device"], "registry": doc.get("registry"), "cells": out}
