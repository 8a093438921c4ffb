"""Admission of mutants into the generated tier, and the manifest.

A candidate mutant (one operator at one site of one parent) is admitted only
when all of these hold (docs/mutation.md, "Admission"):

1. **diff** -- re-applying the operator to the parent reproduces the mutant
   byte for byte, and the mutant differs from the parent only in the lines
   of the operator's edit (checked by :func:`diff_stats`; at most
   ``max_diff_lines`` changed lines);
2. **blinding** -- :func:`defects4warp.blind.hint_findings` finds no hint word in
   the mutant's sources;
3. **builds and runs** -- the independent oracle (:mod:`defects4warp.oracle`)
   measures the mutant without a ``refused`` or ``error`` verdict on every
   release checked;
4. **oracle** -- on every release checked the parent's verdict is ``agrees``
   and the mutant's is ``wrong`` at the same parameter point
   (:func:`defects4warp.oracle.pair_stats`), with objectives that agree unless the
   operator changes the objective by design (``changes_objective``);
5. **signature** -- the oracle's signature of the mutant is one the
   operator's class allows (docs/taxonomy.md, ``harness/taxonomy.py``).

Parents are measured once per release and reused for all their mutants.
"""

from __future__ import annotations

import concurrent.futures as cf
import difflib
import hashlib
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...blind import hint_findings
from ...paths import PACKAGE_DIR
from ...taxonomy import CLASSES
from .operators import OPERATORS, Mutation, get_operator
from .sources import Parent

#: Operators whose edit changes the forward value (the epsilon they drop is in
#: the objective); admission then accepts objectives that differ.
CHANGES_OBJECTIVE = frozenset({"drop_epsilon", "unguard_where"})

#: Oracle signature kinds (``defects4warp.oracle`` worker) to taxonomy signatures.
SIGNATURE_MAP = {"zero": ("zero",), "factor": ("exact_factor",), "nan": ("nan_inf",), "growth": ("growth",),
                 "iteration": ("iteration",), "other": ("sparse", "subtly_wrong")}


@dataclass(frozen=True)
class Candidate:
    """One operator applied at one site of one parent."""

    parent: Parent
    mutation: Mutation

    @property
    def id(self) -> str:
        return mutant_id(self.parent.id, self.mutation.operator, self.mutation.site)


def mutant_id(parent_id: str, operator: str, site: str) -> str:
    """Stable case id from (parent, operator, site).

    ``<parent slug>-<operator>-<8 hex of sha1(parent|operator|site)>``,
    lower case, matching the case-id pattern ``^[a-z0-9][a-z0-9-]*$``.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", parent_id.lower()).strip("-")
    op = operator.replace("_", "-")
    h = hashlib.sha1(f"{parent_id}|{operator}|{site}".encode()).hexdigest()[:8]
    return f"{slug}-{op}-{h}"


def _rank(parent_id, operator, site) -> str:
    return hashlib.sha1(f"rank|{parent_id}|{operator}|{site}".encode()).hexdigest()


def candidates(parents, *, operators=None, max_sites: int | None = 1) -> tuple:
    """Every candidate mutant of ``parents``.

    Parameters
    ----------
    parents : list[Parent]
    operators : list[str], optional
        Operator names (default: all of :data:`OPERATORS`).
    max_sites : int or None, default 1
        At most this many sites per (parent, operator), chosen deterministically
        by the SHA-1 of (parent, operator, site); None keeps every site.

    Returns
    -------
    (list[Candidate], dict)
        The candidates and, per operator, ``{"sites": n, "not_applicable": n}``.
    """
    names = list(operators or OPERATORS)
    out, counts = [], {n: {"sites": 0, "parents": 0, "not_applicable": 0} for n in names}
    for p in parents:
        srcs = p.sources()
        for n in names:
            ms = get_operator(n).apply(srcs)
            if not ms:
                counts[n]["not_applicable"] += 1
                continue
            counts[n]["sites"] += len(ms)
            counts[n]["parents"] += 1
            ms = sorted(ms, key=lambda m: _rank(p.id, n, m.site))
            if max_sites is not None:
                ms = ms[:max_sites]
            out.extend(Candidate(p, m) for m in ms)
    return out, counts


def write_program(parent: Parent, mutation: Mutation, dest) -> Path:
    """Copy the parent folder to ``dest`` and write the mutated files over it."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(parent.path, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    if parent.script is not None and (dest / "problem.py").is_file():
        (dest / "problem.py").unlink()  # a script parent's mutant is the user's files only
    for rel, text in mutation.sources.items():
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def diff_stats(parent_sources: dict, mutation: Mutation) -> dict:
    """Changed lines between parent and mutant: ``{"removed": n, "added": n, "files": [...]}``."""
    removed = added = 0
    for rel, text in mutation.sources.items():
        for ln in difflib.unified_diff(parent_sources[rel].splitlines(), text.splitlines(), lineterm="", n=0):
            if ln.startswith("-") and not ln.startswith("---"):
                removed += 1
            elif ln.startswith("+") and not ln.startswith("+++"):
                added += 1
    return {"removed": removed, "added": added, "files": sorted(mutation.sources)}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def static_checks(cand: Candidate, *, max_diff_lines: int = 12) -> str:
    """The reason a candidate fails the diff or blinding check, or ``""``.

    Parameters
    ----------
    max_diff_lines : int, default 12
        Most changed lines (removed + added) an operator's edit may touch;
        the largest edits (a moved multi-line launch) stay under it.
    """
    parent_sources = cand.parent.sources()
    again = [m for m in get_operator(cand.mutation.operator).apply(parent_sources) if m.site == cand.mutation.site]
    if len(again) != 1 or again[0].sources != cand.mutation.sources:
        return "diff: re-applying the operator does not reproduce the mutant"
    d = diff_stats(parent_sources, cand.mutation)
    if d["removed"] + d["added"] == 0:
        return "diff: the mutant equals its parent"
    if d["removed"] + d["added"] > max_diff_lines:
        return f"diff: {d['removed'] + d['added']} changed lines > {max_diff_lines}"
    with tempfile.TemporaryDirectory(prefix="d4w-") as tmp:
        prog = write_program(cand.parent, cand.mutation, Path(tmp) / "program")
        found = hint_findings(prog)
    if found:
        return "blinding: hint words " + ", ".join(sorted({w for _, _, w in found}))
    return ""


