"""``defects4warp leaderboard``."""

from __future__ import annotations

import sys

import click
from rich.markup import escape
from rich.table import Table

from ._common import _fmt, _write_json, console, err_console, json_option, results_opt, split_opt, warp_option


@click.command()
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Rank the runs on this corpus folder (default: the bundled corpus).")
@click.option("--cases", "cases_glob", default="*", show_default=True,
              help="Rank the runs made with this --cases selection of the corpus (default: the whole corpus).")
@split_opt
@click.option("--corpus-digest", "digest", default=None, metavar="PREFIX",
              help="Rank the runs on the corpus with this digest (prefix; see `defects4warp history`); "
                   "overrides --corpus and --cases.")
@warp_option(default_help="the release of the newest run on that corpus")
@json_option("Write the ranking as JSON here")
@results_opt
def cmd(corpus, cases_glob, split, digest, warp, json_path, results_path):
    """Rank engines on one corpus and Warp release (the newest run of each
    engine), by class accuracy, then verdict accuracy, then false-positive
    rate. The corpus is the whole bundled corpus unless --corpus, --cases,
    --split or --corpus-digest choose another: runs on a subset or on another corpus are
    never mixed into the ranking."""
    from ..corpus.case import default_corpus, load_corpus
    from pathlib import Path

    from ..run.history import corpus_digest, corpus_info, corpus_label, leaderboard as board, list_runs, n_cases

    name = None
    if not digest:
        root = corpus or default_corpus()
        cases, _ = load_corpus(root, cases_glob)
        cases = [c for c in cases if split is None or c.split == split]
        if not cases:
            raise click.BadParameter(f"no case in {root} matches {cases_glob!r}" + (f" in split {split}" if split else ""),
                                     param_hint="'--cases'")
        digest = corpus_digest(cases)
        c = corpus_info(root, cases, cases_glob, split)
        name = ("bundled" if not corpus else str(Path(root).resolve())) + f", {n_cases(len(cases))}" \
            + (f" (subset: {c['selection']})" if c["subset"] else "")
    digest, warp, rows = board(digest, warp, results_path)
    if name is None:
        name = corpus_label(rows[0]) if rows else f"digest {digest[:10]}"
    if not rows:
        runs = list_runs(results_path)
        err_console.print(f"[yellow]no stored run on the corpus {escape(name)} (digest {digest[:10]})"
                          + (f" with Warp {warp}" if warp else "") + "[/yellow]", soft_wrap=True)
        seen = {}
        for r in runs:
            seen.setdefault(r["corpus_digest"], corpus_label(r))
        if seen:
            err_console.print("stored runs are on:", soft_wrap=True)
            for k, v in seen.items():
                err_console.print(f"  {escape(v)}: --corpus-digest {k[:10]}", soft_wrap=True)
        if json_path:
            _write_json({"corpus": name, "corpus_digest": digest, "warp": warp, "rows": []}, json_path)
        sys.exit(0)
    t = Table(title=f"leaderboard: corpus {name} (digest {digest[:10]}), Warp {warp}")
    for col in ("rank", "engine", "run", "date", "class acc.", "verdict acc.", "detection", "FPR", "median s"):
        t.add_column(col)
    for i, r in enumerate(rows, 1):
        s = r["summary"]
        t.add_row(str(i), f"{r['engine']} {r['engine_version'] or ''}", str(r["id"]), r["created"][:10],
                  _fmt(s.get("class_accuracy")), _fmt(s.get("verdict_accuracy")), _fmt(s.get("detection_rate")),
                  _fmt(s.get("false_positive_rate")), _fmt(s.get("median_wall_s_per_run"), 2))
    console.print(t)
    if json_path:
        keep = ("class_accuracy", "verdict_accuracy", "detection_rate", "false_positive_rate", "median_wall_s_per_run")
        _write_json({"corpus": name, "corpus_digest": digest, "warp": warp,
                     "rows": [{"rank": i, "engine": r["engine"], "engine_version": r["engine_version"],
                               "run": r["id"], "created": r["created"],
                               **{k: r["summary"].get(k) for k in keep}} for i, r in enumerate(rows, 1)]},
                    json_path)
