"""Progress of long commands, on a terminal and on a pipe.

On a terminal, :func:`progress` is rich's bar with the count, elapsed time and
an ETA. When standard error is not a terminal (a CI log, ``2> run.log``,
``| tee``), it prints plain lines instead, at most every ``every_s`` seconds
and once at the end::

    [ 12/246]   5% elapsed 0:41 eta 13:20 last: ball-drag-identification/buggy bug

Both objects offer the part of :class:`rich.progress.Progress` the commands
use: ``add_task(description, total=...)`` and ``update(task, advance=...,
description=...)``, as a context manager.
"""

from __future__ import annotations

import os
import sys
import time

#: Default seconds between two plain progress lines on a pipe: often enough to
#: see a run move in a CI log, rare enough to keep a 10-minute run's log to ~20 lines.
DEFAULT_EVERY_S = 30.0


def default_jobs() -> int:
    """Cores this process may run on: ``len(os.sched_getaffinity(0))`` where
    the platform has it (Linux: honours ``taskset`` and cgroup cpusets), else
    ``os.cpu_count()``, else 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def clock(seconds: float) -> str:
    """``seconds`` as ``M:SS`` or ``H:MM:SS`` (rounded down to whole seconds)."""
    s = int(max(0.0, seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class PlainProgress:
    """Progress as plain lines on a stream that is not a terminal.

    Parameters
    ----------
    what : str
        What is being done (printed once at the start of the first line's task).
    stream : file, default sys.stderr
    every_s : float, default :data:`DEFAULT_EVERY_S`
        At most one line per this many seconds while the task runs (the first
        completed item and the last are always printed).
    clock_fn : callable, default time.monotonic
        The time source, seconds (tests pass a fake).
    """

    def __init__(self, what: str = "", stream=None, every_s: float = DEFAULT_EVERY_S, clock_fn=time.monotonic):
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = float(every_s)
        self.clock = clock_fn
        self.tasks = {}
        self.lines = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for t in self.tasks.values():
            if t["done"] and t["printed"] != t["done"]:
                self._line(t)
        return False

    def add_task(self, description: str = "", total=None, **_) -> int:
        tid = len(self.tasks)
        self.tasks[tid] = {"total": total, "done": 0, "last": description, "t0": self.clock(), "printed_at": None,
                           "printed": 0}
        return tid

    def update(self, task: int, advance: float = 0, description: str | None = None, total=None, **_) -> None:
        t = self.tasks[task]
        if total is not None:
            t["total"] = total
        t["done"] += int(advance)
        if description is not None:
            t["last"] = description
        if not advance:
            return
        now = self.clock()
        finished = t["total"] is not None and t["done"] >= t["total"]
        if finished or t["printed_at"] is None or now - t["printed_at"] >= self.every_s:
            self._line(t, now)

    def _line(self, t: dict, now: float | None = None) -> None:
        now = self.clock() if now is None else now
        elapsed = now - t["t0"]
        done, total = t["done"], t["total"]
        if total:
            width = len(str(total))
            head = f"[{done:>{width}}/{total}] {100.0 * done / total:3.0f}%"
            eta = elapsed / done * (total - done) if done else None
            tail = f" eta {clock(eta)}" if eta is not None else ""
        else:
            head, tail = f"[{done}]", ""
        what = f"{self.what} " if self.what else ""
        self.stream.write(f"{what}{head} elapsed {clock(elapsed)}{tail} last: {t['last']}\n")
        self.stream.flush()
        t["printed_at"], t["printed"] = now, done
        self.lines += 1


def progress(what: str, console, every_s: float = DEFAULT_EVERY_S):
    """Rich's bar (with ETA) when ``console`` is a terminal, else :class:`PlainProgress`
    writing to ``console.file`` at most every ``every_s`` seconds."""
    if not console.is_terminal:
        return PlainProgress(what, stream=console.file, every_s=every_s)
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    return Progress(
        TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.description}"), console=console, transient=True,
    )
