"""Measurement subprocess: load one variant and run a list of probes on it.

Run as ``python -m defects4warp.probes.worker PATH --device cpu --scale small
--out RESULT.json [--options JSON] [--script SPEC.json | --script JSON]``. It
imports the variant's ``problem.py`` (so a crash, hang or memory blow-up stays
in this process) or, with ``--script`` (a :class:`defects4warp.capture.ScriptSpec`
as JSON, or the path of a file holding it), captures the Problem from the
user's training script (:func:`defects4warp.capture.capture_problem`; the capture
summary is kept under ``capture`` and its findings join the trace's),
checks the Problem protocol, then runs the probes named in
``options["probes"]`` (default :data:`defects4warp.probes.DEFAULT_PROBES`), in
that order, on one shared :class:`defects4warp.probes.context.Context`, then the
probes a listed one asked for (:data:`defects4warp.probes.REQUESTED`). Each probe
is a module of :mod:`defects4warp.probes`; ``options["knobs"]`` overrides their
keyword defaults per probe, e.g. ``{"knobs": {"fd": {"coords": 8}}}``.

The result is one JSON document (keys: ``protocol``, one key per probe that
ran, ``errors``, ``cost``, ``warp_version``, and ``code``: the harness modules
this process imported with their digests, :func:`defects4warp.provenance.loaded_modules`,
so a stored measurement is current while none of them changed), rewritten atomically after
every probe, so what was measured survives a later crash. Probes return data;
judging it is the engine's (or the oracle's) business.

Options (all optional):

``probes``   list of probe names, in order
``knobs``    ``{probe: {knob: value}}``
``seed``     seed of the random coordinates and directions (default 0)
``pinned_seed`` the seed passed to ``set_seed`` for a stochastic forward
             (default 1234)

The tracker probe turns ``wp.config.verify_autograd_array_access`` on before
the program is built (every module then compiles anew); the trace probe
wraps the first gradient() call in the runtime trace.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import time
import traceback
import warnings

from ..kernel_cache import private_kernel_cache
from ..provenance import loaded_modules
from . import DEFAULT_PROBES, REQUESTED, get
from .context import Context, atomic_write

COMPILE_PATTERN = re.compile(r"Module (?P<module>\S+) \S+ load on device '(?P<device>[^']+)' took (?P<ms>[\d.]+) ms\s+\((?P<how>compiled|cached)\)")

#: Probes without which a measurement cannot be judged: a failure in them stops the run.
ESSENTIAL = ("determinism",)


class _Capture(io.TextIOBase):
    """A text stream that keeps everything written to it, tagged by stage."""

    def __init__(self):
        self.chunks = []
        self.stage = "load"

    def write(self, s):
        if s:
            self.chunks.append((self.stage, s))
        return len(s)

    def text(self, stage=None):
        return "".join(s for st, s in self.chunks if stage is None or st == stage)


def _device_start(ctx):
    """On a CUDA device, start timing with CUDA events (absent on CPU, not zero)."""
    if not str(ctx.doc.get("device", "")).startswith("cuda"):
        return None
    try:
        import warp as wp

        ev = wp.Event(ctx.doc["device"], enable_timing=True)
        wp.record_event(ev)
        return ev
    except Exception as exc:  # noqa: BLE001 - cost figures must never break a measurement
        ctx.doc["cost"]["device_note"] = f"CUDA timing unavailable: {type(exc).__name__}: {exc}"
        return None


def _device_stop(ctx, ev0):
    """Device seconds between the CUDA events and the memory pool's peak bytes in use."""
    if ev0 is None:
        return
    try:
        import warp as wp

        ev1 = wp.Event(ctx.doc["device"], enable_timing=True)
        wp.record_event(ev1)
        ctx.doc["cost"]["device_s"] = wp.get_event_elapsed_time(ev0, ev1) / 1000.0
        ctx.doc["cost"]["device_peak_bytes"] = int(wp.get_mempool_used_mem_high(ctx.doc["device"]))
    except Exception as exc:  # noqa: BLE001
        ctx.doc["cost"]["device_note"] = f"CUDA cost unavailable: {type(exc).__name__}: {exc}"


def _compiles(doc: dict, cap: _Capture) -> None:
    comp = [m.groupdict() for m in COMPILE_PATTERN.finditer(cap.text())]
    doc["cost"]["compiles"] = sum(1 for c in comp if c["how"] == "compiled")
    doc["cost"]["compile_s"] = sum(float(c["ms"]) for c in comp if c["how"] == "compiled") / 1000.0


