"""Launches: every distinct kernel the first gradient() call recorded on a
tape, checked alone against finite differences.

Jacobians by autodiff and by finite differences (:func:`jacobian_ad`,
:func:`jacobian_fd`: the quantities of ``warp.autograd.jacobian`` /
``jacobian_fd``, every run from the same contents) on copies of the launch's
arguments as they were before it ran. A kernel failing alone points inside
kernels (kernel, custom or warp families); every kernel passing while the
end-to-end check fails points at the taping pattern (an in-place update or an
input passed as its own output is such a pattern: the kernel is judged on
arrays of its own). Runs last.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..measure import compare
from . import probe
from .context import step_size


def _written_suffix(kernel, n_args: int):
    """Index where the arguments a kernel writes begin, when they are exactly
    the trailing ones (from the kernel's AST); None otherwise."""
    import ast
    import textwrap

    from ..kernel_access import kernel_access

    try:
        tree = ast.parse(textwrap.dedent(kernel.adj.source))
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    except (AttributeError, SyntaxError, StopIteration, TypeError):
        return None
    params, _, written = kernel_access(fn)
    if not written or len(params) != n_args:
        return None
    first = min(params.index(w) for w in written)
    return first if all(p in written for p in params[first:]) else None


def warp_fd_takes(arrays) -> bool:
    """Whether ``warp.autograd.jacobian_fd`` of this Warp release can difference
    these arrays.

    Up to Warp 1.9.1, ``jacobian_fd`` forms its central differences in
    ``warp.autograd.compute_fd_kernel``, whose arrays are typed ``float``
    (float32) from 1.6.x: a launch with a float64 (or float16) differentiable
    array raises ``RuntimeError: Error launching kernel 'compute_fd_kernel' ...``.
    On 1.3.x-1.5.x the kernel is generic (``dtype=Any``); from 1.10.1 it is gone
    and the differences are dtype-generic. (Before 1.3 there is no
    ``warp.autograd``, and the per-launch check does not run.)

    Parameters
    ----------
    arrays : list of warp.array
        The launch's differentiable arrays (inputs and outputs).

    Returns
    -------
    bool
        False when the release's FD kernel is typed for one scalar type and an
        array's scalar type is another; True otherwise.
    """
    import warp as wp
    import warp.autograd as wa

    fd_kernel = getattr(wa, "compute_fd_kernel", None)
    try:
        want = fd_kernel.adj.args[0].type.dtype
    except AttributeError:
        return True
    if want is Any:  # 1.3.x-1.5.x: a generic FD kernel takes every dtype
        return True
    for a in arrays:
        scalar = getattr(a.dtype, "_wp_scalar_type_", a.dtype)
        if scalar is not want and not (want is float and scalar is wp.float32):
            return False
    return True


class OverBudget(Exception):
    """The per-launch check ran past its time budget (``deadline``)."""


def _check_deadline(deadline) -> None:
    """Raise :class:`OverBudget` when ``time.monotonic()`` is past ``deadline`` (None: no bound)."""
    if deadline is not None and time.monotonic() > deadline:
        raise OverBudget


def _snapshot(arrays) -> list:
    """Numpy copies of the ``wp.array`` entries of ``arrays`` (None for the others)."""
    import warp as wp

    return [a.numpy().copy() if isinstance(a, wp.array) else None for a in arrays]


def _restore(arrays, snaps) -> None:
    """Write the contents :func:`_snapshot` took back into ``arrays``."""
    for a, v in zip(arrays, snaps):
        if v is not None:
            a.assign(v)


def jacobian_fd(kernel, *, dim, inputs, outputs, device=None, max_blocks: int = 0, eps: float = 1e-4,
                deadline: float | None = None, block_dim: int | None = None) -> dict:
    """Central-difference Jacobian of one kernel launch, any float dtype.

    The same quantity as ``warp.autograd.jacobian_fd``: for every scalar ``k``
    of every input array with ``requires_grad``, the launch is run twice,
    forward only, with the scalar moved by ``-eps`` and ``+eps``, each time
    into fresh copies of the outputs' contents at entry and with every input
    array first restored to its contents at entry, and ``(y+ - y-) / (2 eps)``
    is column ``k``. Differences are taken in float64 on the host. The inputs
    are restored afterwards.

    Every run starts from the same state, which ``warp.autograd.jacobian_fd``
    does not ensure for a kernel launch: it restores only the moved input and
    reuses the other outputs across runs, so a launch that writes an array it
    also reads (an atomic slot counter ``k = wp.atomic_add(count, 0, 1)``
    passed among the inputs, an accumulating output) drifts from run to run
    (a counter grows until its slots index past the arrays' ends). The
    outputs being fresh copies, an input that is also an output (``x`` passed
    as both) is read unmoved by the kernel's writes.

    Parameters
    ----------
    kernel : warp.Kernel
    dim, inputs, outputs, device, max_blocks, block_dim
        As for ``wp.launch``; inputs precede outputs in the kernel's arguments;
        ``block_dim`` None (default) launches at Warp's default.
    eps : float
        Absolute step, in the inputs' units. Default 1e-4 (Warp's default).
    deadline : float or None
        ``time.monotonic()`` value past which :class:`OverBudget` is raised
        (the inputs restored first). Default None: no bound.

    Returns
    -------
    dict[tuple[int, int], numpy.ndarray]
        ``(input index, output index)`` -> float64 array of shape
        ``(output scalars, input elements, *input dtype shape)``, the layout of
        ``warp.autograd.jacobian``'s arrays, for every differentiable pair.
    """
    import warp as wp

    inputs, outputs = list(inputs), list(outputs)
    base = [o.numpy().copy() if isinstance(o, wp.array) else o for o in outputs]
    diff = [j for j, o in enumerate(outputs) if isinstance(o, wp.array) and o.requires_grad]
    at_entry = _snapshot(inputs)

    def run():
        outs = [wp.array(b, dtype=o.dtype, shape=o.shape, device=o.device) if isinstance(o, wp.array) else o
                for o, b in zip(outputs, base)]
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outs, device=device, max_blocks=max_blocks, **_bd(block_dim))
        return [np.array(outs[j].numpy(), dtype=np.float64).reshape(-1) for j in diff]

    jac = {}
    try:
        for i, x in enumerate(inputs):
            if not (isinstance(x, wp.array) and x.requires_grad):
                continue
            x0 = at_entry[i]
            flat = x0.reshape(-1)
            cols = []
            for k in range(flat.size):
                _check_deadline(deadline)
                ys = []
                for step in (-eps, eps):
                    _restore(inputs, at_entry)
                    moved = flat.copy()
                    moved[k] += step
                    x.assign(moved.reshape(x0.shape))
                    ys.append(run())
                cols.append([(yp - ym) / (2.0 * eps) for ym, yp in zip(*ys)])
            for n, j in enumerate(diff):
                m = np.stack([c[n] for c in cols], axis=1) if cols else np.zeros((base[j].size, 0))
                jac[(i, j)] = m.reshape((m.shape[0], x.size) + x0.shape[x.ndim:])
    finally:
        _restore(inputs, at_entry)
    return jac


