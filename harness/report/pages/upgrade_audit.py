"""docs/upgrade-audit.md: what changes from one Warp release to the next (ground truth, the engine's
answers, builtin adjoints), and what measuring a release cost."""

from __future__ import annotations

import statistics
from pathlib import Path

from ...builtins import load
from ..builtins_page import cell_text, changes
from ...run.matrix import (
    ERROR_SIZE_FACTOR, SECTIONS, answer_changes, contradictions, error_size_changes, error_size_intro,
    expected_text, noise_sentence, section_lines, truth_changes,
)
from .prose import _existing, _kept_block, _wrapped, measure_command
from .sources import ROOT, _read, _rkey, _vkey, engine_docs, page_releases, truth_by_release, validation_files


def _answers(doc: dict) -> dict:
    """:func:`defects4warp.run.matrix.answer_changes` input from an engine-release document."""
    out = {}
    for x in doc["runs"]:
        if x.get("unsupported") or x.get("skipped"):
            continue
        top = f"{x['verdict']} {x['top'][0][0]}" if x.get("top") else x["verdict"]
        out[_rkey(x)] = {"top": top, "tracker": x.get("tracker") or {}, "wall_s": x.get("seconds"),
                         "evals": x.get("evals"), "correct_class": (x.get("correct") or {}).get("class"),
                         "expected": expected_text(x.get("expected"))}
    return out


def _builtins_changes(a: str, b: str):
    """(changes, docs) of the committed builtins conformance data between ``a`` and ``b``, or None when either
    release is not measured."""
    da, db = load(a, "cpu"), load(b, "cpu")
    if da is None or db is None:
        return None
    return changes({a: da, b: db}, a, b), {a: da, b: db}


def measured_checks(release: dict) -> int:
    """The checks of one release of a validation document (``{"checks", "reused", ...}``) that its
    ``wall_s`` paid for: its ``measured`` field when it has one (a file merged by
    scripts/merge_validation.py), else its checks minus the ``reused`` ones and the ``skipped`` ones
    (never run)."""
    if release.get("measured") is not None:
        return int(release["measured"])
    checks = release.get("checks") or []
    skipped = sum(1 for c in checks if c.get("status") == "skipped")
    return max(0, len(checks) - int(release.get("reused") or 0) - skipped)


#: A release whose committed files measured fewer runs than this gives no cost rate (:func:`measurement_costs`).
COST_MIN_MEASURED = 20


