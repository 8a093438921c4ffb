"""Rendering results as Markdown for the docs (generated, never typed)."""

from __future__ import annotations


from .machine import one_line


def _cell(check: dict) -> str:
    if check.get("oracle") or check.get("status"):
        from .matrix import oracle_cell

        bad = check.get("status") == "failed" or (check.get("status") is None and not check.get("ok"))
        return oracle_cell(check) + (" **(contradicts tags)**" if bad else "")
    if check.get("message", "").startswith(("skipped", "no expectation")):
        return "skip"
    sig = check.get("signature")
    err = check.get("relative_error")
    err = float(err) if isinstance(err, str) else err  # strict JSON stores inf/nan as strings
    err_s = "" if err is None else (" inf" if err == float("inf") else f" {err:.2g}")
    if sig is None:
        return "ERROR"
    word = "right" if sig == "agrees" else "wrong"
    mark = "" if check.get("ok") else " **(contradicts tags)**"
    return f"{word}{err_s if word == 'wrong' else ''}{mark}"


def merge_validations(docs: list) -> dict:
    """Merge ``validate --json`` documents (disjoint case sets): checks are
    concatenated per release, wall times and counts of checks reused from the
    result store added (None when a document does not record them), the dates
    the reused checks were measured (``reused_measured``) widened; a case
    checked in several documents keeps its checks from the last one."""
    out = {"device": docs[0]["device"], "machine": docs[0]["machine"], "repeat": docs[0].get("repeat", 1),
           "releases": {}, "failures": [], "wall_s": 0.0}
    for d in docs:
        cases = {c["case"] for r in d["releases"].values() for c in r["checks"]}
        for rel, r in d["releases"].items():
            slot = out["releases"].setdefault(rel, {"wall_s": 0.0, "checks": [], "reused": 0})
            slot["checks"] = [c for c in slot["checks"] if c["case"] not in cases] + r["checks"]
            slot["wall_s"] += r["wall_s"]
            slot["reused"] = None if slot["reused"] is None or r.get("reused") is None else slot["reused"] + r["reused"]
            if r.get("reused_measured"):
                span = slot.get("reused_measured") or list(r["reused_measured"])
                slot["reused_measured"] = [min(span[0], r["reused_measured"][0]),
                                           max(span[1], r["reused_measured"][-1])]
        out["failures"] += d.get("failures", [])
        if d.get("measured_on"):
            out["measured_on"] = max(out.get("measured_on") or "", d["measured_on"])
        out["wall_s"] += d.get("wall_s", 0.0)
    return out


