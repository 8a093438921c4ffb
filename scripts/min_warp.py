"""Measure the oldest supported Warp release each corpus variant builds on.

Usage::

    PYTHONPATH=. python scripts/min_warp.py --from-validation /tmp/val-1.0.2.json \
        --out docs/data/min-warp.json [--cases GLOB]

Variants that fail to build on the oldest release (read from a ``validate
--json`` document of it: oracle verdict ``refused``/``error``, or measured
here when no document is given) are bisected over the supported releases up
to 1.12.1 with :func:`harness.support.find_min_warp`; the JSON is rewritten
after each variant, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.case import default_corpus, load_corpus
from harness.envs import RELEASES, python_for
from harness.runner import write_json_atomic
from harness.support import build_check, find_min_warp


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-validation", default=None, help="validate --json of the oldest release")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="*")
    ap.add_argument("--upto", default="1.12.1", help="newest release bisected (default 1.12.1)")
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)
    cases, errors = load_corpus(default_corpus(), a.cases)
    rels = [r for r in RELEASES if tuple(map(int, r.split("."))) <= tuple(map(int, a.upto.split(".")))]
    oldest = rels[0]
    doc = json.load(open(a.out)) if os.path.exists(a.out) else {"releases": rels, "variants": {}}
    failing = None
    if a.from_validation:
        v = json.load(open(a.from_validation))
        failing = {}
        for c in v["releases"][oldest]["checks"]:
            o = c.get("oracle") or {}
            if o.get("verdict") in ("refused", "error"):
                failing[(c["case"], c["variant"])] = {"ok": False, "seconds": c.get("seconds") or 0.0,
                                                      "error": (o.get("failure") or {}).get("first_line")
                                                      or o.get("message") or c.get("message")}
    for c in cases:
        if c.requires:
            continue
        for var in c.variants:
            key = f"{c.id}/{var.name}"
            if key in doc["variants"]:
                continue
            if failing is not None:
                if (c.id, var.name) not in failing:
                    continue
                known = {oldest: failing[(c.id, var.name)]}
            else:
                known = {}
            res = find_min_warp(var.path, rels, lambda r: python_for(r)[0], known=known, timeout_s=a.timeout,
                                log=lambda s: print(s, flush=True))
            doc["variants"][key] = res
            write_json_atomic(a.out, doc)
    print(json.dumps({k: v["min_warp"] for k, v in doc["variants"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
