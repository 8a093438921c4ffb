"""Collect the reference engine's raw measurements for fitting its evidence table.

For every run item (case x variant x scale) this runs the reference engine
once and appends one JSON line to ``--out``: the case, variant, scale, split,
the expectation on the installed release, the worker's measurement document
(``doc``), the release differential (``differential``, None on the newest
release) and the v3 diagnosis. ``defects4warp maint fit-weights`` re-reads the
evidence from these lines (the variant folder is re-read for source evidence),
so the weights can be refit without measuring anything again.

Items already in ``--out`` (same case/variant/scale) are skipped: a killed
collection resumes.

Usage::

    python scripts/collect_evidence.py --split dev --out /tmp/v4-docs-dev.jsonl
    python scripts/collect_evidence.py --corpus /tmp/v4-tier --out /tmp/v4-docs-mut.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.engines.reference import ReferenceEngine
from defects4warp.envs import installed_warp_version
from defects4warp.run.runner import MEASUREMENT_KEY, _strict, diagnose_item, plan


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(default_corpus()))
    ap.add_argument("--split", choices=("dev", "test"), default=None)
    ap.add_argument("--cases", default="*")
    ap.add_argument("--variants", default=None, help="comma-separated variant names to keep (default: all)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--shuffle", type=int, default=None, help="measure the items in a random order with this seed "
                    "(so a collection stopped early is a random sample)")
    a = ap.parse_args(argv)
    cases, errors = load_corpus(a.corpus, a.cases)
    if a.split:
        cases = [c for c in cases if c.split == a.split]
    items = plan(cases)
    if a.variants:
        keep = set(a.variants.split(","))
        items = [it for it in items if it.variant.name in keep]
    if a.shuffle is not None:
        import random

        random.Random(a.shuffle).shuffle(items)
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                done.add((r["case"], r["variant"], r["scale"]))
    version = installed_warp_version()
    eng = ReferenceEngine()
    print(f"{len(items)} items, {len(done)} already collected", flush=True)
    for n, it in enumerate(items):
        key = (it.case.id, it.variant.name, it.scale)
        if key in done:
            continue
        t0 = time.perf_counter()
        rec = diagnose_item(eng, it, a.device, version)
        m = rec.pop(MEASUREMENT_KEY, None) or {}  # the measurement record (engines.base.WorkerEngine.measure)
        line = {"case": it.case.id, "variant": it.variant.name, "scale": it.scale, "split": it.case.split,
                "features": list(it.case.features), "path": str(it.variant.path), "expected": rec["expected"],
                "warp_version": version, "doc": m.get("doc"), "differential": m.get("differential"),
                "diagnosis": rec["diagnosis"], "correct": rec["correct"], "seconds": time.perf_counter() - t0}
        with open(a.out, "a") as f:
            f.write(json.dumps(_strict(line), default=str) + "\n")
        print(f"[{n + 1}/{len(items)}] {it.label} {rec['diagnosis']['verdict']} "
              f"{(rec['diagnosis'].get('classes') or [{}])[0].get('id')} correct={rec['correct']} "
              f"{line['seconds']:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