def _bd(block_dim: int | None) -> dict:
    """``{"block_dim": block_dim}`` for a launch the program made with an explicit ``block_dim``
    (a tile kernel's result depends on it), else ``{}`` (Warp's default)."""
    return {"block_dim": int(block_dim)} if block_dim else {}


def _block_dim_kw() -> dict:
    """``block_dim`` as ``warp.autograd.jacobian`` of this release records it (256 on 1.5-1.9,
    where ``Tape.record_launch`` defaults it to 0; left to the tape where the default is None
    or the tape has no such argument)."""
    import inspect

    import warp as wp
    import warp.autograd as wa

    try:
        want = inspect.signature(wa.jacobian).parameters["block_dim"].default
        has = "block_dim" in inspect.signature(wp.Tape.record_launch).parameters
    except (AttributeError, KeyError, TypeError, ValueError):
        return {}
    return {"block_dim": want} if has and isinstance(want, int) else {}


def _ad_rows(kernel, tape, j: int, rows: dict, *, inputs, outs, at_entry, base, din, dout, grads, dim, device,
             max_blocks, block_dim, deadline) -> None:
    """Append to ``rows`` the Jacobian rows of output ``j`` of :func:`jacobian_ad`, one backward pass per scalar."""
    import warp as wp

    for r in range(base[j].size):
        _check_deadline(deadline)
        _restore(inputs, at_entry)
        _restore(outs, base)
        # the forward the tape recorded, then its differentiable outputs put back: the state a
        # backward pass follows (integer arrays it wrote, e.g. slots a wp.func_replay reads back),
        # with every float value the kernel reads as it was before the launch
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outs, device=device, max_blocks=max_blocks,
                  **_bd(block_dim))
        _restore(outs, [b if n in dout else None for n, b in enumerate(base)])
        _restore(inputs, [b if n in din else None for n, b in enumerate(at_entry)])
        for g in grads:
            g.zero_()
        seed = np.zeros(base[j].size, dtype=base[j].dtype)
        seed[r] = 1
        outs[j].grad.assign(seed.reshape(base[j].shape))
        tape.backward()
        for i in din:
            rows[(i, j)].append(np.array(inputs[i].grad.numpy(), dtype=np.float64).reshape(-1))  # a copy: numpy() of a CPU array is a view


