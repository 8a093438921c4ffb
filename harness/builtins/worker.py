"""Worker of the builtins conformance suite: ``python -m defects4warp.builtins.worker``.

Runs inside the interpreter of one Warp release (PYTHONPATH = the repository
root) and writes one JSON file:

``enumerate --out FILE``
    ``{"warp": version, "registry": {"names": int, "overloads": int,
    "differentiable": int|None}, "specs": [spec, ...]}`` (see :mod:`defects4warp.builtins.suite`).
``measure --out FILE --ids FILE [--device cpu] [--points 3] [--seed 0]``
    ``{"warp": version, "cells": {id: cell}}`` for the ids listed (one per
    line) in ``--ids``; the specs are enumerated again here, so ids unknown
    to this release come back as ``absent``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile


def _write(path, doc):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".part-")
    from ..jsonio import normal_mode

    normal_mode(fd)  # the umask's mode, not mkstemp's 0600
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, allow_nan=False, default=str)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="defects4warp.builtins.worker")
    ap.add_argument("verb", choices=["enumerate", "measure"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ids")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--points", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import warp as wp

    wp.config.quiet = True
    wp.init()
    from . import check, suite

    specs = suite.enumerate_specs()
    if args.verb == "enumerate":
        reg = suite.registry()
        ovs = [o for f in reg.values() for o in suite._overloads(f)]
        flags = [getattr(o, "is_differentiable", None) for o in ovs]
        _write(args.out, {"warp": wp.config.version, "registry": {
            "names": len(reg), "overloads": len(ovs),
            "differentiable": None if any(x is None for x in flags) else sum(bool(x) for x in flags)},
            "specs": specs})
        return 0
    with open(args.ids) as f:
        ids = [line.strip() for line in f if line.strip()]
    by_id = {s["id"]: s for s in specs}
    chosen = [by_id[i] for i in ids if i in by_id]
    cells = {i: {"state": "absent"} for i in ids if i not in by_id}
    if chosen:
        cells.update(check.measure(chosen, device=args.device, points=args.points, seed=args.seed,
                                   log=lambda m: print(m, file=sys.stderr)))
    _write(args.out, {"warp": wp.config.version, "cells": cells})
    return 0


if __name__ == "__main__":
    sys.exit(main())
