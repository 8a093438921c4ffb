"""What the discovery run's trace says: the iteration's reads and writes, the params and why others are not,
their names, and the assumptions about the iteration's bounds.
"""

from __future__ import annotations

import os
import re
import sys

from ..measure import trace as _trace
from .iteration import grad_update_writes
from .naming import ranked_candidates
from .spec import CaptureError, format_site, is_param_name, site_matches


def _consumed(events, label, start, stop, arrays=None):
    """How the script used the .grad of array ``label`` in ``events[start:stop]``: ``(sorted list of str,
    seq of the first use)``, or ``(None, None)``. A ``.grad`` read whose only use is zeroing or filling it
    does not count. ``arrays`` (the trace's array table) names the grad arrays known before
    (``tape.gradients[a]``)."""
    grads = {lab for lab, info in (arrays or {}).items() if info.get("grad_of") == label}
    how, zeroed, first = set(), False, None
    for ev in events[start:stop]:
        k = ev["kind"]
        use = None
        if k in ("grad_read", "grad_assign", "grad_numpy") and ev.get("array") == label:
            grads.add(ev["grad"])
            use = ".grad.numpy()" if k == "grad_numpy" else ".grad read"
        elif k == "grad_numpy" and ev.get("grad") in grads:
            use = ".grad.numpy()"
        elif k == "launch" and grads & set(ev.get("reads") or []):
            use = "passed to a launch"
        elif k == "host" and ev.get("src") in grads:
            use = f"wp.{ev['op']}"
        elif k == "host" and ev.get("dest") in grads and ev.get("op") in ("zero_", "fill_"):
            zeroed = True
        if use is not None:
            how.add(use)
            if first is None:
                first = ev["seq"]
    if not how or (how == {".grad read"} and zeroed):
        return None, None
    return sorted(how), first


def _carried(events, label, start, arrays, later_seeds=()):
    """Whether the .grad of ``label`` (or a copy of it) seeds a backward after ``start``, or is copied into
    another array's .grad (by a host copy or a launch outside any tape): an adjoint handed from one window's
    tape to the previous one, not a parameter's gradient."""
    derived = {lab for lab, info in (arrays or {}).items() if info.get("grad_of") == label}
    other_grads = {lab for lab, info in (arrays or {}).items() if info.get("grad_of") not in (None, label)}
    for ev in events[start:]:
        if ev["kind"] in ("grad_read", "grad_numpy") and ev.get("array") == label:
            derived.add(ev["grad"])
        elif ev["kind"] == "host" and ev.get("src") in derived and ev.get("dest"):
            if ev["dest"] in other_grads:
                return True  # copied into another array's .grad: the seed of the next segment's backward
            derived.add(ev["dest"])
        elif (ev["kind"] == "launch" and ev.get("tape") is None and ev.get("active_tape") is None
              and derived & set(ev.get("reads") or ()) and other_grads & set(ev.get("writes") or ())):
            return True
        elif ev["kind"] == "backward" and any(sd.get("seed") in derived for sd in ev.get("seeds") or []):
            return True
    return bool(derived & set(later_seeds))


def _reachable(events, sinks, before, arrays=None, since=None):
    """Arrays from which one of ``sinks`` is reachable through the launches and host copies before ``before``.

    With ``arrays`` (the trace's array table) and ``since`` (a seq), each backward from ``since`` on is an
    edge too: from the arrays its tape's recorded launches (current epoch) read and its seeds to the ``.grad``
    arrays of those arrays. The values an inner solve inside the iteration reaches (an iterate its update
    moves along the gradient of its own tape's energy) then depend on what that energy read.
    """
    edges = _trace._edges(events, before)
    if arrays is not None and since is not None:
        grad_of = {}
        for lab, info in arrays.items():
            if info.get("grad_of") is not None:
                grad_of.setdefault(info["grad_of"], set()).add(lab)
        rec, extra = {}, []
        for ev in events[:before]:
            if ev["kind"] == "launch" and ev.get("tape") is not None:
                rec.setdefault((ev["tape"], ev.get("epoch")), []).append(ev)
            elif ev["kind"] == "backward" and ev["seq"] >= since:
                launches = rec.get((ev.get("tape"), ev.get("epoch"))) or []
                r = {a for e in launches for a in e["reads"]} | {sd["seed"] for sd in ev.get("seeds") or []
                                                                 if sd.get("seed")}
                on = {a for e in launches for a in list(e["reads"]) + list(e["writes"])}
                w = set().union(*[grad_of.get(a, set()) for a in on]) if on else set()
                extra.append((ev, r, w))
        edges = sorted(edges + extra, key=lambda x: x[0]["seq"])
    needed = set(sinks)
    for ev, r, w in reversed(edges):
        if w & needed:
            needed |= r
    return needed


