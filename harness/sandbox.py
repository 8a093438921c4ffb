"""The one place that starts a process for a measurement, an oracle check or a user's program.

A program under measurement may hang, crash, fork children that detach, fill
the disk or allocate without bound, and the harness may itself be killed
half-way. :func:`run` starts a command so that none of that outlives it:

* **its own session** (``start_new_session``): a timeout kills the whole process group;
* **a token** in its environment (:data:`TOKEN_VAR`), inherited by every process it
  starts, so children that left the group (``setsid``, a double fork) are found in
  ``/proc`` and killed when it ends (:func:`kill_token`); they are counted as ``leftovers``;
* **limits** set in the child before ``exec``: the address space (``RLIMIT_AS``) and
  the size of any file it writes (``RLIMIT_FSIZE``), and a parent-death signal
  (``PR_SET_PDEATHSIG``), so a ``kill -9`` of the harness takes it along;
* **output to files**, never pipes (a grandchild holding a pipe open would defeat the
  timeout), of which only the last :data:`TAIL_BYTES` are read back;
* **a registry** of live processes, so an interrupted command (Ctrl-C, SIGTERM) kills
  every one it started (:func:`kill_all`).

Standard library only.
"""

from __future__ import annotations

import math
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass

#: Environment variable carrying a token unique to one sandboxed process; every process it
#: starts inherits it, so children that detach (new session, double fork) are still found.
TOKEN_VAR = "DEFECTS4WARP_WORKER_TOKEN"

#: Bytes of each output stream read back (the end of it).
TAIL_BYTES = 8000

#: Plain-language causes of the signals a sandboxed process dies by.
SIGNAL_CAUSES = {
    "SIGSEGV": "the program crashed (segmentation fault)",
    "SIGXFSZ": "the program wrote a file past the file size limit (RLIMIT_FSIZE), i.e. tried to fill the disk",
    "SIGKILL": "killed (by the kernel's out-of-memory killer or another process)",
    "SIGABRT": "the program aborted",
    "SIGBUS": "the program crashed (bus error)",
}


@dataclass
class Outcome:
    """How one sandboxed command ended.

    Attributes
    ----------
    returncode : int or None
        Exit status; negative for a signal (``-11``: SIGSEGV); None when it timed out.
    timed_out : bool
    stdout, stderr : str
        The last :data:`TAIL_BYTES` of each stream, decoded as UTF-8 (errors replaced);
        with ``merge_output`` everything is in ``stdout`` and ``stderr`` is empty.
    leftovers : int
        Processes carrying the token that were still alive after the command ended
        (detached children), all killed.
    wall_s : float
        Wall-clock seconds from start to end, the kill included.
    """

    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    leftovers: int = 0
    wall_s: float = 0.0

    @property
    def signal_name(self) -> str | None:
        """``"SIGSEGV"`` etc. when the command died by a signal, else None."""
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return str(-self.returncode)


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``).
    No-op where ``prctl`` is not available."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _preexec(memory_bytes: int | None, file_bytes: int | None):
    def preexec():
        import resource

        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if file_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        die_with_parent()

    return preexec


def processes_with_token(token: str) -> list:
    """PIDs of this user's processes whose environment holds ``TOKEN_VAR=token``
    (read from ``/proc/<pid>/environ``; an empty list where there is no /proc)."""
    needle = f"{TOKEN_VAR}={token}".encode()
    out = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(pid)
        except OSError:
            continue
    return out


def kill_token(token: str, rounds: int = 5, exclude: tuple = ()) -> int:
    """SIGKILL every process carrying ``token``, ``rounds`` times 50 ms apart (children
    forked while a round ran are caught by the next); returns how many were found,
    not counting the PIDs in ``exclude`` (killed all the same)."""
    seen = set()
    for _ in range(rounds):
        pids = [p for p in processes_with_token(token) if p != os.getpid()]
        if not pids:
            break
        for pid in pids:
            seen.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    return len(seen - set(exclude))


#: Processes running now (killed by :func:`kill_all`), with their tokens.
_LIVE: dict = {}
_LOCK = threading.Lock()


