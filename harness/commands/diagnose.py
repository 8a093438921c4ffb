"""``defects4warp diagnose``: one program, an adapter folder or a training script."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ._common import (
    WRITTEN_AS_IT_GOES, _refuse_dash,
    ProgramPath,
    _check_writable,
    _check_device, _progress, _release, console, device_opt, engine_opt, err_console, get_engine, timeout_opt,
    warp_opt,
)


def print_capture(cap: dict, spec, assumed) -> None:
    """Print what the capture took from the script (before the diagnosis)."""
    console.print(f"[bold]captured from {escape(spec.entry)}[/bold]"
                  + (escape(f" {' '.join(spec.args)}") if spec.args else "")
                  + f"  (iteration {cap.get('iteration', spec.iteration)}: backward "
                  + (f"{cap.get('first_backward')} to {cap.get('gradient_after_backward')}"
                     if (cap.get('gradient_after_backward') or 0) > (cap.get('first_backward') or 0)
                     else f"{cap.get('first_backward', '?')}") + ")")
    its = cap.get("iterations") or {}
    if its.get("checked"):
        loop = its.get("loop_iterations")
        console.print(escape(
            f"iterations checked along the script's loop ({loop if loop else '?'} iteration(s)"
            + ("" if its.get("loop_length_known", True) else " at least") + "): " + "; ".join(
                f"{r['iteration']} {r['status']}" + (f" (gradient vs central difference {r['rel']:.2g} relative)"
                                                     if r.get("rel") is not None else "")
                + (f" ({r['why']})" if r.get("why") else "") for r in its["checked"])
            + f"; diagnosed: iteration {its.get('diagnosed')}"))
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
    for a in list(assumed) + list(cap.get("assumptions") or []):
        console.print(escape(f"  - {a}"))


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
    from ..capture.targets import TargetError, resolve_module, resolve_target
    from ..engines.base import diagnose_target
    from ..runner import write_json_atomic
    from ..taxonomy import BUG_CLASSES, CLASSES, class_guide

    try:
        if module:
            # `diagnose -m pkg.train -- --iters 3`: after `--` click gives the first word to PATH
            args = ((path,) if path is not None else ()) + tuple(script_args)
            folder, spec, assumed = resolve_module(module, args, iteration, list(params) or None)
        elif path is None:
            raise click.UsageError("give PATH (a training script, a folder or a case id) or -m PKG.MODULE")
        else:
            path = ProgramPath().convert(path, None, click.get_current_context())
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
        raise click.UsageError(f"the engine {engine.name} failed on {path}:\n{d.get('error')}\n"
                               "(the contract of an outside engine: docs/engines.md, 'Any command')")
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
    if d["classes"]:
        t = Table(title="classes, best first")
        for col in ("class", "score", "what it means"):
            t.add_column(col)
        for c in d["classes"][:5]:
            t.add_row(c["id"], f"{c['score']:.2f}", CLASSES[c["id"]].summary)
        console.print(t)
    console.print("[bold]evidence[/bold]  (!! counted against correctness, -- reported but not counted, ok clean)")
    for e in sorted(d["evidence"], key=lambda e: (e["clean"], _uncounted(e))):
        mark = "ok " if e["clean"] else ("-- " if _uncounted(e) else "!! ")
        console.print(escape(f"  {mark} [{e['probe']}] {e['finding']}"))
    c = d["classes"][0]["id"] if d["classes"] else None
    if c:
        if c in BUG_CLASSES:
            console.print(f"[bold]standard fix for {c}[/bold]")
            console.print(escape(class_guide(c)))
        else:  # a no-bug class has no fix: say what it means and what the user can still check
            console.print(f"[bold]{c}: no fix needed in the differentiation[/bold]")
            console.print(escape(CLASSES[c].summary))
    if json_path:
        write_json_atomic(json_path, d)
    sys.exit(0 if d["verdict"] in ("bug", "no_bug") else 1)


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


def _uncounted(e: dict) -> bool:
    """Whether an evidence entry is reported but not counted (a source finding in code that did not run, on
    another release, or observed by the runtime trace instead: ``data["counted"]`` is False)."""
    return isinstance(e.get("data"), dict) and e["data"].get("counted") is False