def _load(path, device, scale, out, opt, script, names, knobs, doc, cap, t0):
    """:func:`run`'s load step: ``(probes, ctx, kcache)`` (None where not reached); failures go to ``doc["errors"]``."""
    probes = ctx = kcache = None
    try:
        probes = [get(n) for n in names]
        import warp as wp

        doc["warp_version"] = wp.config.version
        atomic_write(out, doc)
        kcache = private_kernel_cache()  # Warp 1.0-1.2: a shared cache can serve another program's module
        wp.config.verify_autograd_array_access = "tracker" in names
        wp.init()
        from ..problem import check_problem, import_variant

        if script is not None:
            from ..capture import ScriptSpec
            from ..capture.core import capture_problem

            spec = script if isinstance(script, ScriptSpec) else ScriptSpec.from_json(script)
            doc["script"] = spec.to_dict()
            cap.stage = "capture"
            problem = capture_problem(path, spec, device, timeout_s=float(opt.get("capture_timeout_s", 120.0)),
                                      screen=True)
            cap.stage = "load"
            doc["capture"] = problem.capture_summary()
            doc["protocol"] = check_problem(problem, src=spec.entry)
        else:
            module = import_variant(path)
            problem = module.make_problem(device, scale)
            doc["protocol"] = check_problem(problem)
        doc["cost"]["load_s"] = time.perf_counter() - t0
        ctx = Context(problem, doc, knobs, out, cap, str(path), seed=int(opt.get("seed", 0)))
        ctx.pinned_seed = int(opt.get("pinned_seed", 1234))
        ctx.want_trace = "trace" in names
        ctx.tracker_on = "tracker" in names
        ctx.save()
    except BaseException as exc:  # noqa: BLE001 - recorded, then the worker exits non-zero
        doc["errors"].append({"probe": "load", "error": f"{type(exc).__name__}: {exc}",
                              "traceback": traceback.format_exc(limit=8)})
    return probes, ctx, kcache


def _run_probe(ctx, pr) -> bool:
    """Run probe ``pr`` with its knobs, recording its seconds under ``cost.probe_s`` and a failure
    under ``errors``; False when it failed."""
    t_probe = time.perf_counter()
    try:
        pr.measure(ctx, **ctx.knobs_for(pr.name, pr.knobs))
        return True
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a program calling sys.exit is recorded too
        ctx.doc["errors"].append({"probe": pr.name, "error": f"{type(exc).__name__}: {exc}",
                                  "traceback": traceback.format_exc(limit=8)})
        ctx.stage(None)
        return False
    finally:
        ctx.doc["cost"]["probe_s"][pr.name] = round(time.perf_counter() - t_probe, 4)


def run(path: str, device: str, scale: str, out: str, options: dict | None = None, script=None) -> dict:
    """Measure the variant at ``path``; write and return the result document.

    ``script`` (a :class:`defects4warp.capture.ScriptSpec`, its JSON or dict, or
    None): capture the Problem from that script instead of importing
    ``problem.py``; a :class:`defects4warp.capture.CaptureError` is recorded as a
    ``load`` error whose message says what was missing.

    Raises nothing: a failure to load is recorded under ``errors`` with probe
    ``load``; a failing probe is recorded and the next one runs (except after
    an essential probe, :data:`ESSENTIAL`).
    """
    opt = dict(options or {})
    names = list(opt.get("probes") or DEFAULT_PROBES)
    knobs = dict(opt.get("knobs") or {})
    t0 = time.perf_counter()
    doc = {"device": device, "scale": scale, "options": {"probes": names, "knobs": knobs}, "errors": [], "cost": {}}
    cap = _Capture()
    with contextlib.redirect_stdout(cap), contextlib.redirect_stderr(cap), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: cap.write(f"{cat.__name__}: {msg}\n")
        probes, ctx, kcache = _load(path, device, scale, out, opt, script, names, knobs, doc, cap, t0)
        if ctx is not None:
            ev0 = _device_start(ctx)
            doc["cost"]["probe_s"] = {}
            for pr in probes:
                if not _run_probe(ctx, pr) and pr.name in ESSENTIAL:
                    break
            for name in [n for n in REQUESTED if n in ctx.requested]:  # asked for by a listed probe, after them
                _run_probe(ctx, get(name))
            doc["running"] = None
            _merge_capture_findings(doc)
            _device_stop(ctx, ev0)
            _compiles(doc, cap)
    doc["cost"]["wall_s"] = time.perf_counter() - t0
    if ctx is not None:
        doc["cost"].update({"objective_evals": ctx.n_obj, "gradient_evals": ctx.n_grad})
    doc["log_tail"] = cap.text()[-4000:]
    doc["code"] = loaded_modules()  # what took this measurement (defects4warp.provenance)
    atomic_write(out, doc)
    if kcache is not None:
        kcache.cleanup()
    return doc


def _merge_capture_findings(doc: dict) -> None:
    """Add the capture's findings (runtime observations of the script beyond the
    captured iteration, e.g. a ``.grad`` carried into the next one) to the trace's."""
    found = (doc.get("capture") or {}).get("findings") or []
    tr = doc.get("trace")
    if not found or not isinstance(tr, dict) or not isinstance(tr.get("findings"), list):
        return
    have = {f.get("id") for f in tr["findings"]}
    for f in found:
        if f.get("id") not in have:
            tr["findings"].append(dict(f, call=0, detail="(capture) " + f.get("detail", "")))


def _script_arg(text: str | None):
    """The ``--script`` value: JSON text, or the path of a file holding it."""
    if not text:
        return None
    if text.lstrip().startswith("{"):
        return text
    with open(text) as f:
        return f.read()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--scale", default="small", choices=["small", "production"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--options", default="{}", help="JSON object: probes, knobs, seed, pinned_seed, capture_timeout_s")
    ap.add_argument("--script", default=None, help="a ScriptSpec as JSON, or a file holding it: capture the "
                    "Problem from the folder's training script instead of importing problem.py")
    a = ap.parse_args(argv)
    doc = run(a.path, a.device, a.scale, a.out, json.loads(a.options), script=_script_arg(a.script))
    return 3 if any(e["probe"] in ("load",) + ESSENTIAL for e in doc["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
