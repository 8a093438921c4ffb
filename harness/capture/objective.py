"""The objective a backward differentiates, read before it runs, and the losses a script prints.
"""

from __future__ import annotations

import re

import numpy as np
import warp as wp

from ..measure import trace as _trace
from .runstate import _Limit, _grad, _np, _quiet


#: Relative tolerance when comparing the seed-weighted objective with a loss the script prints.
PRINT_RTOL = 1e-3


#: Words on a printed line that say it reports the loss (the seed check reads numbers on such lines only).
_LOSS_WORDS = re.compile(r"loss|objective|cost|error|\bmse\b|\brmse\b|\bmae\b|energy|residual|misfit", re.I)


_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _tape_arrays(tape):
    """The ``wp.array`` arguments (inputs and outputs) of the launches recorded on ``tape``, in order, once each
    (``Tape.launches`` entries ``[kernel, dim, max_blocks, inputs, outputs, ...]`` on 1.12.1 to 1.19.0; recorded
    functions and other entries are skipped)."""
    out = {}
    for e in getattr(tape, "launches", None) or []:
        if isinstance(e, (list, tuple)) and len(e) >= 5:
            for a in list(e[3] or []) + list(e[4] or []):
                if isinstance(a, wp.array) and id(a) not in out:
                    out[id(a)] = a
    return list(out.values())


def _hand_seeds(r, tape, n):
    """The seeds of a ``backward()`` given neither a loss nor ``grads=``: the arrays a launch on ``tape`` wrote
    whose ``.grad`` the script set by hand (nonzero when the backward is called). In the discovery run "wrote"
    comes from the runtime trace; a re-run takes the arrays allocated at the sites the discovery run found."""
    arrays = [a for a in _tape_arrays(tape) if getattr(a, "requires_grad", False) and _grad(a) is not None]
    if r.mode == "discover":
        st = r.trace
        if st is None:
            return []
        written = {lab for ev in st.events if ev["kind"] == "launch" for lab in ev["writes"]}
        # a .grad attached by assignment counts also when it holds zeros (a buffer emptied since it was set)
        attached = {ev["array"] for ev in st.events if ev["kind"] == "grad_assign"}
        labels = {id(a): (st.arrays.get(id(a)) or {}).get("label") for a in arrays}
        seeds = [a for a in arrays if labels[id(a)] in written
                 and (labels[id(a)] in attached or np.any(np.asarray(_grad(a).numpy()) != 0))]
    else:
        want = r.cap.hand_seed_sites
        seeds = [a for a in arrays if r.site_of.get(id(a)) in want]
    return seeds


