"""``defects4warp validate``: check each case against the ground truth of the
independent oracle (:mod:`defects4warp.oracle`), without any engine.

The oracle shares no module with the reference engine, so an engine's score
against these labels is not circular. For every variant and scale with an
expectation on this release:

* ``no_bug``: the oracle's verdict must be ``agrees`` (every resolved finite
  difference item within tolerance, on each of three ``gradient()`` calls).
* ``bug``: the verdict must be ``wrong`` with a signature one of the
  expected classes can show (:attr:`defects4warp.taxonomy.BugClass.signatures`),
  and, where the case has a fixed twin (the ``fixed`` variant, or another
  ``no_bug`` variant, at this release and scale), the pair check must
  confirm it: measured at the same point, the two gradients differ beyond the
  noise while the objectives agree (unless ``objectives_differ`` says why
  not; :func:`defects4warp.oracle.compare_pair`).
* ``refused``: the verdict must be ``refused`` (this release refuses to
  build or run the program).
* *unsupported* (the release is older than the variant's ``min_warp``: the
  program uses a newer API): the oracle must fail to build or import it
  (verdict ``refused`` or ``error``); its check is ``unsupported``, which is
  neither scored nor a failure. The check at ``min_warp`` itself (an ordinary
  expectation) shows that it builds from there.

A variant that holds a script is validated as the script when the item's
program is ``script`` (``validate --programs scripts``): the capture reads the
script into a replay record (:func:`defects4warp.capture.record.record_script`,
data) and the oracle replays the script with its own instrumentation
(:mod:`defects4warp.oracle.replay`, docs/oracle.md "Script variants"); its
fixed twin is measured as its script too.

Each check gets a status: ``passed``; ``failed`` (the oracle contradicts the
tags, or the variant errs); ``unresolved`` (the oracle cannot resolve the
gradient above the objective's noise: not a pass); ``skipped`` (no
expectation on this release, or a module in ``requires:`` is missing);
``unsupported`` (below ``min_warp``, and the program indeed fails to build). Also
checked: the case format, and that variant sources hold no hint words
(:func:`defects4warp.blind.hint_findings`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .blind import hint_findings, neutral_copy
from .envs import missing_modules, python_for
from .oracle.api import DEFAULT_OBJECTIVE_RTOL, _finish_pair
from .oracle.runner import run_worker
from .sandbox import kill_all
from .run.store import transient, validation_fields
from .run.runner import RunItem, plan
from .taxonomy import CLASSES

#: Default seconds a variant's oracle measurement may take.
DEFAULT_TIMEOUT_S = 300.0

#: Oracle knobs used by validation (overrides of
#: :data:`defects4warp.oracle.worker.DEFAULT_KNOBS`); empty means the oracle's
#: documented defaults (every coordinate up to 10^4 parameters).
VALIDATE_KNOBS: dict = {}

#: Oracle signature kind -> the taxonomy signatures it stands for.
SIGNATURE_MAP = {"zero": ("zero",), "factor": ("exact_factor",), "nan": ("nan_inf",), "growth": ("growth",),
                 "iteration": ("iteration",), "other": ("sparse", "subtly_wrong"), "none": ("agrees",)}

STATUSES = ("passed", "failed", "unresolved", "skipped", "unsupported")

#: Statuses that do not fail validation.
OK_STATUSES = ("passed", "skipped", "unsupported")


@dataclass
class VariantCheck:
    """Outcome of validating one variant at one scale on one release.

    ``ok`` is True for ``passed`` and ``skipped``; ``signature`` is the
    taxonomy signature of the oracle's measurement; ``relative_error`` its
    worst relative error; ``oracle`` the compact measurement record
    (:func:`oracle_record`); ``pair`` the pair check against the fixed twin.
    """

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
    status: str = "passed"
    oracle: dict | None = None
    pair: dict | None = None
    program: str = "adapter"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class CaseCheck:
    case: str
    ok: bool
    variants: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def taxonomy_signature(doc: dict) -> str | None:
    """The taxonomy signature of an oracle measurement (None without one)."""
    sig = doc.get("signature") or {}
    kind = sig.get("kind")
    if kind is None:
        return None
    if kind == "other":
        return "sparse" if sig.get("detail") == "sparse" else "subtly_wrong"
    return SIGNATURE_MAP[kind][0]


def oracle_record(doc: dict) -> dict:
    """The compact, JSON-able part of an oracle measurement kept in the
    validation JSON: verdict, signature, worst relative error, resolved and
    unresolved items, noise floor, objective value, FD bookkeeping, failure."""
    noise = doc.get("noise") or {}
    fd = doc.get("fd") or {}
    obj = doc.get("objective") or {}
    rec = {"verdict": doc.get("verdict"), "signature": doc.get("signature"),
           "max_relative_error": doc.get("max_relative_error"), "resolved": doc.get("resolved"),
           "unresolved": doc.get("unresolved"), "noise_sigma": noise.get("sigma"),
           "noise_relative": noise.get("relative"), "noise_method": noise.get("ecnoise_method"),
           "objective": obj.get("value"), "seed_pinned": obj.get("seed_pinned"), "truth": doc.get("truth"),
           "fd_items": fd.get("items"), "fd_refined": fd.get("refined"), "fd_sampled": fd.get("sampled"),
           "kink_items": fd.get("kink_items"), "median_resolution": fd.get("median_resolution"),
           "calls": doc.get("calls"), "objective_evals": (doc.get("cost") or {}).get("objective_evals"),
           "wall_s": (doc.get("cost") or {}).get("wall_s"), "message": doc.get("message")}
    if doc.get("failure"):
        rec["failure"] = {k: doc["failure"].get(k) for k in ("stage", "type", "first_line")}
    if doc.get("fd_vs_reference"):
        rec["fd_vs_reference"] = doc["fd_vs_reference"]
    if doc.get("fd_only"):
        rec["fd_only"] = doc["fd_only"]
    return rec


def _pair_record(stats: dict, twin: str) -> dict:
    keys = ("confirmed", "objective_relative_difference", "objectives_agree", "objectives_differ", "gradients_differ",
            "differing_items", "ratio_median", "ratio_spread", "ratio_call", "max_relative_error", "same_point",
            "remeasured_at_right_point", "reason")
    return {"twin": twin, **{k: stats.get(k) for k in keys}}


class _Measurements:
    """Oracle measurements of (variant folder, scale, interpreter, device,
    point, repeat) shared by the checks of one process, so a fixed twin is
    measured once for its own check and every pair check."""

    def __init__(self):
        self._lock = threading.Lock()
        self._slots = {}

    def clear(self):
        with self._lock:
            self._slots.clear()

    def get(self, path, scale, python, device, timeout_s, knobs, point=None, point_key=None, repeat=0, script=None):
        key = (str(path), scale, python, device, point_key, repeat, tuple(sorted((knobs or {}).items())),
               None if script is None else json.dumps(script, sort_keys=True))
        with self._lock:
            slot = self._slots.setdefault(key, {"lock": threading.Lock(), "value": None})
        with slot["lock"]:
            if slot["value"] is None:
                with neutral_copy(path, drop=("problem.py",) if script is not None else ()) as p:
                    replay = None
                    if script is not None:
                        spec = {k: v for k, v in script.items() if k != "reference"}
                        replay = self.record(p, path, python, device, timeout_s, repeat, spec)
                        if script.get("reference") and not replay.get("error"):
                            replay = dict(replay, reference=script["reference"])
                    slot["value"] = run_worker(p, device=device, scale=scale, python=python, timeout_s=timeout_s,
                                               knobs=knobs, point=point, arrays=True, replay=replay)
            return slot["value"]

    def record(self, copy, path, python, device, timeout_s, repeat, script) -> dict:
        """The replay record of a script variant (:func:`defects4warp.capture.record.record_script`, run on the
        neutral copy ``copy`` of ``path``), made once per variant, interpreter, device and repeat: the
        capture's reading of the script, handed to the oracle as data."""
        from .capture.record import record_script

        key = ("record", str(path), python, device, repeat, json.dumps(script, sort_keys=True))
        with self._lock:
            slot = self._slots.setdefault(key, {"lock": threading.Lock(), "value": None})
        with slot["lock"]:
            if slot["value"] is None:
                slot["value"] = record_script(copy, script, python=python, device=device, timeout_s=timeout_s)
            return slot["value"]


