"""The engine protocol every diagnostic engine implements.

An engine is any object with

``name``     str, unique in the registry (``reference``, ``always-bug`` ...)
``version``  str
``diagnose(path, device, scale, script=None) -> dict``
             ``path`` is a neutral copy of one variant folder (it holds
             ``problem.py``, or the user's files as they are); the engine
             loads it itself, in its own subprocess if it runs the program.
             ``script`` (optional, a :class:`defects4warp.capture.ScriptSpec`:
             entry, args, iteration, params) says that the folder is a
             training script to capture instead of a ``problem.py``. It never
             receives case.yaml, the case id or the variant name.

The returned diagnosis follows ``harness/schemas/diagnosis.schema.json``:

``verdict``    ``bug`` | ``no_bug`` | ``inconclusive`` | ``error``
``classes``    ranked ``[{"id": class id, "score": float >= 0}]``, best first
``signature``  the gradient signature (``defects4warp.taxonomy.SIGNATURES``) or None
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

from .. import isolation
from ..evidence_table import load_table
from ..isolation import DEFAULT_TIMEOUT_S
from ..provenance import digests, loaded_modules, merge
from ..taxonomy import CLASSES


@runtime_checkable
class Engine(Protocol):
    """Structural type of a diagnostic engine (see module docstring)."""

    name: str
    version: str

    def diagnose(self, path: str, device: str, scale: str) -> dict: ...


def diagnose_target(engine, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
    """``engine.diagnose(path, device, scale)``, with ``script=`` passed only when
    it is not None (engines written before script targets keep working on
    ``problem.py`` folders).

    Raises
    ------
    TypeError
        When ``script`` is given and the engine's ``diagnose`` takes no ``script``
        argument (the message names the engine).
    """
    if script is None:
        return engine.diagnose(path, device, scale)
    import inspect

    try:
        params = inspect.signature(engine.diagnose).parameters
    except (TypeError, ValueError):
        params = {}
    if "script" not in params and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        raise TypeError(f"engine {getattr(engine, 'name', type(engine).__name__)} cannot diagnose a script target: "
                        f"its diagnose() takes no script argument (write a make_problem adapter for it)")
    return engine.diagnose(path, device, scale, script=script)


@lru_cache(maxsize=1)
def diagnosis_schema() -> dict:
    """The JSON Schema of a diagnosis (``harness/schemas/diagnosis.schema.json``), with a ranked
    class's ``id`` limited to the taxonomy's classes (:data:`defects4warp.taxonomy.CLASSES`,
    sorted): the file leaves the enum open so that the classes are written once."""
    schema = json.loads(resources.files(__name__.split(".")[0]).joinpath("schemas/diagnosis.schema.json").read_text())
    schema["properties"]["classes"]["items"]["properties"]["id"]["enum"] = sorted(CLASSES)
    return schema


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


def refusal_of(doc: dict, table=None):
    """``(message, classes)`` when the worker's load or first probe failed
    because the release refused the program, else None.

    Which errors are refusals, and the classes each points at, is the evidence
    table's ``refusals`` section (:attr:`defects4warp.evidence_table.EvidenceTable.refusals`,
    first match wins); ``table`` defaults to the engine's."""
    table = table or load_table()
    for e in (doc or {}).get("errors", []):
        if e.get("probe") not in ("load", "determinism"):
            continue
        text = e.get("error", "") + "\n" + (e.get("traceback") or "")
        for pat, classes in table.refusals:
            if pat.search(text):
                return e["error"].splitlines()[0][:300], list(classes)
    return None


#: Format tag of a measurement record (:meth:`WorkerEngine.measure`).
MEASUREMENT_FORMAT = "defects4warp-measurement/1"

#: Harness files the parent process runs to take a measurement (start and
#: watch the worker, make the neutral copy, find a release's interpreter):
#: part of every record's ``code`` besides the worker's own modules.
PARENT_MEASUREMENT_PARTS = ("isolation.py", "sandbox.py", "blind.py", "envs.py")


#: Harness files and folders a measurement worker may import (the worker's side of the house): when a
#: worker died before listing its modules, a record names the ones of these the parent has loaded.
WORKER_SIDE = ("__init__.py", "probes/", "measure/", "capture/", "problem.py", "kernel_cache.py", "jsonio.py",
               "provenance.py", "paths.py")


def _worker_side(code: dict) -> dict:
    return {m: d for m, d in code.items() if m.startswith(WORKER_SIDE)}


def ev(probe: str, clean: bool, finding: str, data=None) -> dict:
    """One evidence entry of a diagnosis."""
    return {"probe": probe, "clean": bool(clean), "finding": finding, "data": data}