#: Where oracle results are kept between admissions (None: no cache). Keyed by
#: the program's files, the interpreter, the point, the knobs and the oracle's own
#: source, so any change to one of them measures again.
CACHE_DIR = Path(os.environ.get("DEFECTS4WARP_MUTATE_CACHE", Path.home() / ".cache" / "defects4warp" / "mutate-oracle"))


def _cache_key(path, python, knobs, point, script=None) -> str:
    import json

    h = hashlib.sha256()
    if script is not None:
        h.update(json.dumps(script, sort_keys=True).encode() + b"\0")
    harness = PACKAGE_DIR
    # a script is read by the capture into the replay record the oracle replays: both move its measurement
    mine = sorted((harness / "oracle").glob("*.py")) + (sorted((harness / "capture").glob("*.py")) if script else [])
    for f in mine + sorted(Path(path).rglob("*.py")):
        if "__pycache__" not in f.parts:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(json.dumps([python or "", knobs or {}], sort_keys=True).encode())
    if point:
        h.update(Path(point).read_bytes())
    return h.hexdigest()


def _measure(path, *, python, timeout_s, knobs, point=None, cache_dir=None, script=None):
    """One oracle run (``arrays=True``), through the result cache when ``cache_dir`` is set.
    With ``script`` (ScriptSpec fields) the capture reads the script in
    ``path`` into a replay record and the oracle replays it (a copy without
    ``problem.py`` is measured).

    Only measurements that completed (verdict other than ``error``) are cached.
    """
    import json

    import numpy as np

    from ...oracle.runner import run_worker

    key = _cache_key(path, python, knobs, point, script) if cache_dir else None
    if key:
        doc_f, raw_f = Path(cache_dir) / f"{key}.json", Path(cache_dir) / f"{key}.npz"
        if doc_f.is_file():
            raw = None
            if raw_f.is_file():
                with np.load(raw_f) as z:
                    raw = {k: z[k] for k in z.files}
            return json.loads(doc_f.read_text()), raw
    if script is not None:
        from ...blind import neutral_copy

        from ...capture.record import record_script

        with neutral_copy(path, drop=("problem.py",)) as p:
            replay = record_script(p, script, python=python, timeout_s=timeout_s)
            doc, raw = run_worker(p, python=python, timeout_s=timeout_s, knobs=knobs, point=point, arrays=True,
                                  replay=replay)
    else:
        doc, raw = run_worker(path, python=python, timeout_s=timeout_s, knobs=knobs, point=point, arrays=True)
    if key and doc.get("verdict") != "error":
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        if raw is not None:
            np.savez(raw_f, **raw)
        doc_f.write_text(json.dumps(doc))
    return doc, raw


