"""Replace the checks of some cases in a ``validate --json`` document with a
later run's, e.g. after labels were corrected for those cases only.

Usage::

    PYTHONPATH=. python scripts/merge_validation.py BASE.json PATCH.json OUT.json [ROLE]

For every release of PATCH, the checks of the cases PATCH holds replace
BASE's; counts and the failure list are recomputed from the checks, wall
times add up and so do the counts of checks they paid for (``measured``,
see :func:`defects4warp.report.pages.upgrade_audit.measured_checks`; ``reused`` stays BASE's),
and ``assembled_from`` records both inputs (their case counts and dates;
ROLE says why PATCH was measured, default "cases re-validated after their
labels changed"). The result is what ``defects4warp version-matrix`` and
``pages`` render.
"""

from __future__ import annotations

import datetime
import json
import sys

from defects4warp.report.pages.upgrade_audit import measured_checks
from defects4warp.run.runner import write_json_atomic
from defects4warp.validate import counts


DEFAULT_ROLE = "cases re-validated after their labels changed"


def merge(base: dict, patch: dict, role: str = DEFAULT_ROLE) -> dict:
    """BASE with the checks of PATCH's cases replaced, release by release (see the module docstring)."""
    out = json.loads(json.dumps(base))
    for rel, r in patch["releases"].items():
        slot = out["releases"].setdefault(rel, {"wall_s": 0.0, "checks": [], "reused": 0})
        # the summed wall time pays for the base's measured checks (replaced ones too) and the patch's
        slot["measured"] = measured_checks(slot) + measured_checks(r)
        cases = {c["case"] for c in r["checks"]}
        slot["checks"] = [c for c in slot["checks"] if c["case"] not in cases] + r["checks"]
        slot["checks"].sort(key=lambda c: (c["case"], c["variant"], c["scale"]))
        slot["counts"] = counts(slot["checks"])
        slot["wall_s"] = float(slot.get("wall_s") or 0.0) + float(r.get("wall_s") or 0.0)
    out["failures"] = [f"Warp {rel}: {c['case']}/{c['variant']}@{c['scale']}: {c['status']}: {c['message']}"
                       for rel, r in out["releases"].items() for c in r["checks"]
                       if c["status"] in ("failed", "unresolved")]
    out["wall_s"] = float(base.get("wall_s") or 0.0) + float(patch.get("wall_s") or 0.0)
    out["measured_on"] = max(base.get("measured_on") or "", patch.get("measured_on") or "") or \
        datetime.date.today().isoformat()
    out["assembled_from"] = [
        {"checks": sum(len(r["checks"]) for r in d["releases"].values()), "measured_on": d.get("measured_on"),
         "role": role} for d, role in ((base, "base"), (patch, role))]
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    base, patch = (json.load(open(p)) for p in argv[:2])
    write_json_atomic(argv[2], merge(base, patch, *argv[3:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