def jacobian_ad(kernel, *, dim, inputs, outputs, device=None, max_blocks: int = 0,
                deadline: float | None = None, block_dim: int | None = None) -> dict:
    """Autodiff Jacobian of one kernel launch, each row from the same state.

    The same quantity as ``warp.autograd.jacobian`` for a kernel (the launch
    recorded on a fresh ``wp.Tape``; for output scalar ``r``, its adjoint set
    to 1, every other adjoint to 0, ``Tape.backward()``, the inputs' adjoints
    read as row ``r``), with two differences that make it the kernel's own
    adjoint at the given inputs:

    * the launch writes into fresh copies of the outputs (contents and
      adjoints of their own), so an input that is also an output (an array
      passed as both) does not share its adjoint: with one shared array Warp's
      backward adds the seed ``1`` of ``y[r]`` to the row ``d y[r] / d x[r]``
      of the same array (``I + J`` instead of ``J``) and re-runs the forward on
      the values the launch wrote. That is the documented limit of in-place
      updates on a tape (Warp manual, Differentiability, "Array Overwrites":
      an array read and then written by a recorded launch gets a wrong
      adjoint), a property of the program's taping, not of the kernel;
    * before each backward pass every array is restored to its contents at
      entry and the launch is run forward once, as on a tape, so that the
      state its adjoint reads is the one a forward leaves (an integer counter
      advanced once, the slots a ``wp.func_replay`` reads back written), not
      one advanced by every earlier row; then the differentiable outputs are
      put back to their contents at entry, and so are the differentiable
      inputs (a kernel that writes an array it takes as input), so that a
      kernel that reads what it writes (``x[i] = x[i] * a[i] + b``,
      ``y[i] += ...``, ``y[i] = x[i] * x[i]; x[i] = 0.5 * x[i]``) has its
      adjoint replayed at the values it read, the point of the finite
      differences. An input the kernel overwrites after reading it is the
      taping pattern (write-after-read), which the trace reports; the kernel's
      own adjoint is what this Jacobian measures.

    Parameters
    ----------
    kernel : warp.Kernel
        Compiled with its adjoint (``enable_backward`` True).
    dim, inputs, outputs, device, max_blocks, block_dim
        As for ``wp.launch``; inputs precede outputs in the kernel's arguments;
        ``block_dim`` None (default) launches at Warp's default and records
        what ``warp.autograd.jacobian`` records. The inputs' contents are left as they were; their ``grad`` arrays are
        zeroed.
    deadline : float or None
        ``time.monotonic()`` value past which :class:`OverBudget` is raised.
        Default None: no bound.

    Returns
    -------
    dict[tuple[int, int], numpy.ndarray]
        ``(input index, output index)`` -> float64 array of shape
        ``(output scalars, input scalars)`` for every pair of an input and an
        output array with ``requires_grad``.
    """
    import warp as wp

    inputs, outputs = list(inputs), list(outputs)
    at_entry = _snapshot(inputs)
    outs = [wp.array(o.numpy(), dtype=o.dtype, shape=o.shape, device=o.device, requires_grad=o.requires_grad)
            if isinstance(o, wp.array) else o for o in outputs]
    base = _snapshot(outs)
    din = [i for i, x in enumerate(inputs) if isinstance(x, wp.array) and x.requires_grad]
    dout = [j for j, o in enumerate(outs) if isinstance(o, wp.array) and o.requires_grad]
    tape = wp.Tape()
    tape.record_launch(kernel, dim, max_blocks, inputs, outs, device, **(_bd(block_dim) or _block_dim_kw()))
    grads = [a.grad for a in inputs + outs if isinstance(a, wp.array) and a.requires_grad and a.grad is not None]
    rows = {(i, j): [] for i in din for j in dout}
    try:
        for j in dout:
            _ad_rows(kernel, tape, j, rows, inputs=inputs, outs=outs, at_entry=at_entry, base=base, din=din,
                     dout=dout, grads=grads, dim=dim, device=device, max_blocks=max_blocks, block_dim=block_dim,
                     deadline=deadline)
    finally:
        _restore(inputs, at_entry)
        for g in grads:
            g.zero_()
    return {key: np.stack(v) if v else np.zeros((0, 0)) for key, v in rows.items()}


