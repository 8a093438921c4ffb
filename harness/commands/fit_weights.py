"""``defects4warp maint fit-weights``: fit the reference engine's evidence table."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

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
    from ..run.scoring import judge

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


def export_inputs(bundle, out, *, split: str = "dev", corpus=None) -> int:
    """Write the fit inputs of a committed measurement bundle: one record per run of ``split``
    (``case``, ``variant``, ``scale``, ``program``, ``split``, ``features``, ``path`` relative to the
    corpus, ``expected`` on the bundle's release, ``warp_version``, ``doc``, ``differential``, and
    ``diagnosis`` holding the verdict the engine reads from the record), gzip'd JSON lines without
    a time stamp, keys sorted (equal inputs give equal bytes). Returns the number of records."""
    from ..corpus.case import default_corpus, load_corpus
    from ..report.engine_matrix import read_bundle
    from ..engines import get_engine
    from ..jsonio import lossless
    from ..run.runner import plan

    root = Path(corpus or default_corpus())
    cases, _ = load_corpus(root, "*")
    header, entries = read_bundle(bundle)
    version = header.get("warp_version") or header.get("release")
    items = {(it.case.id, it.variant.name, it.scale, it.program): it for it in plan(cases, programs="auto")}
    engine, lines = get_engine("reference"), []
    for e in entries:
        it = items.get((e["case"], e["variant"], e["scale"], e["program"]))
        if it is None or it.case.split != split:
            continue
        rec, exp = e["record"], it.variant.expectation_for(version, it.scale)
        verdict = engine.interpret_measurement(rec, str(it.variant.path))["verdict"]
        lines.append(json.dumps(lossless({
            "case": it.case.id, "variant": it.variant.name, "scale": it.scale, "program": it.program, "split": split,
            "features": list(it.case.features), "path": str(Path(it.variant.path).resolve().relative_to(root.resolve())),
            "expected": exp.to_dict() if exp else None, "warp_version": version, "doc": rec.get("doc"),
            "differential": rec.get("differential"), "diagnosis": {"verdict": verdict}}), sort_keys=True,
            separators=(",", ":"), allow_nan=False))
    Path(out).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))
    return len(lines)


def _inputs(data: tuple, inputs) -> list:
    """The fit's input files: ``data`` as given, else those of the checksum manifest ``inputs``
    (default the committed :data:`defects4warp.engines.fit.INPUTS_MANIFEST`), checked."""
    from ..engines import fit as F

    if data:
        return list(data)
    try:
        return F.check_inputs(inputs or F.INPUTS_MANIFEST)
    except (OSError, F.FitError) as exc:
        raise click.UsageError(f"fit inputs: {exc}") from None


def _choose(res: dict, choose: str) -> str:
    """``auto``: among fitted_dense, fitted and temperature, those whose cross-validated top-1 is no worse
    than v3's and whose Brier is lower under both schemes; of them the best mean top-1, then the best mean
    Brier; none: v3. Any other choice as given."""
    if choose != "auto":
        return choose
    fam, op = res["cv_family"], res["cv_operator"]

    def no_worse(k):
        return all((s[k].get("top1") or 0) >= (s["v3"].get("top1") or 0) for s in (fam, op) if s["v3"].get("runs"))

    def brier_better(k):
        return all(s[k]["brier"] < s["v3"]["brier"] for s in (fam, op) if s["v3"].get("runs"))

    ok = [k for k in ("fitted_dense", "fitted", "temperature") if no_worse(k) and brier_better(k)]
    ok.sort(key=lambda k: (-round(sum(s[k].get("top1") or 0 for s in (fam, op)), 9),
                           sum(s[k].get("brier") or 0 for s in (fam, op))))
    return ok[0] if ok else "v3"


def _write(res: dict, choose: str, out, table_path) -> None:
    """Write the chosen model's table to ``out`` (its fit metadata: the inputs with their SHA-256)."""
    from ..engines import fit as F

    design = res["design_dense"] if choose == "fitted_dense" else res["design"]
    meta = {"date": res["date"], "data": res["data"], "sha256": res["sha256"], "table": res["table"],
            "records": res["records"], "bug_runs": res["bug_runs"], "model": choose, "beta": res["beta"],
            "lambda": res["lambda"],
            "cv_top1": {s: {k: res[s][k].get("top1") for k in MODELS} for s in ("cv_family", "cv_operator")},
            "cv_brier": {s: {k: res[s][k].get("brier") for k in MODELS} for s in ("cv_family", "cv_operator")}}
    theta = {"fitted": res["theta"], "fitted_dense": res["theta_dense"]}.get(choose, res["beta"] * design.theta0)
    source = (f"fitted {res['date']} ({choose}: multinomial logistic regression, L2 {res['lambda']} toward "
              f"{res['beta']} x the table fitted from) on {res['bug_runs']} bug runs of {', '.join(res['data'])}"
              if choose.startswith("fitted") else
              f"{res['table']} x fitted temperature {res['beta']} ({res['date']}, {res['bug_runs']} bug runs)")
    F.write_table(out, design.table, design, theta, scores="softmax", fit_meta=meta, source=source,
                  base_path=table_path)
    console.print(f"wrote {out}")