def _objective_at(r, loss, grads, n, tape=None, weights=None):
    """(value, info) of the objective a backward differentiates, read before it runs.

    ``weights`` (one float per seeded array, or one for a ``backward(loss)``; None: unweighted) are the weights of
    the loss the script reports (:func:`defects4warp.capture.summary._fit_reported_weights`): the value is then
    ``sum_i w_i * sum(array_i)`` instead of the seed-weighted sum (or ``w * loss``). ``info["terms"]`` holds the
    unweighted sums of the seeded arrays (``[loss]`` for a ``backward(loss)``), the columns of that fit."""
    with _quiet(r):
        hand = None
        if loss is None and not grads and tape is not None:
            hand = _hand_seeds(r, tape, n)
            if hand:
                grads = {a: _grad(a) for a in hand}
        if loss is not None and not grads:
            if not isinstance(loss, wp.array):
                raise _Limit(f"backward {n} was given loss={type(loss).__name__}, not a wp.array")
            if loss.size != 1:
                raise _Limit(f"backward {n} was called on a non-scalar array (shape {tuple(loss.shape)}) without "
                             f"seeds: Warp's Tape.backward(loss) needs a single-element loss. Reduce it to a scalar "
                             f"in the script, pass grads={{array: seed}}, or write a make_problem adapter")
            v = float(np.sum(np.asarray(loss.numpy(), dtype=np.float64)))
            info = {"kind": "loss", "arrays": [loss], "seeds": None, "terms": [v]}
            if weights is not None and len(weights) == 1:
                v = float(weights[0]) * v
            return v, info
        if grads:
            total = 0.0
            arrays, seeds, pairs = [], [], []
            for y, s in grads.items():
                if not isinstance(y, wp.array) or not isinstance(s, wp.array):
                    raise _Limit(f"backward {n}: a grads={{...}} entry is not a pair of wp.array")
                yv = np.asarray(y.numpy(), dtype=np.float64)
                sv = np.asarray(s.numpy(), dtype=np.float64)
                if yv.size != sv.size:
                    raise _Limit(f"backward {n}: seed of shape {sv.shape} for an array of shape {yv.shape}")
                total += float(np.sum(yv.ravel() * sv.ravel()))
                pairs.append((yv.ravel().copy(), sv.ravel().copy()))  # numpy() of a CPU array is a view
                arrays.append(y)
                seeds.append({"sum": float(np.sum(sv)), "size": int(sv.size),
                              "constant": float(sv.ravel()[0]) if sv.size and np.all(sv == sv.ravel()[0]) else None,
                              "array_sum": float(np.sum(yv)), "array_mean": float(np.mean(yv)) if yv.size else None})
            weighted = weights is not None and len(weights) == len(seeds)
            if weighted:
                # the loss the script reports: sum_i w_i * sum(array_i), not the seed-weighted sum
                total = float(sum(w * sd["array_sum"] for w, sd in zip(weights, seeds)))
            info = {"kind": "seeded", "arrays": arrays, "seeds": seeds, "terms": [sd["array_sum"] for sd in seeds]}
            if not weighted:
                info["pairs"] = pairs  # (array values, seed values) of the seed-weighted sum, flat float64
            # the seed buffers as the backward will read them: the .grad set by hand, or the grads={...} values
            # (Warp attaches such a value itself as the .grad of an array that has none)
            info["buffers"] = [(s, _np(s)) for s in grads.values()]
            info["buffer_sites"] = [r.site_of.get(id(y)) for y in grads]
            if hand:
                info["hand"] = True
                info["hand_sites"] = [r.site_of.get(id(a)) for a in hand]
            return total, info
        raise _Limit(f"backward {n} was called without a loss or grads={{...}}, and no array written by a launch on "
                     f"its tape has a nonzero .grad set by hand: the backward has no seed. Pass the loss to "
                     f"backward(loss) or the seeds as grads={{array: seed}}, or write a make_problem adapter")


def _printed_losses(text):
    """Numbers on printed lines that mention a loss or an objective."""
    out = []
    for line in text.splitlines():
        if _LOSS_WORDS.search(line):
            for m in _NUM.finditer(line):
                tok = m.group(0)
                if "." in tok or "e" in tok.lower():
                    try:
                        out.append((float(tok), tok))
                    except ValueError:
                        pass
    return out


def _matches_printed(value, tok):
    x = float(tok)
    decimals = len(tok.split(".")[1].split("e")[0].split("E")[0]) if "." in tok else 0
    tol = max(PRINT_RTOL * max(abs(value), abs(x)), 0.5 * 10 ** (-decimals) if "e" not in tok.lower() else 0.0)
    return abs(value - x) <= tol


def _first_printed_loss(text):
    """(value, token) of the first number after a loss word on the first line that has one, else None."""
    for line in text.splitlines():
        m = _LOSS_WORDS.search(line)
        if not m:
            continue
        for t in _NUM.finditer(line, m.end()):
            tok = t.group(0)
            if "." in tok or "e" in tok.lower():
                return float(tok), tok
    return None


def _printed_digits_tol(tok: str) -> float:
    """Half a unit in the last digit of a printed number (``"1.234e-02"`` -> 5e-06, ``"8.568925"`` -> 5e-07),
    plus 1e-9 relative for the float arithmetic behind it."""
    mant, _, exp = tok.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    unit = 10.0 ** (-decimals) * (10.0 ** int(exp) if exp else 1.0)
    return 0.5 * unit + 1e-9 * abs(float(tok))
