"""Release matrices and upgrade audits.

A *release matrix* holds, for each Warp release, the ground truth
(``validate``: does each variant really disagree with finite differences
there, with the measured relative error) and an engine's run (verdict and
class). An *audit* compares two releases of a matrix case by case: ground
truth that appeared or disappeared, bugs present on both releases whose
measured gradient error changes size, engine verdicts or classes that change
(judged right or wrong on both releases), overwrite-tracker warnings that
appear, disappear or gain call sites, and cost that moved by more than the
run-to-run noise. The page docs/upgrade-audit.md (:mod:`defects4warp.report.pages`)
renders the same sections with the same titles and line formats
(:data:`SECTIONS`, :func:`section_lines`).
"""

from __future__ import annotations

import math
import statistics
import time

from ..envs import python_for
from ..validate import validate_cases


def measure_release(release: str, cases: list, engine_factory, device: str = "cpu", jobs: int = 1,
                    timeout_s: float = 300.0, on_result=None, validation: list | None = None,
                    run_doc: dict | None = None, store=None, fresh: bool = False, executor=None,
                    programs: str = "auto") -> dict:
    """Ground truth and one engine run on ``release`` (an isolated environment).

    ``validation`` (check dicts from ``validate --json``) and ``run_doc`` (a
    ``run --json`` document on that release) are reused when given, instead
    of measuring again; ``wall_s`` then adds their recorded wall times.
    ``store``, ``fresh`` and ``executor`` are passed to
    :func:`defects4warp.validate.validate_cases` and :func:`defects4warp.run.runner.run`
    (results reused from the result store are counted in ``reused``).
    ``programs`` chooses the adapter and/or script of each variant
    (:data:`defects4warp.corpus.case.PROGRAMS`); a script's row is labelled ``variant (script)``.

    Returns
    -------
    dict
        ``{"warp_version", "validation": [check dicts], "run": run document,
        "wall_s"}``.
    """
    from .runner import plan, run

    t0 = time.perf_counter()
    python, version = python_for(release)
    reused_s = 0.0
    stats = {}
    if validation is None:
        checks = validate_cases(cases, device=device, jobs=jobs, timeout_s=timeout_s, warp=release, store=store,
                                fresh=fresh, executor=executor, stats=stats, programs=programs)
        validation = [v.to_dict() for cc in checks for v in cc.variants]
    else:
        reused_s += sum(float(c.get("seconds") or 0.0) for c in validation) / max(1, jobs)
    if run_doc is None:
        run_doc = run(plan(cases, programs=programs), engine_factory(python), device=device, jobs=jobs, warp_version=version,
                      python=python, on_result=on_result, store=store, fresh=fresh, executor=executor,
                      release=release)
    else:
        reused_s += float(run_doc["summary"].get("wall_s") or 0.0)
    return {"warp_version": version, "validation": validation, "run": run_doc,
            "reused": stats.get("reused", 0) + int(run_doc["summary"].get("reused") or 0),
            "wall_s": time.perf_counter() - t0 + reused_s}


