"""Determinism: ``objective()`` twice, ``gradient()`` several times at the same point.

Measures whether the forward is stochastic (and pins the seed through
``set_seed`` when it is), and whether repeated ``gradient()`` calls at the
same point grow (exact multiples 1, 2, 3 or 1, 3, 6: accumulation) or differ
(state carried between iterations). The first call is made with the
launches any tape records captured (for the per-launch check); when the
``trace`` probe is on the list, calls 1 and 2 run under the runtime trace
(:mod:`defects4warp.probes.trace`: call 2 shows what one iteration leaves to the next).
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import time

import numpy as np

from ..measure import compare
from ..measure.patches import Patches
from . import probe
from .context import finite_or_str

#: Relative difference between two objective() calls below which the forward
#: counts as deterministic on the CPU (Warp runs a CPU launch's threads in order,
#: so a repeatable forward repeats to the last bit there).
JITTER_RTOL = 1e-6
#: The same on a CUDA device, where float atomics accumulate in a different order
#: on every launch: the sum of n float32 terms then moves by about
#: ``eps32 * sqrt(n) * sum|t_i| / |sum t_i|`` (eps32 = 1.19e-7; a random walk of
#: rounding errors, Higham, *Accuracy and Stability of Numerical Algorithms*,
#: 2nd ed., section 4.2), 1e-4 for n ~ 7e5 terms without cancellation. Measured
#: on an H200 (Warp 1.19.0, 2026-12-04): 2.6e-6 for a correct program depositing
#: 50,001 atomic terms, 0.22 for a forward that resamples its noise.
JITTER_RTOL_CUDA = 1e-4


#: Bytes of array contents copied before one launch at most (:func:`capture_launches`); a launch
#: with more is recorded without its prior contents (the per-launch check then starts from the
#: arrays' contents when it runs).
SNAPSHOT_BYTES = 64 * 2**20
#: Bytes all snapshots of one capture keep at most (a program with hundreds of kernels over large
#: fields would otherwise hold up to SNAPSHOT_BYTES per kernel); later launches get none.
TOTAL_SNAPSHOT_BYTES = 256 * 2**20


def _runtime_tape(wp):
    """The tape recording now (``warp.context.runtime.tape``), True when that cannot be read."""
    import sys

    mod = sys.modules.get("warp._src.context") or sys.modules.get("warp.context") or getattr(wp, "context", None)
    rt = getattr(mod, "runtime", None)
    return getattr(rt, "tape", True) if rt is not None else True


def _int_or_none(v):
    """``int(v)`` for an integer (Python or NumPy: ``np.int32(64)``), else None."""
    return int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None


def _snapshotter(wp, recorded: set, kept: list, snapshot_bytes: int, total_bytes: int):
    """:func:`capture_launches`'s copy of a launch's array contents before it runs (None: no snapshot)."""

    def snapshot(kernel, args, kwargs):
        if not isinstance(kernel, wp.Kernel) or getattr(kernel, "key", None) in recorded or kwargs.get("adjoint") \
                or not kwargs.get("record_tape", True) or not _runtime_tape(wp):
            return None
        ins = kwargs.get("inputs", args[1] if len(args) > 1 else ())
        outs = kwargs.get("outputs", args[2] if len(args) > 2 else ())
        if not isinstance(ins or (), (list, tuple)) or not isinstance(outs or (), (list, tuple)):
            return None  # a generator would be consumed here and seen empty by Warp
        arrays = list(ins or ()) + list(outs or ())
        try:
            size = sum(a.capacity or 0 for a in arrays if isinstance(a, wp.array))
            if size > snapshot_bytes or kept[0] + size > total_bytes:
                return None
            kept[0] += size
            return [a.numpy().copy() if isinstance(a, wp.array) else None for a in arrays]
        except Exception:  # noqa: BLE001 - e.g. a CUDA graph being captured: no snapshot, the launch runs as it would
            return None

    return snapshot


def _tiled_launcher(original_tiled, pending: list, snapshot):
    """:func:`capture_launches`'s wrapper of ``wp.launch_tiled``, pushing its snapshot on ``pending``."""
    def launch_tiled(*args, **kwargs):
        # wp.launch_tiled (Warp >= 1.5) forwards to the module's own launch, past the wp.launch wrapper
        kernel = args[0] if args else kwargs.get("kernel")
        block_dim = kwargs.get("block_dim")
        pending.append((snapshot(kernel, args[1:], kwargs), _int_or_none(block_dim)))
        try:
            return original_tiled(*args, **kwargs)
        finally:
            pending.pop()

    if original_tiled is not None:
        launch_tiled = functools.wraps(original_tiled)(launch_tiled)

    return launch_tiled


