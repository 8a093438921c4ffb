"""Isolated Python environments, one per ``warp-lang`` release.

``defects4warp validate --warp 1.16.0`` (and ``run --warp``) measure variants
with another Warp release than the installed one. The measurement worker needs
only NumPy and Warp (the harness reaches it through ``PYTHONPATH``), so an
environment is a virtualenv with ``warp-lang==VERSION`` and ``numpy``, created
on first use under the cache folder and reused afterwards.

Cache folder: ``$DEFECTS4WARP_ENVS`` or ``~/.cache/defects4warp/envs``; one
sub-folder ``warp-<version>`` per release. A marker file is written only after
a successful install, so an interrupted creation is redone next time.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version

MARKER = ".defects4warp-ready"

#: The releases the corpus is verified on: 1.12.1 (legacy baseline) and every
#: release from 1.13.0 to 1.19.0 (PyPI has no patch releases in that range).
RELEASES = ("1.12.1", "1.13.0", "1.14.0", "1.15.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0")


class ReleaseEnvError(RuntimeError):
    """Creating or using a per-release environment failed (names the release)."""


def cache_root() -> Path:
    """The folder holding per-release environments."""
    return Path(os.environ.get("DEFECTS4WARP_ENVS", Path.home() / ".cache" / "defects4warp" / "envs"))



def ensure_env(version: str, log=None) -> Path:
    """Return the interpreter of an environment with ``warp-lang==version``,
    creating it when needed.

    Parameters
    ----------
    version : str
        An exact release, e.g. ``"1.16.0"``.
    log : callable, optional
        Receives one-line progress messages.

    Raises
    ------
    ReleaseEnvError
        When ``version`` is not a release number or pip cannot install it.
    """
    try:
        Version(version)
    except InvalidVersion:
        raise ReleaseEnvError(f"'{version}' is not a release number (e.g. 1.16.0)") from None
    root = cache_root() / f"warp-{version}"
    py = root / "bin" / "python"
    if (root / MARKER).is_file() and py.exists():
        return py
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".warp-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / MARKER).is_file() and py.exists():
            return py
        if log:
            log(f"creating an environment for warp-lang=={version} in {root}")
        venv.EnvBuilder(with_pip=True, clear=True).create(root)
        cmd = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               f"warp-lang=={version}", numpy_requirement(version)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise ReleaseEnvError(
                f"pip could not install warp-lang=={version}: {res.stderr.strip().splitlines()[-1:] or res.returncode}"
            )
        (root / MARKER).write_text(f"warp-lang=={version}\n")
    return py


#: Releases before this one were built against NumPy 1.x and fail to import
#: with NumPy 2 (measured: 1.0.2, 1.5.1, 1.9.1 need ``numpy<2`` on Python 3.11).
NUMPY2_FROM = "1.12.0"


def numpy_requirement(version: str) -> str:
    """The NumPy requirement to install next to ``warp-lang==version``:
    ``"numpy<2"`` before :data:`NUMPY2_FROM`, else ``"numpy"``."""
    return "numpy<2" if Version(version) < Version(NUMPY2_FROM) else "numpy"


def python_for(version: str | None, log=None) -> tuple:
    """``(interpreter, warp_version)`` for a run: the current interpreter and
    the installed release when ``version`` is None, else the per-release
    environment."""
    if version is None:
        return sys.executable, installed_warp_version()
    return str(ensure_env(version, log)), version


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
