"""Mutation scores: how many admitted mutants an engine classifies correctly, per operator.

Input is the ``--json`` file of ``defects4warp run --corpus DIR`` over a
materialised tier (:func:`defects4warp.corpus.mutate.tier.materialize`) and the manifest
it came from. For each operator:

* ``detected``: share of its mutants (``buggy/``) diagnosed ``bug``;
* ``score``: share diagnosed ``bug`` *with* the operator's class top-1 (the
  mutation score; a mutant counts as killed only when it is also labelled
  right);
* ``twin_ok``: share of the parents' copies (``fixed/``) diagnosed ``no_bug``.

Runs recorded as errors or unscored count as not classified.
"""

from __future__ import annotations

import json
from pathlib import Path

from .tier import read_manifest


def mutation_scores(run_json, manifest=None) -> dict:
    """Per-operator and overall scores of one engine run.

    Parameters
    ----------
    run_json : str or Path
        ``{summary, results}`` as written by ``defects4warp run --json``.
    manifest : str or Path, optional
        Default ``mutants/manifest.yaml``.

    Returns
    -------
    dict
        ``{"engine": str, "operators": {name: {"mutants", "detected", "score", "twin_ok"}}, "all": {...}}``;
        shares are floats in [0, 1] (None for an operator with no mutant in the run).
    """
    doc = json.loads(Path(run_json).read_text())
    ops = {m["id"]: m["operator"] for m in read_manifest(manifest)["mutants"]}
    rows = {}
    for r in doc["results"]:
        op = ops.get(r["case"])
        if op is None:
            continue
        row = rows.setdefault(op, {"mutants": 0, "detected": 0, "score": 0, "twins": 0, "twin_ok": 0})
        corr = r.get("correct") or {}
        if r["variant"] == "buggy":
            row["mutants"] += 1
            row["detected"] += bool(corr.get("verdict"))
            row["score"] += bool(corr.get("verdict")) and bool(corr.get("class"))
        elif r["variant"] == "fixed":
            row["twins"] += 1
            row["twin_ok"] += bool(corr.get("verdict"))

    def shares(row):
        n, t = row["mutants"], row["twins"]
        return {"mutants": n, "detected": row["detected"] / n if n else None, "score": row["score"] / n if n else None,
                "twin_ok": row["twin_ok"] / t if t else None}

    total = {k: sum(r[k] for r in rows.values()) for k in ("mutants", "detected", "score", "twins", "twin_ok")}
    engine = (doc.get("summary") or {}).get("engine")
    return {"engine": engine, "operators": {k: shares(v) for k, v in sorted(rows.items())}, "all": shares(total)}


def markdown_table(scores: list) -> str:
    """One Markdown table: operators as rows, one ``score (detected)`` column per engine run."""
    names = sorted({op for s in scores for op in s["operators"]})
    head = "| operator | mutants | " + " | ".join(f"{s['engine']}: score / detected / twin ok" for s in scores) + " |"
    lines = [head, "|" + "---|" * (2 + len(scores))]

    def cell(x):
        f = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        return f"{f(x['score'])} / {f(x['detected'])} / {f(x['twin_ok'])}"

    for op in names + ["all"]:
        ref = next((s["operators"].get(op) if op != "all" else s["all"]) for s in scores)
        cells = [cell(s["operators"][op] if op != "all" else s["all"]) if (op == "all" or op in s["operators"]) else "-"
                 for s in scores]
        lines.append(f"| {'**all**' if op == 'all' else '`' + op + '`'} | {ref['mutants'] if ref else '-'} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def admission_table(manifest=None) -> str:
    """Markdown table of the manifest's per-operator admission counts.

    Columns: class, sites found, tried, built (ran without ``refused``/``error``),
    admitted, and the rejections by stage (``static``: diff or blinding,
    ``parent``: the parent not ``agrees``, ``build``, ``oracle``: gradient
    right or objectives differ, ``signature``: a signature the class does not allow).
    """
    doc = read_manifest(manifest)
    stages = ["static", "parent", "build", "oracle", "signature", "harness"]
    lines = ["| operator | class | sites | tried | built | admitted | parents | " + " | ".join(f"rej. {s}" for s in stages) + " |",
             "|" + "---|" * (7 + len(stages))]
    per_parent = {}
    for m in doc["mutants"]:
        per_parent.setdefault(m["operator"], set()).add(m["parent"])
    tot = {"sites": 0, "tried": 0, "built": 0, "admitted": 0}
    for name, row in doc["operators"].items():
        rej = row.get("rejected", {})
        for k in tot:
            tot[k] += row.get(k, 0) or 0
        lines.append(f"| `{name}` | `{row['class']}` | {row.get('sites', '-')} | {row['tried']} | {row['built']} | "
                     f"{row['admitted']} | {len(per_parent.get(name, ()))} | " + " | ".join(str(rej.get(s, 0)) for s in stages) + " |")
    parents = len({m["parent"] for m in doc["mutants"]})
    lines.append(f"| **all** | | {tot['sites']} | {tot['tried']} | {tot['built']} | {tot['admitted']} | {parents} | "
                 + " | ".join(str(sum(r.get("rejected", {}).get(s, 0) for r in doc["operators"].values())) for s in stages) + " |")
    return "\n".join(lines) + "\n"
