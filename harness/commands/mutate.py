"""``defects4warp maint mutate``: bug injection by mutation operators (docs/mutation.md)."""

from __future__ import annotations

import fnmatch
import os
import sys
import time
from pathlib import Path

import click

from ._common import ProgramPath, _emit, _one_stdout, _write_json, json_option, markdown_option, warp_option


#: The old single-command flags and the subcommand that replaced each (for a clear usage error).
LEGACY = {"--list": "list", "--admit": "admit", "--materialize": "materialize DIR", "--merge": "merge MANIFEST...",
          "--summary": "summary", "--score": "score RUN_JSON..."}


class _MutateGroup(click.Group):
    """``mutate`` subcommands; the old flag forms (``mutate --admit``, ``mutate
    PATH``) are usage errors that name the subcommand to use instead."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            for a in args:
                if a.split("=", 1)[0] in LEGACY:
                    raise click.UsageError(f"`mutate {a.split('=', 1)[0]}` is now a subcommand: "
                                           f"`defects4warp maint mutate {LEGACY[a.split('=', 1)[0]]}`", ctx)
            if os.path.isdir(args[0]):
                raise click.UsageError(f"to mutate a program, use `defects4warp maint mutate generate {args[0]}`", ctx)
        return super().parse_args(ctx, args)


manifest_opt = click.option("--manifest", type=click.Path(dir_okay=False), default=None,
                            help="Manifest path (default mutants/manifest.yaml).")
operators_opt = click.option("--operator", "operators", multiple=True,
                             help="Operator name (repeatable; default: all; see `defects4warp maint mutate list`).")


def _check_operators(operators) -> None:
    from ..corpus.mutate import OPERATORS

    for o in operators:
        if o not in OPERATORS:
            raise click.BadParameter(f"unknown operator {o!r}; see `defects4warp maint mutate list`", param_hint="'--operator'")


@click.group(cls=_MutateGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cmd():
    """Inject labelled gradient bugs into correct Warp programs (docs/mutation.md).

    \b
    defects4warp maint mutate list                            # operators and the class each produces
    defects4warp maint mutate generate PATH --operator drop_grad_zeroing [--out DIR]
    defects4warp maint mutate admit --jobs 2 [--warp 1.19.0,1.16.0] # writes the manifest
    defects4warp maint mutate merge a.yaml b.yaml [--redo OPERATOR] # combine admission manifests
    defects4warp maint mutate summary [--markdown FILE]       # per-operator admission table
    defects4warp maint mutate materialize DIR                 # the admitted tier as case folders
    defects4warp maint mutate score run-a.json run-b.json     # per-operator mutation scores
    """


@cmd.command("list")
def list_cmd():
    """List the operators and the class each produces."""
    from ..corpus.mutate import OPERATORS

    for name, op in OPERATORS.items():
        click.echo(f"{name:28s} {op.produces:24s} {op.summary}")


@cmd.command("generate")
@click.argument("path", type=ProgramPath(file_okay=False))
@operators_opt
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Write one folder per mutant here (default: print each mutant's diff).")
def generate_cmd(path, operators, out):
    """Apply operators to the program in PATH (a folder with problem.py, or a bundled case as CASE/VARIANT)."""
    from ..corpus.mutate import OPERATORS, get_operator
    from ..corpus.mutate.admit import write_program
    from ..corpus.mutate.sources import Parent

    _check_operators(operators)
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


@cmd.command("admit")
@operators_opt
@manifest_opt
@click.option("--parents", default="*", show_default=True, help="Glob(s) over parent ids (case/variant, adapters/name).")
@click.option("--max-sites", default=1, show_default=True, type=click.IntRange(min=0),
              help="Sites per parent and operator (0: all).")
@click.option("--jobs", "-j", default=2, show_default=True, type=click.IntRange(1, 64), help="Oracle workers in parallel.")
@warp_option(many=True, default_help="the installed release")
@click.option("--timeout", "timeout_s", default=300.0, show_default=True, type=click.FloatRange(min=1.0),
              help="Seconds per oracle run.")
@click.option("--fresh", is_flag=True, help="Measure every program again instead of reusing the oracle result cache.")
@click.option("--programs", type=click.Choice(["auto", "adapters", "scripts", "all"]), default="auto",
              show_default=True, help="Which program of each corpus variant is a parent (scripts: the "
              "operators edit the user's script and its siblings; the oracle replays it from the capture's record).")
def admit_cmd(operators, manifest, parents, max_sites, jobs, warp, timeout_s, fresh, programs):
    """Run admission over every parent (each candidate mutant measured by the
    oracle on every release) and write the manifest."""
    _check_operators(operators)
    _admit(list(operators) or None, manifest, parents, max_sites or None, jobs, warp, timeout_s, fresh, programs)


@cmd.command("merge")
@click.argument("manifests", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@manifest_opt
@click.option("--redo", "redo", multiple=True,
              help="Records of this operator come only from the last manifest (repeatable).")
def merge_cmd(manifests, manifest, redo):
    """Combine the manifests of several admission runs (later ones win) into --manifest."""
    from ..corpus.mutate.tier import merge_manifests, write_manifest

    doc = merge_manifests(list(manifests), drop={i: list(redo) for i in range(len(manifests) - 1)})
    p = write_manifest(doc, manifest)
    click.echo(f"merged {len(manifests)} manifests: {doc['admission']['admitted']} admitted of "
               f"{doc['admission']['tried']} -> {p}")


@cmd.command("summary")
@manifest_opt
@markdown_option("Write the manifest's per-operator admission table here")
def summary_cmd(manifest, markdown_path):
    """The manifest's per-operator admission table (Markdown)."""
    from ..corpus.mutate.score import admission_table

    text = admission_table(manifest)
    _emit(text if markdown_path not in (None, "-") else text.rstrip("\n"), markdown_path)