def version_matrix_markdown(doc: dict, determinism: dict | None = None) -> str:
    """Markdown case x release matrix from a ``validate --warp ... --json`` document.

    Rows: every non-``fixed`` variant (the buggy one and intermediates), at
    each scale measured. Cells: ``right`` (autodiff agrees with the truth),
    ``wrong <relative error>``, ``skip`` (no expectation or a missing
    requirement), flagged when the measurement contradicts the case's tags.
    A closing line reports the fixed variants.
    """
    from packaging.version import InvalidVersion, Version

    def _order(r):
        try:
            return (0, Version(r))
        except InvalidVersion:
            return (1, Version("0"))

    releases = sorted(doc["releases"], key=_order)
    rows = {}
    fixed_bad = []
    n_fixed = 0
    for rel, r in doc["releases"].items():
        for c in r["checks"]:
            key = (c["case"], c["variant"], c["scale"])
            if c["variant"] == "fixed":
                if c.get("status") == "unsupported":
                    continue
                n_fixed += 1
                if not c["ok"] or (c.get("signature") not in (None, "agrees")) or c.get("status") == "unresolved":
                    fixed_bad.append(f"{c['case']} on {rel}: {c['message']}")
                continue
            rows.setdefault(key, {})[rel] = c
    def all_reused(rel):
        r = doc["releases"][rel]
        measured = [c for c in r["checks"] if c.get("status") != "skipped"]
        return bool(r.get("reused")) and r["reused"] >= len(measured) > 0

    def span_text(span):
        if not span:
            return "on a date not recorded"
        return span[0] if span[0] == span[-1] else f"{span[0]} to {span[-1]}"

    def wall(rel):
        r = doc["releases"][rel]
        if all_reused(rel):
            return f"{rel} reused from the result store (measured {span_text(r.get('reused_measured'))})"
        return f"{rel} {r['wall_s'] / 60:.1f} min"

    reused_rels = [rel for rel in releases if all_reused(rel)]
    if releases and len(reused_rels) == len(releases):
        spans = [doc["releases"][rel].get("reused_measured") for rel in releases]
        overall = None if not all(spans) else [min(s[0] for s in spans), max(s[-1] for s in spans)]
        measured_line = (f"- Every check reused from the result store, measured {span_text(overall)}"
                         + (f" (assembled on {doc['measured_on']})" if doc.get("measured_on") else "")
                         + f"; each variant measured {doc.get('repeat', 1)} time(s) in a fresh process.")
        total = "; nothing was measured again."
    else:
        measured_line = (f"- Measured on {doc.get('measured_on') or 'an unrecorded date'}; each variant measured "
                         f"{doc.get('repeat', 1)} time(s) in a fresh process.")
        total = f"; the full matrix took {doc.get('wall_s', 0) / 60:.1f} min."
    lines = [
        "# Version matrix",
        "",
        "Generated by `defects4warp version-matrix` from `defects4warp validate --warp "
        + ",".join(releases) + f" --repeat {doc.get('repeat', 1)} --json ...`; do not edit by hand.",
        "",
        "Each cell is the independent oracle's verdict (docs/oracle.md) on that release: `agrees` with",
        "the worst relative error against central finite differences (or the case's",
        "`reference_gradient()`), `wrong` with the worst relative error and `r=` the median ratio to",
        "the fixed twin (or the exact factor), `unres` (below the resolution set by the measured noise),",
        "`refused` (the release refuses to build or run it), `unsup` (the release is older than the",
        "variant's `min_warp`: the program uses a newer API and indeed fails to build there; not scored),",
        "`ERROR`, `skip` (not run: a module the case `requires` is not installed in that release's",
        "environment, or the case has no expectation there), `-` (not validated on that release: the",
        "case or scale was added after that release's validation ran). A cell that contradicts the",
        "case's tags is marked; validation then fails.",
        "",
        f"- Machine: {one_line(doc['machine'])}; device `{doc['device']}`.",
        measured_line,
        "- Wall time per release: " + ", ".join(wall(rel) for rel in releases) + total,
    ]
    if determinism:
        for rel, r in determinism["releases"].items():
            n = len([c for c in r["checks"] if c.get("expected")])
            bad = [c for c in r["checks"] if "non-deterministic" in c.get("message", "")]
            lines.append(f"- Determinism: on Warp {rel} every variant was measured {determinism.get('repeat', 1)} times, "
                         f"each in a fresh process; {n - len(bad)} of {n} gave the same outcome and signature every time"
                         + (" (" + "; ".join(f"{c['case']}/{c['variant']}" for c in bad) + " did not)" if bad else "") + ".")
    lines += [
        "",
        "| case | variant | tagged | " + " | ".join(releases) + " |",
        "|---|---|---|" + "---|" * len(releases),
    ]
    for (case, variant, scale), per in sorted(rows.items()):
        v = variant if scale == "small" else f"{variant} @{scale}"
        tags = []
        for r in releases:
            e = per.get(r, {}).get("expected")
            if e and e.get("verdict") != "unsupported":
                t = ("bug " if e["verdict"] == "bug" else "") + "/".join(e["classes"])
                if t not in tags:
                    tags.append(t)
        lines.append(f"| {case} | {v} | {', '.join(tags) or '-'} | "
                     + " | ".join(_cell(per[r]) if r in per else "-" for r in releases) + " |")
    lines.append("")
    if fixed_bad:
        lines.append("Fixed variants that do not agree everywhere:")
        lines += [f"- {x}" for x in fixed_bad]
    else:
        lines.append(f"All {n_fixed} fixed-variant checks agree with the truth on every release.")
    if doc.get("failures"):
        lines += ["", "Validation problems:"] + [f"- {f}" for f in doc["failures"]]
    return "\n".join(lines) + "\n"