@click.command()
@click.argument("data", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--inputs", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Checksum manifest (sha256sum format) of the inputs to fit on, used when no DATA is given "
              "(default: the committed docs/data/fit-inputs/SHA256SUMS); a file whose SHA-256 differs is refused.")
@click.option("--table", "table_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The table to start from (default: the live harness/engines/evidence_table.yaml).")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the chosen table here (required unless --dry-run; an existing file only with --overwrite).")
@click.option("--overwrite", is_flag=True, help="Let --out replace an existing file (e.g. the live table).")
@click.option("--export-inputs", "export_from", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Instead of fitting: write the dev split of this measurement bundle "
              "(docs/data/engine-<release>.measurements.jsonl.gz) as fit inputs to --out and print its SHA-256.")
@click.option("--report", type=click.Path(dir_okay=False), default=None, help="Write the CV results (JSON) here.")
@click.option("--lam", type=float, default=None, help="L2 strength toward the scaled starting weights "
              "(default defects4warp.engines.fit.LAMBDA).")
@click.option("--choose", type=click.Choice(["auto", "fitted", "fitted_dense", "temperature", "v3"]), default="auto",
              show_default=True,
              help="Which model's weights to write. auto: among fitted_dense, fitted and temperature, those whose "
              "cross-validated top-1 is no worse than v3's and whose Brier is lower under both schemes; of them the "
              "best mean top-1, then the best mean Brier; none: v3 (no table is written).")
@click.option("--evaluate", "evaluate_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Collected records (e.g. the test split) to score v3 and the written table on; never fitted on.")
@click.option("--dry-run", is_flag=True, help="Cross-validate and report; write no table.")
def cmd(data, inputs, table_path, out, overwrite, export_from, report, lam, choose, evaluate_paths, dry_run):
    """Fit the evidence table's weights from collected runs (the committed, checksummed inputs in
    docs/data/fit-inputs/ by default; scripts/collect_evidence.py output of the dev split and the mutant tier;
    a test-split record is refused), starting from the live table and cross-validated leaving out whole
    families (corpus runs) and whole mutation operators (mutants). Writes only to an explicit --out."""
    from ..engines import fit as F
    from ..jsonio import write_json_atomic

    if (export_from or not dry_run) and not out:
        raise click.UsageError("--out is required (the fit never overwrites the live table by default)")
    if out and os.path.exists(out) and not overwrite:
        raise click.UsageError(f"{out} exists; pass --overwrite to replace it")
    if export_from:
        n = export_inputs(export_from, out)
        console.print(f"wrote {out}: {n} records\n{F.sha256_of(out)}  {os.path.basename(out)}")
        return
    paths = _inputs(data, inputs)
    res = F.run_fit(paths, table_path=table_path, **({"lam": lam} if lam is not None else {}))
    for scheme in ("cv_family", "cv_operator"):
        console.print(f"[bold]{scheme}[/bold] (leave one group out)")
        for k in MODELS:
            console.print(f"  {k:12s} {_summary(res[scheme][k])}")
    choose = _choose(res, choose)
    console.print(f"chosen: {choose} (beta {res['beta']})")
    if not dry_run and choose != "v3":
        _write(res, choose, out, table_path)
    doc = {k: v for k, v in res.items() if k not in ("design", "design_dense", "theta", "theta_dense", "samples_list")}
    doc["chosen"] = choose
    doc["evaluation"] = {}
    written = out if (not dry_run and choose != "v3") else table_path
    for path in evaluate_paths:  # one evaluation per file (e.g. the test split, then the fitted data in-sample)
        ev = doc["evaluation"][str(path)] = evaluate([path], written)
        for k, v in ev.items():
            o = v["overall"]
            console.print(f"evaluation {path} {k:6s} runs {o['runs']}  class accuracy {o['class_accuracy']:.3f}  "
                          f"false-positive rate {o['false_positive_rate']}  bug runs: {_summary(v['bug'])}")
    if report:
        write_json_atomic(report, doc)
        console.print(f"wrote {report}")