class WorkerEngine:
    """Base of the engines that measure a variant with the measurement worker
    (:func:`defects4warp.isolation.run_worker`). Subclasses set ``name``,
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
        Interpreter of a per-release environment (:mod:`defects4warp.envs`).
    """

    options: dict = {}

    def __init__(self, timeout_s: float | None = None, options: dict | None = None, python: str | None = None):
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        self.options = {**type(self).options, **(options or {})}
        self.python = python

    def judge(self, doc: dict, path) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def measurement_options(self) -> dict:
        """What this engine's measurement depends on besides the program, the
        release, the device and the scale: the worker options (``probes``,
        ``knobs``, ``seed``). Two engines with equal options share stored
        measurements (:func:`defects4warp.run.store.measurement_fields`)."""
        return {"worker": self.options}

    def measure(self, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
        """Measure ``path`` in the worker; return the measurement record (JSON).

        The record holds everything :meth:`interpret_measurement` needs and
        nothing it derives, so it can be stored and interpreted again by later
        interpretation code without running Warp:

        ``format``  :data:`MEASUREMENT_FORMAT`
        ``doc``     the worker's document (:mod:`defects4warp.probes.worker`), ``{}`` when it wrote none
        ``worker``  ``{"failure", "died", "leftovers", "stderr_tail"}`` of the
                    :class:`defects4warp.isolation.WorkerResult` (failure and died: one line or None)
        ``wall_s``  wall-clock seconds of the measurement (float)
        ``device``, ``scale``
        ``code``    the harness modules that took it, with their digests
                    (:mod:`defects4warp.provenance`): the worker's own list, else (a worker that died
                    before writing it) every module of :data:`WORKER_SIDE` this process has loaded
        """
        t0 = time.perf_counter()
        res = isolation.run_worker(path, device=device, scale=scale, options=self.options, timeout_s=self.timeout_s,
                         python=self.python, script=script)
        doc = res.doc or {}
        return {"format": MEASUREMENT_FORMAT, "doc": doc,
                "worker": {"failure": res.failure, "died": res.died, "leftovers": int(getattr(res, "leftovers", 0) or 0),
                           "stderr_tail": (res.stderr_tail or "")[-1500:] if res.failure else ""},
                "wall_s": time.perf_counter() - t0, "device": device, "scale": scale,
                "code": merge(doc.get("code") or _worker_side(loaded_modules()), digests(PARENT_MEASUREMENT_PARTS))}

    def interpret_measurement(self, record: dict, path) -> dict:
        """Turn a measurement record (:meth:`measure`) into a diagnosis with ``cost``.

        Pure of Warp: it reads ``record`` and the variant's files at ``path``
        (source evidence), so a stored record is re-interpreted by the current
        interpretation code in milliseconds. A failed measurement becomes an
        ``error`` diagnosis that says why (or ``refused``, when the release
        refused to build the program, :func:`refusal_of`); probes that failed or
        a worker that died late are noted in the evidence.
        """
        doc, w = record.get("doc") or {}, record.get("worker") or {}
        wall, device, scale = float(record.get("wall_s") or 0.0), record.get("device", "cpu"), record.get("scale", "small")
        refused = refusal_of(doc) if w.get("failure") else None
        if refused:
            diag = {"verdict": "refused", "classes": [{"id": c, "score": round(1.0 / len(refused[1]), 4)} for c in refused[1]],
                    "signature": None, "evidence": [ev("load", False, f"Warp {doc.get('warp_version')} refuses to build or "
                                                    f"run the program: {refused[0]}", None)]}
        elif w.get("failure"):
            diag = error_diagnosis(w["failure"], wall, device)
            errs = doc.get("errors", [])
            if errs:
                diag["evidence"].append(ev("load", False, errs[0]["error"], {"traceback": errs[0].get("traceback")}))
            elif w.get("stderr_tail"):
                diag["evidence"].append(ev("load", False, "worker output tail", {"tail": w["stderr_tail"]}))
        else:
            diag = self.judge_record(record, path)
            if w.get("died"):
                diag["evidence"].append(ev("worker", False, f"{w['died']}; the probes that finished are used", None))
            for e in doc.get("errors", []):
                diag["evidence"].append(ev(e["probe"], False, f"probe failed: {e['error']}", None))
        if w.get("leftovers"):
            diag["evidence"].append(ev("worker", False, f"the program left {w['leftovers']} process(es) running after "
                                       "the worker ended; they were killed", {"leftovers": w["leftovers"]}))
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
        if doc.get("capture") is not None:
            diag["capture"] = doc["capture"]
        diag["scale"] = doc.get("scale", scale)
        return diag

    def judge_record(self, record: dict, path) -> dict:
        """The diagnosis (without ``cost``) of a successful measurement: :meth:`judge`
        of its document. Engines whose measurement holds more than the worker's
        document (the reference engine's release differential) override this."""
        return self.judge(record.get("doc") or {}, path)

    def diagnose(self, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
        """Measure ``path`` in the worker and judge it: :meth:`interpret_measurement`
        of :meth:`measure`. ``script`` (a :class:`defects4warp.capture.ScriptSpec`)
        captures the Problem from the folder's training script instead of
        importing ``problem.py``."""
        return self.interpret_measurement(self.measure(path, device, scale, script=script), path)
