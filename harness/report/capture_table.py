"""The capture on every script variant of a corpus, as a table
(``defects4warp maint capture-table``, docs/capture-table.md).

For each variant that holds a script (the case's ``script:`` block), one
record: whether the Problem was captured (and if not, the capture's message
saying why), the params and the kind of objective captured, the seconds the
capture took (discovery run plus the two determinism re-runs), the median
seconds of one re-run, and, from a ``run --programs scripts --json``
document, the seconds one diagnosis took and the engine's verdict.

The capture is measured in a subprocess per variant on a neutral copy
without ``problem.py`` (:func:`defects4warp.corpus.conversion._side`), or taken from a
``defects4warp maint conversion --json`` document that measured it already.
"""

from __future__ import annotations

import json
import statistics
import time

#: Schema version of the JSON document.
VERSION = 1


def script_variants(cases: list) -> list:
    """``[(case, variant)]`` of every variant that holds a script, in case order."""
    return [(c, v) for c in cases for v in c.variants if v.script is not None]


def _record(case, variant) -> dict:
    return {"case": case.id, "variant": variant.name, "form": case.form, "command": variant.script.command_line(),
            "iteration": variant.script.iteration, "captured": None, "why_not": None, "params": [],
            "objective": None, "stochastic": None, "capture_s": None, "rerun_s": None, "diagnosis_s": None,
            "diagnosis": None, "expected": None, "oracle": None}


def _fill(rec: dict, summary: dict | None, error: str | None) -> dict:
    if error or not summary:
        rec["captured"] = False
        rec["why_not"] = (error or "no capture summary").strip()[:400]
        return rec
    rec["captured"] = True
    rec["params"] = [{"name": p.get("name"), "site": p.get("site"), "dtype": p.get("dtype"),
                      "shape": p.get("shape")} for p in summary.get("params") or []]
    obj = summary.get("objective") or {}
    rec["objective"] = {"kind": obj.get("kind"), "description": obj.get("description")}
    rec["stochastic"] = bool(summary.get("stochastic"))
    rec["capture_s"] = summary.get("capture_s")
    rec["rerun_s"] = summary.get("rerun_s")
    return rec


def measure(cases: list, *, device: str = "cpu", timeout_s: float = 300.0, python: str | None = None,
            on_record=None) -> list:
    """Capture every script variant of ``cases``, each in its own subprocess.

    Parameters
    ----------
    cases : list[defects4warp.corpus.case.Case]
    device : str, default "cpu"
    timeout_s : float, default 300.0
        Limit of one variant's subprocess, seconds.
    python : str, optional
        Interpreter (default: this one).
    on_record : callable, optional
        Called with each record as it is measured.

    Returns
    -------
    list[dict]
        One record per script variant (see the module docstring).
    """
    from ..corpus.conversion import _side

    out = []
    for c, v in script_variants(cases):
        t0 = time.perf_counter()
        side = _side("script", v.path, device, "small", v.script.to_json(), timeout_s, python)
        rec = _record(c, v)
        _fill(rec, (side.get("meta") or {}).get("capture"), side.get("error"))
        rec["measured_s"] = time.perf_counter() - t0
        out.append(rec)
        if on_record:
            on_record(rec)
    return out


def from_conversions(cases: list, doc: dict) -> list:
    """Records from a ``defects4warp maint conversion --json`` document
    (``{case: {variant: result}}``); variants it lacks are left out."""
    out = []
    for c, v in script_variants(cases):
        res = (doc.get(c.id) or {}).get(v.name)
        if res is None:
            continue
        rec = _record(c, v)
        if res.get("refused"):
            _fill(rec, None, "refused: " + res.get("note", "this Warp release refuses to build the program"))
        else:
            _fill(rec, res.get("capture"), res.get("error"))
        out.append(rec)
    return out


