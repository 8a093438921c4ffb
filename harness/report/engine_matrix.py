"""The engine across releases, as committed data: one compact file per release.

``docs/data/engine-<release>.json`` holds one engine's answers on the whole
corpus on one Warp release, small enough to commit (about 300 bytes a run)
and to render the release matrix, the upgrade audits and the results page
from (:mod:`defects4warp.report.pages`). Ground truth is not copied in: the pages
join each run with the committed validation JSON of its release at render
time, so a validation that lands later needs no new engine run.

Format (``format`` = :data:`FORMAT`)::

    {"format", "release", "warp_version" (imported), "engine": {"name", "version",
     "code" (digest of the harness code the engine runs, defects4warp.run.store.code_digest;
     None for a plugin)}, "commit" (git HEAD of the checkout, "+dirty" when
     harness/ had uncommitted edits; None outside git), "device", "machine",
     "measured_on" (ISO date), "jobs", "wall_s", "cpu_s" (CPU seconds of this
     process and its workers while measuring), "measured" (runs diagnosed now),
     "reused" (runs taken from the result store), "complete",
     "corpus": {"cases", "runs", "selection" (the --cases glob), "programs", "digest"},
     "runs": [run, ...]}

and each run (:func:`compact_record`)::

    {"case", "variant", "scale", "program" (only "script"), "split",
     "expected": {"verdict", "classes"} | None (the case.yaml labels for this release and scale when
         measured; the pages rescore every run against today's labels and min_warp, :func:`rescore`),
     "verdict", "top": [[class, score], ...] (at most TOP_K), "signature",
     "seconds" (the diagnosis' wall time), "evals" (objective evaluations),
     "correct": {"verdict", "class"} | None,
     optional: "error" (a harness or engine error message), "unsupported": true,
     "skipped" (why it was not diagnosed), "tracker" ({warning: call sites})}

Files are written atomically (temporary file + rename), one run per line so a
re-measurement diffs line by line.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import os
import random
import re
import resource
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..blind import neutral_copy
from ..engines import get_engine
from ..envs import _installed_or_none, python_for
from ..jsonio import _strict, lossless, restore, write_atomic
from ..machine import describe
from ..paths import PACKAGE_DIR
from ..provenance import changed_modules, digests
from ..run.runner import interpret_item, plan, run
from ..run.scoring import judge
from ..run.store import engine_identity as store_identity
from ..run.store import measurement_fields, measures_apart, tree_digest

#: Format tag of an engine-release file.
FORMAT = "defects4warp-engine-release/1"

#: Classes (with scores) kept per run: the top-3 the issue asks for.
TOP_K = 3

#: File name pattern under ``docs/data``.
FILE_GLOB = "engine-*.json"


class EngineFileError(RuntimeError):
    """An engine-release file is missing a field or is not the JSON it should be (names the file)."""


def data_path(root: Path, release: str) -> Path:
    """``<root>/docs/data/engine-<release>.json``."""
    return Path(root) / "docs" / "data" / f"engine-{release}.json"


def compact_record(rec: dict) -> dict:
    """The compact form of one result record of :func:`defects4warp.run.runner.run` (see the module docstring)."""
    from ..run.matrix import _tracker

    d = rec.get("diagnosis") or {}
    cost = d.get("cost") or {}
    exp = rec.get("expected")
    out = {"case": rec["case"], "variant": rec["variant"], "scale": rec.get("scale", "small")}
    if rec.get("program") == "script":
        out["program"] = "script"
    out.update({
        "split": rec.get("split"),
        "expected": None if exp is None else {"verdict": exp["verdict"], "classes": list(exp.get("classes") or [])},
        "verdict": d.get("verdict"),
        "top": [[c["id"], None if c.get("score") is None else round(float(c["score"]), 4)]
                for c in (d.get("classes") or [])[:TOP_K]],
        "signature": d.get("signature"),
        "seconds": None if cost.get("wall_s") is None else round(float(cost["wall_s"]), 3),
        "evals": cost.get("objective_evals"),
        "correct": rec.get("correct"),
    })
    if d.get("error"):
        out["error"] = str(d["error"])[:500]
    if rec.get("unsupported"):
        out["unsupported"] = True
    if rec.get("skipped"):
        out["skipped"] = str(rec["skipped"])
    tracker = _tracker(d)
    if tracker:
        out["tracker"] = tracker
    return out


def full_record(run: dict) -> dict:
    """A result record (the shape :func:`defects4warp.run.scoring.summarize` reads) from a compact run."""
    rec = {"case": run["case"], "variant": run["variant"], "scale": run.get("scale", "small"),
           "program": run.get("program", "adapter"), "split": run.get("split"), "expected": run.get("expected"),
           "correct": run.get("correct"),
           "diagnosis": {"verdict": run.get("verdict"),
                         "classes": [{"id": c, "score": s} for c, s in run.get("top", [])],
                         "signature": run.get("signature"),
                         "cost": {"wall_s": run.get("seconds") or 0.0, "objective_evals": run.get("evals")}}}
    if run.get("error"):
        rec["diagnosis"]["error"] = run["error"]
    for k in ("unsupported", "skipped"):
        if run.get(k):
            rec[k] = run[k]
    return rec


def git_commit(root: Path) -> str | None:
    """``git rev-parse HEAD`` of ``root`` (12 characters), with ``+dirty`` when
    ``harness/`` has uncommitted changes; None when ``root`` is not a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "harness"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip()[:12] + ("+dirty" if dirty.stdout.strip() else "")


