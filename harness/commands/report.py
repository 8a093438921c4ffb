"""``defects4warp report``."""

from __future__ import annotations


import click

from ._common import _check_writable, _emit, _one_stdout, _run_doc, results_opt


@click.command()
@click.argument("runs", nargs=-1, required=True)
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the Markdown here ('-': print it; default: print it, unless --html is given).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write a self-contained HTML page with figures here ('-' prints it).")
@click.option("--title", default="Results", show_default=True, help="Page title.")
@click.option("--table-only", is_flag=True, help="Only the comparison table of all runs (e.g. an engine ablation).")
@results_opt
def cmd(runs, markdown_path, html_path, title, table_only, results_path):
    """Render runs (JSON files from `run --json`, or stored run ids from
    `defects4warp history`) as Markdown and/or HTML: a results page for the
    first run, followed by a comparison of all runs when several are given
    (other engines, other Warp releases)."""
    from ..report.markdown import comparison_markdown, run_markdown

    _one_stdout(markdown=markdown_path, html=html_path)
    _check_writable(markdown_path)
    _check_writable(html_path)
    docs = [_run_doc(r, results_path) for r in runs]
    if html_path:
        from ..report.html import html_report

        _emit(html_report(docs[0], docs[1:], title), html_path)
        if not markdown_path:
            return
    if table_only:
        text = comparison_markdown(docs)
    else:
        text = run_markdown(docs[0], title)
        if len(docs) > 1:
            text += "\n## Comparison\n\n" + comparison_markdown(docs)
    _emit(text, markdown_path)
