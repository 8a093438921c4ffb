"""Progress of long commands, on a terminal and on a pipe.

On a terminal, :func:`progress` is rich's bar with the count, elapsed time and
an ETA. When standard error is not a terminal (a CI log, ``2> run.log``,
``| tee``), it prints plain lines instead, at most every ``every_s`` seconds
and once at the end::

    [ 12/246]   5% elapsed 0:41 eta 13:20 last: ball-drag-identification/buggy bug

The estimate of the time left (:class:`Eta`) says ``eta --`` until
:data:`ETA_MIN_ITEMS` items have finished after the start-up burst (items that
finish at once because they cost nothing: reused from the result store,
skipped, or diagnosed by an engine's preflight), so that it never extrapolates
a 35-minute run from an item that took no time.

Both objects offer the part of :class:`rich.progress.Progress` the commands
use: ``add_task(description, total=...)`` and ``update(task, advance=...,
description=...)``, as a context manager.
"""

from __future__ import annotations

import os
import sys
import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

#: Default seconds between two plain progress lines on a pipe: often enough to
#: see a run move in a CI log, rare enough to keep a 10-minute run's log to ~20 lines.
DEFAULT_EVERY_S = 30.0

#: Items that must finish after the start-up burst before a time left is estimated. A run's
#: items differ widely in cost (under a second to minutes a variant: docs/warp-examples.md,
#: docs/results.md), so one quick or slow first item must not set the estimate.
ETA_MIN_ITEMS = 5

#: Seconds between two completions under which they belong to the start-up burst (reused,
#: skipped or preflighted items, which finish within milliseconds of each other), as long as
#: every completion before them did too (a result-store look-up or a ``requires`` check takes
#: milliseconds). A real item finishing this fast only moves the estimate's start a little.
INSTANT_S = 0.5


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


class Eta:
    """Time left of a task, from the rate of items finished after its start-up burst.

    Items that finish back to back at the start, each within ``instant_s`` seconds of the
    previous one (or of the start), cost nothing (reused, skipped, preflighted): the rate is
    measured from the last of them. The estimate is ``elapsed since then / items since then *
    items left``, and None until ``min_items`` items have finished since then.

    Parameters
    ----------
    t0 : float
        When the task started, seconds (the progress object's clock).
    min_items : int, default :data:`ETA_MIN_ITEMS`
    instant_s : float, default :data:`INSTANT_S`
    """

    def __init__(self, t0: float, *, min_items: int = ETA_MIN_ITEMS, instant_s: float = INSTANT_S):
        self.min_items = int(min_items)
        self.instant_s = float(instant_s)
        self.anchor_t, self.anchor_done = t0, 0
        self.last_t = t0
        self.burst = True

    def advance(self, now: float, done: int) -> None:
        """Record that ``done`` items have finished at time ``now``."""
        if self.burst and now - self.last_t < self.instant_s:
            self.anchor_t, self.anchor_done = now, done
        else:
            self.burst = False
        self.last_t = now

    def remaining(self, now: float, done: int, total) -> float | None:
        """Seconds left (0 when ``done >= total``), or None when it cannot be told yet."""
        if not total:
            return None
        if done >= total:
            return 0.0
        n = done - self.anchor_done
        if n < self.min_items:
            return None
        return (now - self.anchor_t) / n * (total - done)


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
        t0 = self.clock()
        self.tasks[tid] = {"total": total, "done": 0, "last": description, "t0": t0, "printed_at": None,
                           "printed": 0, "eta": Eta(t0)}
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
        t["eta"].advance(now, t["done"])
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
            eta = t["eta"].remaining(now, done, total)
            tail = f" eta {clock(eta)}" if eta is not None else " eta --"
        else:
            head, tail = f"[{done}]", ""
        what = f"{self.what} " if self.what else ""
        self.stream.write(f"{what}{head} elapsed {clock(elapsed)}{tail} last: {t['last']}\n")
        self.stream.flush()
        t["printed_at"], t["printed"] = now, done
        self.lines += 1


class _EtaColumn(ProgressColumn):
    """The time left of a task as :class:`Eta` estimates it (``-:--`` until it can tell)."""

    def __init__(self, etas: dict):
        super().__init__()
        self.etas = etas

    def render(self, task) -> Text:
        eta = self.etas.get(task.id)
        left = eta.remaining(task.get_time(), int(task.completed), task.total) if eta is not None else None
        return Text(clock(left) if left is not None else "-:--", style="progress.remaining")


class BarProgress(Progress):
    """Rich's progress bar whose ETA column is :class:`Eta`'s (rich's own extrapolates from the
    start-up burst of items that cost nothing).

    Parameters
    ----------
    what : str
        What is being done (the bar's label).
    console : rich.console.Console
    get_time : callable, optional
        The time source, seconds (default rich's; tests pass a fake).
    """

    def __init__(self, what: str, console, get_time=None):
        self.etas = {}
        super().__init__(TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                         TextColumn("eta"), _EtaColumn(self.etas), TextColumn("{task.description}"),
                         console=console, transient=True, get_time=get_time)

    def add_task(self, description: str, *args, **kwargs):
        tid = super().add_task(description, *args, **kwargs)
        self.etas[tid] = Eta(self.get_time())
        return tid

    def update(self, task_id, *args, advance=None, **kwargs) -> None:
        super().update(task_id, *args, advance=advance, **kwargs)
        if advance:
            with self._lock:
                done = int(self._tasks[task_id].completed)
            self.etas[task_id].advance(self.get_time(), done)


def progress(what: str, console, every_s: float = DEFAULT_EVERY_S):
    """Rich's bar (with :class:`Eta`'s time left) when ``console`` is a terminal, else
    :class:`PlainProgress` writing to ``console.file`` at most every ``every_s`` seconds."""
    if not console.is_terminal:
        return PlainProgress(what, stream=console.file, every_s=every_s)
    return BarProgress(what, console)