def _var_name(path, line):
    """The assigned name on a source line ``NAME = ...`` (for a readable param key), else None."""
    try:
        with open(path) as f:
            text = f.readlines()[line - 1]
    except (OSError, IndexError):
        return None
    m = re.match(r"\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)", text)
    return m.group(1) if m else None


def _assigns_list(path, line):
    """Whether source line ``line`` assigns a list built in place (``NAME = [...]``, a list comprehension), so
    that the n-th array allocated there is the list's element n - 1."""
    try:
        with open(path) as f:
            text = f.readlines()[line - 1]
    except (OSError, IndexError):
        return False
    return bool(re.match(r"\s*(?:self\.)?[A-Za-z_]\w*\s*(?::[^=]+)?=(?!=)\s*\[", text))


def _iteration_assumptions(cap) -> list:
    """What the capture assumed about the modelled iteration's bounds, in words (see :func:`capture_problem`)."""
    K, k, last = cap.iteration, cap.k, cap.grad_after
    out = []
    at = f" (before the launch at {format_site(*cap.inject_at)})" if getattr(cap, "inject_at", None) else ""
    start = "their allocation" if K == 1 else f"the update of iteration {K - 1}"
    out.append(f"iteration {K} runs from {start} to the update that consumes the params' .grad after backward "
               f"{last}: objective(p) re-runs the script to the iteration's start, sets the params to p there{at}, "
               f"before any launch of the iteration, taped or not, and reads the loss at its backward(s); "
               f"--iteration K models another iteration")
    where = []
    for name, c in (getattr(cap, "consume", None) or {}).items():
        via = (f"the launch at {format_site(*c['site'])}" if c.get("site") else
               "the .numpy() before the next call" if c["offset"] else "the update")
        where.append(f"{name} where {via} reads " + ("its .grad" if c["is_grad"] else
                                                      f"the array allocated at {format_site(*c['array_site'])}"))
    if where:
        out.append("gradient() reads each param's gradient where the script's update consumes it: " + "; ".join(where)
                   + " (params not named here: the .grad right after the iteration's last backward)")
    if cap.per_iteration > 1:
        marks = getattr(cap, "iteration_marks", None) or []
        skipped = _grouped_backwards([(m["n"], m["why"]) for m in marks if not m["counted"]])
        out.append(f"iteration {K} calls backward {cap.per_iteration} times (backward {k} to {last}): gradient() "
                   f"is what the script's update consumes after the last of them (the .grad they accumulated, or the "
                   f"buffer the script summed them into), and the objective is the sum of the losses of backward " + ", ".join(str(k + o) for o in cap.obj_offsets)
                   + (f"; not counted in it: {', '.join(skipped)}" if skipped else ""))
    return out


def _grouped_backwards(pairs) -> list:
    """``[(n, why), ...]`` (backward numbers in order) in words, consecutive backwards with one reason as one
    range: ``["backwards 1 to 150 (why)", "backward 152 (other)"]``."""
    runs = []
    for n, why in pairs:
        if runs and runs[-1][2] == why and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n, why])
    return [(f"backward {a}" if a == b else f"backwards {a} to {b}") + f" ({why})" for a, b, why in runs]


def _iteration_reads_writes(events, bK, w0, w1):
    """``(reads, writes, unrecorded copies)`` of one iteration: the arrays read by every launch and host copy
    between ``w0`` and ``w1`` (taped or not: work before ``with tape:`` that maps the params to an intermediate
    belongs to the iteration) and by the launches the iteration's tapes recorded; the arrays those recorded
    launches write, and those an unrecorded launch inside a tape block writes for a later recorded launch
    (a solver whose adjoint the script registers with ``tape.record_func``, as in Warp's
    example_fluid_checkpoint_custom_backward.py). ``wp.clone``/``wp.copy`` inside a tape block carry the
    params to the loss in the script's intent also when the tape does not record them (Warp 1.0.2 records
    none; 1.1.0 to 1.19.0 only one whose source and destination both have a ``.grad``): their source is read,
    their destination written, and the unrecorded ones are returned to be said in the assumptions."""
    reads, writes, unrecorded = set(), set(), []
    for e in events[w0:w1]:
        if e["kind"] == "launch":
            reads |= set(e["reads"])
        elif e["kind"] == "host" and e.get("src"):
            reads.add(e["src"])
    for bb in bK:
        T, E = bb["tape"], bb["epoch"]
        rec = [e for e in events[: bb["seq"]] if e["kind"] == "launch" and e["tape"] == T and e["epoch"] == E]
        reads |= {a for e in rec for a in e["reads"]}
        writes |= {a for e in rec for a in e["writes"]}
        last_reset = max([e["seq"] for e in events[: bb["seq"]] if e["kind"] == "tape_reset" and e.get("tape") == T]
                         or [-1])
        for e in events[: bb["seq"]]:
            if e["kind"] == "launch" and e.get("tape") is None and e.get("active_tape") == T and e["seq"] > last_reset:
                writes |= {a for a in e["writes"] if any(r["seq"] > e["seq"] and a in r["reads"] for r in rec)}
        for e in events[: bb["seq"]]:
            if e["kind"] != "host" or e.get("op") not in ("clone", "copy"):
                continue
            if e.get("tape") == T and e.get("epoch") == E:
                pass
            elif e.get("tape") is None and e.get("active_tape") == T and e["seq"] > last_reset:
                if e not in unrecorded:
                    unrecorded.append(e)
            else:
                continue
            if e.get("src"):
                reads.add(e["src"])
            if e.get("dest"):
                writes.add(e["dest"])
    return reads, writes, unrecorded


