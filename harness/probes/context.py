"""The context every worker-side probe shares.

A :class:`Context` holds the loaded problem, a flat float64 view of its
``params`` (:class:`defects4warp.measure.params.FlatParams`), the measurement
document being written, the probe knobs, and the counters of objective and
gradient evaluations. Probes read what earlier probes left on it
(``ctx.calls``, ``ctx.launches``, ``ctx.noise`` ...) instead of sharing
attributes of one class.

Imported inside the measurement subprocess only (it may import Warp through
the problem); it never imports the engines.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from ..measure.params import FlatParams


def step_size(dtype) -> float:
    """Relative central-difference step: eps^(1/3) of the dtype (Nocedal &
    Wright, *Numerical Optimization*, 2nd ed., section 8.1, the step that
    balances O(h^2) truncation against O(eps/h) round-off): 6.1e-6 for
    float64, 4.9e-3 for float32."""
    return float(np.finfo(dtype).eps ** (1.0 / 3.0))


def json_default(o):
    """JSON encoder fallback for NumPy scalars and arrays."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def atomic_write(path: str, doc: dict) -> None:
    """Write ``doc`` as JSON to ``path`` through a temporary file and
    ``os.replace``, so a reader never sees half a document."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=d)
    from ..jsonio import normal_mode

    normal_mode(fd)  # the umask's mode, not mkstemp's 0600
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1, default=json_default)
    os.replace(tmp, path)


def finite_or_str(x: float):
    """``float(x)`` when finite, else its string (``"nan"``, ``"inf"``): JSON has no NaN."""
    x = float(x)
    return x if np.isfinite(x) else str(x)


class Context:
    """Shared state of one variant's measurement (see module docstring).

    Parameters
    ----------
    problem : object
        What ``make_problem(device, scale)`` returned (the Problem protocol).
    doc : dict
        The measurement document; probes add their keys to it.
    knobs : dict
        ``{probe name: {knob: value}}`` overrides; :meth:`knobs_for` merges
        them over each probe's defaults.
    out_path : str
        Where :meth:`save` writes ``doc`` (atomically).
    capture : object
        The worker's output capture (has a ``stage`` attribute and ``chunks``).
    path : str
        The variant folder (for coverage and source evidence).
    seed : int
        Seed of the probes' random coordinates and directions.
    """

    def __init__(self, problem, doc: dict, knobs: dict, out_path: str, capture, path: str, seed: int = 0):
        self.p = problem
        self.doc = doc
        self.knobs = knobs
        self.out = out_path
        self.cap = capture
        self.path = path
        self.flat = FlatParams(problem.params)
        self.rng = np.random.default_rng(seed)
        self.n_obj = 0
        self.n_grad = 0
        self.pinned = False
        self.pinned_seed = 1234
        self.calls: list = []       # gradient() calls at the given point, flat (n,)
        self.launches: list = []    # launches recorded on any tape during call 1
        self.noise: float | None = None  # estimated computational noise of objective(), absolute
        self.f0: float | None = None     # objective at the given point
        self.requested: dict = {}        # probe name -> what the probe that asked for it handed over

    def request(self, name: str, **data) -> None:
        """Ask the worker to run probe ``name`` (one of :data:`defects4warp.probes.REQUESTED`) after its
        list, handing it ``data`` (read back as ``ctx.requested[name]``); a second request replaces it."""
        self.requested[name] = data

    # -- evaluation ----------------------------------------------------
    def objective(self) -> float:
        """One ``objective()`` evaluation (seed pinned when the determinism probe pinned it)."""
        if self.pinned:
            self.p.set_seed(self.pinned_seed)
        self.n_obj += 1
        return float(self.p.objective())

    def gradient(self) -> np.ndarray:
        """One ``gradient()`` call, flattened to shape (n,) float64."""
        if self.pinned:
            self.p.set_seed(self.pinned_seed)
        self.n_grad += 1
        return self.flat.flatten_gradient(self.p.gradient())

    def steps(self) -> np.ndarray:
        """Base central-difference step per flat coordinate, shape (n,):
        :func:`step_size` of the param's dtype times the coordinate's scale
        (:meth:`defects4warp.measure.params.FlatParams.scales`)."""
        h = np.empty(self.flat.n)
        for i, dt in enumerate(self.flat.dtypes):
            a, b = self.flat.offsets[i], self.flat.offsets[i + 1]
            h[a:b] = step_size(dt)
        return h * self.flat.scales()

    def eps(self) -> float:
        """Machine epsilon of the loosest param dtype (float32 when any param is float32)."""
        return max(float(np.finfo(d).eps) for d in self.flat.dtypes)

    # -- bookkeeping ---------------------------------------------------
    def knobs_for(self, name: str, defaults: dict) -> dict:
        """``defaults`` updated with the overrides given for probe ``name``."""
        out = dict(defaults)
        out.update(self.knobs.get(name) or {})
        return out

    def save(self) -> None:
        """Rewrite the document (with the current evaluation counts) atomically."""
        self.doc["cost"].update({"objective_evals": self.n_obj, "gradient_evals": self.n_grad})
        atomic_write(self.out, self.doc)

    def stage(self, name: str | None) -> None:
        """Tag captured output and the document with the probe running now."""
        self.cap.stage = name or "probes"
        self.doc["running"] = name