def add_diagnoses(records: list, run_doc: dict) -> list:
    """Fill ``diagnosis_s``, ``diagnosis`` (verdict and top class) and
    ``expected`` of each record from the script records of a run document."""
    by = {(r["case"], r["variant"]): r for r in run_doc.get("results", []) if r.get("program") == "script"
          and r.get("scale", "small") == "small"}
    for rec in records:
        r = by.get((rec["case"], rec["variant"]))
        if r is None:
            continue
        d = r["diagnosis"]
        top = (d.get("classes") or [{}])[0].get("id") if d.get("classes") else None
        rec["diagnosis_s"] = r.get("seconds")
        cap = d.get("capture") or {}
        its = cap.get("iterations") or {}
        rec["iteration_model"] = {
            "diagnosed": its.get("diagnosed", cap.get("iteration")), "first_backward": cap.get("first_backward"),
            "backwards_per_iteration": cap.get("backwards_per_iteration"), "loop_iterations": its.get("loop_iterations"),
            "checked": [{"iteration": x.get("iteration"), "status": x.get("status")} for x in its.get("checked") or []],
        } if cap else None
        rec["diagnosis"] = {"verdict": d.get("verdict"), "class": top, "error": d.get("error"),
                            "correct": r.get("correct"), "engine": run_doc.get("summary", {}).get("engine")}
        exp = r.get("expected")
        rec["expected"] = None if exp is None else {"verdict": exp["verdict"], "classes": exp["classes"]}
    return records


def add_validation(records: list, validation_doc: dict) -> list:
    """Fill ``oracle`` (``{"status", "verdict", "message"}``) of each record
    from the script checks of a ``validate --programs scripts --json`` document
    (first release in it): whether the case's label holds for the captured script."""
    rels = list((validation_doc.get("releases") or {}).values())
    checks = rels[0]["checks"] if rels else []
    by = {(c["case"], c["variant"]): c for c in checks if c.get("program") == "script" and c.get("scale") == "small"}
    for rec in records:
        c = by.get((rec["case"], rec["variant"]))
        if c is not None:
            rec["oracle"] = {"status": c["status"], "verdict": (c.get("oracle") or {}).get("verdict"),
                             "message": c.get("message")}
    return records


def summary(records: list) -> dict:
    """Counts and medians over the records: ``variants``, ``captured``,
    ``median_rerun_s``, ``median_capture_s``, ``median_diagnosis_s``,
    ``diagnosed``, ``verdict_correct``, ``class_correct``."""
    def med(key):
        xs = [r[key] for r in records if r.get(key) is not None]
        return statistics.median(xs) if xs else None

    diag = [r for r in records if r.get("diagnosis") and (r["diagnosis"].get("correct") is not None)]
    checked = [r for r in records if r.get("oracle")]
    later = [r for r in records if (r.get("iteration_model") or {}).get("diagnosed") not in (None, 1)]
    multi = [r for r in records if ((r.get("iteration_model") or {}).get("backwards_per_iteration") or 1) > 1]
    return {"diagnosed_later_iteration": len(later), "several_backwards": len(multi),
            "oracle_checked": len(checked), "oracle_passed": sum(1 for r in checked if r["oracle"]["status"] == "passed"),
            "variants": len(records), "captured": sum(1 for r in records if r["captured"]),
            "median_rerun_s": med("rerun_s"), "median_capture_s": med("capture_s"),
            "median_diagnosis_s": med("diagnosis_s"), "diagnosed": len(diag),
            "verdict_correct": sum(1 for r in diag if r["diagnosis"]["correct"]["verdict"]),
            "class_correct": sum(1 for r in diag if r["diagnosis"]["correct"]["class"])}


def _s(x, d=2):
    return "-" if x is None else f"{float(x):.{d}f}"