def measure_parents(parents, releases: dict, *, jobs: int = 2, timeout_s: float = 300.0, knobs=None,
                    cache_dir=None) -> dict:
    """Oracle measurements of each parent on each release.

    Parameters
    ----------
    releases : dict[str, str | None]
        Release -> interpreter (None: this one).

    Returns
    -------
    dict
        ``{(parent_id, release): (doc, raw)}``.
    """
    work = [(p, r, py) for p in parents for r, py in releases.items()]
    out = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(_measure, p.path, python=py, timeout_s=timeout_s, knobs=knobs or {}, cache_dir=cache_dir,
                          script=p.script): (p.id, r)
                for p, r, py in work}
        for f in cf.as_completed(futs):
            out[futs[f]] = f.result()
    return out


def _align_script_params(wrong: dict, wraw, right: dict) -> tuple:
    """The mutant's measurement with its captured param names mapped onto the
    parent's, position by position, when they differ only by name (same count
    and sizes); unchanged otherwise."""
    pw, pr = wrong.get("params") or {}, right.get("params") or {}
    if not pw or list(pw) == list(pr) or len(pw) != len(pr) or any(
            pw[a]["size"] != pr[b]["size"] for a, b in zip(pw, pr)):
        return wrong, wraw
    rename = dict(zip(pw, pr))
    wrong = dict(wrong, params={rename[k]: v for k, v in pw.items()})
    if wraw is not None:
        wraw = {(f"x0/{rename.get(k[3:], k[3:])}" if k.startswith("x0/") else k): v for k, v in wraw.items()}
    return wrong, wraw


def admit_one(cand: Candidate, parent_docs: dict, releases: dict, *, timeout_s: float = 300.0, knobs=None,
              max_diff_lines: int = 12, cache_dir=None) -> dict:
    """Run the admission checks on one candidate.

    Parameters
    ----------
    parent_docs : dict
        From :func:`measure_parents`.
    releases : dict[str, str | None]
        Release -> interpreter.
    cache_dir : str or Path, optional
        Oracle result cache (e.g. :data:`CACHE_DIR`); None measures every time.

    Returns
    -------
    dict
        A manifest record: ``id``, ``parent``, ``operator``, ``class``,
        ``site``, ``note``, ``admitted`` (bool), ``stage`` (``static``,
        ``parent``, ``build``, ``oracle``, ``signature`` or ``admitted``),
        ``reason``, ``releases`` (measured), per-release ``oracle`` summaries,
        ``sha256`` of each mutated file, ``diff`` line counts, ``seconds``.
    """
    from ...oracle import pair_stats, same_point

    t0 = time.time()
    m = cand.mutation
    rec = {"id": cand.id, "parent": cand.parent.id, "operator": m.operator, "class": m.produces, "site": m.site,
           "note": m.note, "admitted": False, "stage": "static", "reason": "", "releases": [], "oracle": {},
           "sha256": {k: sha256_text(v) for k, v in sorted(m.sources.items())},
           "diff": diff_stats(cand.parent.sources(), m)}
    why = static_checks(cand, max_diff_lines=max_diff_lines)
    if why:
        rec["reason"] = why
        rec["seconds"] = round(time.time() - t0, 2)
        return rec
    allowed = CLASSES[m.produces].signatures
    with tempfile.TemporaryDirectory(prefix="d4w-") as tmp:
        prog = write_program(cand.parent, m, Path(tmp) / "program")
        for rel, py in releases.items():
            right, rraw = parent_docs[(cand.parent.id, rel)]
            if right.get("verdict") != "agrees":
                rec.update(stage="parent", reason=f"parent's oracle verdict on {rel} is {right.get('verdict')}")
                break
            wrong, wraw = _measure_mutant(cand, prog, tmp, rel, py, right, rraw, timeout_s=timeout_s, knobs=knobs,
                                          cache_dir=cache_dir)
            v = wrong.get("verdict")
            summary = {"verdict": v, "signature": wrong.get("signature"), "max_relative_error": wrong.get("max_relative_error"),
                       "warp_version": wrong.get("warp_version")}
            rec["oracle"][rel] = summary
            if v in ("refused", "error"):
                fail = wrong.get("failure") or {}
                msg = fail.get("first_line") or wrong.get("message") or ""
                rec.update(stage="build", reason=f"{v} on {rel}: {fail.get('stage', '')} {fail.get('type', '')} {msg}".strip()[:300])
                break
            stats = pair_stats(wrong, wraw, right, rraw, objectives_differ=m.operator in CHANGES_OBJECTIVE)
            if not same_point(wrong, right):
                stats["confirmed"] = False
                stats["reason"] = "not measured at the parent's point"
            summary.update({k: stats.get(k) for k in ("ratio_median", "ratio_spread", "objective_relative_difference")})
            if not stats["confirmed"]:
                rec.update(stage="oracle", reason=f"on {rel}: {stats.get('reason')}"[:400])
                break
            kind = (wrong.get("signature") or {}).get("kind", "none")
            if not set(SIGNATURE_MAP.get(kind, ())) & allowed:
                rec.update(stage="signature", reason=f"on {rel}: oracle signature {kind} is not one {m.produces} allows")
                break
            rec["releases"].append(rel)
        else:
            rec.update(admitted=True, stage="admitted")
    rec["seconds"] = round(time.time() - t0, 2)
    return rec