def _kill(proc, token: str | None, rounds: int = 1) -> int:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return kill_token(token, rounds=rounds, exclude=(proc.pid,)) if token else 0


def live() -> int:
    """How many processes started by :func:`run` are running now."""
    with _LOCK:
        return len(_LIVE)


def kill_all() -> None:
    """Kill every process :func:`run` started that is still running, with its group
    and every process carrying its token (on Ctrl-C or SIGTERM, so nothing a command
    started outlives it)."""
    with _LOCK:
        live = list(_LIVE.items())
    for proc, token in live:
        _kill(proc, token)


def _tail(path: str, n: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _wait(proc, timeout_s: float) -> int:
    """``proc.wait(timeout=timeout_s)``, returning as soon as the process ends.

    ``Popen.wait`` with a timeout polls, sleeping up to 50 ms between looks, so the caller learnt of
    the end 25 ms late on average; a pidfd (Linux 5.3, Python 3.9) becomes readable when the process
    exits. Where there is none, ``Popen.wait`` as before.

    Raises
    ------
    subprocess.TimeoutExpired
        When the process is still running after ``timeout_s`` seconds.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout=timeout_s)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        ms = None if timeout_s is None or not timeout_s < 1e9 else max(0, math.ceil(timeout_s * 1000))
        if not poller.poll(ms):
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(fd)
    return proc.wait()


def run(argv: list, *, timeout_s: float, env: dict | None = None, cwd: str | None = None,
        memory_bytes: int | None = None, file_bytes: int | None = None, merge_output: bool = False,
        tail_bytes: int = TAIL_BYTES, token: str | None = None, output_dir: str | None = None) -> Outcome:
    """Run ``argv`` sandboxed (module docstring) and wait for it at most ``timeout_s`` seconds.

    Parameters
    ----------
    argv : list[str]
        The command.
    timeout_s : float
        Wall-clock limit, seconds; past it the process group and every process carrying
        the token are killed (SIGKILL) and ``timed_out`` is True.
    env : dict, optional
        Its environment (default: this process's); :data:`TOKEN_VAR` is added.
    cwd : str, optional
        Its working folder.
    memory_bytes, file_bytes : int, optional
        ``RLIMIT_AS`` and ``RLIMIT_FSIZE`` of the command, bytes (None: no limit).
    merge_output : bool
        Send stderr to the same file as stdout (one interleaved tail).
    tail_bytes : int
        Bytes of each stream read back (default :data:`TAIL_BYTES`).
    token : str, optional
        The token to use (default: a fresh UUID); a caller that hands the command
        a token of its own passes it here.
    output_dir : str, optional
        Folder where the whole output is kept as ``stdout`` and ``stderr`` files for
        the caller to read (default: a temporary folder removed on return).

    Returns
    -------
    Outcome

    Raises
    ------
    OSError
        When the command cannot be started (``FileNotFoundError``, ``PermissionError``).
    BaseException
        Whatever interrupts the wait (KeyboardInterrupt...) is re-raised after the
        command and its children are killed.
    """
    token = token or uuid.uuid4().hex
    env = dict(os.environ if env is None else env)
    env[TOKEN_VAR] = token
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="d4w-sandbox-") as tmp:
        logs = output_dir or tmp
        out_path, err_path = os.path.join(logs, "stdout"), os.path.join(logs, "stderr")
        with open(out_path, "wb") as out_f, open(err_path, "wb") as err_f:
            proc = subprocess.Popen(argv, stdout=out_f, stderr=subprocess.STDOUT if merge_output else err_f,
                                    stdin=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True,
                                    preexec_fn=_preexec(memory_bytes, file_bytes))
            with _LOCK:
                _LIVE[proc] = token
            timed_out, leftovers = False, 0
            try:
                _wait(proc, timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                leftovers += _kill(proc, token)
                proc.wait()
            except BaseException:
                _kill(proc, token)
                raise
            finally:
                with _LOCK:
                    _LIVE.pop(proc, None)
                leftovers += kill_token(token, exclude=(proc.pid,))
        return Outcome(None if timed_out else proc.returncode, timed_out, _tail(out_path, tail_bytes),
                       "" if merge_output else _tail(err_path, tail_bytes), leftovers, time.perf_counter() - t0)
