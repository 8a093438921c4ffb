"""An outside tool in any language as an engine: ``--engine cmd:"<command>"``.

For each variant the harness runs ``<command> PATH DEVICE SCALE`` (the command
is split with :func:`shlex.split`; PATH is the neutral copy of the variant;
with ``--with-summary`` a fourth argument carries the case's ``summary``, the
user's words, and nothing else from case.yaml)
and reads one JSON diagnosis (``harness/schemas/diagnosis.schema.json``) from
its standard output. A timeout, a non-zero exit, or output that is not one
JSON object is recorded as an ``error`` diagnosis for that variant, and the
run goes on; schema violations are caught by the runner like any engine's.
``cost.wall_s`` is filled in when the tool leaves it out.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time

from .base import error_diagnosis, ev

PREFIX = "cmd:"


class CommandEngine:
    """Runs an outside command per variant (see the module docstring).

    Parameters
    ----------
    command : str
        The command line, without the ``cmd:`` prefix.
    timeout_s : float
        Wall-clock limit per variant, seconds.
    """

    version = "external"
    #: The harness cannot see when an outside tool changes, so the result
    #: store never reuses its diagnoses (:func:`harness.store.engine_identity`).
    cacheable = False

    def __init__(self, command: str, timeout_s: float = 300.0, with_summary: bool = False, **_):
        self.argv = shlex.split(command)
        self.wants_summary = with_summary
        if not self.argv:
            raise ValueError("cmd: engine needs a command, e.g. cmd:\"python my_engine.py\"")
        self.name = PREFIX + command
        self.timeout_s = timeout_s

    def diagnose(self, path, device: str = "cpu", scale: str = "small", summary: str | None = None) -> dict:
        t0 = time.perf_counter()
        extra = [summary] if (self.wants_summary and summary is not None) else []
        try:
            res = subprocess.run(self.argv + [str(path), device, scale] + extra, capture_output=True, text=True,
                                 timeout=self.timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return error_diagnosis(f"timeout: the command did not answer within {self.timeout_s:g} s",
                                   time.perf_counter() - t0, device)
        except OSError as exc:
            return error_diagnosis(f"cannot run the command: {exc}", time.perf_counter() - t0, device)
        wall = time.perf_counter() - t0
        tail = [ev("command", False, "stderr tail", {"stderr": res.stderr[-1500:]})] if res.stderr else []
        if res.returncode != 0:
            return error_diagnosis(f"the command exited with status {res.returncode}", wall, device, tail)
        try:
            diag = json.loads(res.stdout)
        except json.JSONDecodeError as exc:
            return error_diagnosis(f"the command's output is not JSON ({exc.msg} at line {exc.lineno})", wall, device, tail)
        if not isinstance(diag, dict):
            return error_diagnosis("the command's output is not one JSON object", wall, device, tail)
        diag.setdefault("cost", {}).setdefault("wall_s", wall)
        return diag
