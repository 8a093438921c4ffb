"""Recall of the builtins conformance suite against Warp's own history (maintainer tooling).

For every changelog entry about a builtin's adjoint or a kernel access pattern
(``docs/data/builtins-history.yaml``, ids of ``docs/data/warp-changelog-gradients.yaml``), does the
suite flag it (a cell ``wrong`` or ``zero``) on the newest supported release before the fix and not
(every cell ``agrees``) on the oldest supported release that ships it? Entries the suite has no cell
for count as misses, with the reason the YAML gives. Reads the committed suite data
(``harness/data/builtins/<release>-cpu.json``); runs no Warp.

Usage (repository root)::

    python scripts/builtins_history.py            # writes docs/data/builtins-history.json, splices docs/builtins.md
    python scripts/builtins_history.py --check    # exit 1 when the committed files are not what it would write
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml
from packaging.version import Version

from defects4warp import envs
from defects4warp.report.pages.prose import wrap_prose
from defects4warp.run.runner import write_json_atomic

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "data" / "builtins-history.yaml"
TABLE = ROOT / "docs" / "data" / "warp-changelog-gradients.yaml"
DATA = ROOT / "harness" / "data" / "builtins"
OUT = ROOT / "docs" / "data" / "builtins-history.json"
PAGE = ROOT / "docs" / "builtins.md"
START, END = "<!-- builtins-history:start -->", "<!-- builtins-history:end -->"
#: Cell states that flag an adjoint (harness/builtins/suite.py): a build error is not a wrong value.
FLAGGED = ("wrong", "zero")


def _fixed_release(entry: dict, row: dict) -> str:
    rel = str(row.get("fixed") or entry["release"])
    if not rel[0].isdigit():
        raise SystemExit(f"{MAP}: entry {row['id']}: release {rel!r} is not a version: give `fixed:`")
    return rel


def recall(mapping: dict, table: dict, cells_by_release: dict) -> dict:
    """The suite's recall against the mapped changelog entries.

    Parameters
    ----------
    mapping : dict
        ``docs/data/builtins-history.yaml``: ``entries`` with ``id`` and ``cells`` or ``miss``.
    table : dict
        ``docs/data/warp-changelog-gradients.yaml``.
    cells_by_release : dict
        ``{release: {overload id: cell}}`` of the suite's committed data, supported releases.

    Returns
    -------
    dict
        ``rows`` (per entry: fixed, before, after, states before/after per cell, caught, miss) and
        ``caught``/``entries``/``recall``.

    Raises
    ------
    SystemExit
        An id the changelog table does not hold, or a cell no release measured (names the file).
    """
    entries = {e["id"]: e for e in table["entries"]}
    rels = sorted(cells_by_release, key=Version)
    rows = []
    for row in mapping["entries"]:
        e = entries.get(row["id"])
        if e is None:
            raise SystemExit(f"{MAP}: entry {row['id']!r} is not in {TABLE.name}")
        fixed = _fixed_release(e, row)
        before = [r for r in rels if Version(r) < Version(fixed)]
        after = [r for r in rels if Version(r) >= Version(fixed)]
        out = {"id": row["id"], "release": e["release"], "fixed": fixed, "text": " ".join(e["text"].split()),
               "before": before[-1] if before else None, "after": after[0] if after else None,
               "cells": row.get("cells") or [], "miss": row.get("miss")}
        if out["cells"]:
            for c in out["cells"]:
                if not any(c in cells_by_release[r] for r in rels):
                    raise SystemExit(f"{MAP}: entry {row['id']}: cell {c!r} is in no release's suite data")
            st = {r: {c: (cells_by_release[r].get(c) or {}).get("state", "absent") for c in out["cells"]}
                  for r in rels}
            out["flagged_on"] = [r for r in rels if any(s in FLAGGED for s in st[r].values())]
            out["states_before"] = st[out["before"]] if out["before"] else None
            out["states_after"] = st[out["after"]] if out["after"] else None
            out["caught"] = bool(out["before"] and out["after"]
                                 and any(s in FLAGGED for s in out["states_before"].values())
                                 and all(s == "agrees" for s in out["states_after"].values()))
        else:
            out["caught"] = False
        rows.append(out)
    caught = sum(r["caught"] for r in rows)
    return {"rows": rows, "caught": caught, "entries": len(rows),
            "recall": round(caught / len(rows), 3) if rows else None,
            "releases": rels}


def _spans(rels: list, hit: list) -> str:
    runs, cur = [], []
    for r in rels:
        if r in hit:
            cur.append(r)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return ", ".join(x[0] if len(x) == 1 else f"{x[0]}-{x[-1]}" for x in runs) or "none"


def markdown(res: dict) -> str:
    L = [START, "", "## The suite against Warp's own history", "",
         *wrap_prose(
             "Generated by `python scripts/builtins_history.py` from docs/data/builtins-history.yaml (which "
             "changelog entries concern a builtin's adjoint or an access pattern, and the suite's cells for each), "
             "docs/data/warp-changelog-gradients.yaml and the committed suite data; do not edit. An entry is caught "
             "when one of its cells is wrong or zero on the newest supported release before the fix and every cell "
             "agrees on the oldest supported release that ships it. Entries that raise or fail to build instead of "
             "giving a wrong value, and those not reproduced on CPU, are not counted (their status is in "
             "docs/mined.md).").splitlines(), "",
         f"**Recall: {res['caught']} of {res['entries']} entries ({res['recall']:.2f}).**", "",
         "| entry | fixed in | suite cells | flagged on | before / after the fix | caught |",
         "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        if r["cells"]:
            ba = (f"{r['before']}: {', '.join(sorted(set(r['states_before'].values())))} / "
                  f"{r['after']}: {', '.join(sorted(set(r['states_after'].values())))}")
            cells = ", ".join(f"`{c}`" for c in r["cells"][:2]) + (f" and {len(r['cells']) - 2} more"
                                                                   if len(r["cells"]) > 2 else "")
            L.append(f"| {r['id']} | {r['fixed']} | {cells} | {_spans(res['releases'], r['flagged_on'])} | {ba} | "
                     f"{'yes' if r['caught'] else 'no'} |")
        else:
            L.append(f"| {r['id']} | {r['fixed']} | none | - | - | no: {r['miss']} |")
    L += ["", END]
    return "\n".join(L)


def splice(existing: str, generated: str) -> str:
    """``existing`` with its block between the markers replaced (appended when absent)."""
    if START in existing and END in existing:
        return existing[:existing.index(START)] + generated + existing[existing.index(END) + len(END):]
    return existing.rstrip("\n") + "\n\n" + generated + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    a = ap.parse_args(argv)
    mapping = yaml.safe_load(MAP.read_text())
    table = yaml.safe_load(TABLE.read_text())
    cells = {}
    for rel in envs.RELEASES:
        f = DATA / f"{rel}-cpu.json"
        if f.is_file():
            cells[rel] = json.loads(f.read_text())["cells"]
    res = recall(mapping, table, cells)
    page = splice(PAGE.read_text(), markdown(res))
    if a.check:
        ok = OUT.is_file() and json.loads(OUT.read_text()) == res and PAGE.read_text() == page
        print("builtins history: " + ("up to date" if ok else "stale: run python scripts/builtins_history.py"))
        return 0 if ok else 1
    write_json_atomic(OUT, res)
    PAGE.write_text(page)
    print(f"recall {res['caught']} of {res['entries']}: wrote {OUT.relative_to(ROOT)} and {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
