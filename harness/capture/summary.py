"""The capture summary (what was captured and assumed, the capture's findings) and the fit of the loss a
script prints.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .discovery import _iteration_assumptions
from .objective import _first_printed_loss, _matches_printed, _printed_digits_tol, _printed_losses
from .runstate import _dtype, _np, _ordinal, _quiet
from .spec import format_site


#: Observations (re-runs to the first loss the script prints after its k-th backward) beyond the number of
#: seeded arrays when the weights of the reported loss are fitted, and the relative perturbation of their points.
WEIGHT_FIT_EXTRA = 3


WEIGHT_FIT_PERTURB = 0.1


#: Terms (seeded arrays over the iteration's counted backwards) beyond which only one common weight is fitted to the
#: printed loss (``printed = c * sum of all terms``): each per-term weight costs one more re-run of the script.
WEIGHT_FIT_MAX_TERMS = 16


#: The seed of a ``backward(loss)`` as a term of the fit: the constant 1 on a single element.
_LOSS_SEED = {"constant": 1.0, "size": 1, "sum": 1.0}


def _iteration_terms(cap, run):
    """``[(offset from k, _objective_at info)]`` of the modelled iteration's counted backwards in the discovery
    ``run`` (those whose losses sum to the objective), in order."""
    return [(m["n"] - cap.k, m["info"]) for m in run.marks
            if m["iteration"] == cap.iteration and m["counted"] and "info" in m]


def _term_meta(info):
    """The seeds of an ``_objective_at`` info as terms of the fit (a ``backward(loss)``: :data:`_LOSS_SEED`)."""
    return list(info["seeds"]) if info.get("seeds") else [dict(_LOSS_SEED)]


def _fit_reported_weights(cap, finding, extra=WEIGHT_FIT_EXTRA, perturb=WEIGHT_FIT_PERTURB,
                          max_terms=WEIGHT_FIT_MAX_TERMS):
    """Weights ``w_i`` with ``printed loss = sum_i w_i * sum(array_i)`` over the arrays seeded at the iteration's
    counted backwards (the loss of a ``backward(loss)`` is one such array, seeded with 1; for a single backward, a
    loss printed after the update may be of the next backward's arrays instead), from the first loss the script
    prints after the iteration's first backward at ``n + extra`` points, ``n`` the number of terms (at most
    ``max_terms``; the given one and points ``x0 + perturb * (|x0| + 0.1 max|x0|) * N(0, 1)``, seed 0). An iteration
    of several backwards (a windowed rollout, one tape per window) is fitted with one common weight only
    (``printed = c * sum of all terms``: a mean over windows): a weight per backward would also fit a print of one
    of the terms alone (a data misfit printed without the prior whose gradient the update also adds) by weighting
    the others 0, and the update follows every term. Accepted only when the fit reproduces every printed value to
    the digits printed
    (:func:`_printed_digits_tol`); each weight is then, in turn, set to its seed's constant, ``1 / size``, 1 or
    ``1 / (number of terms)``, else rounded to the fewest significant digits, where that still reproduces them.
    Sets ``cap.objective_weights`` (flat) and ``cap.term_weights`` (by backward) and records the fit on the capture
    summary and on ``finding``; leaves everything as it was when the fit fails."""
    multi = len(cap.obj_offsets) > 1
    observed = _observe_printed_loss(cap, extra, perturb, max_terms)
    if observed is None:
        return
    rows, printed, meta = observed
    P = np.array([v for v, _ in printed])
    # the printed loss is of the k-th backward's point, or of the next backward's (printed after the update);
    # a fit must reproduce every printed value to the digits printed (:func:`_printed_digits_tol`)
    tol = np.array([_printed_digits_tol(tok) for _, tok in printed])
    n = len(meta)
    fitted = _fit_printed_loss(rows, P, tol, n, multi)
    if fitted is None:
        return
    A, w, A_common = fitted
    if A_common is not None:
        # one weight for every term: the simplest value of that weight
        c = _simplest_weights(A_common, P, tol, w[:1], [{"constant": None, "size": n, "sum": None}])[0]
        w = np.full(n, float(c))
    else:
        w = _simplest_weights(A, P, tol, w, meta, n_terms=n if multi else None)
    _record_reported_weights(cap, finding, w, P, meta, multi)


def _fit_printed_loss(rows, P, tol, n, multi):
    """``(A, w, A_common)``: the first least-squares fit of the printed losses ``P`` (one per row of ``rows``) that
    reproduces every one within ``tol``, trying the iteration's terms then the next backward's (a print after the
    update); ``A_common`` the row sums when ``multi`` (several backwards: one common weight, a mean over windows),
    else None. None when no model fits, so :func:`_fit_reported_weights` leaves the capture as it was."""
    A = w = A_common = None
    for which in (0, 1):
        if any(r[which] is None for r in rows):
            continue
        A_try = np.array([r[which] for r in rows], dtype=np.float64)
        # several backwards: one common weight only (a mean over windows); a weight per backward would also fit a
        # print of one term alone (the data misfit without a prior the update also follows) by dropping the others
        models = ["common"] if multi else (["each"] if A_try.shape[0] > n else [])
        for model in models:
            if model == "common":
                s_ = A_try.sum(axis=1)
                if not np.any(s_):
                    continue
                c = float(np.dot(s_, P) / np.dot(s_, s_))
                if np.all(np.abs(s_ * c - P) <= tol):
                    A, w = A_try, np.full(n, c)
                    A_common = s_[:, None]
                    break
                continue
            if np.linalg.matrix_rank(A_try) < A_try.shape[1]:
                continue
            w_try = np.linalg.lstsq(A_try, P, rcond=None)[0]
            if np.all(np.abs(A_try @ w_try - P) <= tol):
                A, w, A_common = A_try, w_try, None
                break
        if w is not None:
            break
    if w is None:
        return None
    return A, w, A_common


def _record_reported_weights(cap, finding, w, P, meta, multi):
    """Returns None; sets the weights ``w`` fitted at the ``len(P)`` points on ``cap`` (``objective_weights`` flat,
    ``term_weights`` by backward) and records them, next to the seeds' own weights (from ``meta``), on the capture
    summary and on ``finding``, so the objective and its assumptions say which loss is compared."""
    seeded = [sd["constant"] if sd["constant"] is not None else sd["sum"] / max(sd["size"], 1) for sd in meta]
    cap.objective_weights = [float(x) for x in w]
    cap.term_weights = _split_weights(cap, cap.objective_weights)
    obj = cap.summary["objective"]
    obj["reported"] = "weighted"
    obj["weights"] = cap.objective_weights
    where = (f"the {_ordinal(cap.k)} backward" if not multi else
             "backwards " + ", ".join(str(cap.k + o) for o in cap.obj_offsets) + " (every counted backward of the "
             "iteration; a backward(loss) is its loss seeded with 1)")
    obj["description"] = ("the loss the script prints, sum_i w_i * sum(array_i) over the arrays seeded at "
                          f"{where} with w = " + ", ".join(f"{x:.6g}" for x in w)
                          + f" (fitted to the printed loss at {len(P)} points); the backward seeds "
                          + ", ".join(f"{x:.6g}" for x in seeded))
    finding["data"]["weights"] = cap.objective_weights
    finding["data"]["seeded_weights"] = seeded
    finding.pop("tentative", None)
    finding["detail"] += (f"; the printed loss is sum_i w_i * sum(array_i) with w = "
                          + ", ".join(f"{x:.6g}" for x in w) + " where the seeds weight "
                          + ", ".join(f"{x:.6g}" for x in seeded))
    assumptions = cap.summary["assumptions"]
    assumptions[:] = [a for a in assumptions if not a.startswith("the objective is the seed-weighted sum")]
    assumptions.append(f"the objective is the loss the script prints, fitted as a weighted sum of the seeded arrays' "
                       f"sums" + (" over the iteration's backwards" if multi else "")
                       + f" at {len(P)} points (it matches every printed value; the seed-weighted sum does not)")


def _split_weights(cap, flat):
    """``{offset: [weights of that backward's seeded arrays]}`` from the flat weights over the iteration's terms, in
    the order of ``cap.obj_offsets`` (``cap.term_counts``: the number of terms of each)."""
    out, i = {}, 0
    counts = getattr(cap, "term_counts", None) or [len(flat)]
    for off, c in zip(cap.obj_offsets, counts):
        out[off] = list(flat[i:i + c])
        i += c
    return out


def _observe_printed_loss(cap, extra, perturb, max_terms=WEIGHT_FIT_MAX_TERMS):
    """Re-run to the first printed loss at the fit's points (params restored after): ``(rows, printed, meta)``,
    or None when a run reaches no counted backward, a single backward is not seeded, or a run prints no loss.
    Each row is ``(terms of the iteration, terms of the next backward or None)``; ``meta`` the terms' seeds."""
    multi = len(cap.obj_offsets) > 1
    x0 = {k: _np(a) for k, a in cap.params.items()}
    rng = np.random.default_rng(0)
    rows, printed, meta = [], [], None
    n = sum(getattr(cap, "term_counts", None) or [len(cap.summary["objective"].get("seeds") or [])])
    want = min(n, max_terms) + extra
    try:
        for j in range(want):
            if j > 0:
                with _quiet():
                    for k, v in x0.items():
                        sc = np.abs(v) + 0.1 * (float(np.max(np.abs(v))) if v.size else 0.0)
                        cap.params[k].assign((v + perturb * sc * rng.standard_normal(v.shape)).astype(v.dtype))
            run, stopped, vals = cap._rerun("observe")
            infos = [run.term_infos.get(off) for off in cap.obj_offsets]
            if any(i is None for i in infos) or (not multi and infos[0].get("kind") != "seeded"):
                return None
            got = _first_printed_loss(run.out.getvalue()[run.out_mark or 0:])
            if got is None:
                return None
            meta = [sd for i in infos for sd in _term_meta(i)]
            terms = [t for i in infos for t in i["terms"]]
            nxt = (run.next_info or {}).get("seeds") if not multi else None
            rows.append((terms, [sd["array_sum"] for sd in nxt] if nxt and len(nxt) == len(meta) else None))
            printed.append(got)
    finally:
        cap._restore(x0)
    return rows, printed, meta


def _simplest_weights(A, P, tol, w, meta, n_terms=None):
    """Each weight in turn set to its seed's constant, ``1 / size``, 1 or (with ``n_terms``) ``1 / n_terms``, else to
    the shortest decimal, where the weights still reproduce every printed value (:func:`_fit_reported_weights`)."""
    def fits(ws):
        return bool(np.all(np.abs(A @ ws - P) <= tol))

    def solve(fixed):
        """The weights with ``fixed`` ({index: value}) held and the others fitted by least squares."""
        ws = np.zeros(A.shape[1])
        free = [i for i in range(A.shape[1]) if i not in fixed]
        for i, v in fixed.items():
            ws[i] = v
        if free:
            ws[free] = np.linalg.lstsq(A[:, free], P - A @ ws, rcond=None)[0]
        return ws

    # each weight in turn: its seed's constant, 1 / size or 1, else the shortest decimal, the first that still
    # reproduces every print with the weights not yet chosen fitted again
    fixed = {}
    for i, sd in enumerate(meta):
        simple = [c for c in (sd["constant"], 1.0 / sd["size"] if sd["size"] else None, 1.0,
                              1.0 / n_terms if n_terms else None) if c is not None]
        for c in simple + [float(f"{w[i]:.{d - 1}e}") for d in range(1, 8)]:
            trial = solve({**fixed, i: c})
            if fits(trial):
                fixed[i] = c
                w = trial
                break
    return w


def _summary(cap, tr, run, b, chosen, candidates, text, stopped, objs, site_of):
    """The capture summary of the run that reached the k-th backward ``b``: what was captured and assumed,
    and the capture's own findings."""
    events = tr["events"]
    k = cap.k
    info = run.kth
    obj, arrays = _objective_summary(cap, tr, run, b, site_of)
    findings, assumptions = [], []
    if info["kind"] == "seeded" or len(cap.obj_offsets) > 1:
        _check_printed_loss(cap, run, text, obj, arrays, findings, assumptions)
    _check_seed_buffers(cap, run, findings)
    if cap.stale_seed:
        assumptions.append(f"the seed buffer of backward {k} is reused, changed, by the next iteration: repeated "
                           f"gradient() calls at one point continue the script (call m returns the .grad after its "
                           f"m-th iteration from {k}, the params set to the point when each iteration's tape starts)")
    if run.next_backward_grads:
        for c in chosen:
            g = run.next_backward_grads.get(id(c["obj"]))
            if g is not None and np.any(g != 0) and c.get("consumed"):
                findings.append({
                    "id": "grad_carried", "classes": ["missing_tape_zero"],
                    "detail": (f"the .grad of param {c['name']} ({format_site(*c['site'])}) is used after backward "
                               f"{k} and still nonzero when backward {k + 1} starts: nothing zeroed it, so the next "
                               f"iteration's gradient adds onto the old one"),
                    "data": {"param": c["name"], "grad_sum": float(np.sum(g))}})
    params = _param_rows(chosen)
    if any(c.get("chosen_by") == "capture" for c in chosen):
        assumptions.append("params: the requires_grad arrays the recorded launches read and never write, that the "
                           "loss depends on, and whose .grad the script uses after the backward (override with "
                           "--param FILE.py:LINE)")
    assumptions.extend(_iteration_assumptions(cap))
    if getattr(run, "script_inits", 1) == 0 and _explicit_init(wp.config.version):
        assumptions.append(f"the script never calls wp.init(): Warp {wp.config.version} needs it before the first "
                           f"array (automatic from 1.2.0), so run as it is the script stops at its first allocation; "
                           f"the capture initialised Warp and diagnosed the script as if it called wp.init() first")
    cut = getattr(run, "look_cut", None)
    if cut:
        assumptions.append(f"the look past the end of iteration {cap.iteration} for an inner solve was cut by time "
                           f"after {cut['backwards']} backwards ({cut['seconds']} s): an inner solve longer than "
                           f"that was taken for the optimisation iteration (name the params with --param)")
    if stopped and " after the needed backward" in stopped:
        assumptions.append(f"the script stopped with an exception after backward {k} ({stopped.split(': ', 1)[-1]}"
                           f"): the capture stopped at that exception, with what it needed from backward {k}")
    other = [{"site": format_site(*c["site"]) if c["site"] else None, "why_not": c["why_not"]}
             for c in candidates if c["why_not"] is not None]
    return {
        "entry": cap.spec.entry, "args": list(cap.spec.args), "iteration": cap.iteration, "first_backward": k,
        "backwards_per_iteration": cap.per_iteration, "objective_backwards": [k + o for o in cap.obj_offsets],
        "params_set_at": format_site(*cap.inject_at) if getattr(cap, "inject_at", None) else None,
        "device": cap.device,
        "params": params, "objective": obj,
        "tapes": len(tr.get("tapes") or {}),
        "launches": sum(1 for e in events[: b["seq"]] if e["kind"] == "launch"),
        "recorded_launches": sum(1 for e in events[: b["seq"]] if e["kind"] == "launch" and e["tape"] == b["tape"]
                                 and e["epoch"] == b["epoch"]),
        "backwards_seen": sum(1 for e in events if e["kind"] == "backward"),
        "gradient_after_backward": cap.grad_after,
        "stopped": stopped,
        "candidates": other,
        "assumptions": assumptions,
        "findings": findings,
        "interop": sorted({f"wp.{a}" for a, _ in run.interop}),
        "warp": str(wp.config.version),
    }


def _objective_summary(cap, tr, run, b, site_of):
    """The summary's ``objective`` entry (kind, value, the seeded arrays and what produced them) and its arrays."""
    events = tr["events"]
    k = cap.k
    kernels = tr.get("kernels") or {}
    targets = [s["target"] for s in b["seeds"] if s["target"]]

    def produced(lab):
        for ev in reversed(events[: b["seq"]]):
            if ev["kind"] == "launch" and lab in ev["writes"]:
                kinfo = kernels.get(ev["kernel"], {})
                at = run.launch_sites.get(ev["seq"])
                return {"launch_site": format_site(*at) if at else None, "kernel": kinfo.get("name", ev["kernel"]),
                        "kernel_file": cap.rel(kinfo["file"]) if kinfo.get("file") else None,
                        "kernel_line": (kinfo.get("lines") or [None])[0]}
        return None

    info = run.kth
    obj = {"kind": info["kind"], "value": run.objective}
    arrays = []
    for lab in targets:
        st = site_of.get(lab)
        arrays.append({"array_site": format_site(*st) if st else None, "shape": tr["arrays"].get(lab, {}).get("shape"),
                       "dtype": tr["arrays"].get(lab, {}).get("dtype"), "produced_by": produced(lab)})
    obj["arrays"] = arrays
    first = arrays[0] if arrays else {}
    pb = first.get("produced_by") or {}
    obj["produced_at"] = pb.get("launch_site")
    obj["kernel"] = pb.get("kernel")
    if info["kind"] == "loss":
        obj["description"] = (f"the array passed to backward(loss) at the {_ordinal(k)} backward "
                              f"(allocated at {first.get('array_site')})")
    else:
        obj["seeds"] = info["seeds"]
        obj["description"] = ("the seed-weighted sum sum(seed * array) over the "
                              + (".grad set by hand before the " if info.get("hand") else "grads={...} of the ")
                              + f"{_ordinal(k)} backward: " + ", ".join(
                                  f"{a['array_site']} (seed " + (f"{s['constant']:g}" if s['constant'] is not None
                                                                 else f"sum {s['sum']:g}") + ")"
                                  for a, s in zip(arrays, info["seeds"])))
    return obj, arrays


def _check_printed_loss(cap, run, text, obj, arrays, findings, assumptions):
    """A seeded backward, or an iteration of several counted backwards: compare the objective with the loss the
    script prints; record a mismatch, the reduction that matches it instead (a single backward), and the assumption
    made about the objective. For several backwards the objective is the sum of their losses (seed-weighted sums)
    and the mismatch finding is ``tentative``: it stands only if :func:`_fit_reported_weights` then finds the
    weights of the printed loss over the iteration's backwards (a mean over windows each seeded with 1)."""
    k = cap.k
    info = run.kth
    multi = len(cap.obj_offsets) > 1
    printed = _printed_losses(text)
    mine = [v for v in ((run.objective,) if multi else (run.objective, run.next_objective)) if v is not None]
    if printed and not any(_matches_printed(v, tok) for v in mine for _, tok in printed):
        vals = [v for v, _ in printed][:10]
        alt = None
        s0 = (info.get("seeds") or [None])[0]
        # the printed loss at the k-th backward's point, or at the next backward's (a loss printed after
        # the update, from a forward at the new params)
        n0 = ((run.next_info or {}).get("seeds") or [None])
        nxt_seed = n0[0] if len(n0) == 1 else None
        if not multi and len(info["seeds"]) == 1 and s0["constant"] is not None:
            for red in ("array_mean", "array_sum"):
                cands = [sd.get(red) for sd in (s0, nxt_seed) if sd is not None]
                if any(v is not None and _matches_printed(v, tok) for v in cands for _, tok in printed):
                    alt = red.split("_")[1]
                    break
        if alt is not None:
            cap.objective_reduction = alt
            cap.objective_weights = [1.0 / s0["size"] if alt == "mean" else 1.0]
            cap.term_weights = {0: list(cap.objective_weights)}
            obj["reported"] = alt
            obj["description"] = (f"the {alt} of the array seeded at the {_ordinal(k)} backward "
                                  f"({arrays[0]['array_site']}): the loss the script prints; the backward "
                                  f"differentiates the seed-weighted sum instead")
        what = (f"backward {k} is seeded so that it differentiates {run.objective:.6g} (the seed-weighted sum)"
                if not multi else
                f"backwards {', '.join(str(k + o) for o in cap.obj_offsets)} of iteration {cap.iteration} are seeded "
                f"so that together they differentiate {run.objective:.6g} (the sum of their seed-weighted sums, a "
                f"backward(loss) seeded with 1)")
        finding = {
            "id": "seed_objective_mismatch", "classes": ["seed_mismatch"],
            "detail": (f"{what}, but the loss the script prints is {', '.join(f'{v:.6g}' for v in vals[:3])}"
                       + (f", the {alt} of the seeded array" if alt else "")),
            "data": {"weighted_sum": run.objective, "printed": vals, "matches": alt}}
        if multi:
            finding["tentative"] = True
        findings.append(finding)
    if info["kind"] != "seeded":
        return
    if cap.objective_reduction is None:
        assumptions.append("the objective is the seed-weighted sum of the arrays seeded by grads={...} "
                           "(the function whose gradient that backward computes)")
    else:
        assumptions.append(f"the objective is the loss the script prints, the {cap.objective_reduction} of "
                           f"the seeded array (it matches the printed value; the seed-weighted sum does not)")


def _check_seed_buffers(cap, run, findings):
    """Flag a seed buffer of the k-th backward that seeds the next iteration's backward changed (``cap.stale_seed``)."""
    k = cap.k
    info = run.kth
    nxt = run.next_info or {}
    for (buf, before), a_site in zip(info.get("buffers") or [], info.get("buffer_sites") or []):
        for buf2, now in nxt.get("buffers") or []:
            if buf2 is buf and not np.array_equal(before, now):
                cap.stale_seed = True
                where = format_site(*a_site) if a_site else "?"
                findings.append({
                    "id": "seed_buffer_reused", "classes": ["stale_gradient_read"],
                    "detail": (f"the seed buffer of the array allocated at {where} "
                               + ("(its .grad set by hand) " if info.get("hand") else "(a grads={...} value) ")
                               + f"seeds backward {k} and the same buffer, changed since (sum {float(np.sum(before)):.6g} -> "
                               f"{float(np.sum(now)):.6g}), seeds backward {k + cap.per_iteration}: the next "
                               f"iteration reads what this one left in it"),
                    "data": {"array_site": where, "seed_sum_before": float(np.sum(before)),
                             "seed_sum_next": float(np.sum(now))}})


def _explicit_init(version: str) -> bool:
    """True for a Warp release that needs an explicit ``wp.init()`` before its first array (1.0 and 1.1; Warp
    initialises itself on first use from 1.2.0, the first supported release where it does: 1.2.2)."""
    try:
        major, minor = (int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return False
    return (major, minor) < (1, 2)


def _param_rows(chosen):
    """The summary's ``params`` entries: one per chosen param (site, dtype, shape, why chosen, who uses its .grad)."""
    params = []
    for c in chosen:
        a = c["obj"]
        params.append({"name": c["name"], "site": format_site(*c["site"]), "file": c["site"][0], "line": c["site"][1],
                       "occurrence": c["site"][2], "dtype": _dtype(a.dtype), "shape": [int(s) for s in a.shape],
                       "chosen_by": c.get("chosen_by"), "grad_used_by": c.get("consumed")})
    return params
