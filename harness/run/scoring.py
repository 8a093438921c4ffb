"""Scoring diagnoses against expectations.

Definitions (over *scored* variant runs: those with an expectation for the
Warp release and scale that ran):

``verdict_accuracy``     diagnosed verdict == expected verdict
``class_accuracy``       verdict correct and the top-1 class is one of the
                         expected classes
``detection_rate``       among expected ``bug``: diagnosed ``bug`` (recall of bugs)
``false_positive_rate``  among expected ``no_bug``: diagnosed ``bug``
``refusal_accuracy``     among expected ``refused`` (the release refuses to
                         build or run the program): diagnosed ``refused``;
                         scored apart from detection (such runs are neither
                         bug nor no_bug runs), and their class counts as right
                         when the verdict is
``per_class``            for each expected class c: ``recall`` (runs expecting
                         c whose top-1 is in their expected classes and verdict
                         correct), ``precision`` (runs whose top-1 is c that
                         expected c), ``support``
``confusion``            counts of (expected class, diagnosed top-1 class),
                         the expected class being the first of the list
``skipped``              runs not diagnosed because the case ``requires`` a
                         module that is missing (verdict ``skipped``); never
                         scored, never counted as inconclusive, left out of the
                         cost medians; ``skipped_runs`` lists them with the reason
``tiers``               the headline metrics per provenance tier (``original``,
                         ``mined``, ``report``: :data:`defects4warp.corpus.case.TIERS`) when
                         the results hold more than one (:func:`summarize_tiers`)
A ratio with an empty denominator is None, not 0.
"""

from __future__ import annotations

import statistics


def top_class(diag: dict) -> str | None:
    """The top-1 class id of a diagnosis, or None."""
    cls = diag.get("classes") or []
    return cls[0]["id"] if cls else None


def judge(expected: dict | None, diag: dict) -> dict | None:
    """``{"verdict": bool, "class": bool}`` for one run, None when unscored."""
    if expected is None:
        return None
    v_ok = diag.get("verdict") == expected["verdict"]
    if expected["verdict"] == "refused":
        return {"verdict": v_ok, "class": v_ok}
    return {"verdict": v_ok, "class": bool(v_ok and top_class(diag) in expected["classes"])}


def is_skipped(record: dict) -> bool:
    """True for the record of a run that was not diagnosed (a missing ``requires`` module)."""
    return bool(record.get("skipped")) or (record.get("diagnosis") or {}).get("verdict") == "skipped"


def _ratio(num: int, den: int):
    return num / den if den else None


def _device_totals(results: list) -> dict:
    """Totals and medians of CUDA cost figures, only when some run has them."""
    ds = [r["diagnosis"]["cost"]["device_s"] for r in results if "device_s" in (r["diagnosis"].get("cost") or {})]
    if not ds:
        return {}
    peaks = [r["diagnosis"]["cost"].get("device_peak_bytes") for r in results
             if (r["diagnosis"].get("cost") or {}).get("device_peak_bytes") is not None]
    return {"total_device_s": sum(ds), "median_device_s": statistics.median(ds),
            "max_device_peak_bytes": max(peaks) if peaks else None}