@cmd.command("materialize")
@click.argument("dest", type=click.Path(file_okay=False))
@manifest_opt
@click.option("--sample", default=None, type=click.IntRange(min=1), help="Only the first N mutants.")
@click.option("--per-operator", default=None, type=click.IntRange(min=1), help="At most N mutants per operator.")
def materialize_cmd(dest, manifest, sample, per_operator):
    """Rebuild the admitted tier as case folders in DEST."""
    from ..corpus.mutate.tier import materialize as mat

    dirs = mat(dest, manifest, only=sample, per_operator=per_operator)
    click.echo(f"wrote {len(dirs)} case folders to {dest}")


@cmd.command("score")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@manifest_opt
@markdown_option("Write the per-operator score table here")
@json_option("Also write the scores of every run as JSON here")
def score_cmd(runs, manifest, markdown_path, json_path):
    """Per-operator mutation scores of engine runs (`run --json` files over the materialised tier)."""
    from ..corpus.mutate.score import markdown_table, mutation_scores

    _one_stdout(markdown=markdown_path, json=json_path)
    scores = [mutation_scores(r, manifest) for r in runs]
    text = markdown_table(scores)
    if markdown_path or json_path != "-":  # with --json - stdout carries the JSON alone
        _emit(text if markdown_path not in (None, "-") else text.rstrip("\n"), markdown_path)
    if json_path:
        _write_json(scores, json_path)


def _admit(operators, manifest, parents_glob, max_sites, jobs, warp, timeout, fresh=False, programs="auto"):
    from ..envs import ReleaseEnvError, python_for
    from ..corpus.mutate.admit import CACHE_DIR, admit, candidates, summarize
    from ..corpus.mutate.sources import all_parents
    from ..corpus.mutate.tier import build_manifest, write_manifest

    releases = {}
    for r in (warp or [None]):
        try:
            py, ver = python_for(r)
        except ReleaseEnvError as exc:
            raise click.UsageError(str(exc)) from None
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
    recs = admit(cands, releases, jobs=jobs, timeout_s=timeout, progress=progress, cache_dir=None if fresh else CACHE_DIR)
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