MEASUREMENTS = _Measurements()


def _script(item: RunItem, variant=None) -> dict | None:
    """The ScriptSpec fields the oracle runs for ``item`` (or for its twin
    ``variant``, measured as the same program), None for an adapter item."""
    if item.program != "script":
        return None
    v = variant or item.variant
    if v.script is None:
        return None
    spec = v.script.to_json()
    if v.script.reference is not None:
        spec["reference"] = str(v.script.reference)  # the oracle's, handed over with the replay record
    return spec


def _script_key(item: RunItem) -> dict | None:
    """:func:`_script` as a result-store field: the reference file by the SHA-256 of its content (its
    path depends on the checkout; its content is what the oracle judges with)."""
    spec = _script(item)
    if spec and spec.get("reference"):
        spec["reference"] = hashlib.sha256(Path(spec["reference"]).read_bytes()).hexdigest()[:16]
    return spec


def _twin(item: RunItem, warp_version: str):
    """The variant a bug variant is paired with: ``fixed`` when it is
    ``no_bug`` here, else the first other ``no_bug`` variant; None if none.
    A script item's twin must hold the script too."""
    cands = sorted((v for v in item.case.variants if v.name != item.variant.name
                    and (item.program != "script" or v.script is not None)),
                   key=lambda v: (v.name != "fixed", v.name))
    for v in cands:
        e = v.expectation_for(warp_version, item.scale)
        if e is not None and e.verdict == "no_bug":
            return v
    return None


