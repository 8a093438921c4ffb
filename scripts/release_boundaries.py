"""Find the release where a variant's ground truth changes, for every check
that contradicted its labels on an old release.

Usage::

    PYTHONPATH=. python scripts/release_boundaries.py --validation /tmp/val-1.0.2.json \
        --out docs/data/release-boundaries.json

For each check of the validation JSON that ``failed`` while the oracle
measured the program (verdict ``wrong`` or ``agrees``: a gradient that
differs from the labels there, not a build failure, which is ``min_warp``'s
business: scripts/min_warp.py), the supported releases from that one up to
``--upto`` (default 1.12.1, where the labels were validated) are bisected with
:func:`defects4warp.validate.validate_item` for the first release where the check
passes: Warp changed the variant's gradient there. Every measurement is kept
in the JSON (rewritten after each variant, so an interrupted run resumes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from packaging.version import Version

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.envs import RELEASES, python_for
from defects4warp.run.runner import RunItem, write_json_atomic
from defects4warp.validate import validate_item


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--validation", required=True, action="append", help="validate --json of an old release")
    ap.add_argument("--out", required=True)
    ap.add_argument("--upto", default="1.12.1")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--row", action="append", default=[], metavar="CASE/VARIANT=VERDICT:CLASS[,CLASS]",
                    help="with --out only: insert for CASE/VARIANT a first expectation row for the releases "
                         "before its measured boundary (e.g. c/fixed=bug:warp_adjoint_bug), then exit")
    a = ap.parse_args(argv)
    if a.row:
        return insert_rows(json.load(open(a.out)), a.row)
    cases = {c.id: c for c in load_corpus(default_corpus())[0]}
    doc = json.load(open(a.out)) if os.path.exists(a.out) else {"upto": a.upto, "variants": {}}
    upto_checks = {}
    for p in sorted(Path(default_corpus()).parent.glob("docs/data/*validation*.json")):
        for c in (json.load(open(p))["releases"].get(a.upto) or {}).get("checks", []):
            upto_checks[f"{c['case']}/{c['variant']}@{c['scale']}"] = {
                "status": c["status"], "oracle": (c.get("oracle") or {}).get("verdict"),
                "error": c.get("relative_error"), "message": c["message"], "from": p.name}
    for path in a.validation:
        v = json.load(open(path))
        for rel, r in v["releases"].items():
            for c in r["checks"]:
                o = c.get("oracle") or {}
                if c["status"] != "failed" or o.get("verdict") not in ("wrong", "agrees"):
                    continue
                if c["message"].startswith("pair check with"):
                    continue  # explained by its twin, whose own contradiction is bisected
                key = f"{c['case']}/{c['variant']}@{c['scale']}"
                if key in doc["variants"] or c["case"] not in cases:
                    continue
                case = cases[c["case"]]
                item = RunItem(case, case.variant(c["variant"]), c["scale"])
                rels = [x for x in RELEASES if Version(rel) <= Version(x) <= Version(a.upto)]
                seen = {rel: {"status": "failed", "oracle": o.get("verdict"), "error": o.get("max_relative_error"),
                              "message": c["message"]}}
                if upto_checks.get(key) is not None:
                    seen[a.upto] = upto_checks[key]  # committed validation of --upto: not measured again

                def ok(x):
                    if x not in seen:
                        chk = validate_item(item, "cpu", x, a.timeout, python_for(x)[0])
                        seen[x] = {"status": chk.status, "oracle": (chk.oracle or {}).get("verdict"),
                                   "error": chk.relative_error, "message": chk.message}
                        print(f"{key} on {x}: {chk.status}: {chk.message[:160]}", flush=True)
                    return seen[x]["status"] == "passed"

                lo, hi = 0, len(rels) - 1
                first = None
                if ok(rels[hi]):
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        if ok(rels[mid]):
                            hi = mid
                        else:
                            lo = mid
                    first = rels[hi]
                doc["variants"][key] = {"labels_hold_from": first, "last_contradiction": rels[lo] if first else None,
                                        "checks": seen}
                write_json_atomic(a.out, doc)
    print(json.dumps({k: v["labels_hold_from"] for k, v in doc["variants"].items()}, indent=1))
    return 0


def insert_rows(doc: dict, rows: list) -> int:
    """Insert ``warp: "<BOUNDARY"`` rows at the head of variants' expectation
    lists in case.yaml (text edit: comments and layout are kept)."""
    from pathlib import Path

    corpus = Path(default_corpus())
    for spec in rows:
        target, what = spec.split("=", 1)
        case, variant = target.split("/")
        verdict, classes = what.split(":", 1)
        hits = [r for k, r in doc["variants"].items() if k.startswith(f"{case}/{variant}@")]
        if not hits or not hits[0]["labels_hold_from"]:
            print(f"{target}: no measured boundary; skipped")
            continue
        first = hits[0]["labels_hold_from"]
        last = hits[0]["last_contradiction"]
        c = hits[0]["checks"][last]
        err = "n/a" if c.get("error") is None else format(float(c["error"]), ".3g")
        yml = corpus / case / "case.yaml"
        text = yml.read_text()
        head = f"\n  {variant}:\n"
        if head not in text:
            print(f"{yml}: no variant {variant}; skipped")
            continue
        row = (f'    - warp: "<{first}"\n      verdict: {verdict}\n      classes: [{classes.replace(",", ", ")}]\n'
               f"      note: measured by the oracle {c.get('oracle')} on {last} (relative error {err}); "
               f"the labels below hold from {first}\n")
        yml.write_text(text.replace(head, head + row, 1))
        print(f"{yml}: {variant} <{first}: {verdict} {classes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
