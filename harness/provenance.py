"""Which harness code produced a measurement: a digest of every harness module a process loaded.

A measurement is only as current as the code that took it. Rather than keying
a stored measurement on the digest of the whole harness (then any edit, a
verdict rule or a weight too, re-measures everything), the measuring process
records the modules it actually imported (:func:`loaded_modules`), each with
the SHA-256 of its source file, and a stored measurement is current exactly
while every one of those files is unchanged (:func:`changed_modules`). An edit
to interpretation code, which the measuring process never imports, therefore
leaves every measurement current; an edit to one probe's module makes stale
only the measurements whose worker imported it.

Standard library only: the measurement worker imports this module inside a
per-release environment.
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path

#: The harness package folder (``harness/``, imported as ``defects4warp``).
PACKAGE_ROOT = Path(__file__).resolve().parent

#: Characters of the hex SHA-256 kept per module (64 bits: a chance collision
#: among the harness's ~130 files is about 1e-16).
DIGEST_CHARS = 16


@lru_cache(maxsize=None)
def file_digest(rel: str, root: str = str(PACKAGE_ROOT)) -> str | None:
    """First :data:`DIGEST_CHARS` hex digits of the SHA-256 of ``root/rel``;
    None when the file does not exist (a module that was deleted or moved).
    Cached per process: a file edited while a process runs keeps its first digest."""
    try:
        return hashlib.sha256((Path(root) / rel).read_bytes()).hexdigest()[:DIGEST_CHARS]
    except OSError:
        return None


def loaded_modules(extra: tuple = ()) -> dict:
    """``{path relative to the harness package: digest}`` of every module of
    the harness package this process has imported, plus the files ``extra``
    (paths relative to the package, e.g. data files a probe reads).

    Returns
    -------
    dict
        Sorted by path; ``__init__.py`` files included. A module whose file is
        gone is left out (there is nothing to compare against).
    """
    out = {}
    for mod in list(sys.modules.values()):  # ``__main__`` too: the worker runs as ``python -m``
        f = getattr(mod, "__file__", None)
        if not f:
            continue
        try:
            rel = Path(f).resolve().relative_to(PACKAGE_ROOT).as_posix()
        except ValueError:
            continue
        d = file_digest(rel)
        if d is not None:
            out[rel] = d
    for rel in extra:
        d = file_digest(rel)
        if d is not None:
            out[rel] = d
    return dict(sorted(out.items()))


def digests(parts: tuple) -> dict:
    """``{path: digest}`` of the harness files ``parts`` (paths relative to the
    package), for code a measurement ran that :func:`loaded_modules` of the
    measuring process would not single out (the parent's side of a
    measurement). Missing files are left out."""
    out = {rel: file_digest(rel) for rel in parts}
    return dict(sorted((k, v) for k, v in out.items() if v is not None))


def changed_modules(code: dict | None) -> list:
    """The paths of ``code`` (a :func:`loaded_modules` result) whose file now has
    another digest or no longer exists, sorted; ``["(no code recorded)"]`` when
    ``code`` is empty or None (a measurement that cannot say what took it is
    never current)."""
    if not code:
        return ["(no code recorded)"]
    return sorted(rel for rel, d in code.items() if file_digest(rel) != d)


def merge(*codes: dict | None) -> dict:
    """The union of several :func:`loaded_modules` results (a measurement made
    of several processes), sorted by path."""
    out = {}
    for c in codes:
        out.update(c or {})
    return dict(sorted(out.items()))
