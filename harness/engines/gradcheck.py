"""``warp-gradcheck``: the checks a Warp user already has, as a peer engine.

What a Warp user would run by hand on a program whose gradient they doubt:

* ``wp.autograd.gradcheck_tape`` on the tape the program records in one
  ``gradient()`` call (:mod:`defects4warp.probes.gradcheck`: every recorded
  kernel's Jacobian by autodiff against central finite differences at
  Warp's default ``eps=1e-4``, ``atol=1e-3``, ``rtol=1e-2``);
* the overwrite tracker, ``wp.config.verify_autograd_array_access = True``
  during the run (:mod:`defects4warp.probes.tracker`; warnings raised while the
  program loads, evaluates its objective or computes its first gradient
  count, :data:`defects4warp.engines.assess.tracker.TRACKER_STAGES`).

Detection only: verdict ``bug`` when a checked tape fails gradcheck or the
tracker warns; ``no_bug`` when at least one tape with kernel launches was
checked, every one passed and the tracker stayed silent; ``inconclusive``
when no tape could be checked (the program never called ``tape.backward``,
or ``gradcheck_tape`` raised) and the tracker stayed silent. No class is
named beyond the generic ``correct`` of a ``no_bug``: these tools do not say
what kind of defect they found, so a ``bug`` carries no class (its class
accuracy is 0 by construction; compare detection and false-positive rates).
"""

from __future__ import annotations

from .. import __version__
from .assess.tracker import TRACKER_STAGES
from .base import WorkerEngine
from .base import ev as _ev


def judge_gradcheck(doc: dict, stages: tuple | None = None) -> dict:
    """The verdict of the gradcheck + tracker document ``doc`` (see the module docstring).

    Parameters
    ----------
    doc : dict
        Worker document with the ``gradcheck`` and ``tracker`` probes' data.
    stages : tuple[str], optional
        Tracker stages whose warnings count (default
        :data:`defects4warp.engines.assess.tracker.TRACKER_STAGES`).

    Returns
    -------
    dict
        ``verdict``, ``classes``, ``signature`` (None), ``evidence``.
    """
    if stages is None:
        stages = TRACKER_STAGES
    evidence = []
    gc = doc.get("gradcheck") or {}
    tapes = gc.get("tapes") or []
    failed = [t for t in tapes if t.get("ok") is False]
    passed = [t for t in tapes if t.get("ok") is True and t.get("launches")]
    for t in tapes:
        if t.get("error"):
            evidence.append(_ev("gradcheck", True, f"gradcheck_tape raised on a tape of {t.get('launches')} launch(es): "
                                f"{t['error']}", t))
        else:
            evidence.append(_ev("gradcheck", bool(t.get("ok")), f"gradcheck_tape on a tape of {t.get('launches')} "
                                f"launch(es) of {', '.join(t.get('kernels') or []) or 'no kernel'}: "
                                f"{'passed' if t.get('ok') else 'FAILED'}", t))
    if not tapes:
        evidence.append(_ev("gradcheck", True, f"gradient() ran backward on {gc.get('backward_calls', 0)} tape(s): "
                            "nothing for gradcheck_tape to check", None))
    warns = [w for w in (doc.get("tracker") or {}).get("warnings", []) if set(w.get("stages", [])) & set(stages)]
    if warns:
        evidence.append(_ev("tracker", False, f"overwrite tracker: {len(warns)} write-after-read warning(s)", warns))
    else:
        evidence.append(_ev("tracker", True, "overwrite tracker: no warning", None))
    if failed or warns:
        return {"verdict": "bug", "classes": [], "signature": None, "evidence": evidence}
    if passed:
        return {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": None, "evidence": evidence}
    return {"verdict": "inconclusive", "classes": [], "signature": None, "evidence": evidence}


class WarpGradcheckEngine(WorkerEngine):
    """``gradcheck_tape`` on the recorded tape plus the overwrite tracker; detection only.

    Parameters
    ----------
    timeout_s, options, python
        As :class:`defects4warp.engines.base.WorkerEngine`; ``options["knobs"]["gradcheck"]``
        overrides the probe's knobs (``eps``, ``atol``, ``rtol``, ``max_tapes``,
        ``max_inputs_per_var``, ``max_outputs_per_var``; :func:`defects4warp.probes.gradcheck.measure`).
    """

    name = "warp-gradcheck"
    version = __version__
    options = {"probes": ["determinism", "tracker", "gradcheck"], "knobs": {"determinism": {"calls": 1}}}

    def judge(self, doc: dict, path=None) -> dict:
        return judge_gradcheck(doc)