def _recorder(original, recorded: set, pending: list, captured: list):
    """:func:`capture_launches`'s wrapper of ``Tape.record_launch``, appending each launch to ``captured``."""

    def record(self, kernel, dim, max_blocks, inputs, outputs, device, *args, **kwargs):
        before = None
        key = getattr(kernel, "key", None)
        block_dim = pending[-1][1] if pending else None
        if key not in recorded:
            recorded.add(key)
            before = pending[-1][0] if pending else None
            if before is not None and len(before) != len(list(inputs) + list(outputs)):
                before = None
        captured.append([kernel, dim, max_blocks, inputs, outputs, device, before, block_dim])
        return original(self, kernel, dim, max_blocks, inputs, outputs, device, *args, **kwargs)

    return record


@contextlib.contextmanager
def capture_launches(snapshot_bytes: int = SNAPSHOT_BYTES, total_bytes: int = TOTAL_SNAPSHOT_BYTES):
    """Collect the launches any ``wp.Tape`` records inside the block (the
    user's tape is created inside gradient(), so the class method is wrapped).

    Each entry is ``[kernel, dim, max_blocks, inputs, outputs, device, before,
    block_dim]``: the arguments of ``Tape.record_launch``, the ``block_dim``
    the program passed to ``wp.launch`` (None when it passed none, or launched
    other than through ``wp.launch``) and, for the first recorded launch
    of each kernel, ``before``, a list (one entry per argument of
    ``inputs + outputs``) of numpy copies of every ``wp.array``'s contents
    taken just before that launch ran (None for other arguments), or None
    (later launches of the kernel, a launch not made through ``wp.launch``,
    or more than ``snapshot_bytes`` of contents). Warp records a launch on the
    tape after it has run (``warp.context.launch``), so the contents of the
    arrays a launch writes (outputs, in-place updates, atomic counters) can
    only be read before it, by wrapping ``wp.launch``.

    Parameters
    ----------
    snapshot_bytes : int
        Bytes of array contents copied before one launch at most. Default
        :data:`SNAPSHOT_BYTES` (64 MiB).
    total_bytes : int
        Bytes all snapshots of the block keep at most; a launch whose copy
        would pass it gets no snapshot (None). Default
        :data:`TOTAL_SNAPSHOT_BYTES` (256 MiB).
    """
    import warp as wp

    captured = []
    original = wp.Tape.record_launch
    original_launch = wp.launch
    recorded = set()  # kernels whose first recorded launch was captured
    # contents before each wp.launch call in progress, innermost last: Warp records the launch from
    # inside that call, with the kernel's overload for a generic kernel (another object), so the
    # record takes the innermost entry rather than matching the kernel object
    pending = []
    kept = [0]  # bytes held by the snapshots taken so far

    snapshot = _snapshotter(wp, recorded, kept, snapshot_bytes, total_bytes)

    @functools.wraps(original_launch)  # inspect.signature(wp.launch) must stay Warp's (the runtime trace binds by it)
    def launch(kernel, *args, **kwargs):
        block_dim = kwargs.get("block_dim")
        pending.append((snapshot(kernel, args, kwargs), _int_or_none(block_dim)))
        try:
            return original_launch(kernel, *args, **kwargs)
        finally:
            pending.pop()

    original_tiled = getattr(wp, "launch_tiled", None)
    launch_tiled = _tiled_launcher(original_tiled, pending, snapshot)
    record = _recorder(original, recorded, pending, captured)

    patches = Patches()
    patches.patch(wp.Tape, "record_launch", record)
    patches.patch(wp, "launch", launch)
    if original_tiled is not None:
        patches.patch(wp, "launch_tiled", launch_tiled)
    try:
        yield captured
    finally:
        patches.restore()


