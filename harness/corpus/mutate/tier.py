"""The generated tier: the committed manifest and its deterministic materialisation.

``mutants/manifest.yaml`` lists every candidate that admission tried, with
its parent, operator, site, class, the releases measured, the oracle's
summary and, for rejected ones, the stage and reason; plus per-operator
counts. :func:`materialize` rebuilds the admitted mutants as case folders
(``case.yaml``, ``buggy/`` = the mutant, ``fixed/`` = a copy of the parent)
from the parents and the operators alone, checking each rebuilt file against
the SHA-256 recorded at admission.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ...paths import bundled
from .admit import Candidate, sha256_text, write_program
from .operators import get_operator
from .sources import find_parent

#: The committed manifest (``<repo>/mutants/manifest.yaml``).
MANIFEST = bundled("mutants") / "manifest.yaml"


def build_manifest(records: list, summary: dict, *, releases: list, jobs: int, seconds: float, max_sites,
                   cpu: str = "", cpu_seconds: float | None = None, load: float | None = None) -> dict:
    """The manifest document (a JSON/YAML-able dict).

    Parameters
    ----------
    records : list[dict]
        From :func:`defects4warp.corpus.mutate.admit.admit`.
    summary : dict
        From :func:`defects4warp.corpus.mutate.admit.summarize`.
    releases : list[str]
        Warp releases admission measured on.
    jobs, seconds, max_sites
        How admission ran (parallel workers, wall seconds, sites per parent and operator).
    cpu, cpu_seconds, load
        The machine (e.g. ``"2 CPUs"``), user+system CPU seconds of the oracle
        workers (``RUSAGE_CHILDREN``), and the 1-minute load average at the end
        (a shared machine inflates wall time, not CPU time).
    """
    admitted = [r for r in records if r.get("admitted")]
    return {
        "format": 1,
        "releases": list(releases),
        "admission": {"jobs": jobs, "wall_seconds": round(seconds, 1), "max_sites": max_sites, "machine": cpu,
                      "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds, 1),
                      "load_average": None if load is None else round(load, 2),
                      "tried": len(records), "admitted": len(admitted),
                      "parents": len({r["parent"] for r in records}),
                      "admitted_parents": len({r["parent"] for r in admitted}),
                      "admitted_operators": len({r["operator"] for r in admitted})},
        "operators": summary,
        "mutants": [_slim(r) for r in admitted],
        "rejected": [{k: r.get(k) for k in ("id", "parent", "operator", "class", "site", "stage", "reason")}
                     for r in records if not r.get("admitted")],
    }


def _slim(r: dict) -> dict:
    keep = ("id", "parent", "operator", "class", "site", "note", "releases", "sha256", "diff", "oracle")
    return {k: r[k] for k in keep if k in r}


def write_manifest(doc: dict, path=None) -> Path:
    path = Path(path or MANIFEST)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=120), encoding="utf-8")
    return path


def read_manifest(path=None) -> dict:
    """Load a manifest (with libyaml's C loader where PyYAML has it: the manifest is large)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path or MANIFEST).read_text(encoding="utf-8"), Loader=loader)


def rebuild(entry: dict, corpus=None) -> Candidate:
    """Re-derive one admitted mutant from its parent and operator.

    Raises
    ------
    ValueError
        When the site no longer exists or the rebuilt text differs from the
        SHA-256 recorded at admission (the parent or the operator changed).
    """
    parent = find_parent(entry["parent"], corpus)
    ms = [m for m in get_operator(entry["operator"]).apply(parent.sources()) if m.site == entry["site"]]
    if len(ms) != 1:
        raise ValueError(f"{entry['id']}: operator {entry['operator']} finds no site {entry['site']} in {entry['parent']}")
    got = {k: sha256_text(v) for k, v in sorted(ms[0].sources.items())}
    if entry.get("sha256") and got != entry["sha256"]:
        raise ValueError(f"{entry['id']}: rebuilt source differs from the admitted one (parent or operator changed)")
    return Candidate(parent, ms[0])


def case_yaml(entry: dict, cand: Candidate) -> dict:
    """The ``case.yaml`` of one materialised mutant (valid against the case schema)."""
    releases = entry.get("releases") or []
    bug = {"verdict": "bug", "classes": [entry["class"]], "scale": "small",
           "note": f"admitted by the oracle on {', '.join(releases)}"}
    ok = {"verdict": "no_bug", "classes": ["correct"], "scale": "small"}
    variants = {"buggy": [dict(bug, warp=f"=={r}") for r in releases],
                "fixed": [dict(ok, warp=f"=={r}") for r in releases]}
    doc = {
        "id": entry["id"],
        "title": f"Generated: {entry['operator']} on {entry['parent']}",
        "summary": f"A generated variant of {entry['parent']}: its gradient differs from the one its objective implies.",
        "explanation": (f"Mutant of {entry['parent']} by {entry['operator']} at {entry['site']} "
                        f"({cand.mutation.note}); class {entry['class']}. The fixed variant is the parent."),
        "provenance": "original",
        "split": cand.parent.split if cand.parent.split in ("dev", "test") else "dev",
        "tags": {"domain": cand.parent.domain, "features": ["generated", entry["operator"].replace("_", "-")]},
        "variants": variants,
    }
    if cand.parent.script is not None:
        doc["tags"]["form"] = "script"
        sc = cand.parent.script
        doc["script"] = {"entry": sc["entry"], "args": list(sc.get("args") or []),
                         "iteration": int(sc.get("iteration") or 1),
                         **({"params": list(sc["params"])} if sc.get("params") else {})}
    return doc


def materialize(dest, manifest=None, *, corpus=None, only=None, per_operator=None) -> list:
    """Write every admitted mutant of the manifest as a case folder under ``dest``.

    Parameters
    ----------
    dest : str or Path
        Output corpus folder (created; existing mutant folders are replaced).
    manifest : str or Path, optional
        Default :data:`MANIFEST`.
    only : int, optional
        The first ``only`` mutants (a sample, e.g. for CI).
    per_operator : int, optional
        At most this many mutants per operator, in manifest order (a stratified sample).

    Returns
    -------
    list[pathlib.Path]
        The case folders written, in manifest order.
    """
    doc = read_manifest(manifest)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    entries, seen = [], {}
    for entry in doc["mutants"]:
        seen[entry["operator"]] = seen.get(entry["operator"], 0) + 1
        if per_operator is None or seen[entry["operator"]] <= per_operator:
            entries.append(entry)
    for entry in entries[: only if only is not None else None]:
        cand = rebuild(entry, corpus)
        case_dir = dest / entry["id"]
        if case_dir.exists():
            shutil.rmtree(case_dir)
        case_dir.mkdir(parents=True)
        write_program(cand.parent, cand.mutation, case_dir / "buggy")
        shutil.copytree(cand.parent.path, case_dir / "fixed", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
        if cand.parent.script is not None and (case_dir / "fixed" / "problem.py").is_file():
            (case_dir / "fixed" / "problem.py").unlink()
        (case_dir / "case.yaml").write_text(yaml.safe_dump(case_yaml(entry, cand), sort_keys=False, width=120), encoding="utf-8")
        out.append(case_dir)
    return out


def merge_manifests(paths: list, *, drop: dict | None = None) -> dict:
    """Combine manifests of several admission runs into one document.

    Records are keyed by mutant id; a later manifest's record replaces an
    earlier one's. ``drop`` maps a manifest index to operator names whose
    records of that manifest are discarded (e.g. an operator changed after
    that run and was admitted again in a later one). Per-operator counts are
    recomputed from the records; ``sites`` are counted again over the parents
    the records name with the current operators. Wall and CPU seconds add up.

    Returns
    -------
    dict
        A manifest document (see :func:`build_manifest`).
    """
    from .admit import candidates, summarize
    from .sources import find_parent

    drop = drop or {}
    recs, releases, wall, cpu, jobs, max_sites, loads = {}, [], 0.0, 0.0, 0, None, []
    for i, p in enumerate(paths):
        doc = read_manifest(p)
        releases = releases or list(doc["releases"])
        a = doc["admission"]
        wall += a.get("wall_seconds") or 0.0
        cpu += a.get("cpu_seconds") or 0.0
        jobs = max(jobs, a.get("jobs") or 0)
        max_sites = a.get("max_sites")
        if a.get("load_average") is not None:
            loads.append(a["load_average"])
        skip = set(drop.get(i, ()))
        for m in doc["mutants"]:
            if m["operator"] not in skip:
                recs[m["id"]] = dict(m, admitted=True, stage="admitted")
        for r in doc["rejected"]:
            if r["operator"] not in skip:
                recs[r["id"]] = dict(r, admitted=False)
    parents = sorted({r["parent"] for r in recs.values()})
    _, counts = candidates([find_parent(p) for p in parents], max_sites=None)
    records = list(recs.values())
    out = build_manifest(records, summarize(records, counts), releases=releases, jobs=jobs, seconds=wall,
                         max_sites=max_sites, cpu=read_manifest(paths[-1])["admission"].get("machine", ""),
                         cpu_seconds=cpu or None, load=max(loads) if loads else None)
    out["admission"]["merged_from"] = len(paths)
    for m in out["mutants"]:
        m.pop("admitted", None)
        m.pop("stage", None)
    return out
