"""``defects4warp validate``: check each case against the ground truth of the
independent oracle (:mod:`harness.oracle`), without any engine.

The oracle shares no module with the reference engine, so an engine's score
against these labels is not circular. For every variant and scale with an
expectation on this release:

* ``no_bug``: the oracle's verdict must be ``agrees`` (every resolved finite
  difference item within tolerance, on each of three ``gradient()`` calls).
* ``bug``: the verdict must be ``wrong`` with a signature one of the
  expected classes can show (:attr:`harness.taxonomy.BugClass.signatures`),
  and, where the case has a fixed twin (the ``fixed`` variant, or another
  ``no_bug`` variant, at this release and scale), the pair check must
  confirm it: measured at the same point, the two gradients differ beyond the
  noise while the objectives agree (unless ``objectives_differ`` says why
  not; :func:`harness.oracle.compare_pair`).
* ``refused``: the verdict must be ``refused`` (this release refuses to
  build or run the program).

Each check gets a status: ``passed``; ``failed`` (the oracle contradicts the
tags, or the variant errs); ``unresolved`` (the oracle cannot resolve the
gradient above the objective's noise: not a pass); ``skipped`` (no
expectation on this release, or a module in ``requires:`` is missing). Also
checked: the case format, and that variant sources hold no hint words
(:func:`harness.blind.hint_findings`).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .blind import hint_findings, neutral_copy
from .envs import missing_modules, python_for
from .oracle.api import DEFAULT_OBJECTIVE_RTOL, _finish_pair
from .oracle.runner import kill_all, run_worker
from .runner import RunItem, plan
from .taxonomy import CLASSES

#: Default seconds a variant's oracle measurement may take.
DEFAULT_TIMEOUT_S = 300.0

#: Oracle knobs used by validation (overrides of
#: :data:`harness.oracle.worker.DEFAULT_KNOBS`); empty means the oracle's
#: documented defaults (every coordinate up to 10^4 parameters).
VALIDATE_KNOBS: dict = {}

#: Oracle signature kind -> the taxonomy signatures it stands for.
SIGNATURE_MAP = {"zero": ("zero",), "factor": ("exact_factor",), "nan": ("nan_inf",), "growth": ("growth",),
                 "iteration": ("iteration",), "other": ("sparse", "subtly_wrong"), "none": ("agrees",)}

STATUSES = ("passed", "failed", "unresolved", "skipped")


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

    def get(self, path, scale, python, device, timeout_s, knobs, point=None, point_key=None, repeat=0):
        key = (str(path), scale, python, device, point_key, repeat, tuple(sorted((knobs or {}).items())))
        with self._lock:
            slot = self._slots.setdefault(key, {"lock": threading.Lock(), "value": None})
        with slot["lock"]:
            if slot["value"] is None:
                with neutral_copy(path) as p:
                    slot["value"] = run_worker(p, device=device, scale=scale, python=python, timeout_s=timeout_s,
                                               knobs=knobs, point=point, arrays=True)
            return slot["value"]


MEASUREMENTS = _Measurements()


def _twin(item: RunItem, warp_version: str):
    """The variant a bug variant is paired with: ``fixed`` when it is
    ``no_bug`` here, else the first other ``no_bug`` variant; None if none."""
    cands = sorted((v for v in item.case.variants if v.name != item.variant.name),
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
    return VariantCheck(item.case.id, item.variant.name, item.scale, expected, status in ("passed", "skipped"),
                        taxonomy_signature(doc) if doc else None, (doc or {}).get("max_relative_error"),
                        message, seconds, (doc or {}).get("warp_version"), status,
                        oracle_record(doc) if doc else None, pair)


def _validate_once(item, device, warp_version, timeout_s, python, knobs, rep) -> VariantCheck:
    exp = item.variant.expectation_for(warp_version, item.scale)
    if exp is None:
        return _check(item, None, "skipped", f"no expectation for Warp {warp_version} at scale {item.scale}: skipped")
    expected = exp.to_dict()
    missing = missing_modules(item.case.requires, python)
    if missing:
        return _check(item, None, "skipped", f"skipped: requires {', '.join(missing)}, not installed")
    doc, raw = MEASUREMENTS.get(item.variant.path, item.scale, python, device, timeout_s, knobs, repeat=rep)
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
    tdoc, traw = MEASUREMENTS.get(twin.path, item.scale, python, device, timeout_s, knobs, repeat=rep)
    differ = exp.objectives_differ or item.case.objectives_differ or False

    def remeasure(point_file):
        return MEASUREMENTS.get(item.variant.path, item.scale, python, device, timeout_s, knobs, point=point_file,
                                point_key=("at", str(twin.path)), repeat=rep)

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


def counts(checks) -> dict:
    """``{"passed", "failed", "unresolved", "skipped"}`` counts of variant checks."""
    out = dict.fromkeys(STATUSES, 0)
    for c in checks:
        out[c.status if isinstance(c, VariantCheck) else c["status"]] += 1
    return out


def skipped_release(cases: list, warp_version: str, reason: str) -> list:
    """One :class:`CaseCheck` per case whose checks are all ``skipped``
    because ``warp_version`` cannot be installed here (``reason``: the
    :class:`harness.envs.ReleaseEnvError` message)."""
    out = []
    for c in cases:
        vc = []
        for it in plan([c]):
            exp = it.variant.expectation_for(warp_version, it.scale)
            vc.append(_check(it, exp.to_dict() if exp else None, "skipped",
                             f"skipped: Warp {warp_version} is not installed ({reason})"))
        out.append(CaseCheck(c.id, True, vc, []))
    return out


def validate_cases(cases: list, device: str = "cpu", jobs: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S,
                   on_check=None, warp: str | None = None, repeat: int = 1, knobs: dict | None = None) -> list:
    """Validate loaded cases; returns one :class:`CaseCheck` per case.

    ``warp`` selects a release measured in its own environment
    (:func:`harness.envs.python_for`); None means the installed one.
    ``repeat``: measurements per variant (see :func:`validate_item`).
    ``knobs``: oracle knobs (default :data:`VALIDATE_KNOBS`). A case is ok
    when no check failed or stayed unresolved and no hint word was found.
    """
    python, warp_version = python_for(warp)
    items = plan(cases)
    # fixed twins first, so that pair checks find them measured
    order = sorted(range(len(items)), key=lambda i: items[i].variant.name != "fixed")
    MEASUREMENTS.clear()
    results = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = {i: pool.submit(validate_item, items[i], device, warp_version, timeout_s, python, repeat, knobs)
                for i in order}
        try:
            for i in order:
                results[i] = futs[i].result()
                if on_check:
                    on_check(results[i])
        except BaseException:
            for f in futs.values():
                f.cancel()
            kill_all()
            raise
    MEASUREMENTS.clear()
    checks = [results[i] for i in range(len(items))]
    out = []
    for c in cases:
        vc = [k for k in checks if k.case == c.id]
        problems = [f"{f}:{line}: hint word '{w}'" for v in c.variants for f, line, w in hint_findings(v.path)]
        out.append(CaseCheck(c.id, all(k.status in ("passed", "skipped") for k in vc) and not problems, vc, problems))
    return out
