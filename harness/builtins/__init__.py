"""Adjoint conformance of Warp's builtins, overload by overload and release by release.

* :mod:`defects4warp.builtins.suite` -- enumeration, kernel generation and the
  FD comparison (runs inside a per-release interpreter);
* :mod:`defects4warp.builtins.worker` -- its command-line entry point;
* :mod:`defects4warp.builtins.conformance` -- the parent side (batches, crashes, result store);
* :mod:`defects4warp.report.builtins_page` (a report page, outside this package) -- ``docs/builtins.md``
  and the release-to-release changes;
* :func:`lookup` -- the committed results of one release for a list of builtin names
  (used by the release differential, :mod:`defects4warp.engines.release`).

Cell states: ``agrees``, ``wrong`` (``rel_err`` beyond the FD noise, with the
worst points), ``zero`` (the adjoint is exactly zero where FD is not;
``differentiable`` says whether the release declares the overload
differentiable: None where the release has no such flag), ``build_error``
(``message``), ``inconclusive`` (every coordinate sat near a kink), and
``absent`` (the release has no such overload: not stored, derived).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

#: Releases measured by ``defects4warp maint builtins --warp all``, newest first
#: for the verified range, then the newest patch of each older minor.
ALL_RELEASES = ("1.19.0", "1.12.1", "1.0.2", "1.14.0", "1.13.0", "1.18.0", "1.17.0", "1.16.0", "1.15.0",
                "1.8.1", "1.11.1", "1.10.1", "1.9.1", "1.7.2", "1.6.2", "1.5.1", "1.4.2", "1.3.3", "1.2.2", "1.1.0")

#: States that are evidence of a Warp adjoint defect.
DEFECT_STATES = ("wrong", "zero")


def data_dir() -> Path:
    """Folder of the committed results: ``harness/data/builtins`` (one ``<release>-<device>.json`` each)."""
    return Path(__file__).resolve().parents[1] / "data" / "builtins"


@lru_cache(maxsize=64)
def load(release: str, device: str = "cpu") -> dict | None:
    """The committed result of ``release`` on ``device`` (:func:`conformance.compact` form), or None."""
    p = data_dir() / f"{release}-{device}.json"
    if not p.is_file():
        return None
    with open(p) as f:
        return json.load(f)


def measured_releases(device: str = "cpu") -> list:
    """Releases with committed results on ``device``, oldest first."""
    from packaging.version import Version

    rels = [p.name[: -len(f"-{device}.json")] for p in data_dir().glob(f"*-{device}.json")]
    return sorted(rels, key=Version)


def lookup(release: str, device: str, names) -> list:
    """Committed conformance cells of the builtins ``names`` on ``release`` that are ``wrong`` or ``zero``.

    Parameters
    ----------
    release : str
        Warp release, e.g. ``"1.12.1"``. When it has no committed result, the
        nearest measured releases below and above it stand in: an overload
        is returned when it is defective on both (a defect present on both
        sides is taken to hold in between; ``bracket`` names the two). With
        no measured release on one side the answer is an empty list.
    device : str
        ``"cpu"`` (the committed data); ``"cuda:0"`` etc. fall back to ``"cpu"``
        when no CUDA data exists.
    names : iterable of str
        Builtin names as called in kernel code (``"curlnoise"``, ``"tile_reduce"``) or
        access-pattern names in brackets (``"[component_add]"``).

    Returns
    -------
    list[dict]
        One dict per defective overload, sorted by id: ``{"id", "builtin", "state",
        "rel_err", "differentiable", "dtype", "release", "device", "points"}`` (plus
        ``"bracket": [lower, upper]`` when measured releases stood in).
    """
    doc = load(release, device)
    if doc is None and device != "cpu":
        doc, device = load(release, "cpu"), "cpu"
    names = set(names)
    if doc is None:
        return _bracketed(release, device, names)
    out = []
    for i, c in sorted(doc["cells"].items()):
        if c.get("builtin") in names and c.get("state") in DEFECT_STATES:
            out.append({"id": i, "builtin": c["builtin"], "state": c["state"], "rel_err": c.get("rel_err"),
                        "differentiable": c.get("differentiable"), "dtype": c.get("dtype"), "release": release,
                        "device": device, "points": c.get("points", [])})
    return out


def _bracketed(release: str, device: str, names: set) -> list:
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(release)
    except InvalidVersion:
        return []
    rels = measured_releases(device) or measured_releases("cpu")
    lo = [r for r in rels if Version(r) < v]
    hi = [r for r in rels if Version(r) > v]
    if not lo or not hi:
        return []
    a, b = lo[-1], hi[0]
    cb = {c["id"]: c for c in lookup(b, device, names)}
    out = []
    for c in lookup(a, device, names):
        if c["id"] in cb:
            out.append(dict(c, release=release, bracket=[a, b]))
    return out


def write_data(doc: dict, device: str = "cpu") -> Path:
    """Write a compact release document (:func:`conformance.compact`) to :func:`data_dir`, one cell per
    line (small diffs between measurements), atomically and world-readable; returns the path."""
    import os
    import tempfile

    path = data_dir() / f"{doc['warp']}-{device}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "cells"}
    cells = ",\n".join(f"  {json.dumps(i)}: {json.dumps(c, sort_keys=True, separators=(',', ':'), allow_nan=False)}"
                       for i, c in sorted(doc["cells"].items()))
    text = json.dumps(head, sort_keys=True)[:-1] + ', "cells": {\n' + cells + "\n}}\n"
    json.loads(text)  # never commit a file that does not parse
    fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".json", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    load.cache_clear()
    return path


def merge_data(doc: dict, device: str = "cpu") -> dict:
    """The committed data of ``doc``'s release with the cells of ``doc`` replacing or adding to its own.

    For a partial measurement (``defects4warp maint builtins --only ...``): every cell the
    committed file holds and ``doc`` does not is kept as it is; the header (registry
    counts) is the committed one.

    Parameters
    ----------
    doc : dict
        A compact release document (:func:`conformance.compact`) with a subset of the cells.
    device : str
        Device of the committed file (``<release>-<device>.json``).

    Returns
    -------
    dict
        The merged compact document, ready for :func:`write_data`.

    Raises
    ------
    FileNotFoundError
        When the release has no committed data on ``device`` (a partial file would read as a
        release whose other builtins are absent); the message names the file.
    """
    old = load.__wrapped__(doc["warp"], device)
    if old is None:
        raise FileNotFoundError(f"{data_dir() / (doc['warp'] + '-' + device + '.json')}: no committed data to merge "
                                f"a partial measurement into; measure the whole release first (without --only)")
    cells = dict(old["cells"])
    cells.update(doc["cells"])
    return dict(old, cells=cells)