def summarize(results: list) -> dict:
    """Metrics over a list of run results (dicts with ``expected``,
    ``diagnosis``, ``correct``). See the module docstring."""
    scored = [r for r in results if r.get("correct") is not None]
    bug = [r for r in scored if r["expected"]["verdict"] == "bug"]
    nobug = [r for r in scored if r["expected"]["verdict"] == "no_bug"]
    refused = [r for r in scored if r["expected"]["verdict"] == "refused"]
    per_class = {}
    for r in scored:
        for c in r["expected"]["classes"]:
            pc = per_class.setdefault(c, {"support": 0, "hits": 0, "predicted": 0, "true_predicted": 0})
            pc["support"] += 1
            pc["hits"] += int(r["correct"]["class"])
    for r in scored:
        t = top_class(r["diagnosis"])
        if t is None:
            continue
        pc = per_class.setdefault(t, {"support": 0, "hits": 0, "predicted": 0, "true_predicted": 0})
        pc["predicted"] += 1
        pc["true_predicted"] += int(t in r["expected"]["classes"] and r["correct"]["verdict"])
    per_class_out = {
        c: {"support": v["support"], "recall": _ratio(v["hits"], v["support"]),
            "precision": _ratio(v["true_predicted"], v["predicted"])}
        for c, v in sorted(per_class.items())
    }
    confusion = {}
    for r in scored:
        key = f"{r['expected']['classes'][0]} -> {top_class(r['diagnosis']) or r['diagnosis'].get('verdict')}"
        confusion[key] = confusion.get(key, 0) + 1
    # a skipped run was never diagnosed: it is neither an error nor inconclusive, and costs nothing
    # (older records of skipped runs carry the verdict ``inconclusive``)
    skipped = [r for r in results if is_skipped(r)]
    ran = [r for r in results if not is_skipped(r)]
    walls = [r["diagnosis"]["cost"]["wall_s"] for r in ran if r["diagnosis"].get("cost")]
    evals = [r["diagnosis"]["cost"].get("objective_evals") for r in ran if r["diagnosis"].get("cost")]
    evals = [e for e in evals if e is not None]
    verdicts = [r["diagnosis"].get("verdict") for r in ran]
    return {
        "cases": len({r["case"] for r in results}),
        "variants": len({(r["case"], r["variant"]) for r in results}),
        "runs": len(results),
        "scored": len(scored),
        "unscored": len(results) - len(scored),
        "skipped": len(skipped),
        "skipped_runs": [{"case": r["case"], "variant": r["variant"], "scale": r.get("scale", "small"),
                          "reason": r.get("skipped") or "skipped"} for r in skipped],
        "unsupported": sum(1 for r in results if r.get("unsupported")),
        "errors": verdicts.count("error"),
        "inconclusive": verdicts.count("inconclusive"),
        "verdict_accuracy": _ratio(sum(r["correct"]["verdict"] for r in scored), len(scored)),
        "class_accuracy": _ratio(sum(r["correct"]["class"] for r in scored), len(scored)),
        "detection_rate": _ratio(sum(r["diagnosis"].get("verdict") == "bug" for r in bug), len(bug)),
        "false_positive_rate": _ratio(sum(r["diagnosis"].get("verdict") == "bug" for r in nobug), len(nobug)),
        "refusal_accuracy": _ratio(sum(r["diagnosis"].get("verdict") == "refused" for r in refused), len(refused)),
        "refused_runs": len(refused),
        "per_class": per_class_out,
        "confusion": dict(sorted(confusion.items())),
        "median_wall_s_per_run": statistics.median(walls) if walls else None,
        "median_objective_evals": statistics.median(evals) if evals else None,
        "total_diagnosis_s": sum(walls),
        "total_objective_evals": sum(evals),
        "total_compiles": sum(r["diagnosis"]["cost"].get("compiles") or 0 for r in results if r["diagnosis"].get("cost")),
        "total_compile_s": sum(r["diagnosis"]["cost"].get("compile_s") or 0.0 for r in results if r["diagnosis"].get("cost")),
        **_device_totals(results),
    }


def summarize_groups(results: list, key: str) -> dict:
    """:func:`summarize` per group of results: ``key`` is ``domain`` or
    ``split`` (fields of each result) or ``family`` (the taxonomy family of
    the first expected class). Groups are sorted by name; unscored results
    are left out of ``family`` grouping."""
    from ..taxonomy import CLASSES

    groups = {}
    for r in results:
        if key == "family":
            if not r.get("expected"):
                continue
            name = CLASSES[r["expected"]["classes"][0]].family
        else:
            name = r.get(key) or "-"
        groups.setdefault(name, []).append(r)
    return {name: summarize(rs) for name, rs in sorted(groups.items())}


#: Tier order of :func:`summarize_tiers` (:data:`defects4warp.corpus.case.TIERS`; a copy, so scoring imports no
#: case loader).
TIER_ORDER = ("original", "mined", "report")


def summarize_tiers(results: list, *, min_tiers: int = 2) -> dict | None:
    """The headline metrics per provenance tier of the results (each result's ``tier``: ``original``,
    ``mined`` or ``report``), or None when fewer than ``min_tiers`` tiers are present (one tier's numbers
    are the summary's own). Results without a ``tier`` (records written before it existed) are left out.

    Parameters
    ----------
    results : list of dict
        Run records (``tier``, ``expected``, ``diagnosis``, ``correct``).
    min_tiers : int, default 2
        Fewest tiers present for a breakdown.

    Returns
    -------
    dict or None
        ``{tier: {"runs", "scored", "bug_runs", "no_bug_runs", "detection_rate", "false_positive_rate",
        "class_accuracy", "verdict_accuracy"}}`` in the order original, mined, report (other names after,
        sorted); the rates are defined as in :func:`summarize` (None with an empty denominator).
    """
    groups = {}
    for r in results:
        if r.get("tier"):
            groups.setdefault(r["tier"], []).append(r)
    if len(groups) < min_tiers:
        return None
    out = {}
    for tier in sorted(groups, key=lambda t: (TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER), t)):
        m = summarize(groups[tier])
        out[tier] = {"runs": m["runs"], "scored": m["scored"],
                     "bug_runs": sum(1 for r in groups[tier] if r.get("correct") is not None
                                     and r["expected"]["verdict"] == "bug"),
                     "no_bug_runs": sum(1 for r in groups[tier] if r.get("correct") is not None
                                        and r["expected"]["verdict"] == "no_bug"),
                     **{k: m[k] for k in ("detection_rate", "false_positive_rate", "class_accuracy",
                                          "verdict_accuracy")}}
    return out


def nothing_measured(summary: dict) -> bool:
    """Whether a run's summary says no variant got a verdict: some ran and every one of them ended
    in an ``error`` (a run whose variants were all skipped measured nothing either, but by design:
    the reason is printed for each, and nothing failed)."""
    ran = summary.get("runs", 0) - summary.get("skipped", 0)
    return ran > 0 and summary.get("errors", 0) == ran
