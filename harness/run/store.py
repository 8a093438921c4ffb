"""The result store: every diagnosis and every validation check, filed under a
key that determines it, so an interrupted or repeated run measures only what
is missing.

A key is the SHA-256 of a canonical JSON object holding everything the result
depends on:

``diagnosis``   the digest of the variant's files (:func:`tree_digest`), the
                engine's name, version and options (:func:`engine_identity`;
                for built-in engines also the digest of the harness code that
                measures and interprets, so an edit re-measures even before
                the version string moves), the Warp release, the device and
                the scale. The expectation is *not* part of it: a stored
                diagnosis is re-scored against the case.yaml of the run that
                reuses it.
``measurement`` what a built-in worker engine measured (its measurement record,
                :meth:`defects4warp.engines.base.WorkerEngine.measure`), keyed by the
                variant digest, the engine's *measurement* options
                (``measurement_options()``: worker probes and knobs, the release
                differential's settings), the release, the device, the scale and
                the script spec. No code digest is in the key: the record lists
                the harness modules that took it (:mod:`defects4warp.provenance`)
                and is current while none of them changed (:meth:`ResultStore.get`
                counts the others as ``stale``). The diagnosis is *derived* from
                the record when read, by the interpretation code of the reader, so
                an edit to a verdict rule, the evidence table or an assessor
                re-scores from the store without running Warp.
``validation``  the variant digest, its fixed twin's digest (the pair
                check measures it), the expectation it is judged against,
                the oracle's knobs, the digest of the code the oracle runs
                (:func:`oracle_digest`: not the engine's, so an engine change
                keeps every stored validation), the release, the device, the
                scale and the repeat count.

A changed file, engine version, engine option or release therefore misses the
store, and so does a measurement whose measuring code changed. Results that say nothing about the variant -- a timeout, a lost worker
(:func:`transient`) -- are never stored, so the next run measures them again.

Layout: ``<root>/<kind>/<key[:2]>/<key>.json``, one file per result written
to a temporary file in the same folder and renamed (``os.replace`` is atomic
on POSIX), so a reader never sees half a result, a ``kill -9`` leaves at most
a stray ``.part-*`` file, and two runs writing the same key at once both
leave a complete, equal file. No lock is needed.

Root: ``<results>/store`` where ``<results>`` is the results home
(:func:`defects4warp.run.history.results_dir`: ``--results DIR``, else
``$DEFECTS4WARP_RESULTS``, else ``$XDG_DATA_HOME/defects4warp``, else
``~/.local/share/defects4warp``); ``$DEFECTS4WARP_STORE`` moves the store alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from ..jsonio import _strict, lossless, normal_mode, restore
from ..paths import PACKAGE_DIR
from ..provenance import changed_modules

#: Folder and file names left out of a variant digest: the same ones
#: :func:`defects4warp.blind.neutral_copy` does not copy (caches, hidden files),
#: since an engine never sees them.
IGNORED_PARTS = ("__pycache__",)

#: Harness sources (relative to the ``harness`` package) whose digest is part of
#: every built-in engine's key: everything an engine worker imports, the
#: engine's data files (its fitted evidence table, and ``data/builtins``, the
#: builtins conformance results the release probe cites, with the module that
#: reads them) included, and ``envs.py`` (its ``RELEASES`` are the candidates of
#: the release differential's bisection). A test checks that the modules these
#: import lie inside them.
CODE_PARTS = ("measure", "engines", "probes", "rules", "oracle", "capture", "isolation.py", "sandbox.py", "provenance.py", "taxonomy.py",
              "validate.py", "blind.py", "kernel_cache.py", "problem.py", "data", "builtins/__init__.py", "envs.py",
              "kernel_access.py", "evidence_table.py")

#: Harness sources whose digest is part of every validation's key: the
#: independent oracle, the capture that reads a script variant into the replay
#: record the oracle replays (with the trace module the capture records with),
#: the judgement in ``validate.py``, and
#: what these import. The engine is not among them: the oracle shares no code
#: with it (tests/test_oracle.py), so an engine change re-measures no ground truth.
ORACLE_PARTS = ("oracle", "capture", "sandbox.py", "measure/__init__.py", "measure/trace.py", "measure/recorder.py",
                "measure/patches.py",
                "measure/trace_state.py", "kernel_access.py", "measure/detectors.py", "measure/dataflow.py",
                "measure/aliasing.py", "measure/tape_sessions.py", "kernel_cache.py", "problem.py", "taxonomy.py",
                "validate.py", "blind.py")


def tree_digest(folder: str | Path) -> str:
    """SHA-256 (hex, 64 characters) over the relative path and bytes of every
    file under ``folder``, in sorted order, skipping ``__pycache__``, ``*.pyc``
    and hidden files.

    Raises
    ------
    OSError
        When a file cannot be read.
    """
    folder = Path(folder)
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part in IGNORED_PARTS or part.startswith(".") for part in rel.parts) or p.suffix == ".pyc":
            continue
        if p.is_file():
            h.update(str(rel).encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def parts_digest(parts: tuple, *, root: str | Path = PACKAGE_DIR) -> str:
    """SHA-256 (hex, 64 characters) over the relative path and bytes of every
    file of ``parts`` (files or folders relative to ``root``, by default the
    ``harness`` package folder; in a folder every file but ``__pycache__``,
    ``*.pyc`` and hidden ones, so data files such as a fitted table count like
    code).

    Raises
    ------
    FileNotFoundError
        When a part does not exist under the package (a renamed module left in :data:`CODE_PARTS` or
        :data:`ORACLE_PARTS` would otherwise drop out of the key without a word).
    """
    root = Path(root)
    h = hashlib.sha256()
    for part in parts:
        p = root / part
        if not p.exists():
            raise FileNotFoundError(f"{p}: a part of a stored key (store.CODE_PARTS / ORACLE_PARTS) that does not exist")
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        for f in files:
            rel = f.relative_to(root)
            if not f.is_file() or f.suffix == ".pyc" or any(x in IGNORED_PARTS or x.startswith(".") for x in rel.parts):
                continue
            h.update(str(rel).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the harness sources in :data:`CODE_PARTS`: the key of a
    built-in engine's code (computed once per process)."""
    return parts_digest(CODE_PARTS)


