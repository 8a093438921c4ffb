"""The program audit: one user's program, as it is, across Warp releases.

``defects4warp audit path/to/train.py --warp 1.16.0,1.19.0 [-- ARGS]`` runs the
program on each release in that release's cached environment
(:mod:`defects4warp.envs`) and reports, release by release:

* whether it runs (a build error, a refusal or a capture failure is quoted);
* the loss (the objective of the captured backward) and, per param, the
  gradient's norm and its relative change against the first release that ran
  (:func:`relative_change`), from the whole gradient
  (:mod:`defects4warp.program_gradient`, run in the release's interpreter);
* the engine's verdict and top class (its ``diagnose`` on that release; the
  reference engine without its own release differential, which this audit
  replaces);
* the cost: wall seconds, Warp's kernel compile seconds, CPU seconds.

Where the gradient changes between two measured releases, the first release
where it changes: the next one when no supported release lies in between,
else the release differential's bisection
(:func:`defects4warp.engines.release.differential`, the engine's own) over the
supported releases in between. For that interval it names the builtins and
access patterns the program's launched kernels use (transitively through
``@wp.func``s, :func:`defects4warp.engines.assess.source.ran_functions`) whose
measured adjoint changed state there (the builtins conformance data,
``harness/data/builtins``, :func:`defects4warp.report.builtins_page.changes`), the
changelog entries of the releases in the interval
(the evidence table's ``release_changes``, and a changelog table
when one is committed, :func:`changelog_entries`), and ends with one line for
an upgrade ticket (:func:`defects4warp.report.program_audit_report.ticket_line`).

The report is a JSON document (:func:`audit_program`, format
:data:`FORMAT`) and its Markdown
(:func:`defects4warp.report.program_audit_report.audit_program_markdown`).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from packaging.version import InvalidVersion, Version

from .builtins import load as load_builtins
from .builtins import measured_releases as builtins_releases
from .report.builtins_page import changes as builtin_changes
from .engines import get_engine
from .engines.base import diagnose_target
from .envs import RELEASES, ReleaseEnvError, installed_warp_version, list_envs, python_for
from .evidence_table import load_table
from . import sandbox
from .isolation import DEFAULT_FILE_BYTES, DEFAULT_MEMORY_BYTES, run_worker
from .jsonio import _strict
from .machine import describe
from .paths import child_pythonpath, module
from .engines import release as release_probe
from .engines.assess.builtins import access_patterns, is_warp_function
from .engines.assess.source import _norm_kernel, called_names, function_defs, ran_functions
from .probes.worker import COMPILE_PATTERN
from .report.program_audit_report import gradient_wrong, ticket_line

#: Format tag of the program audit's JSON.
FORMAT = "defects4warp-program-audit/1"

#: Relative change of a param's gradient (:func:`relative_change`) above which it counts as changed
#: between two releases. Source: the FD comparison's float64 tolerance
#: (:data:`defects4warp.measure.compare.RTOL`, 1e-4), so that a change counts only where a float64
#: finite-difference check could tell it too. In the measured audits of docs/upgrade-audit.md the
#: release pairs with no adjoint change stayed below it (harbour-buoy-ballast-drift 1.8.1 -> 1.19.0,
#: example_navier_stokes_perturbation 1.16.0 -> 1.19.0, tests/programs/script_vec_fit 1.14.0 -> 1.19.0).
GRAD_RTOL = 1e-4

#: Default wall-clock limit of one measurement (the gradient child, the engine's diagnosis), seconds.
DEFAULT_TIMEOUT_S = 300.0

#: Where a committed Warp changelog table may live (first found wins), relative to the checkout root.
#: The first of these that exists is the changelog table: ``docs/data/warp-changelog-gradients.yaml``
#: (Warp's gradient-related "Fixed" entries, docs/mined.md) first.
#: Format (:func:`changelog_entries`): a JSON (or YAML) list of entries, or ``{"entries": [...]}``, each
#: ``{"release" (or "version"/"fixed_in"), "text" (or "entry"/"summary"/"title"), optional "builtins"
#: (names as in kernel code, or access patterns in brackets), "url", "classes"}``.
CHANGELOG_PATHS = ("docs/data/warp-changelog-gradients.yaml", "docs/data/warp-changelog.json",
                   "harness/data/warp-changelog.json", "docs/data/changelog.json", "harness/data/changelog.json")

#: States of a builtin overload that mean a wrong adjoint (:data:`defects4warp.builtins.DEFECT_STATES`).
_WRONG = ("wrong", "zero")


class ProgramAuditError(ValueError):
    """The audit cannot start (no release to measure, a release list that is not a list of releases)."""


def _v(r):
    try:
        return Version(str(r))
    except InvalidVersion:
        return None


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its waited-for children."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _float(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def relative_change(a, b) -> float:
    """``||b - a|| / max(||a||, ||b||)``: the relative change of a gradient from ``a`` to ``b``.

    The denominator is the larger norm (as :func:`defects4warp.engines.release.changed`), so a change
    from or to a zero gradient reads 1, never 1e+300; the result lies in [0, 2]. Two zero
    gradients give 0. Non-finite entries count as changed unless both sides hold the same
    non-finite value there (then they count as equal).

    Parameters
    ----------
    a, b : array-like of float, same shape

    Returns
    -------
    float
        In [0, 2]; ``inf`` when the shapes differ or a non-finite entry differs.
    """
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        return float("inf")
    fa, fb = np.isfinite(a), np.isfinite(b)
    if np.any(fa != fb) or np.any(~fa & (a != b) & ~(np.isnan(a) & np.isnan(b))):
        return float("inf")
    a, b = np.where(fa, a, 0.0), np.where(fb, b, 0.0)
    den = max(float(np.linalg.norm(a)), float(np.linalg.norm(b)))
    return 0.0 if den == 0.0 else float(np.linalg.norm(b - a) / den)


def param_changes(g_a: dict, g_b: dict) -> dict:
    """``{param: relative change}`` from the gradient child's ``params`` of release a to release b.

    A param with ``values`` on both sides is compared element by element (:func:`relative_change`);
    a larger one by its ``digest`` (0 when equal) and otherwise by its norms (a lower bound of
    the change: ``|n_b - n_a| / max(n_a, n_b)``). A param on one side only reads ``inf``.
    """
    out = {}
    for name in sorted(set(g_a) | set(g_b)):
        a, b = g_a.get(name), g_b.get(name)
        if a is None or b is None or a.get("shape") != b.get("shape"):
            out[name] = float("inf")
        elif "values" in a and "values" in b:
            out[name] = relative_change([_float(x) for x in a["values"]], [_float(x) for x in b["values"]])
        elif a.get("digest") == b.get("digest"):
            out[name] = 0.0
        else:
            na, nb = _float(a.get("norm")), _float(b.get("norm"))
            den = max(abs(na), abs(nb))
            out[name] = float("inf") if not np.isfinite(den) else (0.0 if den == 0 else abs(nb - na) / den)
    return out


def measure_gradient(folder, python: str, *, device: str = "cpu", script=None,
                     timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """Run :mod:`defects4warp.program_gradient` on ``folder`` in interpreter ``python`` (one release).

    The child runs in a new session with the measurement worker's limits (address space on CPU,
    file size; :mod:`defects4warp.isolation`), its output goes to a file, and it is killed with
    every process it started when ``timeout_s`` passes.

    Returns
    -------
    dict
        The child's document (:mod:`defects4warp.program_gradient`), plus ``"wall_s"`` and
        ``"compile_s"`` (Warp's kernel compile seconds, from its "Module ... took X ms (compiled)" lines); on a
        timeout or a child that wrote nothing, ``{"error": why, "output_tail": ...}``.
    """
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="d4w-audit-") as tmp:
        out, log = os.path.join(tmp, "gradient.json"), os.path.join(tmp, "stdout")  # sandbox.run's output file
        cmd = [python, "-m", module("program_gradient"), str(Path(folder).resolve()), "--device", device,
               "--out", out, "--capture-timeout", str(max(1.0, 0.8 * timeout_s))]
        if script is not None:
            spec_file = os.path.join(tmp, "script.json")
            with open(spec_file, "w") as f:
                f.write(script.to_json() if hasattr(script, "to_json") else json.dumps(script))
            cmd += ["--script", spec_file]
        env = dict(os.environ, PYTHONPATH=child_pythonpath(os.environ), TMPDIR=tmp)
        env.setdefault("PYTHONHASHSEED", "0")
        res = sandbox.run(cmd, timeout_s=timeout_s, env=env, cwd=tmp, merge_output=True, output_dir=tmp,
                          memory_bytes=DEFAULT_MEMORY_BYTES if device.startswith("cpu") else None,
                          file_bytes=DEFAULT_FILE_BYTES)
        timed_out = res.timed_out
        text = Path(log).read_bytes().decode("utf-8", "replace")
        tail = text[-3000:]
        compiles = [float(m.group("ms")) / 1000.0 for m in COMPILE_PATTERN.finditer(text) if m.group("how") == "compiled"]
        doc = None
        if os.path.exists(out):
            try:
                doc = json.loads(Path(out).read_text())
            except (OSError, json.JSONDecodeError):
                doc = None
    wall = time.perf_counter() - t0
    if doc is None:
        why = (f"timed out after {timeout_s:g} s" if timed_out else
               f"the measurement exited with status {res.returncode} and wrote no result")
        return {"error": why, "output_tail": tail, "wall_s": wall, "compile_s": sum(compiles)}
    doc["wall_s"] = wall
    doc["compile_s"] = sum(compiles)
    if doc.get("error"):
        doc["output_tail"] = tail
    return doc


def refusal(text: str) -> str | None:
    """Warp's own words when ``text`` (an error, its traceback and output) is the release refusing
    to build the program (a Warp codegen error: the evidence table's ``refusals``,
    :attr:`defects4warp.evidence_table.EvidenceTable.refusals`): from ``In function ...`` when Warp
    names the function, else the first matching line; None otherwise."""
    text = text or ""
    refusals = load_table().refusals
    if not any(pat.search(text) for pat, _ in refusals):
        return None
    m = re.search(r"In function '[^\n]*?(?=\s*\(before the capture|\n|$)", text)
    if m:
        return m.group(0).strip()[:400]
    for pat, _ in refusals:
        line = next((ln for ln in text.splitlines() if pat.search(ln)), None)
        if line:
            return line.strip()[:400]
    return text.strip().splitlines()[0][:400]


def _engine(name: str, *, timeout_s: float, python: str):
    """The engine ``name`` for one release; the reference engine without its own release differential."""
    try:
        return get_engine(name, timeout_s=timeout_s, python=python, differential=False)
    except TypeError:
        return get_engine(name, timeout_s=timeout_s, python=python)


def _top(d: dict):
    cs = d.get("classes") or []
    return cs[0]["id"] if cs else None


def _fd_agrees(d: dict):
    """Whether the engine's FD comparison of call 1 agreed (True), disagreed (False), or is unknown (None)."""
    for e in d.get("evidence") or []:
        if e.get("probe") == "fd" and "call 1 vs finite differences" in str(e.get("finding")):
            return bool(e.get("clean"))
    return None


def measure_release(release: str, folder, spec, *, engine_name: str = "reference", device: str = "cpu",
                    timeout_s: float = DEFAULT_TIMEOUT_S, engine: bool = True, log=None) -> dict:
    """One row of the program audit: the program on ``release`` (see the module docstring).

    Never raises for the program's sake: an environment that cannot be made, a program that fails to
    build or run, or an engine error is recorded (``runs`` False, ``error`` quoted).

    Returns
    -------
    dict
        ``{"release", "warp_version", "runs", "error", "refused", "loss", "params": {name: {"shape",
        "norm", "finite"}}, "kernels", "functions", "engine": {"verdict", "class", "signature",
        "fd_agrees", "error"} | None, "cost": {"wall_s", "compile_s" (Warp's kernel compiles in the gradient
        measurement and the engine's: 0 when the kernel cache already held them), "cpu_s", "gradient_s",
        "engine_s"}}``;
        the gradient child's full ``params`` stay under the private key ``"_grad"``.
    """
    t0, c0 = time.perf_counter(), _cpu_s()
    row = {"release": release, "warp_version": None, "runs": False, "error": None, "refused": False, "loss": None,
           "params": {}, "kernels": [], "functions": [], "engine": None, "cost": {}}
    try:
        python, version = python_for(release, log)
    except (ReleaseEnvError, OSError) as exc:
        row["error"] = f"no environment for Warp {release}: {exc}"
        row["cost"] = {"wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(_cpu_s() - c0, 2)}
        return row
    row["python"] = str(python)
    g = measure_gradient(folder, str(python), device=device, script=spec, timeout_s=timeout_s)
    row["warp_version"] = g.get("warp_version") or version
    row["cost"]["gradient_s"] = round(g.get("wall_s", 0.0), 2)
    row["cost"]["compile_s"] = g.get("compile_s") or 0.0
    if g.get("error"):
        text = (g.get("error") or "") + "\n" + (g.get("traceback") or "") + "\n" + (g.get("output_tail") or "")
        ref = refusal(text)
        row["refused"] = ref is not None
        row["error"] = ref or " ".join(str(g["error"]).split())[:600]
    else:
        row["runs"] = True
        row["loss"] = g.get("objective")
        row["params"] = {k: {"shape": p["shape"], "norm": p["norm"], "finite": p["finite"]}
                         for k, p in (g.get("params") or {}).items()}
        row["kernels"], row["functions"] = g.get("kernels") or [], g.get("functions") or []
        row["_grad"] = g.get("params") or {}
        cap = g.get("capture") or {}
        if cap.get("params"):
            row["sites"] = {p.get("name"): p.get("site") for p in cap["params"] if p.get("name")}
    if engine:
        te = time.perf_counter()
        try:
            d = diagnose_target(_engine(engine_name, timeout_s=timeout_s, python=str(python)), str(folder), device,
                                "small", script=spec)
            row["engine"] = {"verdict": d.get("verdict"), "class": _top(d), "signature": d.get("signature"),
                             "fd_agrees": _fd_agrees(d), "error": (str(d["error"])[:400] if d.get("error") else None)}
            row["cost"]["compile_s"] = (row["cost"].get("compile_s") or 0.0) + ((d.get("cost") or {}).get("compile_s") or 0.0)
            if d.get("verdict") == "refused" and not row["error"]:
                row["refused"] = True
        except Exception as exc:  # noqa: BLE001 - one release's engine failure must not stop the others
            row["engine"] = {"verdict": "error", "class": None, "signature": None, "fd_agrees": None,
                             "error": f"{type(exc).__name__}: {exc}"[:400]}
        row["cost"]["engine_s"] = round(time.perf_counter() - te, 2)
    row["cost"]["wall_s"] = round(time.perf_counter() - t0, 2)
    row["cost"]["cpu_s"] = round(_cpu_s() - c0, 2)
    if row["cost"].get("compile_s") is not None:
        row["cost"]["compile_s"] = round(float(row["cost"]["compile_s"]), 2)
    return row


def prepared_releases() -> list:
    """Supported releases with a ready environment, plus the installed one, oldest first."""
    have = {e.get("release") for e in list_envs() if e.get("release")}
    try:
        have.add(installed_warp_version())
    except RuntimeError:
        pass
    return sorted((r for r in RELEASES if r in have), key=Version)


def used_names(folder, kernels) -> dict:
    """``{name: [functions using it]}``: the builtins a launched kernel (or a ``@wp.func`` it reaches)
    calls, and the access patterns of the conformance suite it uses
    (:func:`defects4warp.engines.assess.builtins.access_patterns`), found in the program's own files."""
    defs = function_defs(folder)
    names = {_norm_kernel(k) for k in kernels} | {str(k).split("__")[-1] for k in kernels}
    out = {}
    for fn in sorted(ran_functions(folder, {n for n in names if n in defs}, defs)):
        node = defs[fn][1]
        used = called_names(node) | (access_patterns(node) if is_warp_function(node) else set())
        for u in used:
            if u:
                out.setdefault(u, []).append(fn)
    return out


def builtin_changes_between(lo: str, hi: str, used: dict, device: str = "cpu") -> list:
    """Overloads of builtins in ``used`` whose measured adjoint changes state from release ``lo`` to
    ``hi`` (every pair of consecutive measured releases in [lo, hi] of the committed builtins data;
    CPU data stands in for other devices).

    Returns
    -------
    list[dict]
        :func:`defects4warp.report.builtins_page.changes` entries plus ``"between": [a, b]``, ``"fixed"``
        (True: wrong or zero -> agrees; False: agrees -> wrong or zero; None otherwise) and
        ``"functions"`` (the program's functions using it).
    """
    vlo, vhi = _v(lo), _v(hi)
    if vlo is None or vhi is None:
        return []
    rels = [r for r in builtins_releases("cpu") if vlo <= Version(r) <= vhi]
    docs = {r: load_builtins(r, "cpu") for r in rels}
    out = []
    for a, b in zip(rels, rels[1:]):
        for c in builtin_changes(docs, a, b):
            if c.get("builtin") not in used:
                continue
            fixed = True if c["from"] in _WRONG and c["to"] == "agrees" else \
                False if c["from"] == "agrees" and c["to"] in _WRONG else None
            out.append(dict(c, between=[a, b], fixed=fixed, functions=used[c["builtin"]]))
    return out


def _root() -> Path:
    return Path(__file__).resolve().parent.parent


def changelog_table(root: Path | None = None) -> tuple:
    """``(entries, path)`` of the first committed changelog table of :data:`CHANGELOG_PATHS` under
    ``root`` (default: this checkout, or the package for ``harness/data``); ``([], None)`` when none.

    Raises
    ------
    ValueError
        When the file is not readable JSON or is neither a list nor an object with ``entries``
        (names the file).
    """
    root = _root() if root is None else Path(root)
    for rel in CHANGELOG_PATHS:
        for p in (root / rel, Path(__file__).resolve().parent / rel.split("/", 1)[1] if rel.startswith("harness/")
                  else None):
            if p is None or not p.is_file():
                continue
            try:
                doc = yaml.safe_load(p.read_text()) if p.suffix == ".yaml" else json.loads(p.read_text())
            except (OSError, json.JSONDecodeError, yaml.YAMLError) as exc:
                raise ValueError(f"{p}: not readable {'YAML' if p.suffix == '.yaml' else 'JSON'} ({exc})") from None
            entries = doc.get("entries") if isinstance(doc, dict) else doc
            if not isinstance(entries, list):
                raise ValueError(f"{p}: expected a list of entries or an object with 'entries'")
            return [e for e in entries if isinstance(e, dict)], p
    return [], None


def changelog_entries(lo: str, hi: str, used=(), *, root: Path | None = None) -> list:
    """Changelog entries of the releases after ``lo`` up to ``hi``.

    From the committed changelog table (:func:`changelog_table`) when one exists: an entry of a
    release in the interval that names a builtin or access pattern the program uses (``builtins``),
    or whose text mentions one, or that names none at all. Always: the restated entries of the
    evidence table's ``release_changes`` (source ``docs/taxonomy.md``, "Release facts") for the
    releases in the interval.

    Returns
    -------
    list[dict]
        ``{"release", "text", "source", "matches": [names], optional "url"}``, oldest release first.
    """
    vlo, vhi = _v(lo), _v(hi)
    if vlo is None or vhi is None:
        return []
    used = set(used)
    out = []
    entries, path = changelog_table(root)
    for e in entries:
        rel = e.get("release") or e.get("version") or e.get("fixed_in")
        text = e.get("text") or e.get("entry") or e.get("summary") or e.get("title") or ""
        v = _v(rel)
        if v is None or not (vlo < v <= vhi):
            continue
        names = set(e.get("builtins") or [])
        hits = sorted((names & used) | {u for u in used if len(u) > 2 and f"{u}(" in text or f"wp.{u}" in text})
        if names and not hits:
            continue
        rec = {"release": str(rel), "text": str(text), "source": str(path), "matches": hits}
        if e.get("url"):
            rec["url"] = e["url"]
        out.append(rec)
    for rel, text in load_table().release_changes.items():
        v = _v(rel)
        if vlo < v <= vhi:
            out.append({"release": rel, "text": text, "source": "docs/taxonomy.md (Release facts)", "matches": []})
    return sorted(out, key=lambda e: (_v(e["release"]), e["source"]))


def locate_change(folder, spec, a: dict, b: dict, *, device: str = "cpu", timeout_s: float = DEFAULT_TIMEOUT_S,
                  bisect: str = "all", log=None) -> dict:
    """The first release where the gradient changes between measured rows ``a`` and ``b`` (a older).

    When no supported release lies between them, it is ``b``. Otherwise, with ``bisect`` ``"all"``
    (every supported release in between, environments created on demand) or ``"prepared"`` (only
    those with an environment already), the engine's release differential bisects
    (:func:`defects4warp.engines.release.differential`, measured by the measurement worker with its
    cheap probe list :data:`~defects4warp.engines.release.DIFFERENTIAL_PROBES` on ``a``'s release,
    compared element by element on its FD items); ``"none"`` leaves the bracket open.

    Returns
    -------
    dict
        ``{"between": [a, b], "first_change": release or None, "bracket": [last old, first new],
        "how": "adjacent"|"bisected"|"not bisected"|"bisection open", "note": text or None,
        "measured": [releases the bisection measured], "other_agrees_fd", "base_agrees_fd": whether autodiff
        agrees with finite differences on ``b`` and on ``a`` in the bisection's measurements (None: not
        measured)}``.
    """
    ra, rb = a["release"], b["release"]
    out = {"between": [ra, rb], "first_change": None, "bracket": [ra, rb], "how": None, "note": None,
           "measured": [], "other_agrees_fd": None, "base_agrees_fd": None}
    if release_probe._adjacent(ra, rb):
        out.update(first_change=rb, how="adjacent")
        return out
    if bisect == "none":
        out.update(how="not bisected", note="bisection off (--bisect none)")
        return out
    allowed = list(RELEASES) if bisect == "all" else prepared_releases()
    opts = {"probes": list(release_probe.DIFFERENTIAL_PROBES["probes"]),
            "knobs": {k: dict(v) for k, v in release_probe.DIFFERENTIAL_PROBES["knobs"].items()}, "seed": 0}
    res = run_worker(folder, device=device, scale="small", options=opts, timeout_s=timeout_s, python=a["python"],
                     script=spec)
    base = res.doc or {}
    sig = (((base.get("fd") or {}).get("calls") or [{}])[0].get("joint") or {}).get("signature")
    out["base_agrees_fd"] = None if sig is None else sig == "agrees"
    if res.failure or not base.get("fd"):
        out.update(how="bisection open", note=f"the bisection's first measurement on {ra} failed: "
                   f"{res.failure or 'no finite-difference items'}")
        return out
    diff = release_probe.differential(folder, device, "small", base.get("warp_version") or ra, other=rb,
                                      bisect=True, timeout_s=min(timeout_s, 120.0), base_doc=base,
                                      releases=allowed, log=log)
    if not diff:
        out.update(how="bisection open", note="the release differential could not run")
        return out
    out["measured"] = sorted((r for r in diff.get("compared", {}) if r != rb), key=Version)
    c = (diff.get("compared") or {}).get(rb) or {}
    out["other_agrees_fd"] = c.get("b_agrees")
    if "error" in c:
        why = ("their finite-difference items are missing or differ in number" if c["error"] == "not comparable"
               else c["error"])
        out.update(how="bisection open", note=f"the bisection's measurements on {ra} and {rb} could not be "
                   f"compared: {why}")
    elif not c.get("gradient_changed"):
        out.update(how="bisection open", note="the bisection's sampled items (finite-difference coordinates and "
                   "directions) did not see the change the whole gradient shows")
    elif not c.get("objective_same"):
        out.update(how="bisection open", note=f"the objective itself differs between {ra} and {rb}; the "
                   "release differential bisects only a change of autodiff under the same objective")
    else:
        out["bracket"] = list(diff.get("bracket") or [ra, rb])
        out["first_change"] = diff.get("first_change")
        skipped = [r for r in RELEASES if Version(ra) < Version(r) < Version(rb) and r not in allowed]
        out["how"] = "bisected" if out["first_change"] else "bisection open"
        if not out["first_change"]:
            out["note"] = (f"not every release in between could be measured" +
                           (f" (--bisect prepared skips {', '.join(skipped)})" if skipped else ""))
    return out


def audit_program(folder, spec, releases, *, engine_name: str = "reference", device: str = "cpu",
                  timeout_s: float = DEFAULT_TIMEOUT_S, bisect: str = "all", grad_rtol: float = GRAD_RTOL,
                  engine: bool = True, log=None, on_row=None, target: str | None = None,
                  assumed=()) -> dict:
    """The program audit of the program in ``folder`` over ``releases`` (see the module docstring).

    Parameters
    ----------
    folder : path-like
        The program's folder (a neutral copy for a bundled case).
    spec : defects4warp.capture.ScriptSpec or None
        The training script to capture (None: ``problem.py``, an adapter).
    releases : list of str
        Supported releases (checked by the caller); measured oldest first.
    engine_name, device, timeout_s :
        As for ``diagnose``; ``timeout_s`` bounds each measurement.
    bisect : {"all", "prepared", "none"}
        Which supported releases the bisection may measure (:func:`locate_change`).
    grad_rtol : float
        A param whose relative change (:func:`relative_change`) exceeds it has changed
        (default :data:`GRAD_RTOL`).
    engine : bool
        Run the engine's diagnosis on each release (default True).
    on_row : callable, optional
        Called with each finished row (progress).

    Returns
    -------
    dict
        ``{"format", "target", "script", "assumed", "device", "cpu_only", "releases", "grad_rtol",
        "rows": [row, ...] (:func:`measure_release`, plus ``"change"``: {param: relative change vs
        the first release that ran}), "changes": [...] (one per pair of consecutive running rows whose
        gradient changes: ``{"between", "params": {param: relative change}, "first_change", "bracket",
        "how", "note", "builtins", "changelog", "old_wrong", "new_wrong"}``), "ticket", "wall_s", "cpu_s"}``.

    Raises
    ------
    ProgramAuditError
        When ``releases`` is empty or holds something that is not a release number.
    """
    rels = sorted(dict.fromkeys(releases), key=lambda r: _v(r) or Version("0"))
    if not rels or any(_v(r) is None for r in rels):
        raise ProgramAuditError(f"give at least one release number, not {releases!r}")
    t0, c0 = time.perf_counter(), _cpu_s()
    rows = []
    for r in rels:
        row = measure_release(r, folder, spec, engine_name=engine_name, device=device, timeout_s=timeout_s,
                              engine=engine, log=log)
        rows.append(row)
        if on_row:
            on_row(row)
    ran = [r for r in rows if r["runs"]]
    base = ran[0] if ran else None
    for r in rows:
        r["change"] = param_changes(base["_grad"], r["_grad"]) if base is not None and r["runs"] else {}
    changes = []
    for a, b in zip(ran, ran[1:]):
        pc = param_changes(a["_grad"], b["_grad"])
        moved = {k: v for k, v in pc.items() if not v <= grad_rtol}
        if not moved:
            continue
        changes.append(_pair_change(folder, spec, a, b, moved, grad_rtol=grad_rtol, device=device,
                                    timeout_s=timeout_s, bisect=bisect, log=log))
    for r in rows:
        r.pop("_grad", None)
        r.pop("python", None)
    doc = {"format": FORMAT, "target": target or str(folder), "script": spec.to_dict() if spec is not None and
           hasattr(spec, "to_dict") else None, "assumed": list(assumed), "device": device,
           "cpu_only": not str(device).startswith("cuda"), "releases": rels, "grad_rtol": grad_rtol,
           "bisect": bisect, "engine": engine_name if engine else None, "rows": rows, "changes": changes}
    doc["ticket"] = ticket_line(doc)
    doc["machine"], doc["measured_on"] = describe(), datetime.date.today().isoformat()
    doc["wall_s"] = round(time.perf_counter() - t0, 1)
    doc["cpu_s"] = round(_cpu_s() - c0, 1)
    return _strict(doc)  # strict JSON: a changed shape's "inf" change and a NaN loss as strings


def _pair_change(folder, spec, a: dict, b: dict, moved: dict, *, grad_rtol: float, device: str, timeout_s: float,
                 bisect: str, log) -> dict:
    """One entry of the audit's ``changes``: the gradient of the program moved (``moved``: {param: relative
    change}) between rows ``a`` and ``b``; where it changed (bisected, or the pair itself when the loss
    moved too), the builtins and changelog entries there, and whether each side's gradient is wrong."""
    loss_moved = relative_change([_float(a["loss"])], [_float(b["loss"])]) > grad_rtol
    if loss_moved:  # the forward differs: the release differential bisects only autodiff under one objective
        ra, rb = a["release"], b["release"]
        adjacent = release_probe._adjacent(ra, rb)
        loc = {"first_change": rb if adjacent else None, "bracket": [ra, rb], "measured": [],
               "other_agrees_fd": None, "base_agrees_fd": None, "how": "adjacent" if adjacent else "not bisected",
               "note": None if adjacent else "the loss itself changes, so the forward differs; the release "
               "differential bisects only a change of autodiff under the same objective"}
    else:
        loc = locate_change(folder, spec, a, b, device=device, timeout_s=timeout_s, bisect=bisect, log=log)
    lo, hi = loc["bracket"]
    used = used_names(folder, set(a["kernels"]) | set(b["kernels"]) | set(a["functions"]) | set(b["functions"]))
    bi = builtin_changes_between(lo, hi, used, device)
    if loc["first_change"]:
        prev = max((r for r in RELEASES if Version(r) < Version(loc["first_change"])), key=Version, default=lo)
        bi = [c for c in bi if Version(c["between"][1]) == Version(loc["first_change"])] or \
            builtin_changes_between(prev, loc["first_change"], used, device)
        cl = changelog_entries(prev, loc["first_change"], used)
    else:
        cl = changelog_entries(lo, hi, used)
    ea, eb = a.get("engine") or {}, b.get("engine") or {}
    return {"between": [a["release"], b["release"]], "params": moved, **{k: loc[k] for k in (
        "first_change", "bracket", "how", "note", "measured")},
        "builtins": bi, "changelog": cl, "loss": [a["loss"], b["loss"]] if loss_moved else None,
        "old_wrong": gradient_wrong(ea, loc.get("base_agrees_fd")), "new_wrong": gradient_wrong(eb, loc.get("other_agrees_fd"))}
