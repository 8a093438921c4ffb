"""``defects4warp mutate``: bug injection by mutation operators (docs/mutation.md)."""

from __future__ import annotations

import fnmatch
import os
import sys
import time
from pathlib import Path

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--operator", "operators", multiple=True, help="Operator name (repeatable; default: all).")
@click.option("--out", type=click.Path(file_okay=False), help="With PATH: write one folder per mutant here.")
@click.option("--list", "list_ops", is_flag=True, help="List the operators and the class each produces.")
@click.option("--merge", "merge", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Combine these manifests (later ones win) into --manifest.")
@click.option("--redo", "redo", multiple=True, help="With --merge: records of this operator come only from the last manifest.")
@click.option("--summary", is_flag=True, help="Print the manifest's per-operator admission table (Markdown).")
@click.option("--admit", is_flag=True, help="Run admission over every parent and write the manifest.")
@click.option("--materialize", type=click.Path(file_okay=False), help="Rebuild the admitted tier as case folders in DIR.")
@click.option("--manifest", type=click.Path(dir_okay=False), help="Manifest path (default mutants/manifest.yaml).")
@click.option("--parents", default="*", show_default=True, help="Glob(s) over parent ids (case/variant, adapters/name).")
@click.option("--programs", type=click.Choice(["auto", "adapters", "scripts", "all"]), default="auto",
              show_default=True, help="With --admit: which program of each corpus variant is a parent (scripts: the "
              "operators edit the user's script and its siblings; the oracle captures the Problem from it).")
@click.option("--max-sites", default=1, show_default=True, type=int, help="Sites per parent and operator (0: all).")
@click.option("--jobs", default=2, show_default=True, type=int, help="Oracle workers in parallel.")
@click.option("--warp", "warp", default=None, help="Releases to admit on, comma separated (default: the installed one).")
@click.option("--no-cache", is_flag=True, help="With --admit: measure every program again (no oracle result cache).")
@click.option("--timeout", default=300.0, show_default=True, type=float, help="Seconds per oracle run.")
@click.option("--sample", default=None, type=int, help="With --materialize: only the first N mutants.")
@click.option("--per-operator", default=None, type=int, help="With --materialize: at most N mutants per operator.")
@click.option("--score", "score_runs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A run --json over the materialised tier (repeatable): print per-operator mutation scores.")
def cmd(path, operators, out, list_ops, merge, redo, summary, admit, materialize, manifest, parents, programs, max_sites, jobs, warp, no_cache, timeout, sample,
        per_operator, score_runs):
    """Inject labelled gradient bugs into correct Warp programs.

    \b
    defects4warp mutate --list
    defects4warp mutate PATH --operator drop_grad_zeroing --out DIR
    defects4warp mutate --admit --jobs 2 [--warp 1.19.0,1.16.0]
    defects4warp mutate --materialize DIR
    defects4warp mutate --score run-always-bug.json --score run-reference.json
    """
    from ..mutate import OPERATORS, get_operator

    if list_ops:
        for name, op in OPERATORS.items():
            click.echo(f"{name:28s} {op.produces:24s} {op.summary}")
        return
    for o in operators:
        if o not in OPERATORS:
            raise click.UsageError(f"unknown operator {o!r}; see --list")
    if merge:
        from ..mutate.tier import merge_manifests, write_manifest

        doc = merge_manifests(list(merge), drop={i: list(redo) for i in range(len(merge) - 1)})
        p = write_manifest(doc, manifest)
        click.echo(f"merged {len(merge)} manifests: {doc['admission']['admitted']} admitted of {doc['admission']['tried']} -> {p}")
        return
    if summary:
        from ..mutate.score import admission_table

        click.echo(admission_table(manifest), nl=False)
        return
    if score_runs:
        from ..mutate.score import markdown_table, mutation_scores

        click.echo(markdown_table([mutation_scores(r, manifest) for r in score_runs]), nl=False)
        return
    if materialize:
        from ..mutate.tier import materialize as mat

        dirs = mat(materialize, manifest, only=sample, per_operator=per_operator)
        click.echo(f"wrote {len(dirs)} case folders to {materialize}")
        return
    if admit:
        _admit(list(operators) or None, manifest, parents, max_sites or None, jobs, warp, timeout, no_cache, programs)
        return
    if not path:
        raise click.UsageError("give PATH, or one of --list, --admit, --materialize")
    from ..mutate.admit import write_program
    from ..mutate.sources import Parent

    parent = Parent(Path(path).name, Path(path), "dev", "user")
    srcs = parent.sources()
    total = 0
    for name in operators or OPERATORS:
        ms = get_operator(name).apply(srcs)
        if not ms:
            click.echo(f"{name}: does not apply: {ms.reason}")
            continue
        for i, m in enumerate(ms):
            total += 1
            where = ""
            if out:
                where = str(write_program(parent, m, Path(out) / f"{name}-{i}"))
            click.echo(f"{name} {m.site} -> {m.produces}: {m.note}" + (f"  [{where}]" if where else ""))
            if not out:
                click.echo(m.diff(srcs))
    click.echo(f"{total} mutant(s)")


def _admit(operators, manifest, parents_glob, max_sites, jobs, warp, timeout, no_cache=False, programs="auto"):
    from ..envs import python_for
    from ..mutate.admit import CACHE_DIR, admit, candidates, summarize
    from ..mutate.sources import all_parents
    from ..mutate.tier import build_manifest, write_manifest

    releases = {}
    for r in (warp.split(",") if warp else [None]):
        py, ver = python_for(r.strip() if r else None)
        releases[ver] = None if r is None else py
    pats = [p.strip() for p in parents_glob.split(",") if p.strip()]
    ps = [p for p in all_parents(programs=programs) if any(fnmatch.fnmatch(p.id, q) for q in pats)]
    cands, counts = candidates(ps, operators=operators, max_sites=max_sites)
    click.echo(f"{len(ps)} parents, {len(cands)} candidates, releases {', '.join(releases)}, {jobs} jobs", err=True)
    t0 = time.time()
    done = [0]

    def progress(rec):
        done[0] += 1
        if done[0] % 25 == 0 or done[0] == len(cands):
            click.echo(f"  {done[0]}/{len(cands)} in {time.time() - t0:.0f} s", err=True)

    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    recs = admit(cands, releases, jobs=jobs, timeout_s=timeout, progress=progress, cache_dir=None if no_cache else CACHE_DIR)
    secs = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = summarize(recs, counts)
    cpu = f"{os.cpu_count()} CPUs"
    doc = build_manifest(recs, summary, releases=list(releases), jobs=jobs, seconds=secs, max_sites=max_sites, cpu=cpu,
                         cpu_seconds=cpu_s, load=os.getloadavg()[0])
    p = write_manifest(doc, manifest)
    click.echo(f"admitted {doc['admission']['admitted']} of {len(recs)} in {secs:.0f} s wall, "
               f"{cpu_s:.0f} CPU s in oracle workers -> {p}")
    for name, row in summary.items():
        click.echo(f"  {name:28s} tried {row['tried']:4d} built {row['built']:4d} admitted {row['admitted']:4d} {row['rejected']}")
    sys.exit(0)