def repeatable(kernel, *, dim, inputs, outputs, device=None, max_blocks: int = 0,
               block_dim: int | None = None) -> list:
    """The integer arrays a launch writes differently when run twice from the same state.

    The launch is run twice, forward only, each time with every array
    argument first restored to its contents at entry; the contents of every
    integer array after each run are compared. A difference means the launch
    is not a function of its arguments' contents (slots handed out by
    ``wp.atomic_add`` on a counter in thread order, which a GPU does not fix),
    so finite differences of it are not derivatives. All arrays are restored
    afterwards.

    Parameters
    ----------
    kernel, dim, inputs, outputs, device, max_blocks, block_dim
        As for ``wp.launch`` (``block_dim`` None: Warp's default).

    Returns
    -------
    list of int
        Indices into ``inputs + outputs`` of the integer arrays that differ
        (empty: repeatable).
    """
    import warp as wp

    args = list(inputs) + list(outputs)
    at_entry = _snapshot(args)
    runs = []
    try:
        for _ in range(2):
            _restore(args, at_entry)
            wp.launch(kernel, dim=dim, inputs=list(inputs), outputs=list(outputs), device=device,
                      max_blocks=max_blocks, **_bd(block_dim))
            runs.append([a.numpy().copy() if v is not None and np.issubdtype(v.dtype, np.integer) else None
                         for a, v in zip(args, at_entry)])
    finally:
        _restore(args, at_entry)
    return [n for n, (a, b) in enumerate(zip(*runs)) if a is not None and not np.array_equal(a, b)]


def _as_f64(j) -> np.ndarray:
    """A Jacobian block (warp array or numpy array) as a float64 numpy array."""
    return np.asarray(getattr(j, "numpy", lambda: j)(), dtype=np.float64)


def _noise_bounds(jfd: dict, j2: dict, y0: dict, floor_unit: float) -> dict:
    """Error bound of each block of ``jfd`` (:func:`fd_noise`): ``|J(h) - J(2h)|`` plus ``floor_unit * |y_r|``."""
    out = {}
    for key, block in jfd.items():
        if key not in j2:
            continue
        a = _as_f64(block)
        b = _as_f64(j2[key]).reshape(a.shape)
        rows = a.shape[0] if a.ndim else 1
        unc = np.abs(a - b).reshape(rows, -1)
        y = y0.get(key[1])  # the key's output index counts every output (both Jacobian functions)
        if y is not None and y.size == rows:
            unc = unc + floor_unit * y[:, None]
        out[key] = unc.reshape(a.shape)
    return out