def measurement_costs(root: Path = ROOT, docs: dict | None = None, *, min_measured: int | None = None) -> dict:
    """What measuring one release cost, as recorded in the committed files.

    A file assembled partly from the result store records the wall time of
    the runs it measured only, so every rate here is per *measured* run
    (:func:`measured_checks` for a validation; an engine file's ``measured``
    field, else its runs minus its ``reused`` ones).

    Parameters
    ----------
    min_measured : int, optional
        A release whose files measured fewer runs than this gives no rate
        (default :data:`COST_MIN_MEASURED`, 20: below that the fixed start-up
        of a release, environment and kernel-cache loading, dominates the rate).

    Returns
    -------
    dict
        ``validation``: ``[(release, wall_s, checks, measured)]`` from the committed validation JSON (the
        release's own ``wall_s``, seconds of wall time of the independent oracle, and its ``measured`` checks,
        both added up when several files hold the release; ``checks``: the largest file's check count, the
        corpus as validated on that release);
        ``engine``: ``[(release, wall_s, cpu_s, runs, jobs, measured)]`` from each
        ``docs/data/engine-<release>.json``;
        ``per_variant_s``: the median over releases of validation seconds per measured check plus engine
        wall seconds per measured run (None when either has no release with a rate);
        ``validation_release_s``, ``engine_release_s``: the median wall seconds of one release's whole-corpus
        validation and engine run, each release's rate times its checks or runs (None when no release has a
        rate); ``per_release_s``: their sum (None when either is); ``min_measured`` as given. Both lists
        oldest first.
    """
    docs = engine_docs(root) if docs is None else docs
    min_measured = COST_MIN_MEASURED if min_measured is None else min_measured
    per = {}
    for p in validation_files(root):
        for rel, r in _read(p, "releases")["releases"].items():
            if r.get("wall_s") and r.get("checks"):
                w, n, m = per.get(rel, (0.0, 0, 0))
                per[rel] = (w + float(r["wall_s"]), max(n, len(r["checks"])), m + measured_checks(r))
    val = [(rel, w, n, m) for rel, (w, n, m) in per.items()]
    eng = []
    for rel, d in docs.items():
        runs = d.get("corpus", {}).get("runs")
        if d.get("wall_s") and runs:
            measured = d.get("measured")
            measured = max(0, runs - int(d.get("reused") or 0)) if measured is None else int(measured)
            eng.append((rel, float(d["wall_s"]), d.get("cpu_s"), runs, d.get("jobs"), measured))
    val.sort(key=lambda t: _vkey(t[0]))
    eng.sort(key=lambda t: _vkey(t[0]))
    least = max(1, min_measured)
    val_rates = [(w / m, n) for _, w, n, m in val if m >= least]
    eng_rates = [(w / m, n) for _, w, _c, n, _j, m in eng if m >= least]
    val_s = statistics.median(r * n for r, n in val_rates) if val_rates else None
    eng_s = statistics.median(r * n for r, n in eng_rates) if eng_rates else None
    per_variant = per_release = None
    if val_rates and eng_rates:
        per_variant = statistics.median(r for r, _ in val_rates) + statistics.median(r for r, _ in eng_rates)
        per_release = val_s + eng_s
    return {"validation": val, "engine": eng, "per_variant_s": per_variant, "per_release_s": per_release,
            "validation_release_s": val_s, "engine_release_s": eng_s, "min_measured": min_measured}