@probe("determinism", calls=3, jitter_rtol=JITTER_RTOL, jitter_rtol_cuda=JITTER_RTOL_CUDA)
def measure(ctx, *, calls: int = 3, jitter_rtol: float = JITTER_RTOL,
            jitter_rtol_cuda: float = JITTER_RTOL_CUDA) -> dict:
    """objective() twice (seed pinned if stochastic) and ``calls`` gradient() calls at the same point.

    Parameters
    ----------
    calls : int
        gradient() calls at the given point (default 3: enough to tell
        1, 2, 3 from 1, 3, 6).
    jitter_rtol : float
        Relative change between two objective() calls above which the
        forward is stochastic on the CPU (default :data:`JITTER_RTOL`).
    jitter_rtol_cuda : float
        The same on a CUDA device, whose float atomics reorder sums from one
        launch to the next (default :data:`JITTER_RTOL_CUDA`).
    """
    ctx.stage("objective")
    f1 = ctx.objective()
    f2 = ctx.objective()
    rel = abs(f1 - f2) / max(abs(f1), abs(f2), 1e-300) if np.isfinite(f1) and np.isfinite(f2) else 0.0
    on_cuda = str(ctx.doc.get("device") or "cpu").startswith("cuda")
    stochastic = bool(rel > (jitter_rtol_cuda if on_cuda else jitter_rtol))
    has_seed = bool(ctx.doc["protocol"]["optional"].get("set_seed"))
    pinned_ok = None
    if stochastic and has_seed:
        ctx.pinned = True
        g1 = ctx.objective()
        g2 = ctx.objective()
        pinned_ok = bool(g1 == g2)
        if not pinned_ok:
            ctx.pinned = False
        else:
            f1 = g1
    ctx.f0 = f1
    det = {
        "objective": [finite_or_str(f1), finite_or_str(f2)],
        "objective_relative_change": rel,
        "stochastic": stochastic,
        "seed_pinned": ctx.pinned,
        "pinned_repeatable": pinned_ok,
    }
    ctx.doc["determinism"] = det
    ctx.save()
    out = []
    for k in range(calls):
        ctx.stage(f"gradient_{k + 1}")
        t = time.perf_counter()
        if k == 0:
            with capture_launches() as captured:
                if getattr(ctx, "want_trace", False):
                    from .trace import traced_call

                    out.append(traced_call(ctx, 1))
                else:
                    out.append(ctx.gradient())
            ctx.launches = captured
        elif k == 1 and getattr(ctx, "want_trace", False):
            from .trace import traced_call

            out.append(traced_call(ctx, 2))
        else:
            out.append(ctx.gradient())
        det.setdefault("gradient_call_s", []).append(time.perf_counter() - t)
    ctx.stage(None)
    ctx.calls = out
    det["gradient_norms"] = [finite_or_str(np.linalg.norm(c)) for c in out]
    det["growth_factors"] = compare.growth_factors(out)
    det["growth"] = det["growth_factors"] is not None
    det["calls_identical"] = all(compare.calls_identical(out[0], c) for c in out[1:])
    det["first_call_differs"] = bool(len(out) > 1 and not compare.calls_identical(out[0], out[1]))
    det["later_calls_zero"] = bool(len(out) > 1 and np.any(out[0]) and all(not np.any(c) for c in out[1:]))
    ctx.save()
    return det
