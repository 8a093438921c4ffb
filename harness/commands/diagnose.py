"""``defects4warp diagnose``: one program, an adapter folder or a training script."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ._common import (
    CONTRACT_HINT, EngineFailed, WRITTEN_AS_IT_GOES, _refuse_dash,
    ProgramPath,
    _check_writable,
    _check_device, _progress, _release, console, device_opt, engine_opt, err_console, get_engine, on_interrupt,
    timeout_opt, warp_opt, written_at_end,
)


def print_capture(cap: dict, spec, assumed) -> None:
    """Print what the capture took from the script (before the diagnosis)."""
    console.print(f"[bold]captured from {escape(spec.entry)}[/bold]"
                  + (escape(f" {' '.join(spec.args)}") if spec.args else "")
                  + f"  (iteration {cap.get('iteration', spec.iteration)}: backward "
                  + (f"{cap.get('first_backward')} to {cap.get('gradient_after_backward')}"
                     if (cap.get('gradient_after_backward') or 0) > (cap.get('first_backward') or 0)
                     else f"{cap.get('first_backward', '?')}") + ")")
    cg = cap.get("consumed_gradient") or {}
    if cg.get("differs"):
        console.print(escape(
            f"the update consumes a gradient that differs from the .grad right after backward "
            f"{cap.get('gradient_after_backward')}: " + "; ".join(
                f"{n} (max |difference| {v['max_abs_diff']:.3g}; written by {', '.join(v['changed_by'])})"
                for n, v in (cg.get("params") or {}).items() if v.get("max_abs_diff")) + "; the diagnosis uses "
            "what the update consumes"))
    its = cap.get("iterations") or {}
    if its.get("checked"):
        console.print(escape(iterations_line(its)))
    t = Table(title="params")
    for col in ("name", "allocated at", "dtype", "shape", "chosen by", ".grad used by the script"):
        t.add_column(col)
    for p in cap.get("params") or []:
        t.add_row(escape(p["name"]), escape(p["site"]), p["dtype"], str(tuple(p["shape"])), p.get("chosen_by") or "",
                  escape(", ".join(p.get("grad_used_by") or [])))
    console.print(t)
    ob = cap.get("objective") or {}
    where = ob.get("produced_at")
    console.print(escape(f"objective: {ob.get('description')}; value {ob.get('value'):.9g}"
                         + _objective_terms(cap)
                         + (f"; produced by {ob.get('kernel')} launched at {where}" if where else "")))
    rr = cap.get("rerun_s")
    console.print(escape(f"tapes {cap.get('tapes')}, launches {cap.get('launches')} up to backward "
                         f"{cap.get('iteration')} ({cap.get('recorded_launches')} recorded on its tape), "
                         f"backwards seen {cap.get('backwards_seen')}; one re-run costs "
                         + (f"{rr:.3g} s" if rr is not None else "?")))
    if cap.get("stochastic"):
        console.print(escape("[!] stochastic: re-runs at the same params gave objectives "
                             + ", ".join(f"{v:.9g}" for v in cap.get("stochastic_objectives") or [])))
    for line in not_a_param_lines(cap.get("candidates") or []):
        console.print(escape(line))
    for f in cap.get("findings") or []:
        console.print(escape(f"  [!] capture: {f.get('detail')}"))
    console.print("[bold]assumed[/bold]")
    for a in _assumed_lines(assumed, its.get("diagnosed"), spec.iteration) + list(cap.get("assumptions") or []):
        console.print(escape(f"  - {a}"))


#: Where each relative number of the look along the loop comes from, said once in its line (the evidence's
#: ``relative error`` is another measure: ``||gradient - differences|| / ||differences||`` over the items a
#: finite-difference check read, :func:`defects4warp.measure.compare.relative_error`).
ITERATION_MEASURE = ("|central difference - gradient.v| / the larger of the two, along random directions v, "
                     "the largest of the directions read")


def iterations_line(its: dict) -> str:
    """The summary line of the look along the script's loop: each checked iteration's status and relative
    disagreement (:data:`ITERATION_MEASURE`: in [0, 2]; 1 when one side is zero, over 1 when the two have
    opposite signs), and the iteration diagnosed.

    ``its`` is the capture summary's ``iterations``: ``{"checked": [{"iteration", "status", "rel" (float or
    None), "why" (optional)}], "loop_iterations": int or None, "loop_length_known": bool, "diagnosed": int}``
    (:mod:`defects4warp.capture.screen`)."""
    from ..capture.screen import SMOOTH_RTOL

    def why(r):
        if r.get("why"):
            return f" ({r['why']})"
        if r.get("status") != "unresolved":
            return ""
        if r.get("rel") is None:
            return " (a loss or gradient value that is not finite)"
        return (f" (its central differences at the step and at half of it differ by more than {SMOOTH_RTOL:.0%}: "
                "neither read)")

    loop = its.get("loop_iterations")
    return (f"iterations checked ({len(its['checked'])} of the script's "
            + ("" if its.get("loop_length_known", True) else "at least ") + f"{loop if loop else '?'}; relative: "
            + ITERATION_MEASURE + "): " + "; ".join(
                f"{r['iteration']} {r['status']}" + (f" {r['rel']:.2g}" if r.get("rel") is not None else "") + why(r)
                for r in its["checked"])
            + f"; diagnosed: iteration {its.get('diagnosed')}")


#: The start of the assumption :func:`defects4warp.capture.targets.resolve_target` makes when no
#: ``--iteration`` was given (tests/test_diagnose_output.py checks the two stay in step).
FIRST_ITERATION_ASSUMED = "the problem is the script's first optimisation iteration"


def _assumed_lines(assumed, diagnosed, asked) -> list:
    """The target's assumptions, with the first-iteration one restated when the look along the loop
    diagnosed another iteration (``diagnosed``, from the capture summary) than the one asked for
    (``asked``, the spec's): the capture's own assumption that follows says why."""
    if diagnosed in (None, asked):
        return list(assumed)
    return [f"the script's optimisation iteration {asked} was modelled first and checked against later ones of "
            "its own loop (--iteration K for another)" if str(a).startswith(FIRST_ITERATION_ASSUMED) else a
            for a in assumed]


def _check_script_block(p: Path) -> None:
    """Check the ``script:`` block of the ``case.yaml`` a folder target runs by (a case folder's, or a variant
    folder's case), so a wrong field is named before the script runs (an ``args`` written as one string was run
    character by character).

    Raises
    ------
    defects4warp.corpus.case.CaseFormatError
        Naming the file and the field (a ValueError: the command reports it as a usage error).
    """
    from ..corpus.case import check_script_block

    if p.is_dir() and (p / "case.yaml").is_file():
        check_script_block(p)
    elif p.is_dir() and (p.parent / "case.yaml").is_file():
        check_script_block(p.parent, p.name)


def not_a_param_lines(candidates) -> list:
    """One ``not a param`` line per allocation site and reason, with a count when a loop allocated several
    there (``train.py:40 x50``), in the order first seen; ``candidates`` are the summary's
    ``[{"site": "file.py:LINE[:N]", "why_not": str}]``."""
    groups = {}
    for c in candidates:
        site = str(c.get("site") or "?")
        parts = site.rsplit(":", 2)
        base = ":".join(parts[:2]) if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit() else site
        groups.setdefault((base, c.get("why_not")), []).append(site)
    return [f"  not a param: {base}" + (f" x{len(sites)} (arrays allocated there in a loop)" if len(sites) > 1 else
                                        (f" ({sites[0]})" if sites[0] != base else "")) + f" ({why})"
            for (base, why), sites in groups.items()]


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("path", required=False, default=None)
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("-m", "--module", "module", default=None, metavar="PKG.MODULE",
              help="Run a module of a package as `python -m PKG.MODULE` would, from the current folder (a "
                   "training script inside a package that imports it: `from pkg.model import X`).")
@engine_opt
@device_opt
@click.option("--scale", default="small", show_default=True, type=click.Choice(["small", "production"]))
@timeout_opt
@click.option("--param", "params", multiple=True, metavar="FILE.py:LINE[:N] | NAME",
              help="A parameter by allocation site, or by the variable its allocation is assigned to (repeatable); "
                   "overrides the capture's choice.")
@click.option("--iteration", type=click.IntRange(min=1), default=None,
              help="The script's K-th optimisation iteration (from the update that wrote the params to the next "
                   "one, every backward in between) defines the problem; default 1, checked against later "
                   "iterations of the script's own loop.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write the diagnosis here.")
@warp_opt
def cmd(path, script_args, module, engine_name, device, scale, timeout_s, params, iteration, json_path, warp):
    """Diagnose one program. PATH is a training script (`diagnose train.py -- --iters 3`,
    run unmodified with the arguments after --; `diagnose -m pkg.train` for one inside
    a package, from the folder that holds it), a bundled case as CASE/VARIANT
    (ids from `defects4warp list`), or a folder holding problem.py
    (a make_problem adapter, docs/case-format.md), a case.yaml with a script:
    block, or one .py file with `if __name__ == "__main__":`. For a script it first
    prints what it captured (params by allocation site, dtype and shape; the
    objective and where it was produced; tapes and launches; seconds per
    re-run) and what it assumed, then the verdict, the ranked classes with
    their evidence, and the standard fix for the top class. It never edits
    your files. --warp VERSION measures on another release, as for `run`."""
    _refuse_dash(json_path, "--json", WRITTEN_AS_IT_GOES)
    _check_writable(json_path)
    on_interrupt(written_at_end(json_path))
    from ..capture.targets import TargetError, resolve_module, resolve_target
    from ..engines.base import diagnose_target
    from ..run.runner import write_json_atomic

    try:
        if module:
            # `diagnose -m pkg.train -- --iters 3`: after `--` click gives the first word to PATH
            args = ((path,) if path is not None else ()) + tuple(script_args)
            folder, spec, assumed = resolve_module(module, args, iteration, list(params) or None)
        elif path is None:
            raise click.UsageError("give PATH (a training script, a folder or a case id) or -m PKG.MODULE")
        else:
            path = ProgramPath().convert(path, None, click.get_current_context())
            _check_script_block(Path(path))
            folder, spec, assumed = resolve_target(path, script_args, iteration, list(params) or None)
    except (TargetError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    path = path if not module else f"-m {module}"
    python, warp_version = _release(warp)
    _check_device(device, python)
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python)
    err_console.print(f"engine {engine.name} {engine.version} | Warp {warp_version} | device {device}"
                      + (f" | script {spec.entry}" if spec else ""))
    with _progress(0, f"diagnosing with {engine.name}") as prog, _bundled_copy(folder, spec) as (where, spec):
        prog.add_task("", total=None)
        try:
            d = diagnose_target(engine, str(where), device, scale, script=spec)
        except TypeError as exc:
            raise click.UsageError(str(exc)) from None
    from ..engines.command import contract_failure

    if contract_failure(d):  # a broken cmd: engine (as the preflight of run, matrix and audit): exit 2
        raise EngineFailed(f"the engine {engine.name} failed on {path}:\n{d.get('error')}\n{CONTRACT_HINT}")
    if spec is not None:
        cap = d.get("capture")
        if cap:
            print_capture(cap, spec, assumed)
        else:
            console.print(escape(f"nothing captured from {spec.entry}"))
            for a in assumed:
                console.print(escape(f"  assumed: {a}"))
    console.print(f"[bold]verdict[/bold] {d['verdict']}" + (f"  signature {d['signature']}" if d.get("signature") else "")
                  + (escape(f"  ({d['error']})") if d.get("error") else ""))
    if any(c.get("id") == "stochastic_unpinned" for c in d.get("cited") or []):
        console.print(escape("  the objective changed between re-runs at the same params and no seed could be pinned "
                             "(nothing was pinned): this run cannot tell whether the gradient is right. Seed the "
                             "program's random draws (e.g. np.random.default_rng(SEED)) or give it set_seed, and "
                             "diagnose again"))
    _print_classes(d, engine.name)
    if json_path:
        write_json_atomic(json_path, d)
    sys.exit(0 if d["verdict"] in ("bug", "no_bug") else 1)


def _print_classes(d: dict, engine_name: str) -> None:
    """Print the diagnosis ``d``'s ranked classes (top 5), its evidence, and the standard fix of its top
    class (a no-bug class: what it means)."""
    from ..taxonomy import BUG_CLASSES, CLASSES, class_guide

    if d["classes"]:
        t = Table(title="classes, best first")
        for col in ("class", "score", "what it means"):
            t.add_column(col)
        for c in d["classes"][:5]:
            t.add_row(c["id"], f"{c['score']:.2f}", CLASSES[c["id"]].summary)
        console.print(t)
    legend, lines, why = evidence_lines(d, engine_name)
    console.print(f"[bold]evidence[/bold]  {escape(legend)}")
    for line in lines + ([why] if why else []):  # one line each on a pipe (a reader greps them)
        console.print(escape(line), soft_wrap=not console.is_terminal)
    c = d["classes"][0]["id"] if d["classes"] else None
    if c:
        if c in BUG_CLASSES:
            console.print(f"[bold]standard fix for {c}[/bold]")
            console.print(escape(class_guide(c)))
        else:  # a no-bug class has no fix: say what it means and what the user can still check
            console.print(f"[bold]{c}: no fix needed in the differentiation[/bold]")
            console.print(escape(CLASSES[c].summary))


@contextlib.contextmanager
def _bundled_copy(folder, spec):
    """Yield ``(folder, spec)`` to diagnose: for a variant of the bundled corpus, a neutral copy
    (:func:`defects4warp.blind.neutral_copy`, as ``run`` uses) and the spec with its entry made
    relative to it, so files a script writes (``deployment_points.csv``) never land in the corpus
    (they would change the variant's digest); any other folder as it is, since a user's script
    reads and writes next to itself."""
    from ..blind import neutral_copy
    from ..paths import bundled

    folder = Path(folder).resolve()
    corpus = bundled("corpus").resolve()
    if corpus not in folder.parents:
        yield folder, spec
        return
    with neutral_copy(folder) as copy:
        if spec is not None and Path(spec.entry).is_absolute() and folder in Path(spec.entry).resolve().parents:
            spec = dataclasses.replace(spec, entry=str(Path(spec.entry).resolve().relative_to(folder)))
        yield copy, spec


#: Where the runtime trace names a kernel it adds the first line of the kernel's source, its
#: ``@wp.kernel`` decorator (``kname (file.py:N)``, harness/measure/detectors.py).
_KERNEL_AT = re.compile(r"\b(\w+) \(([\w.\-]+\.py:\d+)\)")

#: The words harness/probes/source.py adds to a source finding not counted because the runtime
#: trace observes the same taping behaviour.
_OBSERVED = " (taping behaviour: the runtime trace observes it instead)"


def _objective_terms(cap: dict) -> str:
    """What the objective's value sums when it is more than the named array: the losses of several backwards of
    the iteration, and those of backwards of earlier iterations whose gradient the update consumes (the capture
    summary's ``objective_backwards`` and ``objective.external_backwards``); "" for one backward's loss."""
    own = [int(n) for n in cap.get("objective_backwards") or []]
    ext = [int(n) for n in (cap.get("objective") or {}).get("external_backwards") or []]
    parts = []
    if len(own) > 1:
        parts.append("the losses of backwards " + ", ".join(map(str, own)))
    if ext:
        parts.append(("plus " if parts else "the loss of this iteration's backward plus ") + "the loss of backward "
                     + ", ".join(map(str, ext)) + " of an earlier iteration (its cached gradient is in the update)")
    return f" (the sum of {' '.join(parts)})" if parts else ""


def evidence_lines(d: dict, engine_name: str = "reference") -> tuple:
    """The evidence of a diagnosis as ``diagnose`` prints it: ``(legend, lines, why)``.

    Findings counted against correctness (``!!``) come first, then those reported but not counted
    (``--``), then clean ones (``ok``). A source finding that is not counted because the runtime
    trace observes its kind of taping behaviour (the rule is ``observed``) is printed under the
    counted trace finding of the same class, as the line of the user's code it points at (the
    trace cites the kernel by its ``@wp.kernel`` line). On a ``no_bug`` or ``inconclusive`` verdict with
    findings marked ``!!``, ``why`` says why they did not change it (for the reference engine: the
    verdict rests on the measurement alone, autodiff against finite differences; the findings
    choose the class of a wrong gradient and never make an agreeing one a bug); else ``why`` is None.

    Parameters
    ----------
    d : dict
        The diagnosis (``verdict``, ``evidence``: ``{probe, clean, finding, data}``).
    engine_name : str
        The engine's name (the explanation of ``why`` is the reference engine's own).

    Returns
    -------
    (str, list[str], str or None)
    """
    ev = sorted(d.get("evidence") or [], key=lambda e: (e["clean"], _uncounted(e)))
    counted = [e for e in ev if not e["clean"] and not _uncounted(e)]
    traced = [e for e in counted if e["probe"] == "trace" and _classes(e)]
    under = {}  # id of a counted trace entry -> the observed source notes printed under it
    for e in ev:
        if e["probe"] == "source" and _uncounted(e) and e["finding"].endswith(_OBSERVED):
            host = next((t for t in traced if _classes(t) & _classes(e)), None)
            if host is not None:
                under.setdefault(id(host), []).append(e)
    placed = {id(x) for xs in under.values() for x in xs}
    lines = []
    for e in ev:
        if id(e) in placed:
            continue
        mark = "ok " if e["clean"] else ("-- " if _uncounted(e) else ("er " if _unmeasured(d, e) else "!! "))
        text = e["finding"]
        if e["probe"] == "trace" and _CAPTURE_FINDING not in text:  # the capture names params by allocation site
            text = _KERNEL_AT.sub(r"\1 (kernel defined at \2)", text)
        lines.append(f"  {mark} [{e['probe']}] {text}")
        for x in under.get(id(e), []):
            cls = ", ".join(sorted(_classes(x) & _classes(e)))
            lines.append(f"        in your code: {x['finding'][:-len(_OBSERVED)]} (a source pattern of {cls} that "
                         "the trace observed: counted through this finding, not again)")
    n = len(counted)
    if d.get("verdict") == "error":
        return ("(er why the program could not be measured: no evidence about its gradient; !! counted against "
                "correctness, -- reported but not counted, ok clean)"), lines, None
    if d.get("verdict") not in ("no_bug", "inconclusive") or not n:  # bug, refused: the marks say it
        return "(!! counted against correctness, -- reported but not counted, ok clean)", lines, None
    legend = (f"(!! would count against correctness, but the verdict {d.get('verdict')} does not rest on it: "
              "see below; -- reported but not counted; ok clean)")
    if engine_name != "reference":
        why = (f"why the verdict is {d.get('verdict')} despite {n} finding(s) marked !!: the engine "
               f"{engine_name} reports them but did not count them toward a bug")
        return legend, lines, why
    fd = sum(e["probe"] in ("fd", "sweep") for e in counted)
    why = (f"why the verdict is {d.get('verdict')} despite {n} finding(s) marked !!: the reference engine decides "
           "the verdict from the measurement alone (autodiff against finite differences: the [fd] and [sweep] "
           + ("lines, and autodiff agrees); " if d.get("verdict") == "no_bug" else "lines); ")
           + ("a disagreement the step sweep reads as a finite-difference artefact is not counted; " if fd else "")
           + "a source pattern or a trace, launch or release finding chooses the class of a wrong gradient and "
           "never makes an agreeing one a bug. They say where a bug of their kind would be: look at them if the "
           "program runs at other points, sizes or releases than the one measured.")
    return legend, lines, why


#: How a finding of the script capture is introduced in the trace's evidence (harness/capture/core.py): its
#: ``name (file.py:N)`` is a param's allocation site, not a kernel's definition.
_CAPTURE_FINDING = "(capture)"


def _unmeasured(d: dict, e: dict) -> bool:
    """Whether entry ``e`` says why the program could not be measured (a ``load`` entry of a diagnosis whose
    verdict is ``error``: the script raised, never called backward, an iteration past its loop), which is no
    evidence about its gradient; a ``refused`` build stays evidence (``!!``)."""
    return d.get("verdict") == "error" and e.get("probe") == "load"


def _classes(e: dict) -> set:
    """The classes an evidence entry names (``data["classes"]``), as a set."""
    data = e.get("data")
    return set(data.get("classes") or []) if isinstance(data, dict) else set()


def _uncounted(e: dict) -> bool:
    """Whether an evidence entry is reported but not counted (a source finding in code that did not run, on
    another release, or observed by the runtime trace instead: ``data["counted"]`` is False)."""
    return isinstance(e.get("data"), dict) and e["data"].get("counted") is False
