"""Results history: every run stored in SQLite, for history, compare and leaderboard.

The database lives in the *results home*, one place per user whatever the
working directory: ``--results DIR``, else ``$DEFECTS4WARP_RESULTS``, else
``$XDG_DATA_HOME/defects4warp``, else ``~/.local/share/defects4warp`` (the XDG
base-directory default), as ``history.sqlite``; the result store
(:mod:`defects4warp.run.store`) lives next to it in ``store/``. Point
``DEFECTS4WARP_RESULTS`` at a folder inside a corpus to keep one history per
corpus. Several runs may write at once: SQLite serialises the writers (each
waits up to :data:`BUSY_TIMEOUT_S` for the lock). A run row holds the engine and its version, the project
commit, the Warp release, the device, the corpus digest and the summary; an
outcome row per variant run holds the expectation, the diagnosis and its cost.
Runs are comparable when they share the corpus digest and the Warp release.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

from ..paths import PACKAGE_DIR

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    engine TEXT NOT NULL,
    engine_version TEXT,
    project_commit TEXT,
    warp_version TEXT NOT NULL,
    device TEXT NOT NULL,
    corpus_digest TEXT NOT NULL,
    summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outcomes (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    case_id TEXT NOT NULL,
    variant TEXT NOT NULL,
    scale TEXT NOT NULL,
    expected_verdict TEXT,
    expected_classes TEXT,
    verdict TEXT NOT NULL,
    top_class TEXT,
    correct_verdict INTEGER,
    correct_class INTEGER,
    wall_s REAL,
    objective_evals INTEGER,
    gradient_evals INTEGER
);
CREATE INDEX IF NOT EXISTS outcomes_run ON outcomes(run_id);
"""


#: Seconds a writer waits for another run's lock on the history database
#: before SQLite gives up (``sqlite3.connect(timeout=...)``).
BUSY_TIMEOUT_S = 120.0