def engine_identity(engine) -> dict:
    """``{"name", "version", "code"}`` of ``engine``: ``code`` is the digest of
    the harness sources a built-in engine runs (:func:`defects4warp.run.store.code_digest`,
    first 16 hex digits), None for a plugin or an outside tool."""
    ident = store_identity(engine) or {}
    code = ident.get("code")
    return {"name": engine.name, "version": str(getattr(engine, "version", "")), "code": code[:16] if code else None}


def corpus_digest(items: list) -> str:
    """SHA-256 (first 16 hex digits) over the run items' (case, variant, scale,
    program) and the digest of each variant's files: a file that changes, or a
    case added or removed, changes it."""
    h = hashlib.sha256()
    seen = {}
    for it in items:
        p = str(it.variant.path)
        if p not in seen:
            seen[p] = tree_digest(it.variant.path)
        h.update(f"{it.case.id}\0{it.variant.name}\0{it.scale}\0{it.program}\0{seen[p]}\n".encode())
    return h.hexdigest()[:16]


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its waited-for children."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def measure_release(release: str, cases: list, *, engine_name: str = "reference", device: str = "cpu",
                    jobs: int = 1, timeout_s: float = 300.0, store=None, fresh: bool = False, executor=None,
                    on_result=None, programs: str = "auto", selection: str = "*", bundle: list | None = None,
                    seed: list | None = None, log=None) -> dict:
    """Run ``engine_name`` over ``cases`` on Warp ``release`` (its cached
    environment) and return the engine-release document (module docstring).

    Diagnoses found in ``store`` (:class:`defects4warp.run.store.ResultStore`) are
    reused, and new ones stored as they finish, so a killed measurement
    resumes where it stopped. ``timeout_s`` is the per-variant limit of the
    engine; ``on_result(record)`` is called per finished run (progress).
    ``commit`` is the git HEAD of the checkout this code runs from (None for
    an installed package), whatever folder the file is written to.

    ``seed`` (the entries of a committed measurement bundle, :func:`read_bundle`)
    is put into ``store`` first (:func:`seed_store`), so only runs whose
    measurement is missing, stale or of a changed variant are measured;
    ``bundle``, when a list, receives this run's bundle entries
    (:func:`bundle_entries`: the measurements of every run, reused or new).

    Raises
    ------
    defects4warp.envs.ReleaseEnvError
        When the release's environment cannot be created.
    """
    # the installed release runs in this interpreter (no per-release environment to create)
    env_release = None if release == _installed_or_none() else release
    python, version = python_for(env_release)
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python)
    items = plan(cases, programs=programs)
    if seed and store is not None and not fresh and measures_apart(engine):
        seeded = seed_store(store, seed, items, engine, version, device)
        if log:
            log(f"Warp {release}: {seeded['seeded']} committed measurement(s) put in the result store "
                f"({len(seeded['stale'])} stale: measuring code changed; {len(seeded['variant_changed'])} of "
                "changed variants left out)")
    measurements = {}
    t0, c0 = time.perf_counter(), _cpu_s()
    doc = run(items, engine, device=device, jobs=jobs, warp_version=version, python=python, on_result=on_result,
              store=store, fresh=fresh, executor=executor, release=env_release, measurements=measurements)
    if bundle is not None:
        bundle[:] = bundle_entries(items, measurements)
    s = doc["summary"]
    return {
        "format": FORMAT, "release": release, "warp_version": version, "engine": engine_identity(engine),
        "commit": git_commit(PACKAGE_DIR.parent), "device": device,
        "machine": describe(), "measured_on": datetime.date.today().isoformat(), "jobs": jobs,
        "wall_s": round(time.perf_counter() - t0, 1), "cpu_s": round(_cpu_s() - c0, 1),
        "measured": len(doc["results"]) - int(s.get("reused") or 0)
        - sum(1 for r in doc["results"] if r.get("skipped") or r.get("unsupported")),
        "reused": int(s.get("reused") or 0), "complete": bool(s.get("complete")),
        "corpus": {"cases": len(cases), "runs": len(items), "selection": selection, "programs": programs,
                   "digest": corpus_digest(items)},
        "runs": [compact_record(r) for r in doc["results"]],
    }


