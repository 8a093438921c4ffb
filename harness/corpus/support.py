"""Which releases a program builds on: the measurement behind ``min_warp``.

A variant that uses an API newer than a release fails to build or import there
(``AttributeError: module 'warp' has no attribute ...``, a codegen error on a
construct the release does not know). :func:`build_check` runs the variant's
protocol once (import, ``make_problem``, ``objective()``, ``gradient()``) in
the release's interpreter; :func:`find_min_warp` bisects the supported
releases for the first one it builds on (a release's API only grows, so the
outcome switches once). ``scripts/min_warp.py`` runs it over the corpus and
writes ``docs/data/min-warp.json``; the ``min_warp`` fields of case.yaml are
taken from there, and ``validate`` checks them again on every release.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from packaging.version import Version

from .. import sandbox
from ..isolation import DEFAULT_FILE_BYTES, DEFAULT_MEMORY_BYTES

#: Default seconds one build check may take (import, compile, one objective and gradient call).
DEFAULT_TIMEOUT_S = 300.0

#: The build check run in a release's interpreter: argv is the copy's path, the scale, and (for a script
#: variant) its ``script:`` block as JSON; ``{make}`` is the line that builds the problem.
_TEMPLATE = r"""
import json, sys, traceback
path, scale = sys.argv[1], sys.argv[2]
try:
    import warp as wp
    wp.config.quiet = True
    wp.init()
    {make}
    p.objective()
    p.gradient()
except BaseException as exc:
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    print("D4W-FAIL " + type(exc).__name__ + (": " + lines[0][:300] if lines else ""))
    sys.exit(3)
print("D4W-OK " + str(getattr(wp.config, "version", "")))
"""

#: An adapter: import ``problem.py`` and call ``make_problem``.
_CODE = _TEMPLATE.replace("{make}", "from defects4warp.problem import import_variant; "
                                    "p = import_variant(path).make_problem('cpu', scale)")

#: A script variant: the capture runs the user's script (its ``script:`` block) up to the backward it
#: captures; the captured problem's ``objective()`` and ``gradient()`` then run once.
_SCRIPT_CODE = _TEMPLATE.replace("{make}", "from defects4warp.capture import ScriptSpec; "
                                           "from defects4warp.capture.core import capture_problem; "
                                           "p = capture_problem(path, ScriptSpec.from_json(sys.argv[3]), 'cpu', "
                                           "check_determinism=False)")


def build_check(path, python: str, scale: str = "small", timeout_s: float = DEFAULT_TIMEOUT_S,
                script: dict | None = None) -> dict:
    """Run a variant's protocol once with the interpreter ``python``.

    Parameters
    ----------
    path : path-like
        The variant folder (holding ``problem.py``, or the script); a neutral copy is run.
    python : str
        The interpreter of a release (:func:`defects4warp.envs.python_for`).
    scale : str
        ``small`` (default) or ``production``.
    timeout_s : float
        Wall-clock limit, seconds.
    script : dict, optional
        The variant's ``script:`` block as JSON (``defects4warp.corpus.case.ScriptBlock.to_json``): check the
        script through the capture instead of importing ``problem.py`` (which the copy then lacks, as
        an engine's copy does).

    Returns
    -------
    dict
        ``{"ok": bool, "error": str or None (exception type and first line),
        "seconds": float}``; ``ok`` is None when the check timed out or the
        worker died without a verdict. The check runs in the sandbox
        (:func:`defects4warp.sandbox.run`) under the measurement worker's
        memory and file-size limits.
    """
    from ..blind import neutral_copy

    from ..paths import child_pythonpath

    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    t0 = time.perf_counter()
    import json

    cmd = [python, "-c", _CODE] if script is None else [python, "-c", _SCRIPT_CODE]
    with neutral_copy(path, drop=("problem.py",) if script is not None else ()) as p:
        res = sandbox.run(cmd + [str(p), scale] + ([json.dumps(script)] if script is not None else []),
                          timeout_s=timeout_s, env=env, memory_bytes=DEFAULT_MEMORY_BYTES,
                          file_bytes=DEFAULT_FILE_BYTES)
        if res.timed_out:
            return {"ok": None, "error": f"timed out after {timeout_s:.0f} s", "seconds": time.perf_counter() - t0}
    out = [ln for ln in res.stdout.splitlines() if ln.startswith(("D4W-OK", "D4W-FAIL"))]
    secs = time.perf_counter() - t0
    if out and out[-1].startswith("D4W-OK"):
        return {"ok": True, "error": None, "seconds": secs}
    if out:
        return {"ok": False, "error": out[-1][len("D4W-FAIL "):], "seconds": secs}
    tail = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
    return {"ok": None, "error": f"no verdict: {tail[:300]}", "seconds": secs}


def find_min_warp(path, releases: list, python_for, known: dict | None = None, scale: str = "small",
                  timeout_s: float = DEFAULT_TIMEOUT_S, log=None, script: dict | None = None) -> dict:
    """Bisect ``releases`` for the first one the variant at ``path`` builds on.

    Parameters
    ----------
    path : path-like
        The variant folder.
    releases : list[str]
        Releases in any order (sorted here); the outcome is assumed to switch
        once, from failing to building.
    python_for : callable
        ``release -> interpreter`` (e.g. ``lambda r: defects4warp.envs.python_for(r)[0]``).
    known : dict, optional
        ``{release: build_check result}`` already measured (e.g. from
        validation); they are not measured again.
    scale : str
    timeout_s : float
        Limit of each build check, seconds.
    log : callable, optional
        Receives one line per check.
    script : dict, optional
        Check the variant's script through the capture (see :func:`build_check`).

    Returns
    -------
    dict
        ``{"min_warp": first release that builds, or None when the newest
        fails too, or the oldest when it builds everywhere; "checks": {release:
        result}; "last_failure": the error on the release just below
        min_warp}``.
    """
    rel = sorted(releases, key=Version)
    checks = dict(known or {})

    def ok(r):
        if r not in checks:
            checks[r] = build_check(path, python_for(r), scale, timeout_s, script=script)
            if log:
                log(f"{Path(path).parent.name}/{Path(path).name} on {r}: "
                    + ("builds" if checks[r]["ok"] else f"fails ({checks[r]['error']})"))
        return checks[r]["ok"] is True

    if ok(rel[0]):
        return {"min_warp": rel[0], "checks": checks, "last_failure": None}
    if not ok(rel[-1]):
        return {"min_warp": None, "checks": checks, "last_failure": checks[rel[-1]]["error"]}
    lo, hi = 0, len(rel) - 1  # rel[lo] fails, rel[hi] builds
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(rel[mid]):
            hi = mid
        else:
            lo = mid
    return {"min_warp": rel[hi], "checks": checks, "last_failure": checks[rel[lo]]["error"]}