def fd_noise(kernel, *, fd, jfd: dict, eps: float, dtype, dim, inputs, outputs, device=None, max_blocks: int = 0,
             roundoff_factor: float = 1.0, deadline: float | None = None, block_dim: int | None = None) -> dict:
    """Error bound of each entry of a central-difference Jacobian of one launch.

    A central difference ``(y(x+h) - y(x-h)) / 2h`` carries a truncation error
    ``O(h^2)`` and a round-off error ``O(u |y| / h)``, ``u`` the unit round-off
    of the kernel's dtype (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
    section 8.1; Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd
    ed., section 2.2). In float32 (``u = 6e-8``) with the step of
    :func:`~defects4warp.probes.context.step_size`, an entry small next to its
    output's magnitude (``|dy/dx| << |y| / 1e4``) is dominated by round-off,
    and a correct adjoint disagrees with it. Two estimates are added:

    * measured from the data: ``|J(h) - J(2h)|``, the change of the entry when
      the step doubles (Richardson's error estimate: the truncation error of
      ``J(h)`` is a third of it, and the round-offs at the two steps are
      independent, so it is of the order of ``J(h)``'s round-off too);
    * a floor from the dtype: ``roundoff_factor * eps_dtype * |y_r| / h`` for
      output scalar ``r`` (each of ``y(x+h)``, ``y(x-h)`` rounded to
      ``eps_dtype / 2`` relative, ``eps_dtype`` the machine epsilon of
      ``numpy.finfo``; ``|y_r|`` is the output at the unmoved inputs).

    Parameters
    ----------
    kernel : warp.Kernel
    fd : callable
        The finite-difference function that produced ``jfd``
        (``warp.autograd.jacobian_fd`` or :func:`jacobian_fd`); called again
        at step ``2 * eps``.
    jfd : dict[tuple[int, int], array]
        The Jacobian at step ``eps``: ``(input index, output index)`` -> block
        of shape ``(output scalars, input elements, *input dtype shape)``.
    eps : float
        The absolute step of ``jfd``, in the inputs' units.
    dtype : numpy dtype
        The launch's floating dtype (``numpy.float32`` or ``numpy.float64``).
    dim, inputs, outputs, device, max_blocks, block_dim
        As for ``wp.launch``; inputs precede outputs in the kernel's arguments;
        ``block_dim`` None (default): Warp's default. The user's arrays are
        left as they were (outputs are run into copies).
    roundoff_factor : float
        Multiplier of the dtype floor ``eps_dtype |y| / h``. Default 1.0: the
        two roundings of a central difference, each at most ``eps_dtype / 2``
        relative, add up to at most ``eps_dtype |y| / (2h)``; the floor is
        twice that, for a few operations' worth of rounding inside the kernel.
    deadline : float or None
        Passed to ``fd`` when it is :func:`jacobian_fd`. Default None.

    Returns
    -------
    dict[tuple[int, int], numpy.ndarray]
        For every key of ``jfd`` also differenced at ``2 * eps``: a float64
        array of the block's shape, the non-negative error bound of each entry
        (same units as the entry).
    """
    import warp as wp

    outs = [wp.array(o.numpy(), dtype=o.dtype, shape=o.shape, device=o.device) if isinstance(o, wp.array) else o
            for o in outputs]
    at_entry = _snapshot(inputs)
    try:
        wp.launch(kernel, dim=dim, inputs=list(inputs), outputs=outs, device=device, max_blocks=max_blocks,
                  **_bd(block_dim))
    finally:
        _restore(inputs, at_entry)  # a launch that writes an input (a counter) leaves it as it was
    y0 = {j: np.abs(np.asarray(o.numpy(), dtype=np.float64).reshape(-1))
          for j, o in enumerate(outs) if isinstance(o, wp.array)}
    more = {"deadline": deadline, "block_dim": block_dim} if fd is jacobian_fd else {}
    j2 = fd(kernel, dim=dim, inputs=list(inputs), outputs=list(outputs), device=device, max_blocks=max_blocks,
            eps=2.0 * eps, **more)
    floor_unit = roundoff_factor * float(np.finfo(dtype).eps) / eps
    return _noise_bounds(jfd, j2, y0, floor_unit)


#: Seconds the per-launch check may take in all (:func:`measure`'s ``max_seconds``): a fifth of the
#: worker's default timeout of 300 s (``defects4warp run --timeout``), so that the check, which runs
#: last, cannot take a measurement's other probes down with it.
MAX_SECONDS = 60.0


#: Step of the wide central difference that tells a staircase from a constant, relative to the launch's
#: float magnitude (the RMS of its differentiable arrays, at least 1): wider than the levels of a
#: quantiser with 16 or more levels over the magnitude (a 1/16 duty step, a 1e-2 rounding), small enough
#: to stay in most inputs' domain.
FLAT_STEP_REL = 0.25