def dumps(doc: dict) -> str:
    """``doc`` as strict JSON text: the header indented, one run per line."""
    doc = _strict(doc)
    head = {k: v for k, v in doc.items() if k != "runs"}
    text = json.dumps(head, indent=1, sort_keys=False, allow_nan=False)
    runs = ",\n".join("  " + json.dumps(r, separators=(",", ":"), allow_nan=False) for r in doc.get("runs", []))
    return text[:-2] + ',\n "runs": [\n' + runs + "\n ]\n}\n"


def write(path: Path, doc: dict) -> None:
    """Write ``doc`` to ``path`` atomically (:func:`defects4warp.jsonio.write_atomic`)."""
    write_atomic(path, dumps(doc), suffix=".json")


REQUIRED = ("format", "release", "engine", "device", "runs")


def read(path: Path) -> dict:
    """An engine-release file, checked.

    Raises
    ------
    EngineFileError
        When the file is not readable JSON, misses a field of :data:`REQUIRED`,
        has another ``format``, or a run misses ``case``/``variant``/``verdict``
        (the message names the file and the field).
    """
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise EngineFileError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise EngineFileError(f"{path}: not a JSON object")
    for k in REQUIRED:
        if k not in doc:
            raise EngineFileError(f"{path}: no '{k}' field")
    if doc["format"] != FORMAT:
        raise EngineFileError(f"{path}: format '{doc['format']}', expected '{FORMAT}'")
    for i, r in enumerate(doc["runs"]):
        for k in ("case", "variant", "verdict"):
            if k not in r:
                raise EngineFileError(f"{path}: runs[{i}] has no '{k}' field")
    return doc


def read_all(root: Path) -> dict:
    """``{release: document}`` of every ``docs/data/engine-*.json`` under ``root``."""
    out = {}
    for p in sorted((Path(root) / "docs" / "data").glob(FILE_GLOB)):
        doc = read(p)
        if p.name != f"engine-{doc['release']}.json":
            raise EngineFileError(f"{p}: holds release '{doc['release']}', its name says another")
        out[doc["release"]] = doc
    return out


