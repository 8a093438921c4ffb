"""Running an engine over a corpus and scoring each run.

A *run item* is one (case, variant, scale). Scales: every variant runs at
``small``; a variant also runs at ``production`` when one of its expectations
names that scale. Each item is copied to a neutral folder
(:func:`defects4warp.blind.neutral_copy`) and diagnosed there; an engine that
raises or returns something off-schema gets an ``error`` diagnosis for that
item and the run goes on.
"""

from __future__ import annotations

import copy
import inspect
import time
import traceback
from dataclasses import dataclass

from ..blind import neutral_copy
from ..corpus.case import Case, Variant
from ..engines.base import check_diagnosis, error_diagnosis
from ..envs import installed_warp_version, missing_modules  # noqa: F401 (re-exported)
from ..sandbox import kill_all
from ..jsonio import _strict, write_json_atomic  # noqa: F401 (re-exported: older callers import them from here)
from .scoring import judge, summarize, summarize_groups, summarize_tiers
from .store import diagnosis_fields, measurement_fields, measures_apart, transient


@dataclass(frozen=True)
class RunItem:
    """One (case, variant, scale, program) to diagnose or validate.

    ``program`` is ``"adapter"`` (the variant's ``problem.py``) or
    ``"script"`` (the user's script, run through the case's ``script:`` block).
    """

    case: Case
    variant: Variant
    scale: str
    program: str = "adapter"

    @property
    def label(self) -> str:
        s = "" if self.scale == "small" else f"@{self.scale}"
        p = " (script)" if self.program == "script" else ""
        return f"{self.case.id}/{self.variant.name}{s}{p}"

    @property
    def script(self):
        """The ``ScriptBlock`` this item runs, or None for an adapter item."""
        return self.variant.script if self.program == "script" else None


def plan(cases: list, scales: tuple | None = None, programs: str = "auto") -> list:
    """The run items for ``cases``.

    ``scales`` None means: ``small`` always, ``production`` where an
    expectation names it. An explicit tuple runs exactly those scales.
    A script is one program at the size its ``args`` give, so a script item
    runs at ``small`` only (its expectation for ``small`` scores it).
    ``programs`` (:data:`defects4warp.corpus.case.PROGRAMS`) chooses the adapter and/or
    the script of each variant; a variant with neither chosen is left out.
    """
    items = []
    for c in cases:
        for v in c.variants:
            if scales is None:
                want = ["small"] + (["production"] if any(e.scale == "production" for e in v.expectations) else [])
            else:
                want = list(scales)
            for prog in v.programs(programs):
                ss = want if prog == "adapter" else [s for s in want if s == "small"]
                items += [RunItem(c, v, s, prog) for s in ss]
    return items


