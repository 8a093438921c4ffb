"""Noise: the computational noise of ``objective()`` at the given point.

Finite differences cannot resolve a derivative whose effect on the objective
over the step is smaller than the objective's own round-off: in float32 a
single-coordinate step on a program with many parameters can move a summed
loss by less than an ulp. This probe estimates the noise level sigma_f
(absolute, in objective units) with the difference table of Moré & Wild,
"Estimating computational noise", SIAM J. Sci. Comput. 33(3), 2011 (ECnoise):
values ``f(x0 + j*delta*v)`` for ``j = 0..m`` along a random direction ``v``
with a step ``delta`` far below the FD step, so that the smooth part of the
k-th difference is negligible and what is left is noise; then
``sigma_k = sqrt(gamma_k / (m + 1 - k) * sum (Delta^k f)^2)`` with
``gamma_k = (k!)^2 / (2k)!``. The estimate is floored at
``ulp_floor * eps * |f0|`` (the round-off of the last operation), since a few
samples can come out exactly equal.

The FD probe turns sigma_f into a resolution per item: a central difference
``(f(x+e) - f(x-e)) / 2`` carries noise ``sigma_f / sqrt(2)``, so an item
whose finite difference and autodiff are both below
``resolution_factor * sigma_f / sqrt(2)`` (in the same units) is
*unresolved*, never agreement or disagreement.
"""

from __future__ import annotations

import math

import numpy as np

from . import probe


@probe("noise", points=3, order=3, delta=0.1, ulp_floor=2.0)
def measure(ctx, *, points: int = 3, order: int = 3, delta: float = 0.1, ulp_floor: float = 2.0) -> dict | None:
    """Estimate sigma_f with ``points`` extra objective evaluations.

    Parameters
    ----------
    points : int
        Evaluations besides f(x0) (m in Moré & Wild; default 3 gives one
        third difference, enough for the order of magnitude).
    order : int
        Order k of the difference used (default 3; at most ``points``).
    delta : float
        Step along the direction as a fraction of the FD base step (default
        0.1: the smooth part of a third difference scales as delta^3).
    ulp_floor : float
        Floor of the estimate in units of ``eps * |f0|`` (default 2).
    """
    if ctx.f0 is None or not np.isfinite(ctx.f0):
        return None
    ctx.stage("noise")
    x0 = ctx.flat.get()
    v = ctx.rng.standard_normal(ctx.flat.n)
    v /= max(np.linalg.norm(v), 1e-300) / math.sqrt(ctx.flat.n)
    e = delta * ctx.steps() * v
    f = [ctx.f0]
    try:
        for j in range(1, points + 1):
            ctx.flat.set(x0 + j * e)
            f.append(ctx.objective())
    finally:
        ctx.flat.set(x0)
        ctx.stage(None)
    f = np.array(f, dtype=np.float64)
    k = min(order, points)
    if not np.all(np.isfinite(f)):
        return None
    d = np.diff(f, n=k)
    gamma = math.factorial(k) ** 2 / math.factorial(2 * k)
    sigma = math.sqrt(gamma * float(np.mean(d**2)))
    floor = ulp_floor * ctx.eps() * abs(ctx.f0)
    out = {"sigma": max(sigma, floor), "ecnoise": sigma, "floor": floor, "order": k, "points": points,
           "values": f.tolist(), "relative": max(sigma, floor) / max(abs(ctx.f0), 1e-300)}
    ctx.noise = out["sigma"]
    ctx.doc["noise"] = out
    ctx.save()
    return out