def rescore(doc: dict, cases: dict) -> dict:
    """A copy of engine-release document ``doc`` scored against the labels
    ``cases`` carry now, as the pages join ground truth at render time.

    Each run's ``expected`` (and so ``correct``) is recomputed from its case's
    ``case.yaml`` for the file's release and the run's scale, and a run on a
    release older than the variant's current ``min_warp`` becomes unsupported
    (not scored, not a harness error), so a label or ``min_warp`` corrected
    after the measurement needs no new engine run. Runs of cases not in
    ``cases``, or of variants they do not have, are kept as measured.

    Parameters
    ----------
    doc : dict
        An engine-release document (:func:`read`).
    cases : dict
        ``{case id: defects4warp.corpus.case.Case}``, e.g. from ``load_corpus``.

    Returns
    -------
    dict
        ``doc`` with a new ``runs`` list; ``rescored`` counts the runs whose
        expectation, correctness or support changed.
    """
    rel = doc["release"]
    runs, changed = [], 0
    for r in doc["runs"]:
        case = cases.get(r["case"])
        var = None
        if case is not None:
            var = next((v for v in case.variants if v.name == r["variant"]), None)
        if var is None or r.get("skipped") and not r.get("unsupported"):
            runs.append(r)
            continue
        if not var.supports(rel):
            new = {k: v for k, v in r.items() if k not in ("error", "tracker")}
            new.update(unsupported=True, verdict="skipped", top=[], expected=None, correct=None,
                       skipped=f"unsupported: the program needs Warp {var.min_warp} or newer (min_warp), not {rel}")
        elif r.get("unsupported"):
            new = r  # measured as unsupported under an older min_warp: nothing was diagnosed to score
        else:
            exp = var.expectation_for(rel, r.get("scale", "small"))
            expected = None if exp is None else exp.to_dict()
            expected = None if expected is None else {"verdict": expected["verdict"],
                                                      "classes": list(expected.get("classes") or [])}
            diag = {"verdict": r.get("verdict"), "classes": [{"id": c} for c, _ in r.get("top") or []]}
            new = dict(r, expected=expected, correct=judge(expected, diag))
        changed += new != r
        runs.append(new)
    return dict(doc, runs=runs, rescored=changed)


def stale_reason(doc: dict | None, engine: dict, digest: str, device: str) -> str | None:
    """Why an existing engine-release file must be measured again (None: it is current).

    It is stale when missing, incomplete, or made by another engine identity
    (name, version or harness code digest: :func:`engine_identity`), on
    another device, or on another corpus (:func:`corpus_digest`).
    """
    if doc is None:
        return "no engine file"
    if not doc.get("complete", False):
        return "the file is incomplete"
    have = doc.get("engine") or {}
    for k in ("name", "version", "code"):
        if have.get(k) != engine.get(k):
            return f"engine {k} {have.get(k)} there, {engine.get(k)} now"
    if doc.get("device") != device:
        return f"device {doc.get('device')} there, {device} now"
    if (doc.get("corpus") or {}).get("digest") != digest:
        return "the corpus (or the selection of cases) changed since"
    return None


# -- measurements apart from interpretation -------------------------------------------------------

#: Format tag of a measurement bundle (:func:`write_bundle`).
BUNDLE_FORMAT = "defects4warp-measurements/1"


def bundle_path(engine_file: Path) -> Path:
    """The measurement bundle beside an engine-release file:
    ``engine-1.19.0.json`` -> ``engine-1.19.0.measurements.jsonl.gz``."""
    engine_file = Path(engine_file)
    return engine_file.with_name(engine_file.stem + ".measurements.jsonl.gz")


