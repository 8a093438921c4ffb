"""``defects4warp compare``."""

from __future__ import annotations


import click
from rich.markup import escape
from rich.table import Table

from ._common import _fmt, _write_json, console, err_console, json_option, results_opt


@click.command()
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@json_option("Also write the comparison (metrics, flipped variant runs) as JSON here")
@results_opt
def cmd(run_a, run_b, json_path, results_path):
    """Per-metric change from stored run A to run B, and the variants whose
    verdict or top class flipped."""
    from ..run.history import compare
    from ..run.matrix import correctness_mark

    try:
        c = compare(run_a, run_b, results_path)
    except KeyError as exc:  # str(KeyError) would quote the message
        raise click.UsageError(exc.args[0]) from None
    if not c["comparable"]:
        from ..run.history import bundled_digest, corpus_label, get_run

        b = bundled_digest()
        ra, rb = get_run(run_a, results_path), get_run(run_b, results_path)
        err_console.print("[yellow]" + escape(f"the runs differ in corpus or Warp release: run {run_a} on "
                                          f"{corpus_label(ra, b)}, Warp {ra['warp_version']}; run {run_b} on "
                                          f"{corpus_label(rb, b)}, Warp {rb['warp_version']}") + "[/yellow]")
    t = Table(title=f"run {run_a} -> run {run_b}")
    for col in ("metric", f"run {run_a}", f"run {run_b}", "change"):
        t.add_column(col)
    for m, v in c["metrics"].items():
        t.add_row(m, _fmt(v["a"]), _fmt(v["b"]), "n/a" if v["change"] is None else f"{v['change']:+.3f}")
    if json_path != "-":  # with --json - stdout carries the JSON alone
        console.print(t)
        console.print(f"{len(c['flipped'])} variant run(s) flipped")
        for f in c["flipped"]:
            mark = correctness_mark(f.get("was_correct"), f["now_correct"])
            console.print(escape(f"  {f['case']}/{f['variant']}@{f['scale']}: {f['a']} -> {f['b']}{mark}"))
    if json_path:
        _write_json(c, json_path)
