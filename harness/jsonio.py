"""Strict, atomic JSON files (shared by the runner, the result store and the commands).

Kept apart from :mod:`defects4warp.runner` so that :mod:`defects4warp.store` can write
JSON without importing the runner (which imports the store): no import cycle.
"""

from __future__ import annotations

import json
import math
import os
import tempfile


def _strict(x):
    """``x`` with non-finite floats as the strings "nan", "inf", "-inf", so the
    file is strict JSON (RFC 8259 has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    return x


#: Key of the one-entry object that stands for a non-finite float in :func:`lossless` JSON.
FLOAT_TAG = "$float"


def lossless(x):
    """``x`` with every non-finite float as ``{"$float": "nan" | "inf" | "-inf"}``: strict JSON
    that :func:`restore` turns back into the same floats (a measurement's NaN is evidence,
    and :func:`_strict`'s plain strings would not read back as numbers)."""
    if isinstance(x, float) and not math.isfinite(x):
        return {FLOAT_TAG: str(x)}
    if isinstance(x, dict):
        return {k: lossless(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [lossless(v) for v in x]
    return x


def restore(x):
    """The inverse of :func:`lossless`."""
    if isinstance(x, dict):
        if len(x) == 1 and FLOAT_TAG in x:
            return float(x[FLOAT_TAG])
        return {k: restore(v) for k, v in x.items()}
    if isinstance(x, list):
        return [restore(v) for v in x]
    return x


def current_umask() -> int:
    """The process's file mode creation mask (e.g. ``0o022``), read without changing it
    where Linux shows it (``Umask:`` of ``/proc/self/status``, Linux >= 4.7); elsewhere it is
    read by setting and restoring it, briefly as ``0o077`` so a concurrent creation is never
    more open than intended."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o077)
    os.umask(old)
    return old


def normal_mode(fd_or_path, *, directory: bool = False) -> None:
    """Give a file made by :func:`tempfile.mkstemp` (mode 0600) or a folder made by
    :func:`tempfile.mkdtemp` (0700) the mode an ordinary ``open``/``mkdir`` would have
    given it: ``0o666`` (folders ``0o777``) less the umask, so 0644/0755 under umask 022.

    Parameters
    ----------
    fd_or_path : int or str or os.PathLike
        An open file descriptor, or a path.
    directory : bool, default False
        Use the folder base mode ``0o777``.
    """
    mode = (0o777 if directory else 0o666) & ~current_umask()
    if isinstance(fd_or_path, int):
        os.fchmod(fd_or_path, mode)
    else:
        os.chmod(fd_or_path, mode)


def write_atomic(path, data, *, suffix: str = "") -> None:
    """Write ``data`` (``str`` as UTF-8, or ``bytes``) to ``path`` through a temporary file in
    the same folder and ``os.replace``, so readers never see a half-written file and a killed
    writer leaves at most a stray ``.part-*`` file. The folder is created; the file gets the
    umask's normal mode (:func:`normal_mode`), not mkstemp's 0600."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=suffix, dir=d)
    try:
        normal_mode(fd)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str, doc: dict) -> None:
    """Write ``doc`` as indented strict JSON to ``path`` atomically (:func:`write_atomic`)."""
    write_atomic(path, json.dumps(_strict(doc), indent=2, default=str, allow_nan=False) + "\n", suffix=".json")


def load_yaml(text: str):
    """Parse YAML ``text`` with PyYAML's safe loader, the C one (libyaml) where PyYAML was built with it.

    Same documents and errors (:class:`yaml.YAMLError` with ``problem_mark``) as ``yaml.safe_load``;
    about 10x faster on the corpus's case files (PyYAML's pure-Python scanner took 18 of the 28 s of a
    ``defects4warp pages --check``, which loads the corpus several times).
    """
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