def staircase_pairs(kernel, jad: dict, jfd: dict, names: list, n_inputs: int, *, step: float,
                    deadline: float | None = None, **kw) -> list:
    """The (input, output) pairs of one launch that are flat but not constant: the autodiff block and
    the central differences at the base step are both exactly zero, and central differences at the wide
    ``step`` are not (the output moves when the input moves by more than a level). Zero almost everywhere
    and not constant is a staircase (``round``/``floor``/``sign``/an ``int`` index) whose true gradient is
    zero where measured; a pair whose output never moves (it does not read the input) stays out.

    Parameters
    ----------
    kernel, kw
        As for :func:`jacobian_fd` (``dim``, ``inputs``, ``outputs``, ``device``, ...).
    jad, jfd : dict
        ``(input index, output index)`` -> Jacobian block, autodiff and central differences at the base step.
    names : list of str
        The kernel's argument names (inputs first).
    n_inputs : int
        How many of the arguments are inputs.
    step : float
        The wide step, absolute (:data:`FLAT_STEP_REL` times the launch's magnitude).
    deadline : float or None
        As for :func:`jacobian_fd`; over it, the pairs found so far (none: the wide differences are one run).

    Returns
    -------
    list of dict
        ``{"input", "output", "wide_max"}`` (``wide_max``: the largest wide difference quotient's magnitude).
    """
    zero = [k for k, a in jad.items() if k in jfd and a.size and not np.any(a) and not np.any(jfd[k])]
    if not zero:
        return []
    try:
        wide = jacobian_fd(kernel, eps=step, deadline=deadline, **kw)
    except OverBudget:
        return []
    out = []
    for k in zero:
        w = np.abs(np.asarray(wide.get(k, 0.0), dtype=np.float64))
        if np.any(w > 0) and np.all(np.isfinite(w)):
            out.append({"input": names[k[0]] if k[0] < len(names) else k[0],
                        "output": names[n_inputs + k[1]] if n_inputs + k[1] < len(names) else k[1],
                        "wide_max": float(np.max(w))})
    return out


def _screen(kernel, inputs, outputs, max_scalars: int):
    """Why a launch is not checked, from its kernel and arguments (None: checked); its args, inputs, outputs."""
    import warp as wp

    opts = dict(getattr(kernel.module, "options", {}) or {})
    opts.update(getattr(kernel, "options", {}) or {})
    if not opts.get("enable_backward", True):
        return "compiled with enable_backward=False (no adjoint)", None, inputs, outputs
    args = list(inputs) + list(outputs)
    if not outputs:
        split = _written_suffix(kernel, len(args))
        if split is None:
            return "outputs passed as inputs and not the trailing arguments", args, inputs, outputs
        inputs, outputs = args[:split], args[split:]
    if any(hasattr(a, "cls") and not isinstance(a, wp.array) for a in args):
        return "struct arguments are not supported by the per-launch check", args, inputs, outputs
    if any(isinstance(a, wp.array) and hasattr(a.dtype, "cls") for a in args):
        return "arrays of structs are not supported by the per-launch check", args, inputs, outputs
    floats = [a for a in args if isinstance(a, wp.array) and a.requires_grad]
    if not floats:
        return "no argument with requires_grad", args, inputs, outputs
    size = sum(a.size * max(1, getattr(a.dtype, "_length_", 1)) for a in floats)
    if size > max_scalars:
        return f"{size} differentiable scalars, over the probe's limit of {max_scalars}", args, inputs, outputs
    return None, args, inputs, outputs


def _prior_contents(args: list, before):
    """Why a launch without a snapshot of its prior contents is not checked (None: checked); ``before``."""
    import warp as wp

    if before is None or len(before) != len(args):
        before = [None] * len(args)
    if all(b is None for b in before):
        # without the contents from before the recorded launch, runs start from what the launch left:
        # a counter it advanced hands out slots past its arrays, and an array passed twice holds the
        # launch's output as its input; such a launch is not judged (uncounted), never judged wrongly
        ints = [n for n, a in enumerate(args) if isinstance(a, wp.array) and "int" in str(a.numpy().dtype)]
        ptrs0 = [a.ptr for a in args if isinstance(a, wp.array) and a.ptr]
        if ints or len(ptrs0) != len(set(ptrs0)):
            return ("no snapshot of the launch's prior contents (launched other than through "
                    "wp.launch, or over the snapshot limit) and it "
                    + ("writes integer arrays" if ints else "passes one array twice")), before
    return None, before