def bundle_entries(items: list, measurements: dict) -> list:
    """The bundle entries of a run: one ``{"case", "variant", "scale", "program",
    "variant_digest", "record"}`` per item index of ``measurements`` (the
    ``measurements`` argument of :func:`defects4warp.run.runner.run`), in item order."""
    digests, out = {}, []
    for i in sorted(measurements):
        it = items[i]
        p = str(it.variant.path)
        if p not in digests:
            digests[p] = tree_digest(it.variant.path)
        out.append({"case": it.case.id, "variant": it.variant.name, "scale": it.scale, "program": it.program,
                    "variant_digest": digests[p], "record": measurements[i]})
    return out


def write_bundle(path: Path, header: dict, entries: list) -> None:
    """Write a measurement bundle atomically: gzip'd JSON lines, the first
    ``header`` (with ``format`` = :data:`BUNDLE_FORMAT`), then one line per
    entry (:func:`bundle_entries`; non-finite floats as :func:`defects4warp.jsonio.lossless`
    writes them, read back as floats). The gzip header carries no time stamp and
    keys are sorted, so equal measurements give equal bytes."""
    lines = [json.dumps(_strict(dict(header, format=BUNDLE_FORMAT)), sort_keys=True, allow_nan=False)]
    lines += [json.dumps(lossless(e), sort_keys=True, separators=(",", ":"), allow_nan=False) for e in entries]
    write_atomic(path, gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0), suffix=".gz")


