"""The committed data pages are rendered from: validation JSON (ground truth), engine files and baseline
files (the engine's answers, :mod:`defects4warp.report.engine_matrix`), rescored against the corpus labels now."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ...corpus.case import load_corpus
from ..engine_matrix import EngineFileError, read, read_all, rescore
from ...envs import RELEASES
from ...run.matrix import _key
from ...paths import PACKAGE_DIR
from ..markdown import merge_validations
from .prose import PageSourceError


#: Repository root (pages and data are relative to it).
ROOT = PACKAGE_DIR.parent


#: Validation JSON files the version matrix merges (per-release files written by ``pages --measure``
#: or ``validate --warp X --json docs/data/validation-X.json``, and the two-release file of 2026-12-01).
VALIDATION_GLOBS = ("docs/data/oracle-validation-*.json", "docs/data/validation-*.json")


def _read(path: Path, key: str) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PageSourceError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or key not in doc:
        raise PageSourceError(f"{path}: no '{key}' key")
    return doc


def validation_files(root: Path = ROOT) -> list:
    """The committed validation JSON files, sorted by name."""
    out = []
    for g in VALIDATION_GLOBS:
        out += sorted(root.glob(g))
    return out


def validated_releases(root: Path = ROOT) -> set:
    """Releases some committed validation JSON covers."""
    return {r for p in validation_files(root) for r in _read(p, "releases")["releases"]}


#: Measured minimum releases (scripts/min_warp.py) and release boundaries (scripts/release_boundaries.py).
MIN_WARP_JSON = "docs/data/min-warp.json"


BOUNDARIES_JSON = "docs/data/release-boundaries.json"


# ---------------------------------------------------------------------------------------------------------------
# The engine across releases (docs/data/engine-<release>.json, :mod:`defects4warp.report.engine_matrix`)


def _vkey(r: str):
    try:
        return (0, Version(r))
    except InvalidVersion:
        return (1, r)


def engine_docs(root: Path = ROOT) -> dict:
    """``{release: engine-release document}`` committed under ``root`` (see :mod:`defects4warp.report.engine_matrix`),
    each rescored against the case labels and ``min_warp`` of ``root``'s corpus now
    (:func:`defects4warp.report.engine_matrix.rescore`).

    Raises
    ------
    PageSourceError
        When a file is not a valid engine-release document (names the file and the field).
    """
    try:
        docs = read_all(root)
    except EngineFileError as exc:
        raise PageSourceError(str(exc)) from None
    return _rescored(docs, root)


def _rescored(docs: dict, root: Path) -> dict:
    """``docs`` (``{key: engine-release document}``) each rescored against the labels of ``root``'s corpus
    now (:func:`defects4warp.report.engine_matrix.rescore`); as they are when ``root`` has no corpus."""
    cases = corpus_cases(root)
    return {k: rescore(d, cases) for k, d in docs.items()} if cases else docs


#: The engines docs/engines.md compares the reference engine with (each a built-in engine,
#: :func:`defects4warp.engines.get_engine`), in the order of its table.
BASELINE_ENGINES = ("warp-gradcheck", "fd-only", "tracker-only", "static-only", "always-bug", "always-no-bug")


#: The release the comparison in docs/engines.md is measured on (the newest supported release when it was
#: chosen; move it, and re-measure, when a newer one is supported).
BASELINE_RELEASE = "1.19.0"


def baseline_path(root: Path, engine: str, release: str) -> Path:
    """``<root>/docs/data/baselines/<engine>-<release>.json``: one baseline engine's answers on the whole
    corpus, in the engine-release format (:mod:`defects4warp.report.engine_matrix`)."""
    return Path(root) / "docs" / "data" / "baselines" / f"{engine}-{release}.json"


def baseline_docs(root: Path = ROOT) -> dict:
    """``{(engine, release): document}`` of every committed ``docs/data/baselines/*.json``, each rescored
    against the labels of ``root``'s corpus now, as :func:`engine_docs`.

    Raises
    ------
    PageSourceError
        When a file is not a valid engine-release document, or its name does not say the engine and
        release it holds (names the file).
    """
    out = {}
    try:
        for p in sorted((Path(root) / "docs" / "data" / "baselines").glob("*.json")):
            doc = read(p)
            name = (doc.get("engine") or {}).get("name")
            if p.name != f"{name}-{doc['release']}.json":
                raise EngineFileError(f"{p}: holds engine '{name}' on release '{doc['release']}', its name says "
                                      "another")
            out[(name, doc["release"])] = doc
    except EngineFileError as exc:
        raise PageSourceError(str(exc)) from None
    return _rescored(out, root)


def corpus_cases(root: Path = ROOT) -> dict:
    """``{case id: Case}`` of ``root``'s ``corpus/`` (labels and ``min_warp`` as they are now), ``{}`` when
    ``root`` has no corpus folder (a trial root of synthetic engine files). Cases that do not load are left
    out here (``defects4warp validate`` reports them)."""
    folder = Path(root) / "corpus"
    if not folder.is_dir():
        return {}
    return dict(_loaded_corpus(str(folder), _tree_state(folder)))


def _tree_state(folder: Path) -> tuple:
    """(relative path, mtime_ns, size) of every file under ``folder``, sorted: the cache key of
    :func:`_loaded_corpus` (a page run reads the corpus once per page; an edit in between is seen)."""
    out = []
    for dirpath, _dirs, files in os.walk(folder):
        for f in files:
            st = os.stat(os.path.join(dirpath, f))
            out.append((os.path.relpath(os.path.join(dirpath, f), folder), st.st_mtime_ns, st.st_size))
    return tuple(sorted(out))


@functools.lru_cache(maxsize=4)
def _loaded_corpus(folder: str, state: tuple) -> tuple:
    """``((case id, Case), ...)`` of the loadable cases of ``folder`` (``state`` keys the cache); Cases are
    frozen, so sharing them across pages is safe."""
    cases, _errors = load_corpus(Path(folder))
    return tuple((c.id, c) for c in cases)


def page_releases(root: Path = ROOT, docs: dict | None = None) -> list:
    """The supported releases (:data:`defects4warp.envs.RELEASES`) and any other
    release an engine file holds, oldest first."""
    docs = engine_docs(root) if docs is None else docs
    return sorted(set(RELEASES) | set(docs), key=_vkey)


def truth_by_release(root: Path = ROOT) -> dict:
    """``{release: {(case, variant label, scale): validation check}}`` merged from every committed validation JSON."""
    files = validation_files(root)
    if not files:
        return {}
    merged = merge_validations([_read(p, "releases") for p in files])
    return {rel: {_key(c): c for c in r["checks"]} for rel, r in merged["releases"].items()}


def _label(run: dict) -> str:
    return run["variant"] + (" (script)" if run.get("program") == "script" else "")


def _rkey(run: dict) -> tuple:
    return (run["case"], _label(run), run.get("scale", "small"))
