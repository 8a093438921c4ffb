"""``defects4warp maint capture-table``: the capture on every script variant (:mod:`defects4warp.report.capture_table`)."""

from __future__ import annotations

import sys

import click

from ..report.pages.prose import wrap_prose

from ._common import (
    _check_writable, _emit, _load, _one_stdout, _read_json, _write_json, cases_opt, corpus_opt, device_opt, err_console,
)


@click.command()
@corpus_opt
@cases_opt
@device_opt
@click.option("--timeout", "timeout_s", default=300.0, show_default=True, type=float,
              help="Seconds one variant's capture may take.")
@click.option("--conversions", "conversions_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Take the captures from a `defects4warp maint conversion --json` file instead of measuring.")
@click.option("--run", "run_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A `run --programs scripts --json` file: seconds per diagnosis and the engine's verdicts.")
@click.option("--validation", "validation_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A `validate --programs scripts --json` file: whether each case's label holds for its script.")
@click.option("--from-json", "from_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Render this capture-table JSON again (no measurement).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the records here (e.g. docs/data/capture-table.json); '-' prints them, and then the "
                   "table only with --markdown FILE.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the table here (e.g. docs/capture-table.md); '-' or no --markdown: print it.")
def cmd(corpus, cases_glob, device, timeout_s, conversions_json, run_json, validation_json, from_json, json_path,
        markdown_path):
    """Capture every script variant of the corpus (the variants with a script: block) and tabulate:
    captured or not and why, params, objective kind, seconds per capture, per re-run and per diagnosis."""
    from ..report.capture_table import add_diagnoses, add_validation, document, from_conversions, load, markdown, measure
    from ..machine import describe, one_line

    _one_stdout(markdown=markdown_path, json=json_path)
    _check_writable(json_path)
    _check_writable(markdown_path)
    if from_json:
        doc = load(from_json)
    else:
        cases, errors = _load(corpus, cases_glob)
        sources = []
        if conversions_json:
            import json

            try:
                with open(conversions_json) as f:
                    conv = json.load(f)
            except (OSError, json.JSONDecodeError) as exc:
                raise click.UsageError(f"{conversions_json}: not readable JSON ({exc})") from None
            recs = from_conversions(cases, conv)
            sources.append(conversions_json)
        else:
            recs = measure(cases, device=device, timeout_s=timeout_s,
                           on_record=lambda r: err_console.print(
                               f"{r['case']}/{r['variant']}: " + ("captured" if r["captured"] else
                                                                  f"not captured: {r['why_not']}")))
            sources.append("capture measured by this command")
        if run_json:
            add_diagnoses(recs, _read_json(run_json, "summary", "`defects4warp run --json`"))
            sources.append(run_json)
        if validation_json:
            add_validation(recs, _read_json(validation_json, "releases", "`defects4warp validate --json`"))
            sources.append(validation_json)
        doc = document(recs, sources, one_line(describe()))
    if json_path:
        _write_json(doc, json_path)
    if markdown_path or json_path != "-":  # with --json - stdout carries the JSON alone
        _emit(wrap_prose(markdown(doc)), markdown_path)  # no line of prose over 400 characters
    sys.exit(0)
