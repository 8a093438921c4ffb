"""Measure the oldest supported Warp release each corpus variant builds on.

Usage::

    PYTHONPATH=. python scripts/min_warp.py --from-validation docs/data/validation-1.0.2.json \
        --out docs/data/min-warp.json [--cases GLOB]

A variant without ``problem.py`` (a script variant) is checked by running its
script through the capture (``support.build_check(script=...)``); variants
with a ``problem.py`` are checked through it.

Variants that fail to build on the oldest release (read from a ``validate
--json`` document of it: oracle verdict ``refused``/``error``, or measured
here when no document is given) are bisected over the supported releases up
to 1.12.1 with :func:`defects4warp.corpus.support.find_min_warp`; the JSON is rewritten
after each variant, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.envs import RELEASES, python_for
from defects4warp.run.runner import write_json_atomic
from defects4warp.corpus.support import build_check, find_min_warp


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-validation", default=None, help="validate --json of the oldest release")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="*")
    ap.add_argument("--upto", default="1.12.1", help="newest release bisected (default 1.12.1)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--apply", action="store_true",
                    help="write the measured min_warp into each case.yaml (a line before 'variants:'), then exit")
    a = ap.parse_args(argv)
    if a.apply:
        return apply(json.load(open(a.out)))
    cases, errors = load_corpus(default_corpus(), a.cases)
    rels = [r for r in RELEASES if tuple(map(int, r.split("."))) <= tuple(map(int, a.upto.split(".")))]
    oldest = rels[0]
    doc = json.load(open(a.out)) if os.path.exists(a.out) else {"releases": rels, "variants": {}}
    upto_ok = {}
    for p in sorted((Path(default_corpus()).parent / "docs" / "data").glob("*validation*.json")):
        releases = json.load(open(p)).get("releases")
        if not isinstance(releases, dict):
            continue  # another kind of file (mined-validation.json lists mined checks, not releases)
        for c in (releases.get(rels[-1]) or {}).get("checks", []):
            if (c.get("oracle") or {}).get("verdict") in ("agrees", "wrong", "unresolved"):
                upto_ok[(c["case"], c["variant"])] = {"ok": True, "error": None, "seconds": c.get("seconds") or 0.0,
                                                      "from": p.name}
    failing = None
    if a.from_validation:
        v = json.load(open(a.from_validation))
        failing = {}
        # variants the oracle ran there (a check skipped for want of an expectation did not run): the rest is measured here
        validated = {(c["case"], c["variant"]) for c in v["releases"][oldest]["checks"] if (c.get("oracle") or {}).get("verdict")}
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
            if failing is not None and (c.id, var.name) in validated:
                if (c.id, var.name) not in failing:
                    continue  # the oldest release's validation built it
                known = {oldest: failing[(c.id, var.name)]}
            else:
                known = {}
            if upto_ok.get((c.id, var.name)):
                known[rels[-1]] = upto_ok[(c.id, var.name)]  # built in the committed validation of --upto
            script = None
            if not (Path(var.path) / "problem.py").is_file():
                if var.script is None:
                    continue
                script = var.script.to_json()
            res = find_min_warp(var.path, rels, lambda r: python_for(r)[0], known=known, timeout_s=a.timeout,
                                log=lambda s: print(s, flush=True), script=script)
            if script is not None:
                res["program"] = "script"
            doc["variants"][key] = res
            write_json_atomic(a.out, doc)
    print(json.dumps({k: v["min_warp"] for k, v in doc["variants"].items()}, indent=1))
    return 0


def apply(doc: dict) -> int:
    """Write ``min_warp`` into the case.yaml of every case with a measured
    minimum newer than the oldest release: one value when every variant of the
    case has it, else a mapping of the variants that have one. Variants that
    build on no release up to the bisected one are reported, not written."""
    from pathlib import Path

    oldest = doc["releases"][0]
    per_case = {}
    for key, res in doc["variants"].items():
        case, variant = key.split("/")
        if res["min_warp"] is None:
            print(f"{key}: builds on none of {doc['releases']} ({res['last_failure']}); not written")
            continue
        if res["min_warp"] != oldest:
            per_case.setdefault(case, {})[variant] = res["min_warp"]
    corpus = default_corpus()
    for case, mins in sorted(per_case.items()):
        yml = Path(corpus) / case / "case.yaml"
        text = yml.read_text()
        if "\nmin_warp:" in text:
            print(f"{yml}: has min_warp already; left as it is")
            continue
        loaded, _errors = load_corpus(corpus, case)
        declared = sorted(v.name for v in loaded[0].variants) if loaded else []
        if sorted(mins) == declared and len(set(mins.values())) == 1:
            line = f'min_warp: "{next(iter(mins.values()))}"\n'
        else:
            line = "min_warp:\n" + "".join(f'  {v}: "{r}"\n' for v, r in sorted(mins.items()))
        yml.write_text(text.replace("\nvariants:\n", "\n" + line + "variants:\n", 1))
        print(f"{yml}: {line.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
