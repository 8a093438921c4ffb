"""An outside tool in any language as an engine: ``--engine cmd:"<command>"``.

The contract (docs/engines.md, "Any command"):

* For each variant the harness runs ``<command> PATH DEVICE SCALE`` (the
  command is split with :func:`shlex.split`; PATH is the neutral copy of the
  variant; with ``--with-summary`` a fourth argument carries the case's
  ``summary``, the user's words, and nothing else from case.yaml), in the
  current working directory, with standard input closed.
* The answer travels on a channel the variant's program cannot write to: a
  file. Its path is in the environment variable :data:`ANSWER_VAR`
  (``DEFECTS4WARP_ANSWER``) and replaces the placeholder ``{answer}`` wherever
  it appears in the command. The tool writes one JSON diagnosis there
  (``harness/schemas/diagnosis.schema.json``; ``cost.wall_s`` may be left out,
  the harness fills it in). Standard output and standard error are free for
  anything (Warp's banner, "Module ... load" lines, the tool's own logging);
  they are captured and their tails shown when something fails.
* Legacy fallback: a tool that writes no answer file but prints exactly one
  JSON object on standard output (and nothing else) is still read.
* A variant that is the user's training script (no ``problem.py``) comes
  with :data:`SCRIPT_VAR` (``DEFECTS4WARP_SCRIPT``) set to how to run it
  (JSON: ``entry``, ``args``, ``iteration``, ``params``); it is unset for an
  adapter variant.
* The tool runs in its own session (process group); on timeout the whole
  group is killed, and every process it started (found by a token in the
  environment, even one that left the group) is killed when it ends.

A failure of the contract (the command cannot be started, exits non-zero,
writes no answer, an answer that is not JSON or violates the schema) is
recorded as an ``error`` diagnosis whose ``command`` evidence names the
failure (:data:`CONTRACT_FAILURES`); :func:`defects4warp.run.preflight.preflight` turns such a failure on
the first item into :class:`EngineContractError` before a run starts.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import time

from .. import sandbox
from .base import error_diagnosis, ev

PREFIX = "cmd:"

#: Environment variable holding the path of the file the tool writes its answer to.
ANSWER_VAR = "DEFECTS4WARP_ANSWER"

#: Environment variable holding, for a variant that is the user's training
#: script (no ``problem.py``), how to run it: JSON ``{"entry", "args",
#: "iteration", "params"}`` (:class:`defects4warp.capture.ScriptSpec`); unset for
#: an adapter variant.
SCRIPT_VAR = "DEFECTS4WARP_SCRIPT"

#: Placeholder replaced by the answer file's path in the command's arguments.
ANSWER_PLACEHOLDER = "{answer}"

#: Values of ``data["failure"]`` in the ``command`` evidence of an error
#: diagnosis that mean the tool breaks the contract (a usage error when they
#: happen on the first item), as opposed to ``timeout`` (a slow variant).
CONTRACT_FAILURES = frozenset({"not_found", "not_executable", "exit_status", "no_answer", "invalid_answer"})

#: Largest answer file read, bytes (a diagnosis is a few KiB; the reference
#: engine's largest is under 100 KiB).
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class EngineContractError(RuntimeError):
    """An outside engine breaks the contract on the first item (the message is complete)."""


def _tail(path: str, lines: int) -> str:
    """The last ``lines`` lines of the text file ``path`` ('' when missing)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def schema_problems(diag, limit: int = 5) -> list:
    """Every way ``diag`` violates the diagnosis schema, as ``"at PATH: message"``
    strings (at most ``limit``; empty when it is valid)."""
    import jsonschema

    from .base import diagnosis_schema

    v = jsonschema.Draft202012Validator(diagnosis_schema())
    out = []
    for e in sorted(v.iter_errors(diag), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(map(str, e.absolute_path)) or "the top level"
        out.append(f"at {where}: {e.message}")
        if len(out) >= limit:
            break
    return out


class CommandEngine:
    """Runs an outside command per variant (see the module docstring).

    Parameters
    ----------
    command : str
        The command line, without the ``cmd:`` prefix.
    timeout_s : float, default 300
        Wall-clock limit per variant, seconds; the tool's process group is
        killed when it passes.
    with_summary : bool, default False
        Pass the case's summary as a fourth argument.
    tail_lines : int, default 20
        Lines of the tool's stdout and stderr quoted in an error message.

    Raises
    ------
    ValueError
        When ``command`` is empty.
    """

    version = "external"
    #: The harness cannot see when an outside tool changes, so the result
    #: store never reuses its diagnoses (:func:`defects4warp.run.store.engine_identity`).
    cacheable = False

    def __init__(self, command: str, timeout_s: float = 300.0, with_summary: bool = False, tail_lines: int = 20, **_):
        self.argv = shlex.split(command)
        self.wants_summary = with_summary
        if not self.argv:
            raise ValueError("cmd: engine needs a command, e.g. cmd:\"python my_engine.py\"")
        self.name = PREFIX + command
        self.timeout_s = timeout_s
        self.tail_lines = tail_lines

    def _fail(self, failure: str, message: str, wall: float, device: str, out: str = "", err: str = "",
              returncode=None) -> dict:
        """An error diagnosis for a contract failure, with the output tails in
        the message and in the ``command`` evidence."""
        full = message
        if err:
            full += f"\n--- stderr (last {self.tail_lines} lines) ---\n{err}"
        if out:
            full += f"\n--- stdout (last {self.tail_lines} lines) ---\n{out}"
        data = {"failure": failure, "returncode": returncode, "stdout_tail": out, "stderr_tail": err,
                "command": self.argv}
        return error_diagnosis(full, wall, device, [ev("command", False, message, data)])

    def diagnose(self, path, device: str = "cpu", scale: str = "small", summary: str | None = None,
                 script=None) -> dict:
        t0 = time.perf_counter()
        extra = [summary] if (self.wants_summary and summary is not None) else []
        with tempfile.TemporaryDirectory(prefix="d4w-cmd-") as tmp:
            answer = os.path.join(tmp, "answer.json")
            argv = [a.replace(ANSWER_PLACEHOLDER, answer) for a in self.argv] + [str(path), device, scale] + extra
            env = dict(os.environ)
            env[ANSWER_VAR] = answer
            env.pop(SCRIPT_VAR, None)
            if script is not None:
                env[SCRIPT_VAR] = script.to_json() if hasattr(script, "to_json") else json.dumps(script)
            try:
                res = sandbox.run(argv, timeout_s=self.timeout_s, env=env, output_dir=tmp, tail_bytes=0)
            except FileNotFoundError:
                return self._fail("not_found", f"cannot run the command: {argv[0]!r} not found (looked in PATH "
                                  f"and relative to {os.getcwd()})", time.perf_counter() - t0, device)
            except PermissionError:
                return self._fail("not_executable", f"cannot run the command: {argv[0]!r} is not executable "
                                  f"(start it through its interpreter, e.g. cmd:\"python {argv[0]}\")",
                                  time.perf_counter() - t0, device)
            except OSError as exc:
                return self._fail("not_executable", f"cannot run the command {argv[0]!r}: {exc}",
                                  time.perf_counter() - t0, device)
            out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
            timed_out = res.timed_out
            wall = time.perf_counter() - t0
            out, err = _tail(out_path, self.tail_lines), _tail(err_path, self.tail_lines)
            if timed_out:
                return self._fail("timeout", f"timeout: the command did not answer within {self.timeout_s:g} s "
                                  "(its process group was killed)", wall, device, out, err)
            if res.returncode != 0:
                how = (f"was killed by signal {-res.returncode}" if res.returncode < 0
                       else f"exited with status {res.returncode}")
                return self._fail("exit_status", f"the command {how}", wall, device, out, err, res.returncode)
            diag, problem = self._read_answer(answer, out_path)
            if problem:
                return self._fail(problem[0], problem[1], wall, device, out, err, res.returncode)
        diag.setdefault("cost", {})
        if isinstance(diag["cost"], dict):
            diag["cost"].setdefault("wall_s", wall)
        bad = schema_problems(diag)
        if bad:
            return self._fail("invalid_answer", "the answer does not follow harness/schemas/diagnosis.schema.json: "
                              + "; ".join(bad), wall, device, out, err, 0)
        return diag

    def _read_answer(self, answer: str, out_path: str):
        """``(diagnosis, None)`` or ``(None, (failure, message))``: the answer
        file, else (legacy) the whole of stdout as one JSON object."""
        if os.path.exists(answer):
            size = os.path.getsize(answer)
            if size > MAX_ANSWER_BYTES:
                return None, ("invalid_answer", f"the answer file is {size} bytes, over {MAX_ANSWER_BYTES}")
            try:
                with open(answer, encoding="utf-8") as f:
                    diag = json.load(f)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                return None, ("invalid_answer", f"the answer file (${ANSWER_VAR}) is not JSON ({exc})")
            if not isinstance(diag, dict):
                return None, ("invalid_answer", f"the answer file (${ANSWER_VAR}) holds a JSON "
                              f"{type(diag).__name__}, not one object")
            return diag, None
        try:
            with open(out_path, "rb") as f:
                text = f.read(MAX_ANSWER_BYTES).decode("utf-8", "replace")
            diag = json.loads(text)
        except (OSError, json.JSONDecodeError):
            diag = None
        if isinstance(diag, dict):
            return diag, None  # legacy: the whole of stdout is the answer
        return None, ("no_answer", f"the command wrote no answer: write one JSON diagnosis to the file named by "
                      f"${ANSWER_VAR} (or the {ANSWER_PLACEHOLDER} placeholder); its stdout is not one JSON object "
                      "either (stdout is for logs: Warp prints there)")


def contract_failure(diag: dict) -> str | None:
    """The contract failure an error diagnosis of :class:`CommandEngine` records
    (one of :data:`CONTRACT_FAILURES`), or None."""
    if diag.get("verdict") != "error":
        return None
    for e in diag.get("evidence") or []:
        data = e.get("data") if isinstance(e, dict) else None
        if e.get("probe") == "command" and isinstance(data, dict) and data.get("failure") in CONTRACT_FAILURES:
            return data["failure"]
    return None
