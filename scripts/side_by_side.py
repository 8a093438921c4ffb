"""Detection, false positives and cost of several engines on the SAME runs.

Each input is a ``run --json`` file (``NAME=FILE``) or a collector JSON-lines
file of the reference engine (``NAME=FILE.jsonl``, scripts/collect_evidence.py).
Only runs (case, variant, scale) scored in every input are counted, so an
engine measured on a subset (e.g. an interrupted slow run) is compared on that
subset. Prints a Markdown table.

    python scripts/side_by_side.py reference=/tmp/test.jsonl warp-gradcheck=/tmp/gc.json fd-only=/tmp/fd.json
"""

from __future__ import annotations

import json
import statistics
import sys


def load(path: str) -> dict:
    out = {}
    if path.endswith(".jsonl"):
        recs = [json.loads(line) for line in open(path) if line.strip()]
    else:
        recs = json.load(open(path))["results"]
    for r in recs:
        if r.get("expected") is None:
            continue
        out[(r["case"], r["variant"], r["scale"])] = r
    return out


def row(name: str, runs: list) -> str:
    bug = [r for r in runs if r["expected"]["verdict"] == "bug"]
    nob = [r for r in runs if r["expected"]["verdict"] == "no_bug"]
    det = sum(r["diagnosis"]["verdict"] == "bug" for r in bug) / len(bug) if bug else float("nan")
    fp = sum(r["diagnosis"]["verdict"] == "bug" for r in nob) / len(nob) if nob else float("nan")
    inc = sum(r["diagnosis"]["verdict"] in ("inconclusive", "error") for r in runs)
    secs = statistics.median(float(r["diagnosis"].get("cost", {}).get("wall_s") or r.get("seconds") or 0) for r in runs)
    evals = [r["diagnosis"].get("cost", {}).get("objective_evals") for r in runs]
    evals = [e for e in evals if e is not None]
    med = statistics.median(evals) if evals else 0
    return (f"| `{name}` | {len(runs)} | {len(bug)} / {len(nob)} | {det:.3f} | {fp:.3f} | {inc} | {secs:.2f} | {med:g} |")


def main(argv) -> int:
    named = [a.split("=", 1) for a in argv]
    data = {n: load(p) for n, p in named}
    common = set.intersection(*(set(d) for d in data.values()))
    print("| engine | runs | bug / no_bug runs | detection rate | false-positive rate | inconclusive or error | "
          "median s / run | median objective evals |")
    print("|---|---|---|---|---|---|---|---|")
    for n, d in data.items():
        print(row(n, [d[k] for k in sorted(common)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
