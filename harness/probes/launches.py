"""Launches: every distinct kernel the first gradient() call recorded on a
tape, checked alone against finite differences.

Jacobians by autodiff and by finite differences
(``warp.autograd.jacobian`` / ``jacobian_fd``) at the arrays' current
contents. A kernel failing alone points inside kernels (kernel, custom or
warp families); every kernel passing while the end-to-end check fails points
at the taping pattern. Runs last: it launches kernels on the user's arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measure import compare
from . import Assessment, Evidence, assessor, probe
from .context import step_size


def _written_suffix(kernel, n_args: int):
    """Index where the arguments a kernel writes begin, when they are exactly
    the trailing ones (from the kernel's AST); None otherwise."""
    import ast
    import textwrap

    from ..measure.access import kernel_access

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


def jacobian_fd(kernel, *, dim, inputs, outputs, device=None, max_blocks: int = 0, eps: float = 1e-4) -> dict:
    """Central-difference Jacobian of one kernel launch, any float dtype.

    The same quantity as ``warp.autograd.jacobian_fd`` (used where that one
    cannot take the dtype, :func:`warp_fd_takes`): for every scalar ``k`` of
    every input array with ``requires_grad``, the launch is run twice, forward
    only, with the scalar moved by ``-eps`` and ``+eps``, each time into fresh
    copies of the outputs' current contents, and ``(y+ - y-) / (2 eps)`` is
    column ``k``. Differences are taken in float64 on the host. The input is
    restored afterwards.

    Parameters
    ----------
    kernel : warp.Kernel
    dim, inputs, outputs, device, max_blocks
        As for ``wp.launch``; inputs precede outputs in the kernel's arguments.
    eps : float
        Absolute step, in the inputs' units. Default 1e-4 (Warp's default).

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

    def run():
        outs = [wp.array(b, dtype=o.dtype, shape=o.shape, device=o.device) if isinstance(o, wp.array) else o
                for o, b in zip(outputs, base)]
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outs, device=device, max_blocks=max_blocks)
        return [np.asarray(outs[j].numpy(), dtype=np.float64).reshape(-1) for j in diff]

    jac = {}
    for i, x in enumerate(inputs):
        if not (isinstance(x, wp.array) and x.requires_grad):
            continue
        x0 = x.numpy().copy()
        flat = x0.reshape(-1)
        cols = []
        try:
            for k in range(flat.size):
                ys = []
                for step in (-eps, eps):
                    moved = flat.copy()
                    moved[k] += step
                    x.assign(moved.reshape(x0.shape))
                    ys.append(run())
                cols.append([(yp - ym) / (2.0 * eps) for ym, yp in zip(*ys)])
        finally:
            x.assign(x0)
        for n, j in enumerate(diff):
            m = np.stack([c[n] for c in cols], axis=1) if cols else np.zeros((base[j].size, 0))
            jac[(i, j)] = m.reshape((m.shape[0], x.size) + x0.shape[x.ndim:])
    return jac


def _as_f64(j) -> np.ndarray:
    """A Jacobian block (warp array or numpy array) as a float64 numpy array."""
    return np.asarray(getattr(j, "numpy", lambda: j)(), dtype=np.float64)


def fd_noise(kernel, *, fd, jfd: dict, eps: float, dtype, dim, inputs, outputs, device=None, max_blocks: int = 0,
             roundoff_factor: float = 1.0) -> dict:
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
    dim, inputs, outputs, device, max_blocks
        As for ``wp.launch``; inputs precede outputs in the kernel's arguments.
        The user's arrays are left as they were (outputs are run into copies).
    roundoff_factor : float
        Multiplier of the dtype floor ``eps_dtype |y| / h``. Default 1.0: the
        two roundings of a central difference, each at most ``eps_dtype / 2``
        relative, add up to at most ``eps_dtype |y| / (2h)``; the floor is
        twice that, for a few operations' worth of rounding inside the kernel.

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
    wp.launch(kernel, dim=dim, inputs=list(inputs), outputs=outs, device=device, max_blocks=max_blocks)
    y0 = {j: np.abs(np.asarray(o.numpy(), dtype=np.float64).reshape(-1))
          for j, o in enumerate(outs) if isinstance(o, wp.array)}
    j2 = fd(kernel, dim=dim, inputs=list(inputs), outputs=list(outputs), device=device, max_blocks=max_blocks,
            eps=2.0 * eps)
    floor_unit = roundoff_factor * float(np.finfo(dtype).eps) / eps
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


@probe("launches", max_kernels=8, max_scalars=1024)
def measure(ctx, *, max_kernels: int = 8, max_scalars: int = 1024) -> dict | None:
    """Per-launch Jacobian check of the kernels recorded in call 1.

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
    """
    if not ctx.launches:
        return None
    import warp as wp

    ctx.stage("launches")
    wp.config.verify_autograd_array_access = False
    seen = {}
    for launch in ctx.launches:
        kernel, dim, max_blocks, inputs, outputs, device = launch[:6]
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
        rec["worst"] = None
        opts = dict(getattr(kernel.module, "options", {}) or {})
        opts.update(getattr(kernel, "options", {}) or {})
        if not opts.get("enable_backward", True):
            rec["skipped"] = "compiled with enable_backward=False (no adjoint)"
            continue
        args = list(inputs) + list(outputs)
        if not outputs:
            split = _written_suffix(kernel, len(args))
            if split is None:
                rec["skipped"] = "outputs passed as inputs and not the trailing arguments"
                continue
            inputs, outputs = args[:split], args[split:]
        if any(hasattr(a, "cls") and not isinstance(a, wp.array) for a in args):
            rec["skipped"] = "struct arguments are not supported by the per-launch check"
            continue
        floats = [a for a in args if isinstance(a, wp.array) and a.requires_grad]
        if not floats:
            rec["skipped"] = "no argument with requires_grad"
            continue
        size = sum(a.size * max(1, getattr(a.dtype, "_length_", 1)) for a in floats)
        if size > max_scalars:
            rec["skipped"] = f"{size} differentiable scalars, over the probe's limit of {max_scalars}"
            continue
        dt = np.float64 if all("float64" in str(a.numpy().dtype) for a in floats) else np.float32
        mag = max(1.0, max(float(np.sqrt(np.mean(np.asarray(a.numpy(), dtype=np.float64) ** 2))) for a in floats))
        try:
            import warp.autograd as wa

            kw = {"dim": dim, "inputs": list(inputs), "outputs": list(outputs), "device": device, "max_blocks": max_blocks}
            jad = wa.jacobian(kernel, **kw)
            fd = wa.jacobian_fd if warp_fd_takes(floats) else jacobian_fd
            jfd = fd(kernel, eps=step_size(dt) * mag, **kw)
        except Exception as exc:  # noqa: BLE001 - some launches cannot be replayed alone
            rec["skipped"] = f"Jacobian failed: {type(exc).__name__}: {str(exc)[:160]}"
            continue
        names = [a.label for a in kernel.adj.args]
        worst = None
        step = step_size(dt) * mag
        noise = None
        for jkey, j_ad in jad.items():
            if jkey not in jfd:
                continue
            a_np = j_ad.numpy().astype(np.float64)
            f_np = _as_f64(jfd[jkey])
            sig = compare.signature(a_np, f_np, compare.RTOL[dt.__name__])
            if sig["signature"] != "agrees":
                # judge again with the differences' own error (round-off and truncation) added to the
                # tolerance: a float32 Jacobian entry far below the outputs' magnitude is FD noise
                if noise is None:
                    try:
                        noise = fd_noise(kernel, fd=fd, jfd=jfd, eps=step, dtype=dt, **kw)
                    except Exception as exc:  # noqa: BLE001 - as for the first differences
                        noise = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
                if jkey in noise:
                    sig = compare.signature(a_np, f_np, compare.RTOL[dt.__name__], unc=noise[jkey].reshape(-1))
            if sig["signature"] not in ("agrees", "unresolved") and (worst is None or sig["relative_error"] > worst["relative_error"]):
                worst = {"input": names[jkey[0]] if jkey[0] < len(names) else jkey[0],
                         "output": names[len(inputs) + jkey[1]] if len(inputs) + jkey[1] < len(names) else jkey[1],
                         "signature": sig["signature"], "relative_error": sig["relative_error"]}
        rec["ok"] = worst is None
        rec["worst"] = worst
    out = {"kernels": list(seen.values()), "recorded": len(ctx.launches)}
    ctx.doc["launches"] = out
    ctx.stage(None)
    ctx.save()
    return out


@assessor("launches")
def assess(doc: dict, **_) -> Assessment:
    """Evidence entries of the per-launch check: kernels that disagree with
    finite differences in isolation, those that agree, and those not checked
    (not clean and ``data["counted"]`` False: reported, not counted; a kernel
    compiled without adjoint is counted).
    Facts: ``kernels`` (every entry), ``failing``, ``passing``, ``no_adjoint``
    (compiled with ``enable_backward=False``)."""
    a = Assessment()
    kernels = (doc.get("launches") or {}).get("kernels", [])
    failing = [k for k in kernels if k.get("ok") is False]
    passing = [k for k in kernels if k.get("ok") is True]
    no_adjoint = [k for k in kernels if (k.get("skipped") or "").startswith("compiled with enable_backward=False")]
    for k in failing:
        w = k.get("worst") or {}
        a.add("launches", False, f"kernel {k['kernel']} disagrees with finite differences in isolation: "
              f"d {w.get('output')} / d {w.get('input')} relative error {w.get('relative_error', float('nan')):.3g} "
              f"({w.get('signature')})", k)
    if passing:
        a.add("launches", True, f"{len(passing)} kernel(s) agree with finite differences in isolation: "
              + ", ".join(k["kernel"] for k in passing), None)
    for k in kernels:
        if k.get("skipped") and k in no_adjoint:
            a.add("launches", False, f"kernel {k['kernel']} not checked: {k['skipped']}", None)
        elif k.get("skipped"):
            # a check that did not run is no clean result: reported, not counted (bug_evidence leaves
            # launch_all_kernels_pass out while a kernel is unchecked)
            a.add("launches", False, f"kernel {k['kernel']} not checked: {k['skipped']}",
                  {"counted": False, "kernel": k["kernel"], "skipped": k["skipped"]})
    a.facts.update(kernels=kernels, failing=failing, passing=passing, no_adjoint=no_adjoint)
    return a


def bug_evidence(facts: dict) -> list:
    """The per-launch check's evidence behind the class of a bug, from :func:`assess`'s facts:
    ``launch_kernel_fails_alone`` (a kernel disagrees with finite differences alone), else
    ``launch_all_kernels_pass`` (every kernel checked, all agree); and
    ``kernel_compiled_without_adjoint``."""
    kernels, failing, passing, no_adjoint = (facts[k] for k in ("kernels", "failing", "passing", "no_adjoint"))
    cited = []
    unchecked = [k for k in kernels if k.get("ok") is None and k not in no_adjoint]
    if failing:
        cited.append(Evidence("launch_kernel_fails_alone", "launches", data=[k["kernel"] for k in failing]))
    elif passing and not unchecked:
        cited.append(Evidence("launch_all_kernels_pass", "launches", data=[k["kernel"] for k in passing]))
    if no_adjoint:
        cited.append(Evidence("kernel_compiled_without_adjoint", "launches", data=[k["kernel"] for k in no_adjoint]))
    return cited