def validate_item(item: RunItem, device: str, warp_version: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                  python: str | None = None, repeat: int = 1, knobs: dict | None = None) -> VariantCheck:
    """Validate one run item with the interpreter ``python`` (default: this one),
    judged against the expectation for ``warp_version``.

    With ``repeat`` > 1 the measurement is taken that many times, each in a
    fresh process; the check fails unless every repeat gives the same status
    and signature (validation must be deterministic).
    """
    knobs = VALIDATE_KNOBS if knobs is None else knobs
    first = _validate_once(item, device, warp_version, timeout_s, python, knobs, 0)
    for k in range(2, repeat + 1):
        again = _validate_once(item, device, warp_version, timeout_s, python, knobs, k - 1)
        if (again.status, again.signature) != (first.status, first.signature):
            first.message = (f"non-deterministic: run 1 gave {first.signature} ({first.status}), "
                             f"run {k} gave {again.signature} ({again.status}: {again.message})")
            first.ok, first.status = False, "failed"
            break
        first.seconds += again.seconds
    return first


def _check(item, expected, status, message, doc=None, seconds=0.0, pair=None):
    rec = oracle_record(doc) if doc else None
    if rec is not None and doc.get("capture") is not None:
        rec["capture"] = doc["capture"]
    if rec is not None and doc.get("replay") is not None:
        rec["replay"] = doc["replay"]  # the replay's reproduction of the capture's record (script variants)
    return VariantCheck(item.case.id, item.variant.name, item.scale, expected, status in OK_STATUSES,
                        taxonomy_signature(doc) if doc else None, (doc or {}).get("max_relative_error"),
                        message, seconds, (doc or {}).get("warp_version"), status, rec, pair,
                        getattr(item, "program", "adapter"))


def unsupported_expectation(variant) -> dict:
    """The expectation recorded for a variant on a release below its ``min_warp``."""
    return {"verdict": "unsupported", "classes": [], "min_warp": variant.min_warp}


def _check_unsupported(item, device, warp_version, timeout_s, python, knobs, rep) -> VariantCheck:
    expected = unsupported_expectation(item.variant)
    missing = missing_modules(item.case.requires, python)
    if missing:
        return _check(item, None, "skipped", f"skipped: requires {', '.join(missing)}, not installed")
    # a script item is run as its script here too: measured as an adapter, a variant without a
    # problem.py "failed to build" on every release (ProblemError: problem.py not found)
    doc, _ = MEASUREMENTS.get(item.variant.path, item.scale, python, device, timeout_s, knobs, repeat=rep,
                              script=_script(item))
    seconds = float((doc.get("cost") or {}).get("wall_s") or 0.0)
    verdict = doc.get("verdict")
    first = ((doc.get("failure") or {}).get("first_line") or doc.get("message") or "").strip()
    if verdict in ("refused", "error"):
        return _check(item, expected, "unsupported", f"unsupported before Warp {item.variant.min_warp}: fails to "
                      f"build as min_warp says ({first[:200]})", doc, seconds)
    return _check(item, expected, "failed", f"min_warp says {item.variant.min_warp}, but the program builds and "
                  f"runs on Warp {warp_version} (oracle verdict {verdict})", doc, seconds)