def _fresh_args(args: list, before: list, names: list):
    """Fresh copies of a launch's arguments at their prior contents, the sorted names of the aliased ones,
    the launch's float dtype and its magnitude (RMS of its differentiable arrays, at least 1)."""
    import warp as wp

    fresh = [wp.array(b if b is not None else a.numpy().copy(), dtype=a.dtype, shape=a.shape, device=a.device,
                      requires_grad=a.requires_grad) if isinstance(a, wp.array) else a
             for a, b in zip(args, before)]
    ptrs = [a.ptr if isinstance(a, wp.array) else None for a in args]
    aliased = sorted({names[n] for n, p in enumerate(ptrs) if p and ptrs.count(p) > 1 and n < len(names)})
    floats = [a for a in fresh if isinstance(a, wp.array) and a.requires_grad]
    dt = np.float64 if all("float64" in str(a.numpy().dtype) for a in floats) else np.float32
    mag = max(1.0, max(float(np.sqrt(np.mean(np.asarray(a.numpy(), dtype=np.float64) ** 2))) for a in floats))
    return fresh, aliased, dt, mag


def _launch_jacobians(kernel, names: list, *, step: float, deadline, over: str, kw: dict):
    """Why a launch's Jacobians were not taken (None: taken), with its autodiff and central-difference Jacobians."""
    try:
        drift = repeatable(kernel, **kw)
        if drift:
            return ("integer array(s) " + ", ".join(str(names[n]) if n < len(names) else str(n) for n in drift)
                    + " differ between two runs from the same contents (not a function of its inputs)"), None, None
        jad = jacobian_ad(kernel, deadline=deadline, **kw)
        jfd = jacobian_fd(kernel, eps=step, deadline=deadline, **kw)
    except OverBudget:
        return over, None, None
    except Exception as exc:  # noqa: BLE001 - some launches cannot be replayed alone
        return f"Jacobian failed: {type(exc).__name__}: {str(exc)[:160]}", None, None
    return None, jad, jfd


def _worst_pair(kernel, jad: dict, jfd: dict, names: list, n_inputs: int, *, dt, step: float, deadline,
                kw: dict):
    """The (input, output) pair that disagrees most with finite differences beyond their error bound (None: none)."""
    worst = None
    noise = None
    for jkey, a_np in jad.items():
        if jkey not in jfd:
            continue
        f_np = _as_f64(jfd[jkey]).reshape(a_np.shape)
        sig = compare.signature(a_np, f_np, compare.RTOL[dt.__name__])
        if sig["signature"] != "agrees":
            # judge again with the differences' own error (round-off and truncation) added to the
            # tolerance: a float32 Jacobian entry far below the outputs' magnitude is FD noise
            if noise is None:
                try:
                    noise = fd_noise(kernel, fd=jacobian_fd, jfd=jfd, eps=step, dtype=dt, deadline=deadline, **kw)
                except OverBudget:
                    noise = {}
                except Exception as exc:  # noqa: BLE001 - as for the first differences
                    noise = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
            if jkey in noise:
                sig = compare.signature(a_np, f_np, compare.RTOL[dt.__name__], unc=noise[jkey].reshape(-1))
        if sig["signature"] not in ("agrees", "unresolved") and (worst is None or sig["relative_error"] > worst["relative_error"]):
            worst = {"input": names[jkey[0]] if jkey[0] < len(names) else jkey[0],
                     "output": names[n_inputs + jkey[1]] if n_inputs + jkey[1] < len(names) else jkey[1],
                     "signature": sig["signature"], "relative_error": sig["relative_error"]}
    return worst


def _check_kernel(rec: dict, kernel, dim, max_blocks, inputs, outputs, device, before, block_dim, *,
                  max_scalars: int, deadline: float, over: str, flat_step_rel: float) -> None:
    """Check one launch alone (:func:`measure`), filling its record ``rec`` (``skipped``, or ``ok`` and ``worst``)."""
    rec["worst"] = None
    skip, args, inputs, outputs = _screen(kernel, inputs, outputs, max_scalars)
    if skip is not None:
        rec["skipped"] = skip
        return
    if time.monotonic() > deadline:
        rec["skipped"] = over
        return
    names = [a.label for a in kernel.adj.args]
    skip, before = _prior_contents(args, before)
    if skip is not None:
        rec["skipped"] = skip
        return
    fresh, aliased, dt, mag = _fresh_args(args, before, names)
    rec["aliased"] = aliased
    f_in, f_out = fresh[: len(inputs)], fresh[len(inputs):]
    step = step_size(dt) * mag
    kw = {"dim": dim, "inputs": f_in, "outputs": f_out, "device": device, "max_blocks": max_blocks,
          "block_dim": block_dim}
    skip, jad, jfd = _launch_jacobians(kernel, names, step=step, deadline=deadline, over=over, kw=kw)
    if skip is not None:
        rec["skipped"] = skip
        return
    worst = _worst_pair(kernel, jad, jfd, names, len(inputs), dt=dt, step=step, deadline=deadline, kw=kw)
    if not any(jkey in jfd for jkey in jad):
        rec["skipped"] = "no differentiable input and output pair to compare"
        return
    rec["ok"] = worst is None
    rec["worst"] = worst
    flat = staircase_pairs(kernel, jad, jfd, names, len(inputs), step=flat_step_rel * mag, deadline=deadline, **kw)
    if flat:
        rec["staircase"] = flat


