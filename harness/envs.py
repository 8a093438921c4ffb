"""Isolated Python environments, one per ``warp-lang`` release, that cost what they must.

``defects4warp validate --warp 1.16.0`` (and ``run``, ``matrix``, the
engine's release differential) measure variants with another Warp release
than the installed one. The measurement worker needs only NumPy and Warp (the
harness reaches it through ``PYTHONPATH``), so:

* **The installed release needs no environment**: :func:`python_for` and
  :func:`ensure_env` return this interpreter (``sys.executable``) when the
  release asked for is the installed ``warp-lang``.
* **What releases have in common is shared**: one *base* virtualenv per NumPy
  major (``numpy-1``: ``numpy<2`` for releases before :data:`NUMPY2_FROM`,
  ``numpy-2`` from it on) holds NumPy and pip, once.
* **A release environment holds only warp-lang**: ``warp-<version>`` is a
  pip-less virtualenv (a few KiB of links) whose ``site-packages`` holds the
  ``warp-lang`` wheel alone (installed by the base's pip with ``--no-deps
  --target``, without filling pip's wheel cache) and a ``.pth`` file that puts
  the base's ``site-packages`` on ``sys.path``. Its interpreter is
  ``warp-<version>/bin/python``, the same path as before this layout.

Measured (Python 3.11, Linux x86-64, ``defects4warp envs list`` on
2026-12-01): a release environment of this layout holds 168 MB (1.1.0) to
490 MB (1.15.0), nearly all of it ``warp.so`` with its CUDA kernels and
``warp-clang.so``, which no two releases share byte for byte; each NumPy base
about 105 MB. An environment of the earlier layout (NumPy, pip and setuptools
in each) took about 110 MB more per release (1.12.1: 480 MB), and the
installed release got one too (1.19.0: 513 MB). The 19 environments besides
the installed release take about 7 GB here; only the releases asked for are
installed (``defects4warp envs list`` shows them, ``defects4warp envs remove``
frees them).

Cache folder: ``$DEFECTS4WARP_ENVS`` or ``~/.cache/defects4warp/envs``. A
marker file :data:`MARKER` is written only after a successful install, so an
interrupted creation is redone next time; environments of the earlier layout
(a full virtualenv with the marker) stay valid and are used as they are.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version

MARKER = ".defects4warp-ready"

#: File touched each time an environment is handed out (its mtime is the "last used" of ``envs list``).
LAST_USED = ".defects4warp-last-used"

#: The releases the corpus is verified on: the newest patch of every minor
#: release from 1.0 to 1.12, and every release from 1.13.0 to 1.19.0 (PyPI has
#: no patch releases in that range). Checked against ``pip index versions
#: warp-lang`` on 2026-12-01.
RELEASES = ("1.0.2", "1.1.0", "1.2.2", "1.3.3", "1.4.2", "1.5.1", "1.6.2", "1.7.2", "1.8.1", "1.9.1", "1.10.1",
            "1.11.1", "1.12.1", "1.13.0", "1.14.0", "1.15.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0")

#: Oldest release the reference engine's release differential
#: (:mod:`defects4warp.engines.release`) may compare with by default (the newest
#: of these is its other release). Its bisection measures every release of
#: :data:`RELEASES` in between; its changelog entries (the evidence table's ``release_changes``) start
#: at 1.13.0, and a change at an older release is cited as ``release_changed``.
ENGINE_MIN_RELEASE = "1.12.1"

#: The releases the engine's release differential uses: :data:`RELEASES` from :data:`ENGINE_MIN_RELEASE`.
ENGINE_RELEASES = tuple(r for r in RELEASES if Version(r) >= Version(ENGINE_MIN_RELEASE))

#: Releases before this one were built against NumPy 1.x and fail to import
#: with NumPy 2 (measured: 1.0.2, 1.5.1, 1.9.1 need ``numpy<2`` on Python 3.11).
NUMPY2_FROM = "1.12.0"


class ReleaseEnvError(RuntimeError):
    """Creating or using a per-release environment failed (names the release)."""


def cache_root() -> Path:
    """The folder holding per-release environments (``$DEFECTS4WARP_ENVS``,
    default ``~/.cache/defects4warp/envs``)."""
    return Path(os.environ.get("DEFECTS4WARP_ENVS", Path.home() / ".cache" / "defects4warp" / "envs"))


def numpy_requirement(version: str) -> str:
    """The NumPy requirement to install next to ``warp-lang==version``:
    ``"numpy<2"`` before :data:`NUMPY2_FROM`, else ``"numpy"``."""
    return "numpy<2" if Version(version) < Version(NUMPY2_FROM) else "numpy"


def base_name(version: str) -> str:
    """Name of the shared base environment of ``version``: ``numpy-1`` or ``numpy-2``."""
    return "numpy-1" if numpy_requirement(version) == "numpy<2" else "numpy-2"


def _site_packages(root: Path) -> Path:
    return root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _check_version(version: str) -> None:
    try:
        Version(version)
    except InvalidVersion:
        raise ReleaseEnvError(f"'{version}' is not a release number (e.g. 1.16.0)") from None


def supported_patch(version: str) -> str | None:
    """The supported release (:data:`RELEASES`) of the same minor series as
    ``version`` (``"1.9"`` and ``"1.9.0"`` give ``"1.9.1"``), or None when
    no supported release shares its major and minor number (or ``version``
    is not a release number)."""
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    for r in RELEASES:
        if Version(r).release[:2] == (v.major, v.minor):
            return r
    return None


def check_supported(version: str) -> None:
    """Refuse a release the corpus is not verified on before anything is installed.

    Accepted: a release of :data:`RELEASES`, or the installed ``warp-lang``
    (which needs no environment, whatever its number).

    Raises
    ------
    ReleaseEnvError
        When ``version`` is not a release number, or is neither supported
        nor installed; the message names the supported releases and, when
        the minor series is supported (``1.9``, ``1.8.0``), the release to
        use instead (``1.9.1``, ``1.8.1``).
    """
    _check_version(version)
    if version in RELEASES or version == _installed_or_none():
        return
    near = supported_patch(version)
    hint = f" (did you mean {near}?)" if near else ""
    installed = _installed_or_none()
    raise ReleaseEnvError(f"warp-lang {version} is not a supported release{hint}; supported: {', '.join(RELEASES)}"
                          + (f", and the installed release {installed}" if installed and installed not in RELEASES
                             else ""))


def _run_pip(cmd: list, what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        tail = res.stderr.strip().splitlines()[-1:] or [f"exit status {res.returncode}"]
        raise ReleaseEnvError(f"pip could not install {what}: {tail[0]}")


def _locked(name: str):
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    f = open(root / f".{name}.lock", "w")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def ensure_base(version: str, log=None) -> Path:
    """The shared base environment for ``version`` (NumPy of the right major
    and pip), created when needed; returns its folder.

    Raises
    ------
    ReleaseEnvError
        When pip cannot install NumPy.
    """
    name = base_name(version)
    root = cache_root() / name
    py = root / "bin" / "python"
    if (root / MARKER).is_file() and py.exists():
        return root
    with _locked(name):
        if (root / MARKER).is_file() and py.exists():
            return root
        if log:
            log(f"creating the shared base environment {root} ({numpy_requirement(version)})")
        venv.EnvBuilder(with_pip=True, clear=True, symlinks=True).create(root)
        _run_pip([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-cache-dir",
                  numpy_requirement(version)], f"{numpy_requirement(version)} into {root}")
        (root / MARKER).write_text(f"{numpy_requirement(version)}\n")
    return root


def ensure_env(version: str, log=None) -> Path:
    """Return the interpreter of an environment with ``warp-lang==version``,
    creating it when needed (the installed release: this interpreter).

    Parameters
    ----------
    version : str
        An exact release, e.g. ``"1.16.0"``.
    log : callable, optional
        Receives one-line progress messages.

    Returns
    -------
    pathlib.Path
        ``sys.executable`` when ``version`` is the installed warp-lang, else
        ``<cache_root>/warp-<version>/bin/python``.

    Raises
    ------
    ReleaseEnvError
        When ``version`` is not a release number, is neither a supported
        release (:data:`RELEASES`) nor the installed one
        (:func:`check_supported`; nothing is created then), or pip cannot
        install it (the incomplete environment is removed).
    """
    _check_version(version)
    if _installed_or_none() == version:
        return Path(sys.executable)
    check_supported(version)
    root = cache_root() / f"warp-{version}"
    py = root / "bin" / "python"
    if (root / MARKER).is_file() and py.exists():
        _touch(root)
        return py
    base = ensure_base(version, log)
    with _locked(f"warp-{version}"):
        if (root / MARKER).is_file() and py.exists():
            return py
        if log:
            log(f"creating an environment for warp-lang=={version} in {root} (NumPy from {base})")
        venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(root)
        site = _site_packages(root)
        try:
            _run_pip([str(base / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      "--no-cache-dir", "--no-deps", "--target", str(site), f"warp-lang=={version}"],
                     f"warp-lang=={version}")
        except ReleaseEnvError:
            shutil.rmtree(root, ignore_errors=True)
            raise
        (site / "_defects4warp_base.pth").write_text(f"{_site_packages(base)}\n")
        (root / MARKER).write_text(f"warp-lang=={version}\nbase={base.name}\n")
        _touch(root)
    return py


def _touch(root: Path) -> None:
    try:
        (root / LAST_USED).touch()
    except OSError:
        pass


def python_for(version: str | None, log=None) -> tuple:
    """``(interpreter, warp_version)`` for a run: the current interpreter and
    the installed release when ``version`` is None or is the installed
    release, else the per-release environment (:func:`ensure_env`)."""
    if version is None:
        return sys.executable, installed_warp_version()
    return str(ensure_env(version, log)), version


def _installed_or_none():
    try:
        return installed_warp_version()
    except RuntimeError:
        return None


def installed_warp_version() -> str:
    """The installed ``warp-lang`` release, read from package metadata
    (without importing Warp in the harness process).

    Raises
    ------
    RuntimeError
        If warp-lang is not installed.
    """
    try:
        return metadata.version("warp-lang")
    except metadata.PackageNotFoundError:
        raise RuntimeError("warp-lang is not installed in this environment") from None


def disk_bytes(path: Path) -> int:
    """Bytes a folder occupies on disk (allocated blocks, each inode counted
    once, symbolic links not followed), like ``du -s``."""
    seen, total = set(), 0
    for dirpath, dirnames, filenames in os.walk(path):
        for n in dirnames + filenames:
            try:
                st = os.lstat(os.path.join(dirpath, n))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


def list_envs() -> list:
    """Every environment under :func:`cache_root`.

    Returns
    -------
    list[dict]
        One dict per folder: ``name`` (``warp-1.5.1``, ``numpy-1``),
        ``release`` (str or None for a base), ``kind`` (``release``,
        ``release (full venv)`` for the earlier layout, ``base``,
        ``incomplete`` while being created or after a failed install), ``path``,
        ``bytes`` (on disk), ``ready`` (marker present), ``last_used`` (epoch
        seconds, the marker's time when never recorded); sorted bases first,
        then by release.
    """
    root = cache_root()
    out = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        if not d.is_dir() or not (d.name.startswith("warp-") or d.name.startswith("numpy-")):
            continue
        release = d.name[5:] if d.name.startswith("warp-") else None
        marker = d / MARKER
        if not marker.is_file():
            kind = "incomplete"
        elif release is None:
            kind = "base"
        else:
            kind = "release" if "base=" in marker.read_text() else "release (full venv)"
        stamp = d / LAST_USED if (d / LAST_USED).exists() else marker
        out.append({"name": d.name, "release": release, "kind": kind, "path": str(d), "bytes": disk_bytes(d),
                    "ready": marker.is_file(), "last_used": stamp.stat().st_mtime if stamp.exists() else None})

    def key(e):
        try:
            return (e["release"] is not None, Version(e["release"] or "0"))
        except InvalidVersion:
            return (True, Version("0"))

    return sorted(out, key=key)


def remove_env(release: str | None = None, *, everything: bool = False) -> list:
    """Delete the environment of ``release`` (or, with ``everything``, every
    environment and base); a base no remaining release environment uses is
    deleted too. Returns the removed folders.

    Raises
    ------
    ReleaseEnvError
        When ``release`` has no environment here.
    """
    root = cache_root()
    removed = []
    if everything:
        targets = [Path(e["path"]) for e in list_envs()]
    else:
        _check_version(release)
        d = root / f"warp-{release}"
        if not d.is_dir():
            raise ReleaseEnvError(f"no environment for warp-lang {release} in {root}")
        targets = [d]
    for d in targets:
        with _locked(d.name):
            shutil.rmtree(d, ignore_errors=True)
        removed.append(str(d))
    left = {base_name(e["release"]) for e in list_envs() if e["release"] and e["kind"] == "release"}
    for e in list_envs():
        if e["kind"] == "base" and e["name"] not in left:
            with _locked(e["name"]):
                shutil.rmtree(e["path"], ignore_errors=True)
            removed.append(e["path"])
    return removed


_MISSING_CACHE: dict = {}


def missing_modules(modules, python: str | None = None) -> list:
    """The modules of ``modules`` that ``python`` (default: this interpreter)
    cannot import, found with ``importlib.util.find_spec`` (nothing is
    imported). Results are cached per interpreter."""
    python = python or sys.executable
    out = []
    for m in modules:
        key = (python, m)
        if key not in _MISSING_CACHE:
            if python == sys.executable:
                import importlib.util

                _MISSING_CACHE[key] = importlib.util.find_spec(m) is None
            else:
                code = f"import importlib.util,sys; sys.exit(importlib.util.find_spec({m!r}) is None)"
                _MISSING_CACHE[key] = subprocess.run([python, "-c", code], capture_output=True).returncode != 0
        if _MISSING_CACHE[key]:
            out.append(m)
    return out
