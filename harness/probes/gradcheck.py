"""Gradcheck: what a Warp user runs by hand, ``wp.autograd.gradcheck_tape``.

During one ``gradient()`` call, ``wp.Tape.backward`` is wrapped: when the
program calls ``tape.backward(...)``, the tape it recorded is handed to
``warp.autograd.gradcheck_tape`` first (at that moment the arrays hold the
values the forward pass left in them, which is where a user calling it by
hand after recording would check them), then the program's own backward
runs. Only the :mod:`defects4warp.engines.gradcheck` peer engine lists this probe.

What ``gradcheck_tape`` does (read in the installed sources,
``warp/_src/autograd.py``, of warp-lang 1.19.0 and 1.12.1): for every
kernel launch recorded on the tape (not ``record_func`` entries), it calls
``gradcheck(kernel, dim, inputs, outputs, ...)``, which computes the
kernel's dense Jacobian by autodiff (``jacobian``) and by central finite
differences with step ``eps`` (``jacobian_fd``) at the arrays' *current*
contents, and fails when a Jacobian has a NaN or ``|J_ad - J_fd| > atol +
rtol |J_fd|`` anywhere. Kernels compiled without backward are skipped: on
1.19.0 the kernel's or its module's ``enable_backward=False``
(``_is_kernel_backward_enabled``), on 1.12.1 only the kernel's own option.
1.19.0 also restores Python-function inputs between evaluations
(``restore_inputs``, irrelevant for kernel launches) and defaults
``block_dim`` to 1 on CPU. Neither version looks at how launches are
chained, so taping defects (an overwrite, a missing ``tape.zero()``, a
launch outside the tape) pass it by construction; the overwrite tracker
(``wp.config.verify_autograd_array_access``, the ``tracker`` probe) is the
tool Warp offers for the first of those.
"""

from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

from ..measure.patches import Patches
from . import probe

#: Warp's own defaults of gradcheck_tape on 1.12.1 and 1.19.0 (warp/_src/autograd.py).
EPS, ATOL, RTOL = 1e-4, 1e-3, 1e-2


def _with_outputs(launches, wp) -> tuple:
    """The recorded kernel launches, each with its written arguments passed as ``outputs``.

    ``gradcheck`` raises ``ValueError: A list of output arguments must be
    provided`` for a launch that passed everything as ``inputs=`` (most
    programs do); a user would then pass the arguments the kernel writes as
    ``outputs=``, which is what this does when they are the trailing ones
    (read from the kernel's AST, :func:`defects4warp.probes.launches._written_suffix`).
    Launches it cannot split are kept as recorded (gradcheck then raises on them).

    Returns
    -------
    (list, int)
        Launch tuples (kernel launches only) and how many were re-split.
    """
    from .launches import _written_suffix

    out, adapted = [], 0
    for launch in launches:
        if not isinstance(launch, (tuple, list)) or not isinstance(launch[0], wp.Kernel):
            continue
        launch = list(launch)
        kernel, inputs, outputs = launch[0], list(launch[3]), list(launch[4])
        if not outputs:
            split = _written_suffix(kernel, len(inputs))
            if split is not None and 0 < split < len(inputs):
                launch[3], launch[4] = inputs[:split], inputs[split:]
                adapted += 1
        out.append(tuple(launch))
    return out, adapted


@probe("gradcheck", eps=EPS, atol=ATOL, rtol=RTOL, max_tapes=4, max_inputs_per_var=256, max_outputs_per_var=256)
def measure(ctx, *, eps: float = EPS, atol: float = ATOL, rtol: float = RTOL, max_tapes: int = 4,
            max_inputs_per_var: int = 256, max_outputs_per_var: int = 256) -> dict:
    """``gradcheck_tape`` on each tape the program runs backward on in one gradient() call.

    Parameters
    ----------
    eps, atol, rtol : float
        Passed to ``gradcheck_tape``; defaults are Warp's own (:data:`EPS`,
        :data:`ATOL`, :data:`RTOL`, absolute step and tolerances, the same on
        1.12.1 and 1.19.0).
    max_tapes : int
        Tapes checked at most in the call (a windowed program runs backward
        on one tape per window; default 4).
    max_inputs_per_var, max_outputs_per_var : int
        Passed to ``gradcheck_tape`` (Warp's default -1 is every dimension;
        256 here keeps a dense Jacobian of a production-size array within the
        worker's time limit).

    Returns
    -------
    dict
        ``tapes`` (per checked tape: ``ok`` bool or None when it raised,
        ``kernels`` the recorded kernel keys, ``error``), ``backward_calls``,
        ``checked``, ``failed``.
    """
    import warp as wp
    from warp.autograd import gradcheck_tape

    ctx.stage("gradcheck")
    tapes, calls, busy = [], [0], [False]
    original = wp.Tape.backward

    def backward(self, *args, **kwargs):
        if busy[0]:  # gradcheck's own Jacobians run backward on tapes of their own
            return original(self, *args, **kwargs)
        calls[0] += 1
        if len(tapes) < max_tapes:
            launches, adapted = _with_outputs(self.launches, wp)
            kernels = [launch[0].key for launch in launches]
            rec = {"kernels": sorted(set(kernels)), "launches": len(kernels), "adapted": adapted, "ok": None,
                   "error": None}
            tracker = wp.config.verify_autograd_array_access
            wp.config.verify_autograd_array_access = False  # gradcheck relaunches kernels on the same arrays
            busy[0] = True
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    rec["ok"] = bool(gradcheck_tape(SimpleNamespace(launches=launches), eps=eps, atol=atol, rtol=rtol, raise_exception=False,
                                                    show_summary=False, max_inputs_per_var=max_inputs_per_var,
                                                    max_outputs_per_var=max_outputs_per_var))
            except Exception as exc:  # noqa: BLE001 - a tape gradcheck cannot handle is recorded, not fatal
                rec["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            finally:
                busy[0] = False
                wp.config.verify_autograd_array_access = tracker
            tapes.append(rec)
        return original(self, *args, **kwargs)

    patches = Patches()
    patches.patch(wp.Tape, "backward", backward)
    try:
        ctx.gradient()
    finally:
        patches.restore()
    checked = [t for t in tapes if t["ok"] is not None and t["launches"]]
    out = {"tapes": tapes, "backward_calls": calls[0], "checked": len(checked),
           "failed": sum(1 for t in checked if not t["ok"]), "knobs": {"eps": eps, "atol": atol, "rtol": rtol}}
    ctx.doc["gradcheck"] = out
    ctx.stage(None)
    ctx.save()
    return out