def _validate_once(item, device, warp_version, timeout_s, python, knobs, rep) -> VariantCheck:
    if not item.variant.supports(warp_version):
        return _check_unsupported(item, device, warp_version, timeout_s, python, knobs, rep)
    exp = item.variant.expectation_for(warp_version, item.scale)
    if exp is None:
        return _check(item, None, "skipped", f"no expectation for Warp {warp_version} at scale {item.scale}: skipped")
    expected = exp.to_dict()
    missing = missing_modules(item.case.requires, python)
    if missing:
        return _check(item, None, "skipped", f"skipped: requires {', '.join(missing)}, not installed")
    doc, raw = MEASUREMENTS.get(item.variant.path, item.scale, python, device, timeout_s, knobs, repeat=rep,
                                script=_script(item))
    seconds = float((doc.get("cost") or {}).get("wall_s") or 0.0)
    if doc.get("warp_version") not in (None, warp_version):
        return _check(item, expected, "failed", f"the worker imported Warp {doc['warp_version']}, not {warp_version}",
                      doc, seconds)
    verdict = doc.get("verdict")
    detail = f" ({doc['message']})" if doc.get("message") else ""
    err = doc.get("max_relative_error")
    err_s = "n/a" if err is None else f"{float(err):.3g}"
    if expected["verdict"] == "refused":
        if verdict == "refused":
            return _check(item, expected, "passed", f"refused as expected{detail}", doc, seconds)
        return _check(item, expected, "failed", f"expected refused but the oracle says {verdict}{detail}", doc, seconds)
    if verdict == "unresolved":
        return _check(item, expected, "unresolved", f"the oracle cannot resolve the gradient above the noise{detail}",
                      doc, seconds)
    if verdict in ("error", "refused", None):
        return _check(item, expected, "failed", f"oracle verdict {verdict}{detail}", doc, seconds)
    if expected["verdict"] == "no_bug":
        if verdict == "agrees":
            return _check(item, expected, "passed", f"autodiff agrees with the truth (relative error {err_s}, "
                          f"{doc.get('resolved')} resolved, {doc.get('unresolved')} unresolved)", doc, seconds)
        return _check(item, expected, "failed", f"expected no_bug but the oracle says wrong "
                      f"(signature {taxonomy_signature(doc)}, relative error {err_s})", doc, seconds)
    # expected bug
    sig = taxonomy_signature(doc)
    if verdict == "agrees":
        return _check(item, expected, "failed", "expected a bug but autodiff agrees with the truth on every "
                      f"resolved item ({doc.get('resolved')} resolved)", doc, seconds)
    kind = (doc.get("signature") or {}).get("kind")
    allowed = set().union(*(CLASSES[c].signatures for c in expected["classes"]))
    if not allowed & set(SIGNATURE_MAP.get(kind, ())):
        return _check(item, expected, "failed", f"wrong with signature {sig}, which none of {expected['classes']} "
                      f"shows (allowed: {sorted(allowed)})", doc, seconds)
    twin = _twin(item, warp_version)
    if twin is None:
        return _check(item, expected, "passed", f"wrong as expected (signature {sig}, relative error {err_s}); "
                      "no fixed twin", doc, seconds)
    tdoc, traw = MEASUREMENTS.get(twin.path, item.scale, python, device, timeout_s, knobs, repeat=rep,
                                  script=_script(item, twin))
    differ = exp.objectives_differ or item.case.objectives_differ or False
    rename = _positional_names(doc, tdoc) if item.program == "script" else None
    if rename:
        doc, raw = _renamed(doc, raw, rename)

    def remeasure(point_file):
        if rename:
            point_file = _renamed_point(point_file, {b: a for a, b in rename.items()})
        got = MEASUREMENTS.get(item.variant.path, item.scale, python, device, timeout_s, knobs, point=point_file,
                               point_key=("at", str(twin.path)), repeat=rep, script=_script(item))
        return _renamed(*got, rename) if rename else got

    stats = _finish_pair(doc, raw, tdoc, traw, item.variant.path, device, item.scale, python, timeout_s, knobs,
                         "default", differ, DEFAULT_OBJECTIVE_RTOL, remeasure=remeasure)
    pair = _pair_record(stats, twin.name)
    if stats["confirmed"]:
        ratio = stats.get("ratio_median")
        return _check(item, expected, "passed", f"wrong as expected (signature {sig}, relative error {err_s}); "
                      f"pair with {twin.name} confirmed (ratio {ratio if ratio is None else f'{ratio:.3g}'})",
                      stats["wrong"], seconds, pair)
    if tdoc.get("verdict") == "unresolved":
        return _check(item, expected, "unresolved", f"the twin {twin.name} is unresolved", stats["wrong"], seconds,
                      pair)
    return _check(item, expected, "failed", f"pair check with {twin.name} failed: {stats.get('reason')}",
                  stats["wrong"], seconds, pair)