@lru_cache(maxsize=1)
def oracle_digest() -> str:
    """SHA-256 of the harness sources in :data:`ORACLE_PARTS`: the key of the
    oracle's code in every validation (computed once per process)."""
    return parts_digest(ORACLE_PARTS)


def engine_identity(engine) -> dict | None:
    """What a diagnosis depends on besides the variant: ``{"name", "version",
    "options", "code"}``, or None when the engine's results must not be reused.

    ``options`` is the engine's ``store_options()`` when it defines one, else
    its ``options`` attribute (worker settings). ``code`` is :func:`code_digest`
    for engines defined inside :mod:`harness`, None for plugins (their version
    string is what moves). An engine with ``cacheable = False`` (e.g. an outside
    ``cmd:`` tool, whose version the harness cannot read) gets None.
    """
    if getattr(engine, "cacheable", True) is False:
        return None
    opts = engine.store_options() if hasattr(engine, "store_options") else getattr(engine, "options", None)
    builtin = type(engine).__module__.startswith(__name__.split(".")[0] + ".")
    return {"name": engine.name, "version": str(getattr(engine, "version", "")), "options": opts,
            "code": code_digest() if builtin else None}


def make_key(fields: dict) -> str:
    """SHA-256 (hex) of ``fields`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def diagnosis_fields(variant_path, engine, warp_version: str, device: str, scale: str) -> dict | None:
    """Key fields of one diagnosis (see the module docstring); None when the
    engine is not cacheable."""
    ident = engine_identity(engine)
    if ident is None:
        return None
    return {"kind": "diagnosis", "variant": tree_digest(variant_path), "engine": ident, "warp": warp_version,
            "device": device, "scale": scale}


def measures_apart(engine) -> bool:
    """True when ``engine`` is a built-in engine whose measurement is stored
    apart from its interpretation: it has ``measure``, ``interpret_measurement``
    and ``measurement_options`` (:class:`defects4warp.engines.base.WorkerEngine`)
    and is defined inside this package (a plugin's measuring code is not the
    harness's, so :mod:`defects4warp.provenance` could not say when it changed)."""
    builtin = type(engine).__module__.startswith(__name__.split(".")[0] + ".")
    return builtin and getattr(engine, "cacheable", True) is not False and all(
        callable(getattr(engine, m, None)) for m in ("measure", "interpret_measurement", "measurement_options"))


def measurement_fields(variant_path, engine, warp_version: str, device: str, scale: str, script=None) -> dict | None:
    """Key fields of one measurement (see the module docstring); None when the
    engine does not store its measurements apart (:func:`measures_apart`).
    ``script`` is the script spec's JSON form (``ScriptSpec.to_json()``) of a script item."""
    if not measures_apart(engine):
        return None
    return {"kind": "measurement", "variant": tree_digest(variant_path), "measurer": engine.measurement_options(),
            "warp": warp_version, "device": device, "scale": scale, "script": script}


def validation_fields(variant_path, expected: dict, options: dict, warp_version: str, device: str, scale: str,
                      repeat: int, twin=None, extra: dict | None = None) -> dict:
    """Key fields of one validation check (see the module docstring).

    ``options`` are the oracle's knobs; ``twin`` the folder of the fixed twin
    a bug variant's pair check measures (its files are part of the key);
    ``extra`` any further case fields the check reads (``objectives_differ``).
    """
    return {"kind": "validation", "variant": tree_digest(variant_path), "expected": expected, "options": options,
            "twin": None if twin is None else tree_digest(twin), "extra": extra or {},
            "code": oracle_digest(), "warp": warp_version, "device": device, "scale": scale, "repeat": int(repeat)}


#: Error texts (prefixes) that describe the circumstances of a run rather than
#: the variant: results carrying them are not stored (see :func:`transient`).
TRANSIENT_PREFIXES = ("timeout", "worker lost", "interrupted")


#: Phrases that mark a transient error anywhere in a message (the oracle's
#: ``oracle verdict error (timed out after 300 s)``).
TRANSIENT_PHRASES = ("timed out after", "worker lost")


def transient(message: str | None) -> bool:
    """True when an error ``message`` says nothing stable about the variant
    (a timeout, which depends on the machine's load; a lost executor worker;
    an interruption)."""
    if not message:
        return False
    m = message.strip().lower()
    return m.startswith(TRANSIENT_PREFIXES) or any(p in m for p in TRANSIENT_PHRASES)


def default_root(results_path: str | None = None) -> Path:
    """``$DEFECTS4WARP_STORE``, else ``<results home>/store``."""
    if os.environ.get("DEFECTS4WARP_STORE"):
        return Path(os.environ["DEFECTS4WARP_STORE"])
    from .history import results_dir

    return results_dir(results_path) / "store"


class ResultStore:
    """A folder of results keyed by :func:`make_key` (layout in the module docstring).

    Parameters
    ----------
    root : path-like, optional
        The store folder (default :func:`default_root`). Created on first write.

    Attributes
    ----------
    hits, misses, writes : int
        Counters of this instance's :meth:`get` and :meth:`put` calls.
    stale : int
        Measurements :meth:`get` found but did not return because code that
        took them has changed since (counted among ``misses`` too).
    hit_dates : dict
        ``{(kind, warp release): [oldest, newest]}``: the UTC dates
        (``YYYY-MM-DD``, from the stored files' modification times, i.e. when
        each result was measured and stored) of the results :meth:`get`
        returned, so a report built from reused results can say when they
        were measured.
    """

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.stale = 0
        self.hit_dates = {}

    def measured_dates(self, kind: str, release: str):
        """``(oldest, newest)`` date of the ``kind`` results of ``release``
        that :meth:`get` returned (see :attr:`hit_dates`), or None."""
        span = self.hit_dates.get((kind, release))
        return None if span is None else tuple(span)

    def path(self, key: str, kind: str) -> Path:
        """File of ``key`` (it may not exist)."""
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, fields: dict | None):
        """The stored value for ``fields``, or None (a miss; also for an
        unreadable or foreign file, which is then overwritten by the next put,
        and for a measurement whose ``code`` lists a module that changed since:
        :func:`defects4warp.provenance.changed_modules`)."""
        if fields is None:
            return None
        key = make_key(fields)
        try:
            with open(self.path(key, fields["kind"])) as f:
                doc = json.load(f)
            if doc.get("key") != key:
                raise ValueError("key mismatch")
        except (OSError, ValueError):
            self.misses += 1
            return None
        if fields["kind"] == "measurement" and changed_modules((doc.get("value") or {}).get("code")):
            self.stale += 1
            self.misses += 1
            return None
        self.hits += 1
        self._note_date(fields, self.path(key, fields["kind"]))
        return restore(doc["value"]) if fields["kind"] == "measurement" else doc["value"]

    def _note_date(self, fields: dict, path: Path) -> None:
        import datetime

        try:
            day = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc).date().isoformat()
        except OSError:
            return
        span = self.hit_dates.setdefault((fields["kind"], str(fields.get("warp"))), [day, day])
        span[0], span[1] = min(span[0], day), max(span[1], day)

    def put(self, fields: dict | None, value) -> None:
        """Store ``value`` (JSON-serialisable) under ``fields``, atomically."""
        if fields is None:
            return
        key = make_key(fields)
        p = self.path(key, fields["kind"])
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".json", dir=p.parent)
        try:
            normal_mode(fd)  # the umask's mode (0644 under 022), not mkstemp's 0600
            with os.fdopen(fd, "w") as f:
                # a measurement keeps its non-finite floats (lossless); other results are read as text
                value = lossless(value) if fields["kind"] == "measurement" else _strict(value)
                json.dump({"key": key, "fields": fields, "value": value}, f, default=str, allow_nan=False)
            os.replace(tmp, p)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self.writes += 1

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*/*.json")) if self.root.is_dir() else 0