def _measure_mutant(cand: Candidate, prog, tmp: str, rel: str, py, right: dict, rraw, *, timeout_s: float, knobs,
                    cache_dir) -> tuple:
    """The oracle's ``(document, raw arrays)`` of the mutant program ``prog`` on release ``rel`` (interpreter
    ``py``), at the parent's measured point (``right``, ``rraw``) for an adapter."""
    import numpy as np

    point = None
    if rraw is not None and cand.parent.script is None:
        point = os.path.join(tmp, f"x0-{rel}.npz")
        np.savez(point, **{k: v for k, v in rraw.items() if k.startswith("x0/")})
    # a script starts from its own seeded values; its captured params are named by
    # allocation site, which an edit may shift: matched to the parent's by position
    wrong, wraw = _measure(prog, python=py, timeout_s=timeout_s, knobs=knobs or {}, point=point,
                           cache_dir=cache_dir, script=cand.parent.script)
    if cand.parent.script is not None:
        wrong, wraw = _align_script_params(wrong, wraw, right)
    return wrong, wraw


def admit(cands, releases: dict, *, jobs: int = 2, timeout_s: float = 300.0, knobs=None, progress=None,
          cache_dir=None) -> list:
    """Admission of many candidates in parallel (``jobs`` oracle workers at a time).

    Returns
    -------
    list[dict]
        One record per candidate (see :func:`admit_one`), in candidate order.
    """
    parents = list({c.parent.id: c.parent for c in cands}.values())
    docs = measure_parents(parents, releases, jobs=jobs, timeout_s=timeout_s, knobs=knobs, cache_dir=cache_dir)
    recs = [None] * len(cands)
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(admit_one, c, docs, releases, timeout_s=timeout_s, knobs=knobs, cache_dir=cache_dir): i
                for i, c in enumerate(cands)}
        for f in cf.as_completed(futs):
            i = futs[f]
            try:
                recs[i] = f.result()
            except Exception as exc:  # an operator or harness failure must not stop the others
                c = cands[i]
                recs[i] = {"id": c.id, "parent": c.parent.id, "operator": c.mutation.operator, "class": c.mutation.produces,
                           "site": c.mutation.site, "admitted": False, "stage": "harness", "reason": f"{type(exc).__name__}: {exc}"}
            if progress:
                progress(recs[i])
    return recs


def summarize(records: list, counts: dict | None = None) -> dict:
    """Per operator: ``class``, ``sites``, ``tried``, ``built``, ``admitted`` and rejection counts by stage."""
    out = {}
    for name, op in OPERATORS.items():
        rs = [r for r in records if r["operator"] == name]
        row = {"class": op.produces, "tried": len(rs),
               "built": sum(1 for r in rs if r["stage"] in ("oracle", "signature", "admitted")),
               "admitted": sum(1 for r in rs if r["admitted"]), "rejected": {}}
        if counts and name in counts:
            row["sites"] = counts[name]["sites"]
            row["parents_with_sites"] = counts[name]["parents"]
            row["not_applicable"] = counts[name]["not_applicable"]
        for r in rs:
            if not r["admitted"]:
                row["rejected"][r["stage"]] = row["rejected"].get(r["stage"], 0) + 1
        out[name] = row
    return out