def _costs_paragraph(costs: dict) -> str:
    """What measuring each release cost (:func:`measurement_costs`): a sentence, a table with one row
    per release (validation wall time and checks measured; the engine run's wall and CPU time, runs
    measured and jobs; ``-`` where a file is missing), and the median rates."""
    rows = {}
    for r, w, n, m in costs["validation"]:
        rows.setdefault(r, {})["val"] = f"{w / 60:.1f} min | {min(m, n)} of {n}"
    for r, w, c, n, j, m in costs["engine"]:
        rows.setdefault(r, {})["eng"] = (f"{w / 60:.1f} min | {'-' if c is None else f'{c / 60:.1f} min'} | "
                                         f"{min(m, n)} of {n} | {j or '-'}")
    text = ("What measuring a release cost, as recorded in the committed files (wall time on the machines they "
            "name; a check or run not measured was reused from the result store or skipped):")
    if not rows:
        return text + " none committed."
    lines = [text, "", "| release | validation (oracle) | checks measured | engine run | engine CPU | runs measured "
             "| jobs |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=_vkey):
        lines.append(f"| {r} | {rows[r].get('val', '- | -')} | {rows[r].get('eng', '- | - | - | -')} |")
    if costs["per_variant_s"] is not None:
        lines += ["", ("At the median of these rates per measured run (releases with at least "
                       f"{costs.get('min_measured', 1)} measured runs), one "
                       f"variant costs about {costs['per_variant_s']:.0f} s per release (validation and engine run) "
                       f"and the whole corpus about {costs['per_release_s'] / 60:.0f} min per release.")]
    return "\n".join(lines)


def _uncovered_sentence(a: str, b: str, unvalidated: list, unmeasured: list, costs: dict) -> str:
    """The one sentence of an audit pair the committed data does not cover: the user's own audit verb, then
    the page's measuring command, each with its cost at the rates the committed files record."""
    rate = "" if costs["per_variant_s"] is None else \
        f" (about {2 * costs['per_variant_s']:.0f} s per variant for the two releases, at the rates above)"
    missing = sorted(set(unvalidated) | set(unmeasured), key=_vkey)
    whole = ""
    if costs["validation_release_s"] is not None and costs["engine_release_s"] is not None:
        total = len(unvalidated) * costs["validation_release_s"] + len(unmeasured) * costs["engine_release_s"]
        whole = f" (about {total / 60:.0f} min: the median release's validation for each release not validated, " \
                "its engine run for each without an engine file)"
    return (f"The committed data does not cover this pair. To compare the two releases on your own corpus or a few "
            f"cases, `defects4warp audit --warp {a},{b} --cases GLOB` measures both{rate} and prints these "
            f"sections; {measure_command(','.join(missing))} measures the whole corpus into this page{whole}.")


@_wrapped
def render_upgrade_audit(root: Path = ROOT) -> str:
    """docs/upgrade-audit.md: for each pair of consecutive releases, the ground
    truth that changes and the bugs whose gradient error changes size
    (validation JSON), the engine's answers that change (engine files) and the
    builtin adjoints that change (builtins data). Section titles and line
    formats are those of ``defects4warp audit`` (:data:`defects4warp.run.matrix.SECTIONS`)."""
    docs = engine_docs(root)
    truth = truth_by_release(root)
    rels = page_releases(root, docs)
    costs = measurement_costs(root, docs)
    L = _audit_head(costs)
    body = []
    for a, b in zip(rels, rels[1:]):
        row = [f"{a} -> {b}"]
        body += [f"## Warp {a} -> {b}", ""]
        unvalidated, unmeasured = [r for r in (a, b) if r not in truth], [r for r in (a, b) if r not in docs]
        if unvalidated or unmeasured:
            body += [_uncovered_sentence(a, b, unvalidated, unmeasured, costs), ""]
        for part in (_truth_part(a, b, truth), _answers_part(a, b, docs), _contradictions_part(a, b, truth),
                     _builtins_part(a, b)):
            row += part[0]
            body += part[1]
        L.append("| " + " | ".join(row) + " |")
    text = "\n".join(L + [""] + body).rstrip("\n") + "\n"
    return text + _kept_block(_existing(root, "docs/upgrade-audit.md"), *PROGRAM_AUDIT_MARKERS)


def _audit_head(costs: dict) -> list:
    """The page's head: what it is made of, what measuring cost (:func:`_costs_paragraph`), and the header
    of its summary table (one row per pair follows)."""
    L = ["# Upgrade audits: what changes from one Warp release to the next", "",
         "Generated by `defects4warp maint pages` from the committed validation JSON (ground truth), "
         "`docs/data/engine-<release>.json` (the engine's answers) and `harness/data/builtins/` (Warp's builtin "
         "adjoints against finite differences, docs/builtins.md); do not edit by hand. For any two releases, "
         "`defects4warp audit --warp A,B` measures the same comparison directly, with the same sections, "
         "on the whole corpus or on the cases `--cases GLOB` selects (or on your own corpus, `--corpus`). Your own "
         "program across releases, `defects4warp audit train.py --warp A,B`: the last section, "
         "[Your program across releases](#your-program-across-releases).", "",
         "For each pair of consecutive supported releases: variants whose gradient becomes wrong or right "
         "(measured by the independent oracle), bugs present on both whose gradient error changes size by more "
         f"than {ERROR_SIZE_FACTOR:g}x, the engine's answers that change (verdict or top-1 class, judged right or "
         "wrong on both releases; overwrite-tracker warnings; cost), and builtin overloads whose adjoint changes "
         "state. A run at a scale other than `small` is written `variant @scale`, a script program "
         "`variant (script)`. A part whose data is missing names the command that measures it.", "",
         _costs_paragraph(costs), "",
         "## Summary", "",
         "| from -> to | ground truth that changes | bugs whose error changes size | engine answers that change "
         "| builtin adjoints that change |",
         "|---|---|---|---|---|"]
    return L


def _truth_part(a: str, b: str, truth: dict) -> tuple:
    """The ground truth of the pair ``a -> b``: ``(summary cells, lines)``, the variants whose labels change
    and the bugs whose gradient error changes size, or the command that validates a release missing."""
    row, body = [], []
    lack = [r for r in (a, b) if r not in truth]
    if lack:
        row += ["not validated on " + ", ".join(lack), "needs both validated"]
        body += [f"### {SECTIONS['truth_changes']}", "",
                 f"Not validated on Warp {', '.join(lack)}: {measure_command(','.join(lack))} validates "
                 + ("it." if len(lack) == 1 else "them."), "",
                 f"### {SECTIONS['error_size_changes']}", "",
                 "Needs the oracle's measurement on both releases (not validated on Warp "
                 f"{', '.join(lack)}).", ""]
    else:
        tc = truth_changes(truth[a], truth[b])
        es = error_size_changes(truth[a], truth[b])
        row += [str(len(tc)), str(len(es))]
        body += section_lines("truth_changes", tc, "###")
        body += section_lines("error_size_changes", es, "###", intro=error_size_intro())
    return row, body


def _answers_part(a: str, b: str, docs: dict) -> tuple:
    """The engine's answers that change from ``a`` to ``b`` (engine files ``docs``): ``(summary cells,
    lines)``, or the command that measures a release missing."""
    row, body = [], []
    lack = [r for r in (a, b) if r not in docs]
    if lack:
        row.append("not measured on " + ", ".join(lack))
        body += ["### The engine's answers that change", "",
                 f"No engine file for Warp {', '.join(lack)}: {measure_command(','.join(lack))} measures "
                 + ("it." if len(lack) == 1 else "them."), ""]
    else:
        ch = answer_changes(_answers(docs[a]), _answers(docs[b]))
        row.append(f"{len(ch['verdict_flips'])} verdict/class, {len(ch['probe_changes'])} tracker, "
                   f"{len(ch['cost_changes'])} cost")
        body += section_lines("verdict_flips", ch["verdict_flips"], "###")
        body += section_lines("probe_changes", ch["probe_changes"], "###")
        body += section_lines("cost_changes", ch["cost_changes"], "###")
        same = docs[a].get("machine") == docs[b].get("machine")
        body += [noise_sentence(ch["noise"])
                 + ("" if same else " The two releases were measured on different machines: wall times "
                                    "compare machines as much as releases."), ""]
    return row, body


def _contradictions_part(a: str, b: str, truth: dict) -> tuple:
    """The runs whose labels the oracle contradicts on ``a`` or ``b``: ``([], lines)`` (no summary cell)."""
    body = []
    unvalidated = [r for r in (a, b) if r not in truth]
    if len(unvalidated) == 2:
        body += [f"### {SECTIONS['contradictions']}", "", "Neither release is validated.", ""]
    else:
        body += section_lines("contradictions", contradictions({r: truth[r] for r in (a, b) if r in truth}), "###",
                              intro=None if not unvalidated else
                              f"Not validated on Warp {unvalidated[0]}: only the other release is checked.")
    return [], body


def _builtins_part(a: str, b: str) -> tuple:
    """The builtin overloads whose adjoint changes state from ``a`` to ``b`` (builtins conformance data):
    ``(summary cells, lines)``, or the command that measures a release missing."""
    row, body = [], []
    bc = _builtins_changes(a, b)
    if bc is None:
        row.append("not measured")
        body += [f"### {SECTIONS['builtins']}", "",
                 f"Not measured by the builtins conformance suite on {a} or {b} "
                 f"(`defects4warp maint builtins --warp {a},{b} --write-package-data`).", ""]
    else:
        ch, bdocs = bc
        row.append(str(len(ch)))
        body += [f"### {SECTIONS['builtins']} ({len(ch)})", ""]
        if ch:
            body += ["| overload | " + a + " | " + b + " |", "|---|---|---|"]
            body += [f"| `{c['id']}` | {cell_text(bdocs[a], c['id'])} | {cell_text(bdocs[b], c['id'])} |"
                     for c in ch]
        else:
            body.append(f"None ({len(bdocs[a]['cells'])} and {len(bdocs[b]['cells'])} overloads measured on CPU).")
        body.append("")
    return row, body


#: Markers of the hand-written section of docs/upgrade-audit.md on the program audit (measured runs of
#: `defects4warp audit PATH`, not rendered from committed data): kept as it is after the generated page.
PROGRAM_AUDIT_MARKERS = ("<!-- program-audit:start (hand-written, kept by defects4warp maint pages) -->",
                         "<!-- program-audit:end -->")