def markdown(doc: dict) -> str:
    """The table page (docs/capture-table.md) of a capture-table document."""
    recs = doc["records"]
    s = doc["summary"]
    lines = ["# The capture on every script variant", "",
             "Generated by `defects4warp maint capture-table` from " + ", ".join(f"`{x}`" for x in doc.get("sources", []))
             + "; do not edit by hand. " + (doc.get("machine") or ""), "",
             f"{s['captured']} of {s['variants']} script variants captured without any flag; median seconds per "
             f"re-run {_s(s['median_rerun_s'], 3)}, per capture (discovery run and two determinism re-runs) "
             f"{_s(s['median_capture_s'])}, per diagnosis {_s(s['median_diagnosis_s'], 1)}"
             + (f"; the engine's verdict right on {s['verdict_correct']} of {s['diagnosed']}, class on "
                f"{s['class_correct']}" if s["diagnosed"] else "")
             + (f"; the oracle confirms the case's label on {s['oracle_passed']} of {s['oracle_checked']} captured "
                "scripts" if s["oracle_checked"] else "") + ".", "",
             "Columns: the command the case runs (the `script:` block); whether the Problem was captured and, if "
             "not, why; the params (allocation site, dtype, shape) and the kind of objective (`loss`: the array "
             "passed to `backward(loss)`; `seeded`: the seed-weighted sum of `grads={...}`); seconds of the capture, "
             "of one re-run (what each objective or gradient evaluation costs) and of one diagnosis by the engine "
             "(`run --programs scripts`); the engine's verdict and top class, `!` when the verdict is wrong and "
             "`x` when only the class is; the oracle's check of the case's label on the captured script "
             "(`validate --programs scripts`). The iteration model, from the engine's diagnosis: the optimisation "
             "iteration diagnosed of the loop's length (`?` when the loop's end was not seen), the backward calls "
             "per iteration, and the iterations checked along the script's own loop (gradient against a central "
             "difference: `a` agrees, `d` disagrees, `u` unresolved).", "",
             f"Diagnosed at a later iteration than the first: {s.get('diagnosed_later_iteration', 0)}; an iteration "
             f"of several backward calls: {s.get('several_backwards', 0)}.", "",
             "| case / variant | command | captured | params | objective | iteration model | capture s | re-run s "
             "| diagnosis s | diagnosis | label on the script (oracle) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        if r["captured"]:
            cap = "yes" + (" (stochastic)" if r.get("stochastic") else "")
            params = "<br>".join(f"`{p['site'] or p['name']}` {p['dtype']} {tuple(p['shape'] or ())}"
                                 for p in r["params"])
        else:
            cap = "no: " + (r["why_not"] or "").replace("|", "\\|").replace("\n", " ")[:200]
            params = "-"
        obj = (r.get("objective") or {}).get("kind") or "-"
        d = r.get("diagnosis")
        if d:
            ds = d["verdict"] + (f" {d['class']}" if d.get("class") and d["verdict"] != "no_bug" else "")
            c = d.get("correct")
            if c is not None:
                ds += "" if c["class"] else (" x" if c["verdict"] else " !")
        else:
            ds = "-"
        o = r.get("oracle")
        os_ = "-" if not o else f"{o['status']} ({o['verdict']})"
        lines.append(f"| {r['case']} / {r['variant']} | `{r['command']}` | {cap} | {params} | {obj} | "
                     f"{iteration_cell(r.get('iteration_model'))} | {_s(r.get('capture_s'))} | {_s(r.get('rerun_s'), 3)} | {_s(r.get('diagnosis_s'), 1)} | {ds} "
                     f"| {os_} |")
    return "\n".join(lines) + "\n"


#: Letters of a checked iteration's status in the table (:mod:`defects4warp.capture.screen`).
STATUS_LETTERS = {"agrees": "a", "disagrees": "d", "unresolved": "u"}


def iteration_cell(m: dict | None) -> str:
    """The table's iteration-model cell: ``1 of 50, 2 backwards; checked 1a 2a 5d`` (``-`` without one)."""
    if not m:
        return "-"
    n = m.get("loop_iterations")
    bw = m.get("backwards_per_iteration") or 1
    out = f"{m.get('diagnosed') or 1} of {n if n else '?'}, {bw} backward{'s' if bw != 1 else ''}"
    if m.get("checked"):
        out += "; checked " + " ".join(f"{x['iteration']}{STATUS_LETTERS.get(x.get('status'), '?')}"
                                       for x in m["checked"])
    return out


def document(records: list, sources: list, machine: str | None = None) -> dict:
    """The JSON document: ``{"version", "sources", "machine", "summary", "records"}``."""
    return {"version": VERSION, "sources": list(sources), "machine": machine, "summary": summary(records),
            "records": records}


def load(path) -> dict:
    """A capture-table JSON document written by :func:`document`."""
    with open(path) as f:
        return json.load(f)