def _f(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


#: The provenance line :func:`run_markdown` writes under its title by default.
RUN_SOURCE = "Generated by `defects4warp report` from the JSON of `defects4warp run`; do not edit by hand."


def kernel_cache_note(doc: dict) -> str | None:
    """How warm Warp's kernel cache was in a run, in words, or None when the run does not say.

    A run's wall time depends on it more than on anything else: a kernel found in the cache
    loads in milliseconds, one compiled takes seconds. ``summary["kernel_cache"]`` is taken as
    it is when present (a page that knows it from elsewhere); else the diagnoses' ``cost.compiles``
    (kernels compiled rather than loaded from the cache, counted by the reference engine's worker)
    and ``cost.compile_s`` are summed; runs that do not record them make it None.
    """
    s = doc.get("summary") or {}
    if s.get("kernel_cache"):
        return s["kernel_cache"]
    known = [c for c in ((r.get("diagnosis") or {}).get("cost") or {} for r in doc.get("results") or [])
             if c.get("compiles") is not None]
    if not known:
        return None
    n, t = sum(int(c["compiles"]) for c in known), sum(float(c.get("compile_s") or 0.0) for c in known)
    if not n:
        return "Warp's kernel cache warm: no kernel compiled"
    return f"{n} kernel build(s) took {t:.0f} s of it: the kernel cache was cold for some"


def run_markdown(doc: dict, title: str = "Results", source: str = RUN_SOURCE) -> str:
    """Markdown page for one ``defects4warp run --json`` document: summary,
    per-class recall and precision, confusions, every run that missed, cost.
    ``source`` is the provenance line under the title (default :data:`RUN_SOURCE`)."""
    s = doc["summary"]
    cache = f" ({kernel_cache_note(doc)})" if kernel_cache_note(doc) else ""
    lines = [
        f"# {title}",
        "",
        source,
        "",
        f"- Engine `{s['engine']}` {s.get('engine_version', '')}, Warp {s['warp_version']}, device `{s['device']}`.",
    ]
    if s.get("machine"):
        lines.append(f"- Machine: {one_line(s['machine'])}; run on {s.get('date', 'n/a')}, `--jobs {s.get('jobs', 1)}`.")
    if s.get("corpus"):
        c = s["corpus"]
        lines.append(f"- Corpus: {c['name']}, {c['cases']} case{'' if c['cases'] == 1 else 's'}" + (f" (subset: `{c['selection']}`)" if c.get("subset") else "")
                     + (f"; wall time {s['wall_s'] / 60:.1f} min." if s.get("wall_s") is not None else "."))
    if not s.get("complete", True):
        lines.append(f"- **Incomplete run**: {len(doc['results'])} runs finished before it was interrupted.")
    if s.get("case_format_errors"):
        lines.append(f"- **{len(s['case_format_errors'])} case folder(s) were not run** because of case format errors: "
                     + "; ".join(s["case_format_errors"]))
    lines += [
        f"- {s['cases']} cases, {s['variants']} variants, {s['runs']} runs (a variant runs at `production` scale too "
        f"when its expectations name it): {s['scored']} scored, {s.get('errors', 0)} errors, "
        f"{s.get('inconclusive', 0)} inconclusive, {s.get('skipped', 0)} skipped.",
        "",
        "| metric | value |",
        "|---|---|",
        f"| verdict accuracy | {_f(s['verdict_accuracy'])} |",
        f"| class accuracy (top-1 in the expected classes) | {_f(s['class_accuracy'])} |",
        f"| detection rate (bug runs diagnosed bug) | {_f(s['detection_rate'])} |",
        f"| false-positive rate (no_bug runs diagnosed bug) | {_f(s['false_positive_rate'])} |",
        f"| refusals recognised (refused runs diagnosed refused) | {_f(s.get('refusal_accuracy'))} |",
        f"| median seconds per run | {_f(s.get('median_wall_s_per_run'), 2)} |",
        f"| median objective evaluations per run | {_f(s.get('median_objective_evals'), 0)} |",
        f"| wall time of the whole run | {s['wall_s'] / 60:.1f} min{cache} |",
        "",
    ]
    if s.get("tiers"):
        lines += ["## Per provenance tier", "",
                  "Cases written for this corpus (`original`), taken from Warp's own fix history (`mined`, "
                  "docs/mined.md) and restating a public bug report (`report`), scored apart.", "",
                  "| tier | runs scored | detection rate (of bug runs) | false-positive rate (of no_bug runs) "
                  "| class accuracy |", "|---|---|---|---|---|"]
        for name, m in s["tiers"].items():
            lines.append(f"| {name} | {m['scored']} | {_f(m['detection_rate'])} ({m['bug_runs']}) | "
                         f"{_f(m['false_positive_rate'])} ({m['no_bug_runs']}) | {_f(m['class_accuracy'])} |")
        lines.append("")
    lines += [
        "## Per class",
        "",
        "| class | runs expecting it | recall | precision |",
        "|---|---|---|---|",
    ]
    for c, v in s["per_class"].items():
        lines.append(f"| `{c}` | {v['support']} | {_f(v['recall'], 2)} | {_f(v['precision'], 2)} |")
    missed = [r for r in doc["results"] if r.get("correct") and not r["correct"]["class"]]
    lines += ["", "## Runs whose top-1 class missed", ""]
    if missed:
        lines += ["| case | variant | expected | diagnosed |", "|---|---|---|---|"]
        for r in missed:
            d = r["diagnosis"]
            top = (d.get("classes") or [{}])[0].get("id", "-")
            v = r["variant"] + ("" if r["scale"] == "small" else f" @{r['scale']}")
            lines.append(f"| {r['case']} | {v} | {r['expected']['verdict']} {'/'.join(r['expected']['classes'])} | "
                         f"{d['verdict']} {top} |")
    else:
        lines.append("None.")
    skipped = skipped_runs(doc)
    if skipped:
        lines += ["", "## Skipped runs", "",
                  "Not diagnosed and not scored (they count in no metric above).", "",
                  "| case | variant | reason |", "|---|---|---|"]
        lines += [f"| {x['case']} | {x['variant'] + ('' if x['scale'] == 'small' else ' @' + x['scale'])} | {x['reason']} |"
                  for x in skipped]
    return "\n".join(lines) + "\n"


def skipped_runs(doc: dict) -> list:
    """``[{"case", "variant", "scale", "reason"}]`` of the runs of ``doc`` that
    were skipped (a case ``requires`` a missing module), from the summary's
    ``skipped_runs`` when present, else from the records."""
    from .scoring import is_skipped

    s = doc["summary"]
    if s.get("skipped_runs") is not None:
        return list(s["skipped_runs"])
    return [{"case": r["case"], "variant": r["variant"], "scale": r.get("scale", "small"),
             "reason": r.get("skipped") or "skipped"} for r in doc["results"] if is_skipped(r)]


def comparison_markdown(docs: list) -> str:
    """One row per run document (e.g. one per engine on the same corpus)."""
    lines = [
        "| engine | Warp | runs | verdict accuracy | class accuracy | detection rate | false-positive rate "
        "| median s / run | median objective evals |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for doc in docs:
        s = doc["summary"]
        lines.append(
            f"| `{s['engine']}` | {s['warp_version']} | {s['scored']} | {_f(s['verdict_accuracy'])} "
            f"| {_f(s['class_accuracy'])} | {_f(s['detection_rate'])} | {_f(s['false_positive_rate'])} "
            f"| {_f(s.get('median_wall_s_per_run'), 2)} | {_f(s.get('median_objective_evals'), 0)} |"
        )
    first = docs[0]["summary"]
    lines += ["", f"Device `{first['device']}`, {first['cases']} cases"
              + (f", {one_line(first['machine'])}" if first.get("machine") else "")
              + (f", measured {first['date']}" if first.get("date") else "") + "."]
    return "\n".join(lines) + "\n"
