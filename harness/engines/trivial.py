"""Trivial baselines: constant answers, no measurement.

They bound what an engine must beat: ``always-bug`` has detection rate 1 and
false-positive rate 1; ``always-no-bug`` the opposite.
"""

from __future__ import annotations

from .. import __version__


class ConstantEngine:
    """Answers the same verdict (and class) for every variant without running it."""

    version = __version__

    def __init__(self, name: str, verdict: str, class_id: str):
        self.name = name
        self.verdict = verdict
        self.class_id = class_id

    def diagnose(self, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
        return {
            "verdict": self.verdict,
            "classes": [{"id": self.class_id, "score": 1.0}],
            "signature": None,
            "evidence": [{"probe": "none", "clean": True, "finding": "constant answer, nothing measured", "data": None}],
            "cost": {"wall_s": 0.0, "objective_evals": 0, "gradient_evals": 0, "device": device},
        }