def _positional_names(doc: dict, tdoc: dict) -> dict | None:
    """A captured script names its params by allocation site (``file.py:LINE``),
    which a fix that adds or removes lines shifts. When the two measurements
    have the same number of params with the same sizes, in order, but other
    names, map the wrong variant's names onto the twin's (position by
    position); None when the names already agree or the params do not line up."""
    pa, pb = doc.get("params") or {}, tdoc.get("params") or {}
    if not pa or list(pa) == list(pb) or len(pa) != len(pb):
        return None
    if any(pa[a]["size"] != pb[b]["size"] for a, b in zip(pa, pb)):
        return None
    return dict(zip(pa, pb))


def _renamed(doc: dict, raw: dict | None, rename: dict) -> tuple:
    """``(doc, raw)`` with params and ``x0/<name>`` arrays renamed by ``rename``."""
    doc = dict(doc)
    doc["params"] = {rename.get(k, k): v for k, v in (doc.get("params") or {}).items()}
    if raw is not None:
        raw = {(f"x0/{rename.get(k[3:], k[3:])}" if k.startswith("x0/") else k): v for k, v in raw.items()}
    return doc, raw


def _renamed_point(point_file: str, rename: dict) -> str:
    """A copy of the point file ``point_file`` with ``x0/<name>`` renamed by
    ``rename``, written next to it."""
    import numpy as np

    with np.load(point_file) as z:
        data = {(f"x0/{rename.get(k[3:], k[3:])}" if k.startswith("x0/") else k): z[k] for k in z.files}
    out = point_file[:-4] + "-renamed.npz"
    np.savez(out, **data)
    return out


def counts(checks) -> dict:
    """``{"passed", "failed", "unresolved", "skipped", "unsupported"}`` counts of variant checks."""
    out = dict.fromkeys(STATUSES, 0)
    for c in checks:
        out[c.status if isinstance(c, VariantCheck) else c["status"]] += 1
    return out


def _validate_work(item: RunItem, device: str, warp_version: str, timeout_s: float, python: str | None,
                   repeat: int, knobs: dict | None, release: str | None) -> VariantCheck:
    """One validation work item as an executor runs it (on a Dask worker the
    per-release interpreter is prepared there, once per worker process; the
    fixed twin of a pair check is measured in that process)."""
    if release is not None:
        from .run.executors import worker_python

        python = worker_python(release)
    return validate_item(item, device, warp_version, timeout_s, python, repeat, knobs)


def skipped_release(cases: list, warp_version: str, reason: str, programs: str = "auto") -> list:
    """One :class:`CaseCheck` per case whose checks are all ``skipped``
    because ``warp_version`` cannot be installed here (``reason``: the
    :class:`defects4warp.envs.ReleaseEnvError` message)."""
    out = []
    for c in cases:
        vc = []
        for it in plan([c], programs=programs):
            exp = it.variant.expectation_for(warp_version, it.scale)
            vc.append(_check(it, exp.to_dict() if exp else None, "skipped",
                             f"skipped: Warp {warp_version} is not installed ({reason})"))
        out.append(CaseCheck(c.id, True, vc, []))
    return out


