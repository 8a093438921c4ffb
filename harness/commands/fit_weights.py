"""``defects4warp maint fit-weights``: fit the reference engine's evidence table."""

from __future__ import annotations

import click

from ._common import console


MODELS = ("v3", "temperature", "fitted", "fitted_dense")


def _summary(m: dict) -> str:
    if not m.get("runs"):
        return "no runs"
    return f"runs {m['runs']}  top-1 {m['top1']:.3f}  top-3 {m['top3']:.3f}  Brier {m['brier']:.3f}"


def evaluate(paths: list, table_path=None) -> dict:
    """Score the hand-set (v3, normalised) weights and ``table_path`` on collected records (any split).

    Returns
    -------
    dict
        per model (``v3``, ``table``): ``overall`` (scored runs, verdict and class
        accuracy, false-positive rate over every run) and ``bug`` (:func:`defects4warp.engines.fit.metrics`
        on runs expected and diagnosed bug).
    """
    from ..engines import fit as F
    from ..evidence_table import load_table
    from ..scoring import judge

    hand = load_table(F.HANDSET_PATH) if F.HANDSET_PATH.exists() else load_table()
    new = load_table(table_path)
    recs = F.load_records(paths, allow_test=True)
    out = {}
    for name, table in (("v3", hand), ("table", new)):
        samples = [s for s in (F.sample(r, table) for r in recs) if s is not None]
        scored = [s for s in samples if s["expected_verdict"] in ("bug", "no_bug")]
        ok_v = ok_c = fp = nb = 0
        preds = []
        for s in scored:
            j = judge({"verdict": s["expected_verdict"], "classes": s["expected"]},
                      {"verdict": s["verdict"], "classes": s["classes"]})
            ok_v += j["verdict"]
            ok_c += j["class"]
            if s["expected_verdict"] == "no_bug":
                nb += 1
                fp += s["verdict"] == "bug"
            if s["expected_verdict"] == "bug" and s["verdict"] == "bug":
                preds.append(({c["id"]: c["score"] for c in s["classes"]}, s["expected"]))
        n = len(scored) or 1
        out[name] = {"overall": {"runs": len(scored), "verdict_accuracy": ok_v / n, "class_accuracy": ok_c / n,
                                 "false_positive_rate": fp / nb if nb else None},
                     "bug": F.metrics(preds)}
    return out


@click.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the chosen table here (default: the engine's harness/engines/evidence_table.yaml).")
@click.option("--report", type=click.Path(dir_okay=False), default=None, help="Write the CV results (JSON) here.")
@click.option("--lam", type=float, default=None, help="L2 strength toward the scaled hand-set weights "
              "(default defects4warp.engines.fit.LAMBDA).")
@click.option("--choose", type=click.Choice(["auto", "fitted", "fitted_dense", "temperature", "v3"]), default="auto",
              show_default=True,
              help="Which model's weights to write. auto: among fitted_dense, fitted and temperature, those whose "
              "cross-validated top-1 is no worse than v3's and whose Brier is lower under both schemes; of them the "
              "best mean top-1, then the best mean Brier; none: v3 (the table is left as it is).")
@click.option("--evaluate", "evaluate_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Collected records (e.g. the test split) to score v3 and the written table on; never fitted on.")
@click.option("--dry-run", is_flag=True, help="Cross-validate and report; write no table.")
def cmd(data, out, report, lam, choose, evaluate_paths, dry_run):
    """Fit the evidence table's weights from collected runs (scripts/collect_evidence.py output of the dev
    split and the mutant tier; a test-split record is refused), cross-validated leaving out whole families
    (corpus runs) and whole mutation operators (mutants)."""
    from ..engines import fit as F
    from ..jsonio import write_json_atomic

    res = F.run_fit(list(data), **({"lam": lam} if lam is not None else {}))
    for scheme in ("cv_family", "cv_operator"):
        console.print(f"[bold]{scheme}[/bold] (leave one group out)")
        for k in ("v3", "temperature", "fitted", "fitted_dense"):
            console.print(f"  {k:12s} {_summary(res[scheme][k])}")
    fam, op = res["cv_family"], res["cv_operator"]

    def no_worse(k):
        return all((s[k].get("top1") or 0) >= (s["v3"].get("top1") or 0) for s in (fam, op) if s["v3"].get("runs"))

    def brier_better(k):
        return all(s[k]["brier"] < s["v3"]["brier"] for s in (fam, op) if s["v3"].get("runs"))

    if choose == "auto":
        # of the models no worse than v3 in cross-validated top-1 and better in Brier under both schemes:
        # the best mean top-1, then the best mean Brier (the temperature model ranks as v3 does)
        ok = [k for k in ("fitted_dense", "fitted", "temperature") if no_worse(k) and brier_better(k)]
        ok.sort(key=lambda k: (-round(sum(s[k].get("top1") or 0 for s in (fam, op)), 9),
                               sum(s[k].get("brier") or 0 for s in (fam, op))))
        choose = ok[0] if ok else "v3"
    console.print(f"chosen: {choose} (beta {res['beta']})")
    design = res["design_dense"] if choose == "fitted_dense" else res["design"]
    meta = {"date": res["date"], "data": res["data"], "records": res["records"], "bug_runs": res["bug_runs"],
            "model": choose, "beta": res["beta"], "lambda": res["lambda"],
            "cv_top1": {s: {k: res[s][k].get("top1") for k in MODELS} for s in ("cv_family", "cv_operator")},
            "cv_brier": {s: {k: res[s][k].get("brier") for k in MODELS} for s in ("cv_family", "cv_operator")}}
    if not dry_run and choose != "v3":
        theta = {"fitted": res["theta"], "fitted_dense": res["theta_dense"]}.get(choose, res["beta"] * design.theta0)
        source = (f"fitted {res['date']} ({choose}: multinomial logistic regression, L2 {res['lambda']} toward "
                  f"{res['beta']} x v3) on {res['bug_runs']} bug runs of {', '.join(res['data'])}"
                  if choose.startswith("fitted") else
                  f"hand-set v3 x fitted temperature {res['beta']} ({res['date']}, {res['bug_runs']} bug runs)")
        F.write_table(out or F.TABLE_PATH, design.table, design, theta, scores="softmax", fit_meta=meta, source=source)
        console.print(f"wrote {out or F.TABLE_PATH}")
    doc = {k: v for k, v in res.items() if k not in ("design", "design_dense", "theta", "theta_dense", "samples_list")}
    doc["chosen"] = choose
    doc["evaluation"] = {}
    for path in evaluate_paths:  # one evaluation per file (e.g. the test split, then the fitted data in-sample)
        ev = doc["evaluation"][str(path)] = evaluate([path], None if dry_run else (out or F.TABLE_PATH))
        for k, v in ev.items():
            o = v["overall"]
            console.print(f"evaluation {path} {k:6s} runs {o['runs']}  class accuracy {o['class_accuracy']:.3f}  "
                          f"false-positive rate {o['false_positive_rate']}  bug runs: {_summary(v['bug'])}")
    if report:
        write_json_atomic(report, doc)
        console.print(f"wrote {report}")
