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

from concurrent.futures import ThreadPoolExecutor
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


def validate_cases(cases: list, device: str = "cpu", jobs: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S,
                   on_check=None, warp: str | None = None, repeat: int = 1) -> list:
    """Validate loaded cases; returns one :class:`CaseCheck` per case.

    ``warp`` selects a release measured in its own environment
    (:func:`harness.envs.python_for`); None means the installed one.
    ``repeat``: measurements per variant (see :func:`validate_item`).
    """
    python, warp_version = python_for(warp)
    items = plan(cases)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = [pool.submit(validate_item, it, device, warp_version, timeout_s, python, repeat) for it in items]
        checks = []
        try:
            for f in futs:
                checks.append(f.result())
                if on_check:
                    on_check(checks[-1])
        except BaseException:
            for f in futs:
                f.cancel()
            kill_all()
            raise
    out = []
    for c in cases:
        vc = [k for k in checks if k.case == c.id]
        problems = [f"{f}:{line}: hint word '{w}'" for v in c.variants for f, line, w in hint_findings(v.path)]
        out.append(CaseCheck(c.id, all(k.ok for k in vc) and not problems, vc, problems))
    return out