def validate_cases(cases: list, device: str = "cpu", jobs: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S,
                   on_check=None, warp: str | None = None, repeat: int = 1, knobs: dict | None = None,
                   store=None, fresh: bool = False, executor=None, stats: dict | None = None,
                   programs: str = "auto") -> list:
    """Validate loaded cases; returns one :class:`CaseCheck` per case.

    Parameters
    ----------
    cases : list[Case]
    device : str
    jobs : int
        Checks run concurrently by the default local executor.
    timeout_s : float
        Wall-clock limit of one oracle measurement, seconds.
    on_check : callable, optional
        Called with each :class:`VariantCheck` as it completes.
    warp : str, optional
        A release measured in its own environment
        (:func:`defects4warp.envs.python_for`); None means the installed one.
    repeat : int
        Measurements per variant (see :func:`validate_item`).
    knobs : dict, optional
        Oracle knobs (default :data:`VALIDATE_KNOBS`).
    store : defects4warp.run.store.ResultStore, optional
        Checks found there under their key (:func:`defects4warp.run.store.validation_fields`:
        the variant's and its fixed twin's files, the expectation, knobs, oracle
        code, release, device, scale, repeat) are reused; new ones are stored as
        they finish (not timeouts or lost workers).
    fresh : bool
        Measure everything again (and overwrite the store).
    executor : LocalExecutor or DaskExecutor, optional
        Where checks run (default: a local pool of ``jobs`` threads).
    stats : dict, optional
        Receives ``reused`` (checks taken from the store) and ``measured``.
    programs : str, default "auto"
        Which program of each variant is validated (:data:`defects4warp.corpus.case.PROGRAMS`):
        ``scripts`` validates the script variants as scripts, captured by the oracle.

    A case is ok when no check failed or stayed unresolved and no hint word was found.
    """
    from .run.executors import LocalExecutor, outcome

    python, warp_version = python_for(warp)
    knobs = VALIDATE_KNOBS if knobs is None else knobs
    items = plan(cases, programs=programs)
    # fixed twins first, so that pair checks find them measured
    order = sorted(range(len(items)), key=lambda i: items[i].variant.name != "fixed")
    MEASUREMENTS.clear()
    results, pending, reused = _stored_or_pending(items, order, device, warp_version, timeout_s, python, knobs,
                                                  repeat, store, fresh, on_check)
    ex = executor if executor is not None else LocalExecutor(jobs)
    futs = {}
    try:
        for i, it, fields in pending:
            futs[ex.submit(_validate_work, it, device, warp_version, timeout_s, python, repeat, knobs, warp)] = \
                (i, it, fields)
        for f in ex.as_completed(list(futs)):
            i, it, fields = futs[f]
            check, cause = outcome(f)
            if check is None:
                exp = it.variant.expectation_for(warp_version, it.scale)
                check = _check(it, exp.to_dict() if exp else None, "failed", cause)
            elif fields is not None and not transient(check.message):
                store.put(fields, check.to_dict())
            results[i] = check
            if on_check:
                on_check(check)
    except BaseException:
        ex.cancel(list(futs))
        kill_all()
        raise
    finally:
        if executor is None:
            ex.close()
    MEASUREMENTS.clear()
    if stats is not None:
        stats.update({"reused": reused, "measured": len(pending)})
    return _case_checks(cases, [results[i] for i in range(len(items))])


