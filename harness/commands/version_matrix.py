"""``defects4warp version-matrix``."""

from __future__ import annotations


import click

from ._common import _emit, _read_json, markdown_option


@click.command()
@click.argument("validation_json", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@markdown_option("Write the Markdown here")
@click.option("--determinism", "determinism_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON of a `validate --repeat N --json` run, summarised as a determinism line.")
def cmd(validation_json, markdown_path, determinism_json):
    """Render a case x release matrix (wrong/right with the measured relative
    error) from the JSON of `validate --warp ... --json` (several files, e.g.
    runs over parts of the corpus, are merged)."""
    from ..report.markdown import merge_validations, version_matrix_markdown

    docs = [_read_json(p, "releases", "`defects4warp validate --json`") for p in validation_json]
    det = _read_json(determinism_json, "releases", "`defects4warp validate --json`") if determinism_json else None
    text = version_matrix_markdown(merge_validations(docs), det)
    _emit(text, markdown_path)
