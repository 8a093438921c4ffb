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


def write_json_atomic(path: str, doc: dict) -> None:
    """Write ``doc`` as JSON to ``path`` through a temporary file and rename,
    so readers never see a half-written file."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".json", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_strict(doc), f, indent=2, default=str, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