def measure_releases(releases: list, cases: list, engine_factory, device: str = "cpu", jobs: int = 1,
                     timeout_s: float = 300.0, truth: dict | None = None, runs: dict | None = None, store=None,
                     fresh: bool = False, executor=None, on_release=None, programs: str = "auto") -> dict:
    """:func:`measure_release` for every release at once: one client thread
    per release submits its work items to the shared ``executor``, so a Dask
    cluster sees the whole matrix (cases x variants x scales x releases) and
    fans it out; the local executor still runs ``jobs`` items at a time.

    Parameters
    ----------
    truth : dict, optional
        release -> validation check dicts to reuse (``validate --json``).
    runs : dict, optional
        release -> run document to reuse.
    on_release : callable, optional
        Called as ``on_release(result)`` when a release finishes (from its thread,
        serialised by a lock).

    Returns
    -------
    dict
        ``{warp_version: measure_release(...) result}`` in the order of ``releases``.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lock = threading.Lock()
    truth, runs = truth or {}, runs or {}

    def one(rel):
        r = measure_release(rel, cases, engine_factory, device=device, jobs=jobs, timeout_s=timeout_s,
                            validation=truth.get(rel), run_doc=runs.get(rel), store=store, fresh=fresh,
                            executor=executor, programs=programs)
        if on_release:
            with lock:
                on_release(r)
        return r

    with ThreadPoolExecutor(max_workers=max(1, len(releases))) as pool:
        results = list(pool.map(one, releases))
    return {r["warp_version"]: r for r in results}


def _key(r: dict) -> tuple:
    """(case, variant label, scale) of a run record or a validation check; the
    label of a script program is ``variant (script)``."""
    label = r["variant"] + (" (script)" if r.get("program") == "script" else "")
    return (r["case"], label, r["scale"])


def _num(x):
    """A float from a validation JSON value (strict JSON stores inf/nan as strings)."""
    return None if x is None else float(x)


def oracle_cell(check: dict | None) -> str:
    """Compact oracle column of one validation check.

    ``wrong 0.54 r=2.0`` (the oracle's worst relative error and the median
    ratio to the fixed twin, or the exact factor), ``wrong nan`` (NaN/inf
    autodiff), ``agrees 3e-09``,
    ``unres``, ``refused``, ``ERROR`` (the oracle erred), ``unsup`` (older
    than the variant's ``min_warp``), ``skip`` (no
    expectation or a missing requirement), ``-`` (not measured). Checks
    written before the oracle (no ``oracle`` record) show ``right`` /
    ``wrong <error>`` from their signature.
    """
    if not check:
        return "-"
    if check.get("status") == "unsupported":
        return "unsup"
    if check.get("status") == "skipped" or check.get("message", "").startswith(("skipped", "no expectation")):
        return "skip"
    o = check.get("oracle")
    if not o:
        if check.get("signature") is None:
            return "-"
        err = _num(check.get("relative_error"))
        return "right" if check["signature"] == "agrees" else f"wrong {err:.2g}"
    v = o.get("verdict")
    err = _num(o.get("max_relative_error"))
    if v == "wrong" and (o.get("signature") or {}).get("kind") == "nan":
        return "wrong nan"
    if v == "wrong":
        ratio = _num((check.get("pair") or {}).get("ratio_median"))
        if ratio is None:
            ratio = _num((o.get("signature") or {}).get("ratio"))
        kind = (o.get("signature") or {}).get("kind")
        tail = f" r={ratio:.3g}" if ratio is not None else (f" {kind}" if kind in ("nan", "growth", "iteration") else "")
        return f"wrong {'-' if err is None else f'{err:.2g}'}{tail}"
    if v == "agrees":
        return f"agrees {'-' if err is None else f'{err:.0e}'}"
    return {"unresolved": "unres", "refused": "refused"}.get(v, "ERROR")


def _truth(check: dict | None) -> str:
    return oracle_cell(check) if check and check.get("signature") is not None or (check or {}).get("oracle") else "-"


def _top(d: dict) -> str:
    cls = d.get("classes") or []
    return f"{d['verdict']} {cls[0]['id']}" if cls else d["verdict"]


def matrix_markdown(doc: dict) -> str:
    """Case x release table: ground truth, then the engine's verdict and top
    class (a trailing ``x`` marks a wrong top-1 class, ``!`` a wrong verdict)."""
    from ..machine import one_line

    rels = list(doc["releases"])
    rows = {}
    for rel, r in doc["releases"].items():
        checks = {_key(c): c for c in r["validation"]}
        for res in r["run"]["results"]:
            k = _key(res)
            if res.get("unsupported"):
                rows.setdefault(k, {})[rel] = "unsup"
                continue
            cell = f"{_truth(checks.get(k))} / {_top(res['diagnosis'])}"
            c = res.get("correct")
            if c is not None and not c["verdict"]:
                cell += " !"
            elif c is not None and not c["class"]:
                cell += " x"
            rows.setdefault(k, {})[rel] = cell
    first = doc["releases"][rels[0]]["run"]["summary"]
    lines = [
        "| case | variant | " + " | ".join(rels) + " |",
        "|---|---|" + "---|" * len(rels),
    ]
    for (case, variant, scale), per in sorted(rows.items()):
        v = variant if scale == "small" else f"{variant} @{scale}"
        lines.append(f"| {case} | {v} | " + " | ".join(per.get(r, "-") for r in rels) + " |")
    summary = ["| release | verdict accuracy | class accuracy | detection rate | false-positive rate | wall |",
               "|---|---|---|---|---|---|"]
    walls = [float(doc["releases"][rel].get("wall_s") or 0.0) for rel in rels]
    for rel, w in zip(rels, walls):
        s = doc["releases"][rel]["run"]["summary"]
        f = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
        n_reused = int(doc["releases"][rel].get("reused") or 0)
        summary.append(f"| {rel} | {f(s['verdict_accuracy'])} | {f(s['class_accuracy'])} | {f(s['detection_rate'])} "
                       f"| {f(s['false_positive_rate'])} | {w / 60:.1f} min"
                       + (f" ({n_reused} result(s) reused from the result store)" if n_reused else "") + " |")
    whole = float(doc.get("wall_s") or 0.0)
    if len(rels) > 1:
        took = (f"; the whole matrix took {whole / 60:.1f} min of wall time (the releases are measured at the same "
                f"time, so this is the longest release, not the sum of the per-release wall times, "
                f"{sum(walls) / 60:.1f} min).")
    else:
        took = f"; the whole matrix took {whole / 60:.1f} min of wall time."
    head = ["# Release matrix", "",
            "Generated by `defects4warp matrix`; do not edit by hand. The wall time of a release adds the "
            "measurement of its ground truth and of the engine run on it (measurements reused from `--validation` "
            "or `--reuse-run` files count with their recorded times; results reused from the result store take "
            "none).", "",
            f"Engine `{first['engine']}` {first.get('engine_version', '')}, device `{first['device']}`"
            + (f", {one_line(first['machine'])}" if first.get("machine") else "")
            + took, "",
            "Each cell: ground truth (`right`, or `wrong` with the relative error measured by "
            "`validate`) / the engine's verdict and top-1 class; `!` marks a wrong verdict, `x` a wrong class.", ""]
    return "\n".join(head + summary + [""] + lines) + "\n"


def _tracker(diag: dict) -> dict:
    """Warning label ("x_out in kernel step", "write by an array copy") -> sorted
    call sites, for the tracker warnings in a diagnosis."""
    out = {}
    for e in diag.get("evidence", []):
        if e.get("probe") == "tracker" and not e.get("clean") and isinstance(e.get("data"), list):
            for w in e["data"]:
                if w.get("kernel"):
                    label = f"{w.get('arg') or 'array'} in kernel {w['kernel']}"
                elif w.get("operation"):
                    label = f"write by {w['operation']}"
                else:
                    label = "unattributed write-after-read"
                out[label] = sorted(w.get("sites", []))
    return out


def _noise(pairs: list) -> float | None:
    """Robust spread of log wall-time ratios across variants (1.4826 x MAD):
    the run-to-run noise against which a single variant's change is judged;
    None when fewer than 3 pairs have both wall times (no estimate)."""
    logs = [math.log(b / a) for a, b in pairs if a and b and a > 0 and b > 0]
    if len(logs) < 3:
        return None
    med = statistics.median(logs)
    return 1.4826 * statistics.median(abs(x - med) for x in logs)


#: A variant's cost moved when its log wall-time ratio is this many noise
#: widths from the median ratio and the change is over MIN_COST_CHANGE_S.
COST_SIGMAS = 3.0
MIN_COST_CHANGE_S = 0.5

#: Default factor by which a bug's measured relative error (or growth ratio) must change between two
#: releases to be listed (:func:`error_size_changes`): one order of magnitude, a change of the defect's
#: severity rather than of its digits. The measurement itself is far steadier than that: the oracle is
#: seeded, and on Warp 1.13.0 -> 1.14.0 all 106 bugs present on both releases kept their error within 1%
#: (docs/data/validation-1.13.0.json, -1.14.0.json). Across 1.12.1 -> 1.13.0, 24 of 110 such bugs changed
#: by more than 1%: 10 by 1.1x-5.5x and 14 by more than 10x (up to 1.6e35x). Pass a smaller factor (e.g.
#: 1.01) to list every change.
ERROR_SIZE_FACTOR = 10.0

#: Section titles of an upgrade audit, shared by ``defects4warp audit`` (:func:`audit_markdown`) and
#: docs/upgrade-audit.md (:func:`defects4warp.report.pages.upgrade_audit.render_upgrade_audit`), so the two read alike.
SECTIONS = {
    "truth_changes": "Ground truth that changes",
    "error_size_changes": "Bugs on both releases whose gradient error changes size",
    "verdict_flips": "Engine verdicts or classes that change",
    "probe_changes": "Overwrite-tracker warnings that change",
    "cost_changes": "Cost that moves beyond run-to-run noise",
    "builtins": "Builtin adjoints that change",
    "contradictions": "Cases whose ground truth contradicts their tags",
}


def run_label(case: str, variant: str, scale: str = "small") -> str:
    """``case/variant`` of an audit line, followed by `` @scale`` when the scale
    is not ``small`` (the release matrix's convention); ``variant`` already
    carries `` (script)`` for a script program (:func:`_key`)."""
    return f"{case}/{variant}" + ("" if scale in (None, "small") else f" @{scale}")


def expected_text(e: dict | None) -> str | None:
    """``bug overwrite/missing_tape_zero`` from an expectation dict, None when the run is unscored."""
    return None if not e else f"{e['verdict']} {'/'.join(e.get('classes') or [])}".strip()


def correctness_mark(was: bool | None, now: bool | None, expected_from: str | None = None,
                     expected_to: str | None = None) -> str:
    """The judgement of an answer that changed, on both releases: `` (wrong -> right)``,
    `` (right -> wrong)``, `` (wrong -> wrong)``, `` (right -> right)``; ``unscored`` stands
    for a release where the run has no expectation; the empty string when neither
    release scores it. When the expected answer itself differs between the two
    releases (a release-dependent label) the mark says so, e.g.
    `` (right -> right: the label changed, bug warp_adjoint_bug -> no_bug correct)``."""
    if was is None and now is None:
        return ""
    word = lambda x: "unscored" if x is None else ("right" if x else "wrong")  # noqa: E731
    tail = ""
    if expected_from and expected_to and expected_from != expected_to:
        tail = f": the label changed, {expected_from} -> {expected_to}"
    return f" ({word(was)} -> {word(now)}{tail})"


def truth_changes(va: dict, vb: dict) -> list:
    """Ground truth that changes between two releases.

    Parameters
    ----------
    va, vb : dict
        ``(case, variant label, scale)`` -> validation check dict, on the older
        and the newer release.

    Returns
    -------
    list[dict]
        ``{"case", "variant", "scale", "change", "from", "to"}`` for every key
        on both releases whose oracle cell (:func:`oracle_cell`) moves between
        wrong and not wrong (``bug appeared`` / ``bug disappeared``) or between
        supported and unsupported (``now supported`` / ``no longer supported``).
    """
    out = []
    for k in sorted(set(va) & set(vb)):
        ta, tb = _truth(va[k]), _truth(vb[k])
        if "unsup" in (ta, tb):
            if ta != tb:
                out.append({"case": k[0], "variant": k[1], "scale": k[2],
                            "change": "now supported" if ta == "unsup" else "no longer supported",
                            "from": ta, "to": tb})
            continue
        wa, wb = ta.startswith("wrong"), tb.startswith("wrong")
        if wa != wb:
            out.append({"case": k[0], "variant": k[1], "scale": k[2],
                        "change": "bug appeared" if wb else "bug disappeared", "from": ta, "to": tb})
    return out


def _wrong_error(check: dict | None):
    """The oracle's measured relative error of a check whose oracle verdict is ``wrong`` (float, inf for a
    NaN/inf gradient), or None (not wrong, no oracle record, or no measured error)."""
    o = (check or {}).get("oracle") or {}
    if check is None or check.get("status") == "unsupported" or o.get("verdict") != "wrong":
        return None
    if (o.get("signature") or {}).get("kind") == "nan":
        return math.inf
    err = _num(o.get("max_relative_error"))
    return None if err is None or math.isnan(err) else err


def _ratio(check: dict):
    """The growth ratio of a wrong gradient (the median ratio of autodiff to the fixed twin's, else the
    oracle's exact factor), None when not measured or not finite."""
    r = _num(((check or {}).get("pair") or {}).get("ratio_median"))
    if r is None:
        r = _num((((check or {}).get("oracle") or {}).get("signature") or {}).get("ratio"))
    return None if r is None or not math.isfinite(r) else r


def error_size_changes(va: dict, vb: dict, *, factor: float = ERROR_SIZE_FACTOR) -> list:
    """Bugs present on both releases whose measured gradient error changes size.

    Parameters
    ----------
    va, vb : dict
        ``(case, variant label, scale)`` -> validation check dict, on the older and the newer release.
    factor : float, default :data:`ERROR_SIZE_FACTOR` (10)
        A variant is listed when the oracle's maximum relative error (autodiff against finite differences,
        dimensionless) on one release is more than ``factor`` times that on the other, or when the
        magnitude of its growth ratio (autodiff over the fixed twin's gradient, median over items; else the
        oracle's exact factor) does. The default is explained at :data:`ERROR_SIZE_FACTOR`.

    Returns
    -------
    list[dict]
        ``{"case", "variant", "scale", "from", "to", "error_from", "error_to", "factor"}`` for every key the
        oracle judges ``wrong`` on both releases (a bug that appears or disappears is a
        :func:`truth_changes` entry instead), ``from``/``to`` the oracle cells (:func:`oracle_cell`: relative
        error and growth ratio to the fixed twin), ``factor`` the larger of the two changes (inf when one
        release's gradient is NaN/inf and the other's finite; a NaN/inf gradient on both releases is not
        compared). Sorted by ``factor``, largest first. Checks without the oracle's measurement (no
        ``oracle`` record) are left out: no number is made up for them.

    Raises
    ------
    ValueError
        When ``factor`` is not above 1.
    """
    if not factor > 1:
        raise ValueError(f"error_size_changes: factor must be above 1, got {factor!r}")
    out = []
    for k in sorted(set(va) & set(vb)):
        ea, eb = _wrong_error(va[k]), _wrong_error(vb[k])
        if ea is None or eb is None or (math.isinf(ea) and math.isinf(eb)):
            continue
        lo, hi = min(ea, eb), max(ea, eb)
        f = math.inf if math.isinf(hi) or lo <= 0 else hi / lo
        ra, rb = _ratio(va[k]), _ratio(vb[k])
        if ra and rb and not math.isinf(f):
            f = max(f, max(abs(ra), abs(rb)) / min(abs(ra), abs(rb)))
        if f > factor:
            out.append({"case": k[0], "variant": k[1], "scale": k[2], "from": oracle_cell(va[k]),
                        "to": oracle_cell(vb[k]), "error_from": ea, "error_to": eb, "factor": f})
    out.sort(key=lambda r: (-r["factor"], r["case"], r["variant"], r["scale"]))
    return out


def contradictions(checks: dict) -> list:
    """``{release: {key: check}}`` -> the checks whose ground truth contradicts their tags (an expectation
    that the validation did not confirm), as ``{"release", "case", "variant", "scale", "message"}``."""
    out = []
    for rel, v in checks.items():
        for k, c in sorted(v.items()):
            if c.get("expected") and not c.get("ok"):
                out.append({"release": rel, "case": k[0], "variant": k[1], "scale": k[2],
                            "message": c.get("message")})
    return out


def answer_changes(da: dict, db: dict) -> dict:
    """The engine's answers that change between two releases.

    Parameters
    ----------
    da, db : dict
        ``(case, variant label, scale)`` -> ``{"top": "bug overwrite" (verdict and
        top-1 class), "tracker": {warning label: call sites}, "wall_s": float | None,
        "evals": int | None, "correct_class": bool | None, "expected": str | None
        (:func:`expected_text`)}`` on the older and the newer release; unsupported
        runs left out.

    Returns
    -------
    dict
        ``verdict_flips`` (with ``was_correct`` and ``now_correct``: the top-1 class
        right on the older and on the newer release, None where unscored, and
        ``expected_from``/``expected_to``), ``probe_changes`` (tracker warnings),
        ``cost_changes`` (objective evaluations that differ; wall time moved by more
        than :data:`COST_SIGMAS` noise widths from the median ratio and by more than
        :data:`MIN_COST_CHANGE_S`) and ``noise`` (``log_ratio_median``,
        ``log_ratio_spread``: None when fewer than 3 variants are timed on both
        releases, ``timed``: how many are).
    """
    out = {"verdict_flips": [], "probe_changes": [], "cost_changes": []}
    pairs = []
    for k in sorted(set(da) & set(db)):
        x, y = da[k], db[k]
        if x["top"] != y["top"]:
            out["verdict_flips"].append({"case": k[0], "variant": k[1], "scale": k[2], "from": x["top"], "to": y["top"],
                                         "was_correct": x.get("correct_class"), "now_correct": y.get("correct_class"),
                                         "expected_from": x.get("expected"), "expected_to": y.get("expected")})
        tx, ty = x.get("tracker") or {}, y.get("tracker") or {}
        for w in sorted(set(tx) | set(ty)):
            if tx.get(w) != ty.get(w):
                what = "appeared" if w not in tx else ("disappeared" if w not in ty else "call sites changed")
                out["probe_changes"].append({"case": k[0], "variant": k[1], "scale": k[2], "probe": "tracker",
                                             "warning": w, "change": what, "from": tx.get(w), "to": ty.get(w)})
        pairs.append((k, x.get("wall_s"), y.get("wall_s"), x.get("evals"), y.get("evals")))
    timed = [(p[1], p[2]) for p in pairs if p[1] and p[2] and p[1] > 0 and p[2] > 0]
    noise = _noise(timed)
    logs = [math.log(b / a) for a, b in timed]
    med = statistics.median(logs) if logs else None
    for k, wa, wb, ea, eb in pairs:
        moved = []
        if ea is not None and eb is not None and ea != eb:
            moved.append(f"objective evaluations {ea} -> {eb}")
        if noise is not None and wa and wb and wa > 0 and wb > 0 and abs(wb - wa) > MIN_COST_CHANGE_S \
                and abs(math.log(wb / wa) - med) > COST_SIGMAS * noise:
            moved.append(f"wall {wa:.1f} s -> {wb:.1f} s")
        if moved:
            out["cost_changes"].append({"case": k[0], "variant": k[1], "scale": k[2], "change": "; ".join(moved)})
    out["noise"] = {"log_ratio_median": med, "log_ratio_spread": noise, "timed": len(timed)}
    return out


def _answers(results: list) -> dict:
    """:func:`answer_changes` input from full run records (unsupported runs left out)."""
    out = {}
    for r in results:
        if r.get("unsupported"):
            continue
        d = r["diagnosis"]
        cost = d.get("cost") or {}
        out[_key(r)] = {"top": _top(d), "tracker": _tracker(d), "wall_s": cost.get("wall_s"),
                        "evals": cost.get("objective_evals"), "correct_class": (r.get("correct") or {}).get("class"),
                        "expected": expected_text(r.get("expected"))}
    return out


def audit(doc: dict, a: str, b: str, *, error_factor: float = ERROR_SIZE_FACTOR) -> dict:
    """Compare releases ``a`` and ``b`` of a matrix document.

    Parameters
    ----------
    doc : dict
        A ``defects4warp matrix --json`` document holding both releases.
    a, b : str
        The older and the newer release.
    error_factor : float, default :data:`ERROR_SIZE_FACTOR`
        Passed to :func:`error_size_changes`.

    Returns
    -------
    dict
        ``truth_changes`` (bug appeared/disappeared, with the relative errors;
        :func:`truth_changes`), ``error_size_changes`` (:func:`error_size_changes`),
        ``error_factor``, ``verdict_flips``, ``probe_changes`` (tracker warnings),
        ``cost_changes``, ``noise`` (:func:`answer_changes`), and
        ``contradictions`` (a case whose ground truth contradicts its tags on
        either release; the audit command then exits non-zero).
    """
    ra, rb = doc["releases"][a], doc["releases"][b]
    va = {_key(c): c for c in ra["validation"]}
    vb = {_key(c): c for c in rb["validation"]}
    out = {"from": a, "to": b, "truth_changes": truth_changes(va, vb),
           "error_size_changes": error_size_changes(va, vb, factor=error_factor), "error_factor": error_factor,
           "contradictions": contradictions({a: va, b: vb})}
    out.update(answer_changes(_answers(ra["run"]["results"]), _answers(rb["run"]["results"])))
    return out


def noise_sentence(noise: dict) -> str:
    """What the run-to-run noise of an audit is, in words (``noise`` as :func:`answer_changes` returns it)."""
    n = noise.get("timed")
    of = "" if n is None else f" over the {n} variants timed on both releases"
    if noise.get("log_ratio_spread") is None or noise["log_ratio_spread"] == float("inf"):
        return (f"Run-to-run noise of wall times: not estimated (it needs at least 3 variants timed on both "
                f"releases{'' if n is None else f'; {n} are'}), so no wall-time change is reported; objective "
                "evaluations are compared exactly.")
    return (f"Run-to-run noise of wall times{of}: the median log ratio (newer / older) is "
            f"{noise['log_ratio_median']:+.3f} and its robust spread (1.4826 x the median absolute deviation) "
            f"{noise['log_ratio_spread']:.3f}; a variant's wall time counts as moved when its log ratio is more "
            f"than {COST_SIGMAS:g} spreads from the median and it changed by over {MIN_COST_CHANGE_S} s.")


def _factor_text(f: float) -> str:
    return "finite on one release only" if math.isinf(f) else f"x{f:.3g}"


#: One line per row of each section (:data:`SECTIONS`), the same in the CLI audit and the page.
LINE_FORMATS = {
    "truth_changes": lambda r: f"- {run_label(r['case'], r['variant'], r['scale'])}: {r['change']} "
                               f"({r['from']} -> {r['to']})",
    "error_size_changes": lambda r: f"- {run_label(r['case'], r['variant'], r['scale'])}: {r['from']} -> {r['to']} "
                                    f"({_factor_text(r['factor'])})",
    "verdict_flips": lambda r: f"- {run_label(r['case'], r['variant'], r['scale'])}: {r['from']} -> {r['to']}"
                               + correctness_mark(r.get("was_correct"), r.get("now_correct"),
                                                  r.get("expected_from"), r.get("expected_to")),
    "probe_changes": lambda r: f"- {run_label(r['case'], r['variant'], r.get('scale', 'small'))}: {r['warning']} "
                               f"{r['change']}"
                               + (f" ({r['from']} -> {r['to']})" if r["change"] == "call sites changed" else ""),
    "cost_changes": lambda r: f"- {run_label(r['case'], r['variant'], r['scale'])}: {r['change']}",
    "contradictions": lambda r: f"- Warp {r['release']}: {run_label(r['case'], r['variant'], r['scale'])}: "
                                f"{r['message']}",
}


def error_size_intro(factor: float = ERROR_SIZE_FACTOR) -> str:
    """The sentence that opens the gradient-error section (what is listed, against what threshold)."""
    return (f"Variants the oracle finds wrong on both releases whose maximum relative error (autodiff against "
            f"finite differences) or growth ratio (`r=`, autodiff over the fixed twin's gradient) changes by more "
            f"than {factor:g}x, largest change first, with the oracle's measurement on each release.")


def section_lines(kind: str, rows: list, level: str = "##", intro: str | None = None) -> list:
    """A titled section of an upgrade audit: ``{level} {title} ({n})``, an optional
    intro paragraph, then one line per row (:data:`LINE_FORMATS`) or ``None.``."""
    out = [f"{level} {SECTIONS[kind]} ({len(rows)})", ""]
    if intro:
        out += [intro, ""]
    return out + ([LINE_FORMATS[kind](r) for r in rows] or ["None."]) + [""]


def audit_markdown(report: dict) -> str:
    """The audit as Markdown (the sections of :data:`SECTIONS`, in the page's order)."""
    a, b = report["from"], report["to"]
    lines = [f"# Upgrade audit: Warp {a} -> {b}", "",
             "Generated by `defects4warp audit`; do not edit by hand.", ""]
    lines += section_lines("truth_changes", report["truth_changes"])
    if "error_size_changes" in report:
        lines += section_lines("error_size_changes", report["error_size_changes"],
                               intro=error_size_intro(report.get("error_factor", ERROR_SIZE_FACTOR)))
    lines += section_lines("verdict_flips", report["verdict_flips"])
    lines += section_lines("probe_changes", report["probe_changes"])
    lines += section_lines("cost_changes", report["cost_changes"])
    lines += [noise_sentence(report["noise"]), ""]
    lines += section_lines("contradictions", report["contradictions"])
    return "\n".join(lines)