def _computed_from(events, w0, w1, label, sources, grads):
    """The label among ``sources`` from which ``label``'s values are computed in ``events[w0:w1]`` through launches
    outside any tape that read no gradient (``grads``: the ``.grad`` labels; an update reads one) and host copies and
    clones, else None."""
    reached = {}  # label -> the source it was computed from
    for ev in events[w0:w1]:
        if ev["kind"] == "launch" and ev.get("tape") is None and ev.get("active_tape") is None:
            reads, writes = set(ev.get("reads") or ()), set(ev.get("writes") or ())
            if reads & grads:
                continue
        elif ev["kind"] == "host" and ev.get("op") in ("copy", "clone") and ev.get("src") and ev.get("dest"):
            reads, writes = {ev["src"]}, {ev["dest"]}
        else:
            continue
        came = [reached.get(r) or (r if r in sources else None) for r in reads]
        came = [x for x in came if x is not None]
        if came:
            for wlab in writes:
                if wlab not in sources:
                    reached.setdefault(wlab, came[0])
    return reached.get(label)


def _param_candidates(events, rec_arrays, objs, site_of, labels, needed, w1, run, w0=None):
    """``(candidates, [])``: the requires_grad float arrays among ``labels``, each with ``why_not`` (None for a
    param: the loss depends on it, the script uses its ``.grad`` after the iteration's last backward at ``w1``,
    that ``.grad`` seeds no later backward and, with ``w0`` (the iteration's first seq), its values are not computed
    in the iteration from another such param: :func:`_computed_from`, a checkpoint clone)."""
    candidates = []
    for lab in sorted(labels, key=_trace._label_key):
        info = rec_arrays.get(lab, {})
        o = objs.get(lab)
        if o is None or not info.get("float") or not bool(getattr(o, "requires_grad", False)):
            continue
        site = site_of.get(lab)
        why = None
        how, first = _consumed(events, lab, w1, len(events), rec_arrays)
        if lab not in needed:
            why = "the loss does not depend on it"
        elif how is None:
            why = "its .grad is not used after the backward"
        elif _carried(events, lab, w1 + 1, rec_arrays, run.stop_seeds):
            why = "its .grad seeds a later backward (an adjoint handed from one tape to another)"
        elif site is None:
            why = "its allocation was not seen (allocated before the script ran)"
        candidates.append({"label": lab, "site": site, "consumed": how, "first_use": first, "why_not": why, "obj": o})
    # a checkpoint: an array whose values the iteration computes from a param (a rollout's state cloned under a
    # segment's own tape) is an intermediate of the loss's dependence on that param, not a leaf
    if w0 is not None:
        params = {c["label"] for c in candidates if c["why_not"] is None}
        grads = {lab for lab, info in rec_arrays.items() if info.get("grad_of") is not None}
        for c in candidates:
            if c["why_not"] is None:
                src = _computed_from(events, w0, w1, c["label"], params - {c["label"]}, grads)
                if src is not None:
                    c["why_not"] = (f"its values are computed in the iteration from the param allocated at "
                                    f"{format_site(*site_of[src]) if site_of.get(src) else src} (a checkpoint "
                                    f"or an intermediate of the forward), not a leaf")
    # a .grad only taken (``adj = x0.grad``, kept for a hand-over that the loop's last segment never makes) is
    # no use beside params whose gradient a launch, a copy or .numpy() uses
    if any(c["why_not"] is None and set(c["consumed"]) - {".grad read"} for c in candidates):
        for c in candidates:
            if c["why_not"] is None and c["consumed"] == [".grad read"]:
                c["why_not"] = ("its .grad is only taken, never used (no launch, copy or .numpy() reads it), while "
                                "other params' gradients are used")
    return candidates, []