def accepts_script(engine) -> bool:
    """True when ``engine.diagnose`` takes a ``script=`` keyword (or ``**kwargs``)."""
    try:
        sig = inspect.signature(engine.diagnose)
    except (TypeError, ValueError):
        return False
    return any(p.name == "script" or p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def item_copy(item: RunItem):
    """Context manager yielding the neutral copy an engine or the oracle is
    given: the variant folder, without ``problem.py`` for a script item (the
    user's files only)."""
    return neutral_copy(item.variant.path, drop=("problem.py",) if item.program == "script" else ())


def skipped_record(item: RunItem, python: str | None = None, warp_version: str | None = None) -> dict | None:
    """The record of an item whose case ``requires`` modules that ``python``
    cannot import (not diagnosed, unscored), or ``warp_version`` is older
    than the variant's ``min_warp`` (``unsupported`` is then True); None when
    the item is to be diagnosed.

    Its diagnosis verdict is ``skipped`` (never ``inconclusive``: no engine
    ran) and ``skipped`` holds the reason, e.g. ``requires torch, not installed``."""
    if warp_version is not None and not item.variant.supports(warp_version):
        return {"case": item.case.id, "variant": item.variant.name, "scale": item.scale,
                "domain": item.case.domain, "split": item.case.split, "tier": item.case.tier, "program": item.program,
                "expected": None,
                "diagnosis": {"verdict": "skipped", "classes": [], "signature": None, "evidence": [],
                              "cost": {"wall_s": 0.0}},
                "correct": None, "seconds": 0.0, "unsupported": True,
                "skipped": f"unsupported: the program needs Warp {item.variant.min_warp} or newer (min_warp), "
                           f"not {warp_version}"}
    missing = missing_modules(item.case.requires, python)
    if not missing:
        return None
    return {"case": item.case.id, "variant": item.variant.name, "scale": item.scale,
            "domain": item.case.domain, "split": item.case.split, "tier": item.case.tier, "program": item.program,
            "expected": None,
            "diagnosis": {"verdict": "skipped", "classes": [], "signature": None, "evidence": [],
                          "cost": {"wall_s": 0.0}},
            "correct": None, "seconds": 0.0, "skipped": f"requires {', '.join(missing)}, not installed"}


def score_item(item: RunItem, diag: dict, seconds: float, warp_version: str) -> dict:
    """The result record of ``item`` with diagnosis ``diag``, scored against
    the expectation for ``warp_version`` at the item's scale."""
    exp = item.variant.expectation_for(warp_version, item.scale)
    expected = exp.to_dict() if exp else None
    return {
        "case": item.case.id,
        "variant": item.variant.name,
        "scale": item.scale,
        "domain": item.case.domain,
        "split": item.case.split,
        "tier": item.case.tier,
        "program": item.program,
        "expected": expected,
        "diagnosis": diag,
        "correct": judge(expected, diag),
        "seconds": seconds,
    }


def diagnose_item(engine, item: RunItem, device: str, warp_version: str, python: str | None = None) -> dict:
    """Diagnose one item with ``engine`` on a neutral copy; return the result record.

    A case whose ``requires`` modules are missing from ``python`` is not
    diagnosed: its record has ``skipped`` set and no expectation (unscored).
    For an engine that stores its measurement apart from its interpretation
    (:func:`defects4warp.run.store.measures_apart`) the record also carries the
    measurement under :data:`MEASUREMENT_KEY` (the runner stores it and takes
    it off the record).
    """
    t0 = time.perf_counter()
    skipped = skipped_record(item, python, warp_version)
    if skipped:
        return skipped
    record = None
    try:
        kw = {}
        if item.program == "script":
            if not accepts_script(engine):
                diag = error_diagnosis(f"engine {engine.name} does not accept script variants (its diagnose() "
                                       "takes no script= argument); run with --programs adapters", 0.0, device)
                return score_item(item, diag, time.perf_counter() - t0, warp_version)
            kw["script"] = item.variant.script.spec()
        with item_copy(item) as path:
            if measures_apart(engine):
                record = engine.measure(str(path), device, item.scale, **kw)
                diag = engine.interpret_measurement(record, str(path))
            elif getattr(engine, "wants_summary", False):
                diag = engine.diagnose(str(path), device, item.scale, summary=item.case.summary, **kw)
            else:
                diag = engine.diagnose(str(path), device, item.scale, **kw)
        problem = check_diagnosis(diag)
        if problem:
            diag = error_diagnosis(f"engine returned an invalid diagnosis: {problem}", time.perf_counter() - t0, device)
    except Exception as exc:  # noqa: BLE001 - one engine failure must not stop the run
        diag = error_diagnosis(f"engine raised {type(exc).__name__}: {exc}", time.perf_counter() - t0, device,
                               [{"probe": "engine", "clean": False, "finding": traceback.format_exc(limit=5), "data": None}])
    out = score_item(item, diag, time.perf_counter() - t0, warp_version)
    if record is not None:
        out[MEASUREMENT_KEY] = record
    return out


#: Key under which :func:`diagnose_item` hands the measurement record to the runner.
MEASUREMENT_KEY = "_measurement"


def interpret_item(engine, item: RunItem, record: dict, warp_version: str) -> dict:
    """The result record of ``item`` from a stored measurement ``record``,
    interpreted by ``engine``'s current interpretation code on a neutral copy
    of the variant (no Warp run). An interpretation that raises or returns an
    off-schema diagnosis gives an ``error`` diagnosis, as in :func:`diagnose_item`;
    ``seconds`` is the measurement's wall time."""
    device = record.get("device", "cpu")
    try:
        with item_copy(item) as path:
            diag = engine.interpret_measurement(record, str(path))
        problem = check_diagnosis(diag)
        if problem:
            diag = error_diagnosis(f"engine returned an invalid diagnosis: {problem}", 0.0, device)
    except Exception as exc:  # noqa: BLE001 - one engine failure must not stop the run
        diag = error_diagnosis(f"engine raised {type(exc).__name__} interpreting a stored measurement: {exc}", 0.0,
                               device, [{"probe": "engine", "clean": False, "finding": traceback.format_exc(limit=5),
                                         "data": None}])
    return score_item(item, diag, float(record.get("wall_s") or 0.0), warp_version)


def _diagnose_work(engine, item: RunItem, device: str, warp_version: str, python: str | None, release: str | None):
    """One diagnosis work item as an executor runs it. On a Dask worker the
    per-release interpreter is resolved there (prepared once per worker
    process, :func:`defects4warp.run.executors.worker_python`)."""
    if release is not None and hasattr(engine, "python"):
        from .executors import worker_python

        python = worker_python(release)
        if engine.python != python:
            engine = copy.copy(engine)
            engine.python = python
    return diagnose_item(engine, item, device, warp_version, python)


#: Keys whose values are measured time (or when/where it ran, how much was
#: reused, and how many kernels were compiled rather than found in Warp's
#: kernel cache), left out when two runs' results are compared for
#: reproducibility.
TIMING_KEYS = frozenset({"wall_s", "seconds", "compile_s", "median_wall_s_per_run", "total_diagnosis_s", "date",
                         "machine", "load_s", "gradient_call_s", "total_compile_s", "device_s", "total_device_s",
                         "median_device_s", "reused", "reused_measured", "executor", "compiles", "total_compiles"})


def without_timing(x):
    """``x`` with every :data:`TIMING_KEYS` entry removed, recursively."""
    if isinstance(x, dict):
        return {k: without_timing(v) for k, v in x.items() if k not in TIMING_KEYS}
    if isinstance(x, list):
        return [without_timing(v) for v in x]
    return x


def _store_fields(store, engine, it: RunItem, warp_version: str, device: str) -> dict | None:
    """The store key fields of item ``it``: a measurement's for an engine that
    measures apart, else a diagnosis's; None without a store or for an
    engine whose results are not reused."""
    if store is None:
        return None
    script = it.variant.script.to_json() if it.program == "script" else None
    if measures_apart(engine):
        return measurement_fields(it.variant.path, engine, warp_version, device, it.scale, script=script)
    fields = diagnosis_fields(it.variant.path, engine, warp_version, device, it.scale)
    if fields is not None and script is not None:
        fields["script"] = script
    return fields


def run(items: list, engine, device: str = "cpu", jobs: int = 1, warp_version: str | None = None, on_result=None,
        json_path: str | None = None, meta: dict | None = None, python: str | None = None, store=None,
        fresh: bool = False, executor=None, release: str | None = None, prefilled: dict | None = None,
        measurements: dict | None = None, started: float | None = None, on_plan=None) -> dict:
    """Diagnose every item and score it.

    Parameters
    ----------
    items : list[RunItem]
    engine : Engine
    device : str
    jobs : int
        Items diagnosed concurrently by the default local executor (each
        reference diagnosis is its own subprocess, so threads suffice).
    warp_version : str, optional
        Release to score against (default: the installed one).
    on_result : callable, optional
        Called with each result record as it completes (progress display).
    json_path : str, optional
        Rewritten atomically after every completed item, so an interrupted run
        keeps what it measured.
    meta : dict, optional
        Extra fields for the summary.
    python : str, optional
        Interpreter the variants run under (for ``requires`` checks).
    store : defects4warp.run.store.ResultStore, optional
        Measurements found there under their key (:func:`defects4warp.run.store.measurement_fields`,
        engines that measure apart: interpreted again by the engine's current code) or
        diagnoses (:func:`defects4warp.run.store.diagnosis_fields`, other cacheable engines)
        are reused, re-scored against this run's expectations, and counted in
        ``summary["reused"]``; new ones are stored as they finish, so a killed
        run resumes where it stopped. None: nothing is read or written.
    fresh : bool
        Measure everything again (results are still written to ``store``).
    executor : LocalExecutor or DaskExecutor, optional
        Where items run (default: a local thread pool of ``jobs`` threads).
        An item whose executor worker is lost is recorded as an ``error``
        diagnosis naming the cause.
    release : str, optional
        The ``--warp`` release, so a remote worker prepares its own
        environment for it (None: the installed release).
    prefilled : dict, optional
        Result records already made (item index -> record), e.g. by an
        engine's preflight (:func:`defects4warp.run.preflight.preflight`): they
        are taken as they are and not diagnosed again.
    measurements : dict, optional
        Filled with ``{item index: measurement record}`` of every item an
        engine that measures apart (:func:`defects4warp.run.store.measures_apart`)
        measured or reused from the store (the committed measurement bundles
        of :mod:`defects4warp.report.engine_matrix` are made from it).
    started : float, optional
        When the run's work began, a :func:`time.perf_counter` reading (default: now), so
        ``summary["wall_s"]`` counts work done before this call for it (an engine's preflight,
        whose records come in ``prefilled``).
    on_plan : callable, optional
        Called once, before any diagnosis starts, as ``on_plan(to_measure, done)``: how many items
        must be diagnosed and how many were finished without it (reused from the store, prefilled
        or skipped), so the caller can say what the run will cost before it costs it.

    Returns
    -------
    dict
        ``{"summary": {...}, "results": [...]}`` (results in item order).
    """
    warp_version = warp_version or installed_warp_version()
    state = _RunState(items, engine, device, warp_version, executor, meta, on_result, json_path,
                      time.perf_counter() if started is None else started)
    pending = _reuse(state, python, store, fresh, prefilled, measurements)
    if on_plan is not None:
        on_plan(len(pending), len(items) - len(pending))
    if json_path and not pending:
        write_json_atomic(json_path, state.document())
    if not pending:
        return state.document()
    _diagnose(state, pending, jobs, python, store, executor, release, measurements)
    return state.document()


class _RunState:
    """What one :func:`run` has so far: ``done`` (item index -> result record) and ``reused`` (records
    taken from the store); :meth:`document` is the run's document, :meth:`finish` records one item."""

    def __init__(self, items, engine, device, warp_version, executor, meta, on_result, json_path, t0):
        self.items, self.engine, self.device, self.warp_version = items, engine, device, warp_version
        self.executor, self.meta, self.on_result, self.json_path, self.t0 = executor, meta, on_result, json_path, t0
        self.done = {}
        self.reused = 0

    def document(self) -> dict:
        """``{"summary": {...}, "results": [...]}`` of the items done so far (results in item order)."""
        done, meta = self.done, self.meta
        results = [done[i] for i in range(len(self.items)) if i in done]
        summary = summarize(results) if results else {"cases": 0, "variants": 0}
        imported = sorted({r["diagnosis"].get("warp_version") for r in results if r["diagnosis"].get("warp_version")})
        summary.update({
            "engine": self.engine.name,
            "warp_imported": imported,
            "engine_version": getattr(self.engine, "version", None),
            "warp_version": self.warp_version,
            "device": self.device,
            "wall_s": time.perf_counter() - self.t0,
            "complete": len(done) == len(self.items),
            "reused": self.reused,
            "executor": getattr(self.executor, "name", "local"),
        })
        summary.update(meta or {})
        if results and (meta or {}).get("group_by"):
            summary["groups"] = summarize_groups(results, meta["group_by"])
        tiers = summarize_tiers(results)
        if tiers:
            summary["tiers"] = tiers
        return {"summary": summary, "results": results}

    def finish(self, i, rec) -> None:
        """Record item ``i``'s result ``rec``: tell ``on_result``, rewrite ``json_path``."""
        self.done[i] = rec
        if self.on_result:
            self.on_result(rec)
        if self.json_path:
            write_json_atomic(self.json_path, self.document())


def _reuse(state: _RunState, python, store, fresh: bool, prefilled, measurements) -> list:
    """Finish every item of ``state`` that needs no diagnosis (prefilled, skipped, or found in ``store``);
    returns ``[(index, item, store fields)]`` of the others, in item order."""
    engine, warp_version = state.engine, state.warp_version
    pending = []
    for i, it in enumerate(state.items):
        if prefilled and i in prefilled:
            state.finish(i, prefilled[i])
            continue
        rec = skipped_record(it, python, warp_version)
        if rec is not None:
            state.finish(i, rec)
            continue
        fields = _store_fields(store, engine, it, warp_version, state.device)
        hit = None if (fresh or fields is None) else store.get(fields)
        if hit is not None:
            state.reused += 1
            if fields["kind"] == "measurement":
                if measurements is not None:
                    measurements[i] = hit
                state.finish(i, interpret_item(engine, it, hit, warp_version))
            else:
                state.finish(i, score_item(it, hit["diagnosis"], float(hit.get("seconds") or 0.0), warp_version))
        else:
            pending.append((i, it, fields))
    return pending


def _diagnose(state: _RunState, pending: list, jobs: int, python, store, executor, release, measurements) -> None:
    """Diagnose the ``pending`` items of ``state`` on ``executor`` (default: a local pool of ``jobs``
    threads), storing each new result; on any exception the work is cancelled and every worker killed."""
    from .executors import LocalExecutor, outcome

    engine, device, warp_version = state.engine, state.device, state.warp_version
    ex = executor if executor is not None else LocalExecutor(jobs)
    futs = {}
    try:
        for i, it, fields in pending:
            futs[ex.submit(_diagnose_work, engine, it, device, warp_version, python, release)] = (i, it, fields)
        for f in ex.as_completed(list(futs)):
            i, it, fields = futs[f]
            rec, cause = outcome(f)
            record = None if rec is None else rec.pop(MEASUREMENT_KEY, None)
            if rec is None:
                rec = score_item(it, error_diagnosis(cause, 0.0, device), 0.0, warp_version)
            elif fields is not None and not transient(rec["diagnosis"].get("error")):
                if fields["kind"] == "measurement":
                    if record is not None:
                        store.put(fields, record)
                else:
                    store.put(fields, {"diagnosis": rec["diagnosis"], "seconds": rec["seconds"]})
            if record is not None and measurements is not None:
                measurements[i] = record
            state.finish(i, rec)
    except BaseException:
        ex.cancel(list(futs))
        kill_all()
        raise
    finally:
        if executor is None:
            ex.close()
