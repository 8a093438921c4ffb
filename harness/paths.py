"""Where the package's data and code are, from a source checkout and from an installed wheel.

The import name is ``defects4warp``; its source folder is ``harness/`` (the
``package-dir`` mapping in pyproject.toml). The bundled data that lives at the
repository root in a checkout (``corpus/``, ``mutants/``, ``docs/taxonomy.md``)
is shipped inside the wheel as ``defects4warp/_corpus``, ``_mutants`` and
``_docs``; :func:`bundled` finds either.

Subprocesses (the measurement and oracle workers) run ``python -m
defects4warp.<module>``, possibly in a per-release environment that must not
see this environment's site-packages. :func:`import_root` is a small folder
holding only a ``defects4warp`` symlink to this package's folder, put on the
child's ``PYTHONPATH``: it works from a checkout that was never installed, from
an editable install, and from a wheel.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

#: The name subprocesses import the package by (the distribution's import name).
IMPORT_NAME = "defects4warp"

#: This package's source folder (``harness/`` in a checkout, ``site-packages/defects4warp`` installed).
PACKAGE_DIR = Path(__file__).resolve().parent

#: Bundled data: name at the repository root -> name inside the installed package.
BUNDLED = {"corpus": "_corpus", "mutants": "_mutants", "docs": "_docs"}


def bundled(name: str) -> Path:
    """The bundled data folder ``name`` (``corpus``, ``mutants`` or ``docs``).

    Looks inside the package first (an installed wheel:
    ``defects4warp/_corpus``), then at the repository root (a checkout:
    ``<repo>/corpus``). Returns the first that is a folder, else the
    repository path (callers say what is missing).

    Raises
    ------
    KeyError
        When ``name`` is not one of :data:`BUNDLED`.
    """
    inside = PACKAGE_DIR / BUNDLED[name]
    if inside.is_dir():
        return inside
    return PACKAGE_DIR.parent / name


def module(name: str) -> str:
    """The dotted name of the package module ``name`` for ``python -m``, e.g.
    ``module("probes.worker") == "defects4warp.probes.worker"``."""
    return f"{IMPORT_NAME}.{name}"


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "defects4warp" / "import"


def import_root(cache: str | os.PathLike | None = None) -> str:
    """A folder whose only entry is ``defects4warp``, a symlink to :data:`PACKAGE_DIR`.

    Put on a subprocess's ``PYTHONPATH`` so that ``python -m
    defects4warp.probes.worker`` imports this very copy of the package and
    nothing else of this environment.

    Parameters
    ----------
    cache : path-like, optional
        Parent of the per-package folders (default
        ``$XDG_CACHE_HOME/defects4warp/import``, else ``~/.cache/...``; the
        system's temporary folder when that cannot be written). One sub-folder
        per package location (SHA-256 of its path), created atomically and
        reused.

    Returns
    -------
    str
        The folder's path.
    """
    digest = hashlib.sha256(str(PACKAGE_DIR).encode()).hexdigest()[:16]
    parents = [Path(cache)] if cache else [_cache_home(), Path(tempfile.gettempdir()) / "defects4warp-import"]
    last = None
    for parent in parents:
        root = parent / digest
        link = root / IMPORT_NAME
        try:
            if link.is_symlink() and Path(os.readlink(link)) == PACKAGE_DIR:
                return str(root)
            parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".part-", dir=parent))
            os.symlink(PACKAGE_DIR, tmp / IMPORT_NAME, target_is_directory=True)
            try:
                os.replace(tmp, root)  # atomic; fails when another process made it first
            except OSError:
                (tmp / IMPORT_NAME).unlink()
                tmp.rmdir()
                if not (link.is_symlink() and Path(os.readlink(link)) == PACKAGE_DIR):
                    raise
            return str(root)
        except OSError as exc:
            last = exc
    raise OSError(f"cannot create the import folder for subprocesses under {parents[0]}: {last}")


def child_pythonpath(env: dict) -> str:
    """``PYTHONPATH`` for a worker subprocess: :func:`import_root` first, then
    whatever ``env`` already had."""
    old = env.get("PYTHONPATH")
    return import_root() + (os.pathsep + old if old else "")


#: Folder names that never hold the program's own sources: caches, installed
#: packages and virtual environments (a folder holding ``pyvenv.cfg`` is one
#: too, whatever its name). Hidden folders (``.venv``, ``.git``) are skipped as well.
NOT_PROGRAM_DIRS = frozenset({"__pycache__", "site-packages", "dist-packages", "node_modules"})


def program_files(folder, pattern: str = "*.py") -> list:
    """The program's own source files under ``folder``, sorted.

    Walks ``folder`` recursively but never descends into hidden folders, the
    folders of :data:`NOT_PROGRAM_DIRS` or a virtual environment (a folder
    holding ``pyvenv.cfg``), so a script that sits next to its ``.venv`` or a
    vendored ``site-packages`` is read as the user's few files, not as
    thousands of installed modules.

    Parameters
    ----------
    folder : path-like
    pattern : str, default "*.py"
        ``fnmatch`` pattern over file names.

    Returns
    -------
    list[pathlib.Path]
    """
    import fnmatch

    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in NOT_PROGRAM_DIRS
                         and not os.path.isfile(os.path.join(root, d, "pyvenv.cfg")))
        out += [Path(root) / f for f in files if fnmatch.fnmatch(f, pattern)]
    return sorted(out)


def is_program_file(path, folder) -> bool:
    """True when ``path`` lies under ``folder`` and inside no folder that
    :func:`program_files` skips (installed packages, environments, hidden folders)."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
    except ValueError:
        return False
    parents = rel.parts[:-1]
    if any(p.startswith(".") or p in NOT_PROGRAM_DIRS for p in parents):
        return False
    base = Path(os.path.abspath(folder))
    for p in parents:
        base = base / p
        if (base / "pyvenv.cfg").is_file():
            return False
    return True


def installed_copy(folder) -> bool:
    """True when ``folder`` is (inside) bundled data of an installed package
    (``site-packages/defects4warp/_corpus``), which verbs that write must not
    change: it belongs to the installation, and its digest names the bundled
    corpus in every stored run."""
    try:
        Path(os.path.abspath(folder)).relative_to(PACKAGE_DIR)
    except ValueError:
        return False
    return True