@probe("launches", max_kernels=8, max_scalars=1024, max_seconds=MAX_SECONDS, flat_step_rel=FLAT_STEP_REL)
def measure(ctx, *, max_kernels: int = 8, max_scalars: int = 1024, max_seconds: float = MAX_SECONDS,
            flat_step_rel: float = FLAT_STEP_REL) -> dict | None:
    """Per-launch Jacobian check of the kernels recorded in call 1.

    The first recorded launch of each kernel is re-run alone on arrays of its
    own: one fresh array per argument (an array passed both as input and as
    output gets two), holding the contents the arguments had just before the
    launch ran (``before`` of :func:`~defects4warp.probes.determinism.capture_launches`;
    their contents now when that was not taken). Its autodiff Jacobian
    (:func:`jacobian_ad`) and central differences (:func:`jacobian_fd`) are
    each taken with every array restored to those contents before every run,
    so a kernel that updates an array in place, a launch whose input is its
    output, and a launch that hands out slots from an atomic counter are each
    judged as the function their kernel computes, and the user's arrays are
    never written. A launch whose integer arrays come out differently from
    two runs from the same contents (:func:`repeatable`) is not checked.

    A block of the autodiff Jacobian is compared with the central differences
    at :data:`~defects4warp.measure.compare.RTOL` of the launch's dtype; one
    that disagrees is judged again with each difference's error bound
    (:func:`fd_noise`: the change at twice the step plus the dtype's round-off
    floor) added to the tolerance, so float32 round-off in an entry small next
    to its output is no finding. A block with no entry above its bound
    (``unresolved``) counts as agreeing.

    Parameters
    ----------
    max_kernels : int
        Distinct kernels checked at most.
    max_scalars : int
        Differentiable scalars (inputs and outputs) of one launch above which
        it is skipped (a dense Jacobian costs that many launches).
    max_seconds : float
        Wall seconds of the whole check; a kernel still being checked then,
        and every later one, is reported not checked. Default
        :data:`MAX_SECONDS`.
    flat_step_rel : float
        Wide step of :func:`staircase_pairs`, relative to the launch's magnitude; a kernel with a pair
        that is flat but not constant gets ``staircase``. Default :data:`FLAT_STEP_REL`.
    """
    if not ctx.launches:
        return None
    import warp as wp

    ctx.stage("launches")
    wp.config.verify_autograd_array_access = False
    deadline = time.monotonic() + max_seconds
    over = f"over the probe's time budget of {max_seconds:g} s"
    seen = {}
    for launch in ctx.launches:
        kernel, dim, max_blocks, inputs, outputs, device = launch[:6]
        before = launch[6] if len(launch) > 6 else None
        block_dim = launch[7] if len(launch) > 7 else None
        if not isinstance(kernel, wp.Kernel):
            continue
        key = kernel.key
        if key in seen:
            seen[key]["launches"] += 1
            continue
        rec = {"kernel": key, "launches": 1, "ok": None, "skipped": None}
        seen[key] = rec
        ctx.doc["running"] = f"launches:{key}"
        ctx.save()
        if len(seen) > max_kernels:
            rec["skipped"] = "over the kernel limit of this probe"
            continue
        _check_kernel(rec, kernel, dim, max_blocks, inputs, outputs, device, before, block_dim,
                      max_scalars=max_scalars, deadline=deadline, over=over, flat_step_rel=flat_step_rel)
    out = {"kernels": list(seen.values()), "recorded": len(ctx.launches)}
    ctx.doc["launches"] = out
    ctx.stage(None)
    ctx.save()
    return out
