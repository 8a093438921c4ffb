"""``defects4warp validate``: check each case against the installed Warp,
without any engine.

For every variant and scale with an expectation on this release:

* ``bug``: autodiff must disagree with the truth (central finite differences,
  or ``reference_gradient()`` when the problem has one) on some call or
  point, and the measured signature must be one that an expected class can
  show (:attr:`harness.taxonomy.BugClass.signatures`); e.g. a case tagged
  ``missing_tape_zero`` must show growth across calls.
* ``no_bug``: autodiff must agree everywhere it was checked (seed pinned for
  a stochastic forward).

Also checked: the case format, and that variant sources hold no hint words
(:func:`harness.blind.hint_findings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .blind import hint_findings, neutral_copy
from .isolation import DEFAULT_TIMEOUT_S, kill_all, run_worker
from .measure.judge import signature_of, worst_relative_error
from .envs import missing_modules, python_for
from .runner import RunItem, plan
from .taxonomy import CLASSES

#: Worker settings for validation: no tracker, per-launch check or step sweep
#: (they are diagnosis, not ground truth; the tracker also forces a
#: recompile), every element checked up to 64, three calls.
VALIDATE_OPTIONS = {"tracker": False, "max_coords": 64, "dirs": 2, "launch_check": False, "sweep_coords": 0,
                    "horizon": False}


@dataclass
class VariantCheck:
    """Outcome of validating one variant at one scale."""

    case: str
    variant: str
    scale: str
    expected: dict | None
    ok: bool
    signature: str | None = None
    relative_error: float | None = None
    message: str = ""
    seconds: float = 0.0
    warp_version: str | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class CaseCheck:
    case: str
    ok: bool
    variants: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def check_measurement(expected: dict, doc: dict) -> tuple:
    """Judge one measurement document against one expectation.

    Returns
    -------
    (ok, signature, relative_error, message)
    """
    det = doc.get("determinism", {})
    if det.get("stochastic") and not det.get("seed_pinned"):
        return False, None, None, "objective() is not repeatable and the seed cannot be pinned (add set_seed)"
    if not (doc.get("nan_scan") or {}).get("objective_finite", False):
        return False, None, None, "objective() is not finite at the given point"
    sig = signature_of(doc)
    err = worst_relative_error(doc)
    if expected["verdict"] == "no_bug":
        if sig == "agrees":
            return True, sig, err, "autodiff agrees with the truth"
        return False, sig, err, f"expected no_bug but autodiff disagrees (signature {sig}, relative error {err:.3g})"
    if sig == "agrees":
        return False, sig, err, "expected a bug but autodiff agrees with the truth on every check"
    allowed = set().union(*(CLASSES[c].signatures for c in expected["classes"]))
    if sig not in allowed:
        return False, sig, err, (
            f"disagrees with signature {sig}, which none of {expected['classes']} shows (allowed: {sorted(allowed)})"
        )
    return True, sig, err, f"disagrees as expected (signature {sig}, relative error {err:.3g})"


def validate_item(item: RunItem, device: str, warp_version: str, timeout_s: float, python: str | None = None,
                  repeat: int = 1) -> VariantCheck:
    """Validate one run item with the interpreter ``python`` (default: this one),
    judged against the expectation for ``warp_version``.

    With ``repeat`` > 1 the measurement is taken that many times, each in a
    fresh process; the check fails unless every repeat gives the same outcome
    and signature (validation must be deterministic).
    """
    first = _validate_once(item, device, warp_version, timeout_s, python)
    for k in range(2, repeat + 1):
        again = _validate_once(item, device, warp_version, timeout_s, python)
        if (again.ok, again.signature) != (first.ok, first.signature):
            first.message = (f"non-deterministic: run 1 gave {first.signature} ({'ok' if first.ok else 'fail'}), "
                             f"run {k} gave {again.signature} ({again.message})")
            first.ok = False
            break
        first.seconds += again.seconds
    return first


def _validate_once(item: RunItem, device: str, warp_version: str, timeout_s: float, python: str | None) -> VariantCheck:
    exp = item.variant.expectation_for(warp_version, item.scale)
    if exp is None:
        return VariantCheck(item.case.id, item.variant.name, item.scale, None, True,
                            message=f"no expectation for Warp {warp_version} at scale {item.scale}: skipped")
    expected = exp.to_dict()
    missing = missing_modules(item.case.requires, python)
    if missing:
        return VariantCheck(item.case.id, item.variant.name, item.scale, None, True,
                            message=f"skipped: requires {', '.join(missing)}, not installed")
    with neutral_copy(item.variant.path) as path:
        res = run_worker(path, device=device, scale=item.scale, options=VALIDATE_OPTIONS, timeout_s=timeout_s,
                         python=python)
    seconds = (res.doc or {}).get("cost", {}).get("wall_s", 0.0)
    if res.failure:
        return VariantCheck(item.case.id, item.variant.name, item.scale, expected, False,
                            message=res.failure, seconds=seconds)
    measured = res.doc.get("warp_version")
    if measured != warp_version:
        return VariantCheck(item.case.id, item.variant.name, item.scale, expected, False,
                            message=f"the worker imported Warp {measured}, not {warp_version}", seconds=seconds)
    ok, sig, err, msg = check_measurement(expected, res.doc)
    return VariantCheck(item.case.id, item.variant.name, item.scale, expected, ok, sig, err, msg, seconds,
                        res.doc.get("warp_version"))


def _validate_work(item: RunItem, device: str, warp_version: str, timeout_s: float, python: str | None,
                   repeat: int, release: str | None) -> VariantCheck:
    """One validation work item as an executor runs it (on a Dask worker the
    per-release interpreter is prepared there, once per worker process)."""
    if release is not None:
        from .executors import worker_python

        python = worker_python(release)
    return validate_item(item, device, warp_version, timeout_s, python, repeat)


def validate_cases(cases: list, device: str = "cpu", jobs: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S,
                   on_check=None, warp: str | None = None, repeat: int = 1, store=None, fresh: bool = False,
                   executor=None, stats: dict | None = None) -> list:
    """Validate loaded cases; returns one :class:`CaseCheck` per case.

    Parameters
    ----------
    cases : list[Case]
    device : str
    jobs : int
        Checks run concurrently by the default local executor.
    timeout_s : float
        Wall-clock limit of one measurement, seconds.
    on_check : callable, optional
        Called with each :class:`VariantCheck` as it completes.
    warp : str, optional
        A release measured in its own environment
        (:func:`harness.envs.python_for`); None means the installed one.
    repeat : int
        Measurements per variant (see :func:`validate_item`).
    store : harness.store.ResultStore, optional
        Checks found there under their key (:func:`harness.store.validation_fields`)
        are reused; new ones are stored as they finish (not timeouts or lost workers).
    fresh : bool
        Measure everything again (and overwrite the store).
    executor : LocalExecutor or DaskExecutor, optional
        Where checks run (default: a local pool of ``jobs`` threads).
    stats : dict, optional
        Receives ``reused`` (checks taken from the store) and ``measured``.
    """
    from .executors import LocalExecutor, outcome
    from .store import transient, validation_fields

    python, warp_version = python_for(warp)
    items = plan(cases)
    checks = [None] * len(items)
    pending = []
    reused = 0
    for i, it in enumerate(items):
        exp = it.variant.expectation_for(warp_version, it.scale)
        if exp is None or missing_modules(it.case.requires, python):
            checks[i] = _validate_once(it, device, warp_version, timeout_s, python)  # skipped: nothing is run
        else:
            fields = None if store is None else validation_fields(it.variant.path, exp.to_dict(), VALIDATE_OPTIONS,
                                                                  warp_version, device, it.scale, repeat)
            hit = None if (fresh or fields is None) else store.get(fields)
            if hit is not None:
                checks[i] = VariantCheck(**hit)
                reused += 1
            else:
                pending.append((i, it, fields))
                continue
        if on_check:
            on_check(checks[i])
    ex = executor if executor is not None else LocalExecutor(jobs)
    futs = {}
    try:
        for i, it, fields in pending:
            futs[ex.submit(_validate_work, it, device, warp_version, timeout_s, python, repeat, warp)] = (i, it, fields)
        for f in ex.as_completed(list(futs)):
            i, it, fields = futs[f]
            check, cause = outcome(f)
            if check is None:
                exp = it.variant.expectation_for(warp_version, it.scale)
                check = VariantCheck(it.case.id, it.variant.name, it.scale, exp.to_dict() if exp else None, False,
                                     message=cause)
            elif fields is not None and not transient(check.message):
                store.put(fields, check.to_dict())
            checks[i] = check
            if on_check:
                on_check(check)
    except BaseException:
        ex.cancel(list(futs))
        kill_all()
        raise
    finally:
        if executor is None:
            ex.close()
    if stats is not None:
        stats.update({"reused": reused, "measured": len(pending)})
    out = []
    for c in cases:
        vc = [k for k in checks if k.case == c.id]
        problems = [f"{f}:{line}: hint word '{w}'" for v in c.variants for f, line, w in hint_findings(v.path)]
        out.append(CaseCheck(c.id, all(k.ok for k in vc) and not problems, vc, problems))
    return out


def validate_releases(cases: list, releases: list, device: str = "cpu", jobs: int = 1,
                      timeout_s: float = DEFAULT_TIMEOUT_S, repeat: int = 1, store=None, fresh: bool = False,
                      executor=None, on_check=None, on_release=None, json_path: str | None = None,
                      meta: dict | None = None) -> dict:
    """Validate ``cases`` on each of ``releases`` (None = the installed one),
    one after another; the core of ``defects4warp validate``.

    ``on_check(release, check)`` is called per :class:`VariantCheck`,
    ``on_release(warp_version, case_checks)`` after each release, and
    ``json_path`` (if given) is rewritten after each release.

    Returns
    -------
    dict
        ``{"device", "repeat", "releases": {version: {"wall_s", "checks":
        [check dicts], "reused"}}, "failures": [str], "wall_s", "reused"}``
        plus ``meta``; ``failures`` names every check that failed and every
        hint-word problem.
    """
    import time

    from .runner import write_json_atomic

    doc = {"device": device, "repeat": repeat, **(meta or {}), "releases": {}, "failures": [], "reused": 0}
    t_all = time.perf_counter()
    for rel in releases:
        _, warp_version = python_for(rel)
        t0 = time.perf_counter()
        stats = {}
        checks = validate_cases(cases, device=device, jobs=jobs, timeout_s=timeout_s, warp=rel, repeat=repeat,
                                store=store, fresh=fresh, executor=executor, stats=stats,
                                on_check=(lambda c, r=warp_version: on_check(r, c)) if on_check else None)
        for cc in checks:
            for v in cc.variants:
                if not v.ok:
                    doc["failures"].append(f"Warp {warp_version}: {cc.case}/{v.variant}@{v.scale}: {v.message}")
            doc["failures"] += [f"{cc.case}: {p}" for p in cc.problems]
        doc["releases"][warp_version] = {"wall_s": time.perf_counter() - t0, "reused": stats.get("reused", 0),
                                         "checks": [v.to_dict() for cc in checks for v in cc.variants]}
        doc["reused"] += stats.get("reused", 0)
        doc["wall_s"] = time.perf_counter() - t_all
        if on_release:
            on_release(warp_version, checks)
        if json_path:
            write_json_atomic(json_path, doc)
    return doc
