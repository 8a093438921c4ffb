"""Tracker: Warp's overwrite tracker (``wp.config.verify_autograd_array_access``).

The worker turns the tracker on before the problem is built when this probe
is on its list (Warp skips its kernel cache while it is on, so every module
is compiled again: the reference engine leaves it off and relies on the
runtime trace, :mod:`defects4warp.probes.trace`). This probe parses the warnings
captured over the whole run, each tagged with the stage that raised it.
"""

from __future__ import annotations

import os
import re

from . import probe

TRACKER_PATTERNS = [
    (
        "launch",
        re.compile(
            r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) ?passed to argument (?P<arg>\w+) in kernel (?P<kernel>\w+) at "
            r"(?P<file>[^\n]+?):(?P<line>\d+) is being written to but has already been read"
        ),
    ),
    (
        "same_kernel",
        re.compile(
            r"Array passed to argument (?P<arg>\w+) in kernel (?P<kernel>\w+) at "
            r"(?P<file>.+?):(?P<line>\d+) is being written to after it has been read from within the same kernel"
        ),
    ),
    (
        "operation",
        re.compile(
            r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) is being written to by (?P<op>[^\n]+?) at "
            r"(?P<file>[^\n]+?):(?P<line>\d+) but has already been read"
        ),
    ),
    ("unattributed", re.compile(r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) is being written to (?:after|but has already)")),
]


def parse(chunks) -> list:
    """Tracker warnings in captured output ``[(stage, text), ...]``, merged by
    (argument or operation, kernel, kind), each with its sites and stages."""
    found = {}
    by_stage = {}
    for stage, text in chunks:
        by_stage[stage] = by_stage.get(stage, "") + text
    for stage, text in by_stage.items():
        taken = []
        for kind, pat in TRACKER_PATTERNS:
            for m in pat.finditer(text):
                if any(a <= m.start() < b for a, b in taken):
                    continue
                taken.append((m.start(), m.end()))
                g = m.groupdict()
                key = (g.get("arg") or g.get("op") or "", g.get("kernel") or "", kind)
                w = found.setdefault(key, {"kind": kind, "arg": g.get("arg"), "kernel": g.get("kernel"),
                                           "operation": g.get("op"), "sites": [], "stages": [], "count": 0})
                w["count"] += 1
                site = f"{os.path.basename(g['file'])}:{g['line']}" if g.get("file") else None
                if site and site not in w["sites"]:
                    w["sites"].append(site)
                if stage not in w["stages"]:
                    w["stages"].append(stage)
    return list(found.values())


@probe("tracker")
def measure(ctx) -> dict:
    """Parse the overwrite tracker's write-after-read warnings from the captured output."""
    out = {"enabled": bool(getattr(ctx, "tracker_on", False)), "warnings": parse(ctx.cap.chunks)}
    ctx.doc["tracker"] = out
    ctx.save()
    return out
