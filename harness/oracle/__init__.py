"""An independent ground-truth oracle for Warp gradient programs.

It shares no module with the reference engine (``defects4warp.engines``,
``defects4warp.measure``, ``defects4warp.probes``, ``defects4warp.isolation``): each variant
runs in its own subprocess (:mod:`defects4warp.oracle.worker`, launched by
:mod:`defects4warp.oracle.runner`), which measures central finite differences of
``objective()`` on every coordinate with per-coordinate steps, the
objective's computational noise, and ``gradient()`` three times, and returns
a verdict: ``agrees``, ``wrong``, ``unresolved``, ``refused`` or ``error``.

Stable API (used by ``defects4warp validate`` and by mutant admission)::

    measure_variant(path, *, device="cpu", scale="small", python=None, timeout_s=300.0, **knobs) -> dict
    compare_pair(wrong_path, right_path, *, device="cpu", scale="small", python=None,
                 timeout_s=300.0, objectives_differ=False, **knobs) -> dict

The method, thresholds and sources: docs/oracle.md.
"""

from .api import VERDICTS, compare_pair, measure_variant, pair_stats, same_point

__all__ = ["VERDICTS", "compare_pair", "measure_variant", "pair_stats", "same_point"]