def results_dir(path: str | None = None) -> Path:
    """The results home (see the module docstring): ``path``, else
    ``$DEFECTS4WARP_RESULTS``, else ``$XDG_DATA_HOME/defects4warp``, else
    ``~/.local/share/defects4warp``."""
    if path:
        return Path(path)
    if os.environ.get("DEFECTS4WARP_RESULTS"):
        return Path(os.environ["DEFECTS4WARP_RESULTS"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "defects4warp"


def connect(path: str | None = None) -> sqlite3.Connection:
    """Open (creating when needed) the history database."""
    d = results_dir(path)
    d.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(d / "history.sqlite", timeout=BUSY_TIMEOUT_S)
    con.executescript(SCHEMA)
    return con


def corpus_digest(cases: list) -> str:
    """SHA-256 over every case's case.yaml and variant sources (paths relative
    to the corpus, sorted), so two runs on the same corpus content match."""
    h = hashlib.sha256()
    for c in sorted(cases, key=lambda c: c.id):
        files = [c.path / "case.yaml"] + sorted(p for v in c.variants for p in v.path.rglob("*.py")
                                                if "__pycache__" not in p.parts)
        for f in files:
            h.update(str(f.relative_to(c.path.parent)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def corpus_info(root, cases: list, selection: str = "*", split: str | None = None) -> dict:
    """A readable description of the corpus a run used, kept in its summary
    as ``corpus``.

    Parameters
    ----------
    root : path-like
        The corpus folder.
    cases : list[defects4warp.corpus.case.Case]
        The cases that ran.
    selection : str
        The ``--cases`` glob(s) (default ``*``: every case).
    split : str, optional
        The ``--split`` filter, if any.

    Returns
    -------
    dict
        ``name`` (``bundled`` for the corpus shipped with defects4warp, else
        the folder's absolute path), ``cases`` (how many ran), ``subset``
        (True when ``--cases`` or ``--split`` chose part of the corpus) and
        ``selection`` (the globs and split, when a subset).
    """
    from ..corpus.case import default_corpus

    root = Path(root).resolve()
    try:
        bundled = root == default_corpus().resolve()
    except FileNotFoundError:
        bundled = False
    subset = (selection or "*").strip() != "*" or split is not None
    sel = ", ".join(x for x in [f"--cases {selection}" if (selection or "*").strip() != "*" else "",
                                f"--split {split}" if split else ""] if x)
    return {"name": "bundled" if bundled else str(root), "cases": len(cases), "subset": subset,
            "selection": sel or None}


def n_cases(n) -> str:
    """``1 case``, ``2 cases``."""
    return f"{n} case" + ("" if n == 1 else "s")


def corpus_label(run: dict, bundled: str | None = None) -> str:
    """``bundled, 123 cases``, ``/path/to/corpus, 2 cases (subset: --cases x*)``
    for a stored run; for runs stored before the corpus was named, ``bundled``
    when its digest is ``bundled`` (the full bundled corpus's digest), else
    ``digest <first 10 hex>``."""
    c = (run.get("summary") or {}).get("corpus")
    if c:
        return f"{c['name']}, {n_cases(c['cases'])}" + (f" (subset: {c['selection']})" if c.get("subset") else "")
    if bundled and run.get("corpus_digest") == bundled:
        return f"bundled, {n_cases(run['summary'].get('cases', '?'))}"
    return f"digest {run.get('corpus_digest', '')[:10]}"


def bundled_digest() -> str | None:
    """The :func:`corpus_digest` of the whole bundled corpus (what the
    leaderboard ranks by default), or None when it is not installed."""
    from ..corpus.case import default_corpus, load_corpus

    try:
        cases, _ = load_corpus(default_corpus())
    except FileNotFoundError:
        return None
    return corpus_digest(cases)


def project_commit() -> str | None:
    """The git commit of this checkout (with ``-dirty`` when it has changes), or None."""
    root = PACKAGE_DIR.parent
    if not (root / ".git").exists():
        return None  # an installed package: site-packages is no checkout of this project
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def store(doc: dict, digest: str, path: str | None = None) -> int:
    """Store a run document (``{"summary", "results"}``); return its run id."""
    s = doc["summary"]
    with connect(path) as con:
        cur = con.execute(
            "INSERT INTO runs (created, engine, engine_version, project_commit, warp_version, device, corpus_digest, summary)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (_dt.datetime.now().isoformat(timespec="seconds"), s["engine"], s.get("engine_version"), project_commit(),
             s["warp_version"], s["device"], digest, json.dumps(s, default=str)),
        )
        run_id = cur.lastrowid
        rows = []
        for r in doc["results"]:
            d, e, c = r["diagnosis"], r.get("expected"), r.get("correct")
            cost = d.get("cost") or {}
            rows.append((run_id, r["case"], r["variant"], r["scale"], e and e["verdict"], e and json.dumps(e["classes"]),
                         d["verdict"], (d.get("classes") or [{}])[0].get("id"), c and int(c["verdict"]),
                         c and int(c["class"]), cost.get("wall_s"), cost.get("objective_evals"), cost.get("gradient_evals")))
        con.executemany("INSERT INTO outcomes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    return run_id


def list_runs(path: str | None = None) -> list:
    """All stored runs, newest first, as dicts (summary parsed)."""
    with connect(path) as con:
        con.row_factory = sqlite3.Row
        rows = con.execute("SELECT * FROM runs ORDER BY id DESC").fetchall()
        out = []
        for r in rows:
            s = json.loads(r["summary"])
            if s.get("skipped") and "skipped_runs" not in s:  # an older run: read its skips as skips
                outs = [dict(o) for o in con.execute("SELECT * FROM outcomes WHERE run_id = ?", (r["id"],))]
                s = _read_old_skips(s, outs)
            out.append({**dict(r), "summary": s})
    return out


def _id_ranges(ids: list) -> str:
    """``[1, 2, 3, 7, 9, 10]`` as ``"1-3, 7, 9-10"``."""
    parts, ids = [], sorted(ids)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ", ".join(parts)


def missing_run_message(run_id: int, con: sqlite3.Connection, path: str | None = None) -> str:
    """What to tell a user who asked for a run id the history does not hold: the database,
    the ids it does hold (as ranges), and the verb that lists them."""
    ids = [r[0] for r in con.execute("SELECT id FROM runs ORDER BY id").fetchall()]
    where = results_dir(path) / "history.sqlite"
    if not ids:
        return f"no stored run {run_id}: {where} holds no runs yet (`defects4warp run` stores one)"
    return (f"no stored run {run_id} in {where}; its runs are {_id_ranges(ids)} "
            f"(`defects4warp history` lists them)")


#: The reason shown for a skipped run stored before runs kept their reasons.
OLD_SKIP_REASON = "skipped (the reason was not stored by this older run)"


def _read_old_skips(summary: dict, outcomes: list) -> dict:
    """Runs stored before skipped runs had their own verdict recorded each one (a case
    whose ``requires`` module was missing) as ``inconclusive`` with no expectation and
    no cost, and their summary counted it in both ``skipped`` and ``inconclusive``.
    Read those outcomes back as ``skipped`` (in place), and return the summary with
    ``skipped_runs`` and the inconclusive count corrected.

    An old summary is one with a ``skipped`` count and no ``skipped_runs`` list; its
    outcomes are changed only when exactly that many are of the old form (inconclusive,
    no expected verdict, no top class, wall time 0), so a genuine inconclusive
    diagnosis is never taken for a skip.
    """
    n = summary.get("skipped") or 0
    if "skipped_runs" in summary or not n:
        return summary
    old = [o for o in outcomes if o["verdict"] == "inconclusive" and o["expected_verdict"] is None
           and o["top_class"] is None and not o["wall_s"]]
    if len(old) != n:
        return summary
    for o in old:
        o["verdict"] = "skipped"
    return {**summary, "inconclusive": max(0, (summary.get("inconclusive") or 0) - n),
            "skipped_runs": [{"case": o["case_id"], "variant": o["variant"], "scale": o["scale"],
                              "reason": OLD_SKIP_REASON} for o in old]}


def get_run(run_id: int, path: str | None = None) -> dict:
    """One run with its outcomes.

    Raises
    ------
    KeyError
        If there is no run with that id; its one argument is a message for the user
        naming the ids there are (:func:`missing_run_message`).
    """
    with connect(path) as con:
        con.row_factory = sqlite3.Row
        run = con.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if run is None:
            raise KeyError(missing_run_message(run_id, con, path))
        outs = con.execute("SELECT * FROM outcomes WHERE run_id = ?", (run_id,)).fetchall()
    outcomes = [dict(o) for o in outs]
    summary = _read_old_skips(json.loads(run["summary"]), outcomes)
    return {**dict(run), "summary": summary, "outcomes": outcomes}


def run_document(run_id: int, path: str | None = None) -> dict:
    """A stored run rebuilt as a run document ``{"summary", "results"}`` (the
    shape of ``run --json``, with the fields the history keeps: verdict, top
    class, correctness, wall time and objective evaluations per variant).

    Raises
    ------
    KeyError
        If there is no run with that id.
    """
    run = get_run(run_id, path)
    reasons = {(x["case"], x["variant"], x.get("scale", "small")): x["reason"]
               for x in run["summary"].get("skipped_runs") or []}
    results = []
    for o in run["outcomes"]:
        exp = {"verdict": o["expected_verdict"], "classes": json.loads(o["expected_classes"])} \
            if o["expected_verdict"] else None
        results.append({"case": o["case_id"], "variant": o["variant"], "scale": o["scale"], "expected": exp,
                        "diagnosis": {"verdict": o["verdict"],
                                      "classes": [{"id": o["top_class"], "score": 1.0}] if o["top_class"] else [],
                                      "cost": {"wall_s": o["wall_s"], "objective_evals": o["objective_evals"]}},
                        "correct": None if o["correct_verdict"] is None else
                        {"verdict": bool(o["correct_verdict"]), "class": bool(o["correct_class"])}})
        if o["verdict"] == "skipped":
            results[-1]["skipped"] = reasons.get((o["case_id"], o["variant"], o["scale"]), "skipped")
    return {"summary": run["summary"], "results": results}


METRICS = ("verdict_accuracy", "class_accuracy", "detection_rate", "false_positive_rate",
           "median_wall_s_per_run", "median_objective_evals")


def compare(a: int, b: int, path: str | None = None) -> dict:
    """Per-metric change from run ``a`` to run ``b`` and the variant runs whose
    verdict or top class changed (``flipped``, with ``was_correct`` and
    ``now_correct``: the top class right in run ``a`` and in run ``b``, None where unscored)."""
    ra, rb = get_run(a, path), get_run(b, path)
    metrics = {}
    for m in METRICS:
        va, vb = ra["summary"].get(m), rb["summary"].get(m)
        metrics[m] = {"a": va, "b": vb, "change": None if va is None or vb is None else vb - va}
    key = lambda o: (o["case_id"], o["variant"], o["scale"])  # noqa: E731
    oa = {key(o): o for o in ra["outcomes"]}
    flipped = []
    for o in rb["outcomes"]:
        p = oa.get(key(o))
        if p and (p["verdict"], p["top_class"]) != (o["verdict"], o["top_class"]):
            flipped.append({"case": o["case_id"], "variant": o["variant"], "scale": o["scale"],
                            "a": f"{p['verdict']} {p['top_class'] or ''}".strip(),
                            "b": f"{o['verdict']} {o['top_class'] or ''}".strip(),
                            "was_correct": None if p["correct_class"] is None else bool(p["correct_class"]),
                            "now_correct": None if o["correct_class"] is None else bool(o["correct_class"])})
    same = ra["corpus_digest"] == rb["corpus_digest"] and ra["warp_version"] == rb["warp_version"]
    return {"a": a, "b": b, "comparable": same, "metrics": metrics, "flipped": flipped}


def leaderboard(digest: str | None = None, warp: str | None = None, path: str | None = None) -> tuple:
    """Engines ranked on one corpus and Warp release by class accuracy, then
    verdict accuracy, then lower false-positive rate; the newest run of each
    engine counts.

    Parameters
    ----------
    digest : str, optional
        A corpus digest or a prefix of one (default: the digest of the whole
        bundled corpus, :func:`bundled_digest`; runs on a subset or another
        corpus have other digests and are not ranked with it).
    warp : str, optional
        The Warp release (default: that of the newest run on the corpus).
    path : str, optional
        The results home (:func:`results_dir`).

    Returns
    -------
    (digest, warp, rows) : tuple[str, str, list[dict]]
        ``rows`` are stored runs (:func:`list_runs`), best first; empty when
        no run matches.
    """
    runs = list_runs(path)
    digest = digest or bundled_digest() or ""
    on_corpus = [r for r in runs if r["corpus_digest"].startswith(digest)]
    if not on_corpus:
        return digest, warp, []
    warp = warp or on_corpus[0]["warp_version"]
    best = {}
    for r in on_corpus:
        if r["warp_version"] == warp and r["engine"] not in best:
            best[r["engine"]] = r
    rows = sorted(best.values(), key=lambda r: (-(r["summary"].get("class_accuracy") or 0),
                                                -(r["summary"].get("verdict_accuracy") or 0),
                                                r["summary"].get("false_positive_rate") or 0))
    return digest, warp, rows