def _override_params(spec, objs, site_of, used_labels, k, name_of=None, candidates=(), events=None, grads=None):
    """The params named by ``--param`` (``spec.params``): allocation sites, or variable names matched with
    ``name_of(site) -> name`` among the arrays the iteration uses; CaptureError when one names no array the
    iteration uses, or one without requires_grad.

    A param kept in two buffers that the script swaps at each update (``step(pa, pa.grad) -> pb; pa, pb = pb,
    pa``) is allocated at one site but lives in the other buffer in every second iteration: when the named
    array is no param of this iteration (``candidates``' ``why_not``) and exactly one param candidate is linked
    to it by such an update in the trace ``events`` (:func:`_swap_partner`; ``grads``: ``{grad label: owner}``),
    that buffer is the param, and its entry says so (``followed``)."""
    chosen = []
    for want in spec.params:
        if is_param_name(want):
            short = want.split(".")[-1]
            hit = [(lab, objs[lab]) for lab in sorted(used_labels, key=_trace._label_key)
                   if lab in objs and site_of.get(lab) and name_of is not None and name_of(site_of[lab]) == short
                   and getattr(objs[lab], "requires_grad", False)]
        else:
            hit = [(lab, o) for lab, o in objs.items() if site_of.get(lab) and site_matches(want, *site_of[lab])]
        if not hit:
            # only arrays the iteration's launches used: a kernel's annotation `wp.array(dtype=...)` also
            # constructs an array (no data) at its `def` line, which is no allocation a user could mean
            seen = ranked_candidates(candidates, used_labels, objs, site_of, name_of)
            what = (f"no requires_grad array named {want}" if is_param_name(want) else f"no array at {want}")
            raise CaptureError(f"{spec.entry}: --param {want}: the script allocates {what} that the launches of "
                               f"iteration {spec.iteration} (from backward {k}) use (its requires_grad arrays, "
                               f"most likely params first: {'; '.join(seen) or 'none seen'})")
        lab, o = hit[0]
        if not getattr(o, "requires_grad", False):
            raise CaptureError(f"{spec.entry}: --param {want}: the array allocated there has requires_grad=False")
        entry = {"label": lab, "site": site_of[lab], "consumed": None, "obj": o, "chosen_by": "--param"}
        partner = _swap_partner(lab, candidates, events, grads) if events is not None and grads else None
        if partner is not None:
            entry = {"label": partner["label"], "site": partner["site"], "consumed": None, "obj": partner["obj"],
                     "chosen_by": "--param", "followed": {"named": lab, "site": site_of[lab]}}
        chosen.append(entry)
    return chosen


def _swap_partner(label, candidates, events, grads):
    """The param candidate that holds the param named ``label`` in this iteration when the script keeps it in
    two buffers swapped at each update, or None: ``label`` itself is no param here (its candidate entry has a
    ``why_not``), and exactly one param candidate (``why_not`` None) of its shape is written by an update launch
    outside any tape that reads ``label``'s ``.grad``, or writes ``label`` reading its own
    (:func:`defects4warp.capture.iteration.grad_update_writes`, the update ``successor_written`` sees)."""
    mine = next((c for c in candidates if c["label"] == label), None)
    if mine is None or mine["why_not"] is None:
        return None
    shape = getattr(mine["obj"], "shape", None)
    linked = []
    for c in candidates:
        if c["why_not"] is not None or c["label"] == label or getattr(c["obj"], "shape", None) != shape:
            continue
        if c["label"] in grad_update_writes(events, 0, label, grads) or \
                label in grad_update_writes(events, 0, c["label"], grads):
            linked.append(c)
    return linked[0] if len(linked) == 1 else None


def _program_modules(cap) -> list:
    """The script's own files that ran in the discovery run: the entry point and every module loaded from the
    variant folder (outside installed packages, environments and hidden folders), relative to the folder, sorted.
    Sibling scripts that were never imported and vendored package copies the script did not load are not in it."""
    from ..paths import is_program_file

    out = {cap.rel(str(cap.entry))}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and f.endswith(".py") and is_program_file(f, cap.folder):
            out.add(cap.rel(os.path.abspath(f)))
    return sorted(out)


def _label_objects(tr, run):
    """Trace label -> array object, from the recorder the discovery run kept."""
    return dict(getattr(run, "by_label", {}) or {})
