"""Re-interpret stored measurement documents with the engine of the importable ``defects4warp``.

Reads JSON lines written by ``scripts/collect_evidence.py`` (the worker's
document ``doc``, the release ``differential`` and the variant folder
``path``), runs :func:`defects4warp.engines.reference.interpret` on each
offline (no measurement; source evidence re-reads the variant folder) and
writes one JSON line per record: the key (case, variant, scale), the
verdict, signature, ranked classes with scores, the cited evidence ids and
strengths, and the evidence sentences. Run it once with one checkout's
code (``PYTHONPATH`` naming it) and once with another's, then
``--compare`` the two files: a refactor that changes no diagnosis gives
no difference.

Usage::

    PYTHONPATH=/work/mainshim python scripts/reinterpret.py /tmp/v4-docs-*.jsonl --out /tmp/base.jsonl \
        --remap /work/wt/v4/corpus=/work/main/corpus
    PYTHONPATH=<shim> python scripts/reinterpret.py /tmp/v4-docs-*.jsonl --out /tmp/new.jsonl \
        --remap /work/wt/v4/corpus=/work/main/corpus
    python scripts/reinterpret.py --compare /tmp/base.jsonl /tmp/new.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _unstrict(d: dict) -> dict:
    return {k: (float(v) if v in ("nan", "inf", "-inf") else v) for k, v in d.items()}


def remap_path(path: str, remaps: list) -> str:
    """``path`` with the first matching ``OLD=NEW`` prefix of ``remaps`` replaced."""
    for old, new in remaps:
        if path == old or path.startswith(old.rstrip("/") + "/"):
            return new.rstrip("/") + path[len(old.rstrip("/")):]
    return path


def summarise(diag: dict) -> dict:
    """The parts of a diagnosis a behaviour-preserving change must keep equal."""
    return {"verdict": diag["verdict"], "signature": diag.get("signature"),
            "classes": [[c["id"], c["score"]] for c in diag.get("classes") or []],
            "cited": [[e["id"], e.get("strength", 1.0)] for e in diag.get("cited") or []],
            "evidence": [[e.get("probe"), e.get("clean"), e.get("text")] for e in diag.get("evidence") or []]}


def reinterpret(rec: dict, remaps: list = ()) -> dict:
    """One stored record re-interpreted with the importable engine: ``summarise`` of its diagnosis,
    or ``{"skipped": reason}`` for a record without a document."""
    from defects4warp.engines.reference import interpret

    if not rec.get("doc"):
        return {"skipped": "no document"}
    path = remap_path(rec["path"], list(remaps)) if rec.get("path") else None
    if path is not None and not os.path.isdir(path):
        return {"skipped": f"variant folder {path} missing"}
    return summarise(interpret(rec["doc"], path=path, differential=rec.get("differential")))


def compare(a_path: str, b_path: str) -> list:
    """Differences between two ``--out`` files: ``[(key, field, a, b)]`` (records missing in one count)."""
    def load(p):
        with open(p, encoding="utf-8") as f:
            return {tuple(r["key"]): r["result"] for r in map(json.loads, f) if r}
    a, b = load(a_path), load(b_path)
    out = []
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            out.append((k, "record", k in a, k in b))
            continue
        for fld in sorted(set(a[k]) | set(b[k])):
            if a[k].get(fld) != b[k].get(fld):
                out.append((k, fld, a[k].get(fld), b[k].get(fld)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--remap", action="append", default=[], help="OLD=NEW prefix of the records' variant paths")
    ap.add_argument("--compare", action="store_true", help="compare the two files given as inputs")
    a = ap.parse_args(argv)
    if a.compare:
        diffs = compare(*a.inputs)
        for k, fld, x, y in diffs:
            print(f"{'/'.join(k)} {fld}:\n  a: {x}\n  b: {y}")
        print(f"{len(diffs)} difference(s)")
        return 1 if diffs else 0
    remaps = [tuple(r.split("=", 1)) for r in a.remap]
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        for p in a.inputs:
            with open(p, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    rec = json.loads(line, object_hook=_unstrict)
                    key = [rec["case"], rec["variant"], rec["scale"]]
                    try:
                        res = reinterpret(rec, remaps)
                    except Exception as exc:  # noqa: BLE001 - recorded, so that a crash is a difference too
                        res = {"error": f"{type(exc).__name__}: {exc}"}
                    out.write(json.dumps({"key": key, "result": res}, default=str) + "\n")
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