def read_bundle(path: Path) -> tuple:
    """``(header, entries)`` of a measurement bundle.

    Raises
    ------
    EngineFileError
        When the file is not gzip'd JSON lines, has another ``format``, or an
        entry misses a field (the message names the file and the line).
    """
    try:
        lines = gzip.decompress(Path(path).read_bytes()).decode().splitlines()
        header = json.loads(lines[0]) if lines else None
    except (OSError, EOFError, ValueError, UnicodeDecodeError) as exc:
        raise EngineFileError(f"{path}: not a gzip'd JSON-lines measurement bundle ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != BUNDLE_FORMAT:
        raise EngineFileError(f"{path}: line 1: format {None if not isinstance(header, dict) else header.get('format')!r}, "
                              f"expected {BUNDLE_FORMAT!r}")
    entries = []
    for n, line in enumerate(lines[1:], start=2):
        try:
            e = json.loads(line)
        except ValueError as exc:
            raise EngineFileError(f"{path}: line {n}: not JSON ({exc})") from None
        for k in ("case", "variant", "scale", "program", "variant_digest", "record"):
            if k not in e:
                raise EngineFileError(f"{path}: line {n}: no '{k}' field")
        entries.append(restore(e))
    return header, entries


def seed_store(store, entries: list, items: list, engine, warp_version: str, device: str) -> dict:
    """Put the records of bundle ``entries`` into ``store`` under the
    measurement key of the matching run item of ``items`` (same case, variant,
    scale and program, and the variant's files unchanged), so that a run over
    ``items`` reuses them and measures only what is missing or stale.

    Returns
    -------
    dict
        ``{"seeded": n, "variant_changed": [labels], "stale": {label: [changed modules]}}``
        (a stale record is seeded too; the store's ``get`` refuses it and counts it).
    """
    by_key = {(e["case"], e["variant"], e["scale"], e["program"]): e for e in entries}
    out = {"seeded": 0, "variant_changed": [], "stale": {}}
    for it in items:
        e = by_key.get((it.case.id, it.variant.name, it.scale, it.program))
        if e is None:
            continue
        if e["variant_digest"] != tree_digest(it.variant.path):
            out["variant_changed"].append(it.label)
            continue
        script = it.variant.script.to_json() if it.program == "script" else None
        fields = measurement_fields(it.variant.path, engine, warp_version, device, it.scale, script=script)
        if fields is None:
            continue
        changed = changed_modules(e["record"].get("code"))
        if changed:
            out["stale"][it.label] = changed
        store.put(fields, e["record"])
        out["seeded"] += 1
    return out


def rescore_release(path: Path, cases: list, *, engine_name: str = "reference", jobs: int = 1) -> tuple:
    """Interpret the committed measurements of one engine-release file again
    with the current interpretation code: no Warp run, no per-release environment.

    Every run of the file at ``path`` whose variant is unchanged and whose
    record in the bundle (:func:`bundle_path`) is current (no module that took
    it changed, :func:`defects4warp.provenance.changed_modules`) is interpreted
    by ``engine_name`` (:func:`defects4warp.run.runner.interpret_item`) and scored
    against today's labels. Runs that were not diagnosed (skipped, unsupported)
    are kept as they are.

    Parameters
    ----------
    path : Path
        ``docs/data/engine-<release>.json`` (or a baseline's file).
    cases : list[defects4warp.corpus.case.Case]
        The corpus the file was measured on.
    engine_name : str
        The engine whose interpretation to apply (default ``reference``).
    jobs : int
        Runs interpreted at once (threads; default 1).

    Returns
    -------
    (doc, needs)
        ``doc``: the new engine-release document (the measurement's header
        fields kept; ``engine`` now this code's identity, ``interpreted``:
        ``{"commit", "on", "wall_s"}``), or None when some run could not be
        interpreted; ``needs``: ``[(run label, reason)]`` of the runs that need
        a measurement first (``pages --measure`` measures only those).

    Raises
    ------
    EngineFileError
        When the file or its bundle is unreadable, or there is no bundle.
    """
    path = Path(path)
    old = read(path)
    bpath = bundle_path(path)
    if not bpath.is_file():
        raise EngineFileError(f"{path}: no measurement bundle {bpath.name} beside it (measured before measurements "
                              f"were committed): `defects4warp maint pages --measure --warp {old['release']}` measures it")
    _header, entries = read_bundle(bpath)
    t0 = time.perf_counter()
    engine = get_engine(engine_name)
    items = {(it.case.id, it.variant.name, it.scale, it.program): it
             for it in plan(cases, programs=(old.get("corpus") or {}).get("programs", "auto"))}
    by_key = {(e["case"], e["variant"], e["scale"], e["program"]): e for e in entries}
    version = old.get("warp_version") or old["release"]
    needs, work = [], []
    for n, r in enumerate(old["runs"]):
        key = (r["case"], r["variant"], r.get("scale", "small"), r.get("program", "adapter"))
        it, e = items.get(key), by_key.get(key)
        label = f"{key[0]}/{key[1]}" + ("" if key[2] == "small" else f"@{key[2]}") + (" (script)" if key[3] == "script" else "")
        if r.get("skipped") or r.get("unsupported"):
            continue
        if it is None:
            needs.append((label, "no longer in the corpus"))
        elif e is None:
            needs.append((label, "no measurement in the bundle"))
        elif e["variant_digest"] != tree_digest(it.variant.path):
            needs.append((label, "the variant's files changed since"))
        elif changed_modules(e["record"].get("code")):
            needs.append((label, "measuring code changed: " + ", ".join(changed_modules(e["record"].get("code"))[:4])))
        else:
            work.append((n, it, e["record"]))
    planned = {k for k in items} - {(r["case"], r["variant"], r.get("scale", "small"), r.get("program", "adapter"))
                                    for r in old["runs"]}
    needs += [(f"{k[0]}/{k[1]}", "new in the corpus") for k in sorted(planned)]
    if needs:
        return None, needs
    runs = list(old["runs"])
    with ThreadPoolExecutor(max(1, int(jobs))) as pool:
        for (n, _it, _rec), res in zip(work, pool.map(lambda w: interpret_item(engine, w[1], w[2], version), work)):
            runs[n] = compact_record(res)
    doc = dict(old, engine=engine_identity(engine), runs=runs,
               interpreted={"commit": git_commit(PACKAGE_DIR.parent),
                            "on": datetime.date.today().isoformat(), "wall_s": round(time.perf_counter() - t0, 1)})
    return doc, []


#: Keys of a measurement document that say how long or where it ran, not what it measured; left out when
#: two measurements of the same program are compared (:func:`document_difference`).
VOLATILE_KEYS = frozenset({"cost", "log_tail", "code", "wall_s", "seconds", "compile_s", "ms", "running", "probe_s",
                           "traceback", "path", "tmp"})


#: Keys whose numbers are themselves errors, noise or uncertainty estimates (``relative_error``,
#: ``abs_error``, ``noise``, the finite-difference uncertainty ``unc``): compared to
#: :data:`ERROR_ATOL` absolute, not relatively.
_ERROR_KEY = re.compile(r"(^unc$|error$|err$|noise$)")

#: Absolute tolerance for an error-like number. The same code on two x86 machines measured a
#: relative error as 3.4073231737630854e-10 and 3.407323444597677e-10, another as 6.1267e-09 and
#: 6.1279e-09 (another CPU's rounding in the compiled kernels; 2026-12-04, the neutral check of
#: nebula-splat-image-fit and tyre-lateral-force-fit on Warp 1.19.0), and finite-difference
#: uncertainties of 1.75e-09 and 1.84e-09 (bearing-vibration-classifier, Warp 1.0.2). 1e-10 is five orders below
#: the smallest tolerance the engine reads such numbers with (``REPEAT_RTOL`` = 1e-5 in
#: measure/compare.py), so no decision can move within it.
ERROR_ATOL = 1e-10


def document_difference(a, b, *, rtol: float = 1e-9, where: str = "", error_atol: float = ERROR_ATOL) -> str | None:
    """The first place where measurement ``a`` and ``b`` differ, as ``"path: a-value != b-value"``,
    or None when they agree: equal structure, equal strings and booleans, numbers within
    ``rtol`` relative (default 1e-9: the same program measured twice with the same seeds gives
    the same floats up to summation order), numbers under an error-like key anywhere on their path
    (``..._error``, ``noise/relative``, ``unc``: :data:`_ERROR_KEY`) also within ``error_atol``
    absolute (default :data:`ERROR_ATOL`),
    paths inside the harness's temporary folders (``.../d4w-xxxx``) taken as equal. Keys of
    :data:`VOLATILE_KEYS` and durations (keys ending in ``_s`` or ``_ms``) are ignored."""
    kw = {"rtol": rtol, "error_atol": error_atol}
    if isinstance(a, dict) and isinstance(b, dict):
        a = {_untemp(k): v for k, v in a.items()}
        b = {_untemp(k): v for k, v in b.items()}
        for k in sorted(set(a) | set(b)):
            if k in VOLATILE_KEYS or k.endswith(("_s", "_ms")):  # durations in seconds or milliseconds
                continue
            if k not in a or k not in b:
                return f"{where}/{k}: only in the {'first' if k in a else 'second'}"
            d = document_difference(a[k], b[k], where=f"{where}/{k}", **kw)
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = document_difference(x, y, where=f"{where}[{i}]", **kw)
            if d:
                return d
        return None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        fa, fb = float(a), float(b)
        if fa == fb or (fa != fa and fb != fb) or abs(fa - fb) <= rtol * max(abs(fa), abs(fb)):
            return None
        keys = re.sub(r"\[\d+\]", "", where).split("/")
        if any(_ERROR_KEY.search(k) for k in keys) and abs(fa - fb) <= error_atol:
            return None
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, str) and isinstance(b, str):
        a, b = _untemp(a), _untemp(b)
    return None if a == b else f"{where}: {str(a)[:80]!r} != {str(b)[:80]!r}"


