"""Arrays named as the script wrote them, for text a user reads (assumptions, errors, candidate lists).

The runtime trace labels arrays ``A0``, ``A1``, ... (:mod:`defects4warp.measure.recorder`); those labels
are internal and change from run to run. Text the capture prints names an array by the variable its
allocating line assigns and its allocation site (``x (train.py:18)``), a gradient buffer by its owner
(``the .grad of x (train.py:18)``: Warp allocates ``.grad`` inside ``wp.array``, so it has no site of its
own), and an array the script did not allocate by its dtype and shape.
"""

from __future__ import annotations

from .spec import format_site

#: How many allocation sites a ``--param`` candidate list shows before ``and N more``.
MAX_LISTED = 8


def array_words(label, arrays: dict, site_of: dict, name_of=None) -> str:
    """How the user knows the array the trace labels ``label``.

    Parameters
    ----------
    label : str
        Trace label (``"A12"``).
    arrays : dict
        The trace's array table, ``{label: {"grad_of", "dtype", "shape", ...}}``.
    site_of : dict
        ``{label: (file, line, occurrence) or None}``: where the script allocated each array.
    name_of : callable, optional
        ``name_of(site) -> str or None``: the variable the allocating line (or its caller's) assigns.

    Returns
    -------
    str
        ``"x (train.py:18)"``, ``"the array allocated at train.py:18"``, ``"the .grad of x (train.py:18)"``
        or ``"an array the script did not allocate (float32, shape (3,))"``; never the label.
    """
    site = site_of.get(label)
    if site:
        name = name_of(site) if name_of is not None else None
        return f"{name} ({format_site(*site)})" if name else f"the array allocated at {format_site(*site)}"
    info = arrays.get(label) or {}
    owner = info.get("grad_of")
    if owner is not None and owner != label:
        return "the .grad of " + array_words(owner, arrays, site_of, name_of)
    shape = tuple(info.get("shape") or ())
    return f"an array the script did not allocate ({info.get('dtype', '?')}, shape {shape})"


def ranked_candidates(candidates, used_labels, objs: dict, site_of: dict, name_of=None,
                      limit: int = MAX_LISTED) -> list:
    """The arrays a user can name with ``--param``, most likely first, one entry per allocation line.

    Order: the arrays the capture would choose as params (``why_not`` None), then the other
    ``requires_grad`` arrays the iteration's launches read and its tapes never write (``candidates``,
    in the order of their reason: ``.grad`` unused, then the rest), then the other ``requires_grad``
    arrays the iteration used (intermediates its recorded launches write); within a rank, a single array
    before a line that allocated several the user cannot tell apart (loop temporaries: same line, same
    variable name, grouped as one entry), then by site. Arrays of one line with different names (a helper's
    ``return wp.array(...)`` called for ``a`` and ``b``) stay apart, each with its occurrence (``train.py:10:2``).

    Parameters
    ----------
    candidates : list of dict
        :func:`defects4warp.capture.discovery._param_candidates`' entries (``label``, ``site``, ``why_not``).
    used_labels : iterable of str
        Labels of every array the iteration's launches and copies read or write.
    objs, site_of : dict
        ``{label: wp.array}``, ``{label: (file, line, occurrence) or None}``.
    name_of : callable, optional
        ``name_of(site) -> str or None`` (the variable the allocation is assigned to).
    limit : int, default :data:`MAX_LISTED`
        Entries shown; the rest are counted in a last ``"and N more line(s)"`` entry.

    Returns
    -------
    list of str
        ``["vel (loop.py:18): the capture's choice", "xs (loop.py:20) x19 (19 arrays allocated at that line): ...",
        ...]``.
    """
    why = {c["label"]: c.get("why_not") for c in candidates}
    groups = {}  # (file, line, variable name) -> [rank, [labels]]: one line's arrays the user cannot tell apart
    for lab in used_labels:
        site = site_of.get(lab)
        if not site or not getattr(objs.get(lab), "requires_grad", False):
            continue
        if lab in why:
            w = why[lab]
            rank = 0 if w is None else (1 if "not used" in str(w) else 2)
        else:
            rank = 3
        name = name_of(site) if name_of is not None else None
        g = groups.setdefault((site[0], site[1], name), [rank, []])
        g[0] = min(g[0], rank)
        g[1].append(lab)
    reason = {0: "the capture's choice", 3: "written by a launch its tapes recorded (an intermediate)"}
    order = sorted(groups.items(), key=lambda kv: (kv[1][0], len(kv[1][1]) > 1, kv[0][:2], kv[0][2] or ""))
    out = []
    for (f, line, name), (rank, labs) in order[:limit]:
        first = min(labs, key=lambda lab: site_of[lab][2] or 1)
        where = format_site(*site_of[first]) if len(labs) == 1 else format_site(f, line)
        text = (f"{name} ({where})" if name else where) + (f" x{len(labs)} ({len(labs)} arrays allocated at that "
                                                            "line)" if len(labs) > 1 else "")
        r = reason.get(rank) or next((why[lab] for lab in labs if why.get(lab)), "")
        out.append(f"{text}: {r}" if r else text)
    if len(order) > limit:
        out.append(f"and {len(order) - limit} more line(s)")
    return out
