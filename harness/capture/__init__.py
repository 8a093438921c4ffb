"""Programs as users write them: capture a Problem from a running training script.

``ScriptSpec``, ``CaptureError``, ``site_matches``, ``parse_site`` and
``format_site`` import neither Warp nor NumPy (the parent harness process
uses them); ``capture_problem`` and ``CapturedProblem`` are imported from
:mod:`defects4warp.capture.core` on first use (inside the measurement worker).
See :mod:`defects4warp.capture.core` for how the capture works and its limits.
"""

from __future__ import annotations

from .spec import CaptureError, ScriptSpec, format_site, parse_site, site_matches

__all__ = ["ScriptSpec", "CaptureError", "capture_problem", "CapturedProblem", "parse_site", "format_site",
           "site_matches"]


def __getattr__(name):
    if name in ("capture_problem", "CapturedProblem", "DEFAULT_TIMEOUT_S"):
        from . import core

        return getattr(core, name)
    raise AttributeError(name)