#: A path inside one of the harness's temporary folders (the neutral copy ``d4w-*``, the worker's
#: output folder): a different folder each measurement, the same program.
_TEMP_PATH = re.compile(r"[^\s'\"]*d4w-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)?")


def _untemp(x):
    return _TEMP_PATH.sub("<tmp>", x) if isinstance(x, str) else x


def neutral_check(path: Path, cases: list, *, sample: int = 5, engine_name: str = "reference", seed: int = 0,
                  rtol: float = 1e-9, timeout_s: float = 300.0, python: str | None = None, programs: str = "auto",
                  log=None) -> dict:
    """Check that a change to measuring code was neutral, and if so re-stamp the committed measurements.

    The records of the bundle beside engine file ``path`` that are stale only because
    measuring modules changed (:func:`defects4warp.provenance.changed_modules`; the variant
    unchanged) are the candidates. ``sample`` of them (spread over adapters and scripts,
    drawn with ``seed``) are measured again with this checkout's code and their worker
    documents compared with the stored ones (:func:`document_difference`). When every one
    agrees, every candidate whose changed modules all appear among the sampled records'
    changed modules gets this checkout's digests for them (the bundle is rewritten; the
    documents themselves are kept), so the change costs ``sample`` measurements instead of a
    release. When one differs, nothing is written and the difference is reported: the change
    moved measurements, and ``pages --measure`` measures the stale runs again. ``programs``
    (:data:`defects4warp.corpus.case.PROGRAMS`: ``auto``, ``adapters``, ``scripts``) limits the candidates,
    e.g. to the adapters when a change meant to move script measurements only.

    Returns
    -------
    dict
        ``{"candidates": n, "sampled": [{"run", "difference"}], "neutral": bool,
        "restamped": n, "changed_modules": [...]}``.

    Raises
    ------
    EngineFileError
        When there is no bundle beside ``path`` or it is unreadable.
    """
    log = log or (lambda _m: None)
    bpath = bundle_path(path)
    if not bpath.is_file():
        raise EngineFileError(f"{path}: no measurement bundle {bpath.name} beside it")
    header, entries = read_bundle(bpath)
    items = {(it.case.id, it.variant.name, it.scale, it.program): it for it in plan(cases, programs=programs)}
    cands = []
    for n, e in enumerate(entries):
        it = items.get((e["case"], e["variant"], e["scale"], e["program"]))
        ch = changed_modules(e["record"].get("code"))
        if it is None or not ch or ch == ["(no code recorded)"] or e["variant_digest"] != tree_digest(it.variant.path):
            continue
        cands.append((n, it, ch))
    out = {"candidates": len(cands), "sampled": [], "neutral": False, "restamped": 0, "changed_modules": []}
    if not cands:
        return out
    rng = random.Random(seed)
    scripts = [c for c in cands if c[1].program == "script"]
    adapters = [c for c in cands if c[1].program != "script"]
    k_s = min(len(scripts), max(1 if scripts else 0, round(sample * len(scripts) / len(cands))))
    picked = rng.sample(scripts, k_s) + rng.sample(adapters, min(len(adapters), max(0, sample - k_s)))
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python)
    covered = set()
    for n, it, ch in picked:
        old = entries[n]["record"]
        kw = {"script": it.variant.script.spec()} if it.program == "script" else {}
        with neutral_copy(it.variant.path, drop=("problem.py",) if it.program == "script" else ()) as p:
            new = engine.measure(str(p), old.get("device", "cpu"), it.scale, **kw)
        diff = document_difference(old.get("doc"), new.get("doc"), rtol=rtol)
        if diff is None and bool(old.get("differential")) != bool(new.get("differential")):
            diff = "/differential: measured on one side only"
        out["sampled"].append({"run": it.label, "difference": diff})
        log(f"{it.label}: {'same measurement' if diff is None else 'differs at ' + diff}")
        covered |= set(ch)
    out["changed_modules"] = sorted(covered)
    if any(s["difference"] for s in out["sampled"]):
        return out
    out["neutral"] = True
    now = digests(tuple(sorted(covered)))
    for n, _it, ch in cands:
        if set(ch) <= covered:
            rec = entries[n]["record"]
            code = {m: d for m, d in rec["code"].items() if m not in ch or m in now}  # moved or deleted: dropped
            rec["code"] = dict(sorted({**code, **{m: now[m] for m in ch if m in now}}.items()))
            out["restamped"] += 1
    write_bundle(bpath, {k: v for k, v in header.items() if k != "format"}, entries)
    return out