def _stored_or_pending(items, order, device, warp_version, timeout_s, python, knobs, repeat, store, fresh,
                       on_check) -> tuple:
    """Walk the planned items in ``order``: skipped ones (nothing run) and ones found in ``store`` are
    results at once (passed to ``on_check``), the others pending: ``(results, pending, reused)``."""
    results = {}
    pending = []
    reused = 0
    for i in order:
        it = items[i]
        exp = it.variant.expectation_for(warp_version, it.scale)
        supported = it.variant.supports(warp_version)
        if (exp is None and supported) or missing_modules(it.case.requires, python):
            results[i] = _validate_once(it, device, warp_version, timeout_s, python, knobs, 0)  # skipped, nothing run
        else:
            twin = _twin(it, warp_version) if supported and exp.verdict == "bug" else None
            fields = None if store is None else validation_fields(
                it.variant.path, exp.to_dict() if supported else unsupported_expectation(it.variant), knobs,
                warp_version, device, it.scale, repeat,
                twin=None if twin is None else twin.path,
                extra={"objectives_differ": (exp.objectives_differ if supported else None)
                       or it.case.objectives_differ or False,
                       **({"script": _script_key(it)} if it.program == "script" else {})})
            hit = None if (fresh or fields is None) else store.get(fields)
            if hit is None:
                pending.append((i, it, fields))
                continue
            # the stored measurement is keyed by the variant's content, not its names: a copy of a case under
            # another id (or a renamed variant folder) reuses it, reported under the names of this run
            results[i] = VariantCheck(**dict(hit, case=it.case.id, variant=it.variant.name, scale=it.scale,
                                             program=it.program))
            reused += 1
        if on_check:
            on_check(results[i])
    return results, pending, reused


def _case_checks(cases, checks) -> list:
    """One :class:`CaseCheck` per case from its variants' checks and the hint words found in its files."""
    out = []
    for c in cases:
        vc = [k for k in checks if k.case == c.id]
        problems = [f"{f}:{line}: hint word '{w}'" for v in c.variants for f, line, w in hint_findings(v.path)]
        out.append(CaseCheck(c.id, all(k.status in OK_STATUSES for k in vc) and not problems, vc, problems))
    return out


def validate_releases(cases: list, releases: list, device: str = "cpu", jobs: int = 1,
                      timeout_s: float = DEFAULT_TIMEOUT_S, repeat: int = 1, store=None, fresh: bool = False,
                      executor=None, on_check=None, on_release=None, json_path: str | None = None,
                      meta: dict | None = None, skip: dict | None = None, programs: str = "auto") -> dict:
    """Validate ``cases`` on each of ``releases`` (None = the installed one),
    one after another; the core of ``defects4warp validate``.

    ``on_check(release, check)`` is called per :class:`VariantCheck`,
    ``on_release(warp_version, case_checks)`` after each release, and
    ``json_path`` (if given) is rewritten after each release. ``skip`` maps
    releases that cannot be installed here to the reason: their checks are
    all ``skipped`` (:func:`skipped_release`), not passed.

    Returns
    -------
    dict
        ``{"device", "repeat", "releases": {version: {"wall_s", "counts",
        "checks": [check dicts], "reused"}}, "failures": [str], "wall_s",
        "reused"}`` plus ``meta``; ``failures`` names every check that failed
        or stayed unresolved and every hint-word problem.
    """
    import time

    from .run.runner import write_json_atomic

    doc = {"device": device, "repeat": repeat, **(meta or {}), "releases": {}, "failures": [], "reused": 0}
    t_all = time.perf_counter()
    skip = skip or {}
    for rel in releases:
        t0 = time.perf_counter()
        stats = {}
        if rel in skip:
            warp_version, checks = rel, skipped_release(cases, rel, skip[rel], programs)
        else:
            _, warp_version = python_for(rel)
            checks = validate_cases(cases, device=device, jobs=jobs, timeout_s=timeout_s, warp=rel, repeat=repeat,
                                    store=store, fresh=fresh, executor=executor, stats=stats, programs=programs,
                                    on_check=(lambda c, r=warp_version: on_check(r, c)) if on_check else None)
        for cc in checks:
            for v in cc.variants:
                if v.status in ("failed", "unresolved"):
                    prog = " (script)" if v.program == "script" else ""
                    doc["failures"].append(f"Warp {warp_version}: {cc.case}/{v.variant}@{v.scale}{prog}: {v.status}: "
                                           f"{v.message}")
            doc["failures"] += [f"{cc.case}: {p}" for p in cc.problems]
        flat = [v for cc in checks for v in cc.variants]
        doc["releases"][warp_version] = {"wall_s": time.perf_counter() - t0, "counts": counts(flat),
                                         "reused": stats.get("reused", 0), "checks": [v.to_dict() for v in flat]}
        doc["reused"] += stats.get("reused", 0)
        doc["wall_s"] = time.perf_counter() - t_all
        if on_release:
            on_release(warp_version, checks)
        if json_path:
            write_json_atomic(json_path, doc)
    return doc
