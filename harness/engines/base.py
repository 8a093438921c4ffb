"""The engine protocol every diagnostic engine implements.

An engine is any object with

``name``     str, unique in the registry (``reference``, ``always-bug`` ...)
``version``  str
``diagnose(path, device, scale) -> dict``
             ``path`` is a neutral copy of one variant folder (it holds
             ``problem.py``); the engine loads it itself, in its own
             subprocess if it runs the program. It never receives case.yaml,
             the case id or the variant name.

The returned diagnosis follows ``harness/schemas/diagnosis.schema.json``:

``verdict``    ``bug`` | ``no_bug`` | ``inconclusive`` | ``error``
``classes``    ranked ``[{"id": class id, "score": float >= 0}]``, best first
``signature``  the gradient signature (``harness.taxonomy.SIGNATURES``) or None
``evidence``   ``[{"probe", "clean": bool, "finding": str, "data": any}]``,
               including checks that came up clean
``cost``       ``{"wall_s", "objective_evals", "gradient_evals", "device", ...}``
``error``      (only with verdict ``error``) one line saying what failed
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from importlib import resources
from typing import Protocol, runtime_checkable

import jsonschema


@runtime_checkable
class Engine(Protocol):
    """Structural type of a diagnostic engine (see module docstring)."""

    name: str
    version: str

    def diagnose(self, path: str, device: str, scale: str) -> dict: ...


@lru_cache(maxsize=1)
def diagnosis_schema() -> dict:
    """The JSON Schema of a diagnosis (``harness/schemas/diagnosis.schema.json``)."""
    return json.loads(resources.files("harness").joinpath("schemas/diagnosis.schema.json").read_text())


def check_diagnosis(diag) -> str | None:
    """Return None when ``diag`` satisfies the schema, else the first violation as text."""
    v = jsonschema.Draft202012Validator(diagnosis_schema())
    for err in sorted(v.iter_errors(diag), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        return f"{where}: {err.message}"
    return None


def error_diagnosis(message: str, wall_s: float = 0.0, device: str | None = None, evidence=None) -> dict:
    """A diagnosis with verdict ``error`` (the variant could not be judged)."""
    return {
        "verdict": "error",
        "classes": [],
        "signature": None,
        "evidence": list(evidence or []),
        "cost": {"wall_s": float(wall_s), "objective_evals": None, "gradient_evals": None, "device": device},
        "error": message,
    }


def ev(probe: str, clean: bool, finding: str, data=None) -> dict:
    """One evidence entry of a diagnosis."""
    return {"probe": probe, "clean": bool(clean), "finding": finding, "data": data}


class WorkerEngine:
    """Base of the engines that measure a variant with the measurement worker
    (:func:`harness.isolation.run_worker`). Subclasses set ``name``,
    ``version`` and ``options`` (worker settings) and implement
    ``judge(doc, path) -> diagnosis`` (without ``cost``); this class runs the
    worker, turns a failed measurement into an ``error`` diagnosis that says
    why, notes probes that failed or a worker that died late, and fills ``cost``.

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit of one variant's measurement, seconds.
    options : dict, optional
        Worker settings added to the class's ``options``.
    python : str, optional
        Interpreter of a per-release environment (:mod:`harness.envs`).
    """

    options: dict = {}

    def __init__(self, timeout_s: float | None = None, options: dict | None = None, python: str | None = None):
        from ..isolation import DEFAULT_TIMEOUT_S

        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        self.options = {**type(self).options, **(options or {})}
        self.python = python

    def judge(self, doc: dict, path) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def diagnose(self, path, device: str = "cpu", scale: str = "small") -> dict:
        from ..isolation import run_worker

        t0 = time.perf_counter()
        res = run_worker(path, device=device, scale=scale, options=self.options, timeout_s=self.timeout_s,
                         python=self.python)
        wall = time.perf_counter() - t0
        doc = res.doc or {}
        if res.failure:
            diag = error_diagnosis(res.failure, wall, device)
            errs = doc.get("errors", [])
            if errs:
                diag["evidence"].append(ev("load", False, errs[0]["error"], {"traceback": errs[0].get("traceback")}))
            elif res.stderr_tail:
                diag["evidence"].append(ev("load", False, "worker output tail", {"tail": res.stderr_tail[-1500:]}))
        else:
            diag = self.judge(doc, path)
            if res.died:
                diag["evidence"].append(ev("worker", False, f"{res.died}; the probes that finished are used", None))
            for e in doc.get("errors", []):
                diag["evidence"].append(ev(e["probe"], False, f"probe failed: {e['error']}", None))
        if getattr(res, "leftovers", 0):
            diag["evidence"].append(ev("worker", False, f"the program left {res.leftovers} process(es) running after "
                                       "the worker ended; they were killed", {"leftovers": res.leftovers}))
        cost = doc.get("cost", {})
        diag["cost"] = {
            "wall_s": wall,
            "objective_evals": cost.get("objective_evals"),
            "gradient_evals": cost.get("gradient_evals"),
            "compiles": cost.get("compiles"),
            "compile_s": cost.get("compile_s"),
            "device": device,
        }
        for k in ("device_s", "device_peak_bytes"):
            if k in cost:  # measured on CUDA only: absent on CPU, never a made-up zero
                diag["cost"][k] = cost[k]
        diag["warp_version"] = doc.get("warp_version")
        return diag
