"""Every generated page of docs/, rendered from the committed data it is made of.

One table, :data:`PAGES`, says for each generated page (or generated block
of a page with hand-written sections) which committed files it is rendered
from and by which function. ``defects4warp pages`` rewrites the pages from
those files (nothing is measured), ``--check`` only compares (CI: the
committed pages are what the committed data renders to), and ``--measure``
first fills in what is missing, one release at a time (:func:`measure`): the
ground truth (``docs/data/validation-<release>.json``, the independent oracle)
where no committed validation covers the release, and the engine's answers
(``docs/data/engine-<release>.json``, :mod:`defects4warp.engine_matrix`)
where no current engine file exists; the result store is reused, so an
interrupted measurement resumes.

Parts of pages whose sources are not committed are listed in
:data:`NOT_GENERATED` with the reason.
"""

from __future__ import annotations

import functools
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version

from .jsonio import load_yaml
from .case import TIERS, provenance_tier

#: Repository root (pages and data are relative to it).
ROOT = Path(__file__).resolve().parent.parent

#: Validation JSON files the version matrix merges (per-release files written by ``pages --measure``
#: or ``validate --warp X --json docs/data/validation-X.json``, and the two-release file of 2026-12-01).
VALIDATION_GLOBS = ("docs/data/oracle-validation-*.json", "docs/data/validation-*.json")


class PageSourceError(RuntimeError):
    """A source file of a page is missing or is not the JSON it should be (names the file)."""


def _read(path: Path, key: str) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PageSourceError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or key not in doc:
        raise PageSourceError(f"{path}: no '{key}' key")
    return doc


def validation_files(root: Path = ROOT) -> list:
    """The committed validation JSON files, sorted by name."""
    out = []
    for g in VALIDATION_GLOBS:
        out += sorted(root.glob(g))
    return out


def validated_releases(root: Path = ROOT) -> set:
    """Releases some committed validation JSON covers."""
    return {r for p in validation_files(root) for r in _read(p, "releases")["releases"]}


#: Longest line of prose a generated page keeps as it is (tables, headings, HTML and code are kept
#: whatever their length): a longer one (a list of 20 releases' costs ran to 4,659 characters) is
#: wrapped at :data:`WRAP_WIDTH` so a diff or an editor can show it.
MAX_PROSE_LINE = 400

#: Width of the lines a too-long line of prose is wrapped to.
WRAP_WIDTH = 100


def wrap_prose(text: str, *, max_line: int = MAX_PROSE_LINE, width: int = WRAP_WIDTH) -> str:
    """``text`` (Markdown) with every line of prose longer than ``max_line`` characters wrapped at
    ``width``, at spaces only (a URL or a code span is never cut inside a word); a list item's or a
    quote's continuation lines are indented under its text, so the Markdown renders as before.
    Table rows (``|``), headings, HTML lines (``<``) and fenced code blocks are kept as they are."""
    out, fenced = [], False
    for line in text.split("\n"):
        bare = line.lstrip()
        if bare.startswith("```"):
            fenced = not fenced
        if fenced or bare.startswith("```") or len(line) <= max_line or bare.startswith(("|", "#", "<")):
            out.append(line)
            continue
        lead = re.match(r"\s*(?:(?:[-*+]|\d+\.) |> )?", line).group(0)
        cont = lead if lead.strip() == ">" else " " * len(lead)
        out += textwrap.wrap(line[len(lead):], width=width, initial_indent=lead, subsequent_indent=cont,
                             break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)


def _wrapped(render):
    """A page renderer whose page comes out through :func:`wrap_prose`."""

    @functools.wraps(render)
    def inner(root: Path = ROOT) -> str:
        return wrap_prose(render(root))

    return inner


@_wrapped
def render_version_matrix(root: Path = ROOT) -> str:
    """docs/version-matrix.md from every committed validation JSON (merged)."""
    from .report import merge_validations, version_matrix_markdown

    files = validation_files(root)
    if not files:
        raise PageSourceError(f"no validation JSON matches {', '.join(VALIDATION_GLOBS)} under {root}")
    from .envs import RELEASES

    text = version_matrix_markdown(merge_validations([_read(p, "releases") for p in files]))
    left = [r for r in RELEASES if r not in validated_releases(root)]
    if left:
        text += (f"\n## Not validated\n\nNo committed validation covers Warp {', '.join(left)}: "
                 f"`defects4warp pages --measure --warp {','.join(left)}` validates them (one release at a time, "
                 "writing `docs/data/validation-<release>.json`) and runs the engine there.\n")
    return text


#: Measured minimum releases (scripts/min_warp.py) and release boundaries (scripts/release_boundaries.py).
MIN_WARP_JSON = "docs/data/min-warp.json"
BOUNDARIES_JSON = "docs/data/release-boundaries.json"


@_wrapped
def render_old_releases(root: Path = ROOT) -> str:
    """docs/old-releases.md: which variants need a newer release than 1.0.2
    (``min_warp``, with the build error on the release before) and where a
    variant's ground truth changes on the releases before 1.12.1."""
    mins = _read(root / MIN_WARP_JSON, "variants")
    bounds = _read(root / BOUNDARIES_JSON, "variants")
    lines = ["# Old releases: what builds where, and where the ground truth changes", "",
             f"Generated by `defects4warp pages` from `{MIN_WARP_JSON}` (scripts/min_warp.py) and "
             f"`{BOUNDARIES_JSON}` (scripts/release_boundaries.py); do not edit by hand.", "",
             "## Programs that need a newer release (`min_warp`)", "",
             "Each variant below fails to build or import on the oldest supported release; the bisection over "
             f"{', '.join(mins['releases'])} found the first release it builds on (its protocol runs once: "
             "import, `make_problem`, `objective()`, `gradient()`). Below it the variant is *unsupported*: not "
             "scored, not a failure. Its case.yaml says `min_warp`.", "",
             "| variant | builds from | error on the release before | releases measured |", "|---|---|---|---|"]
    for key, r in sorted(mins["variants"].items()):
        seen = ", ".join(f"{x} {'ok' if c['ok'] else ('fails' if c['ok'] is False else '?')}"
                         for x, c in sorted(r["checks"].items(), key=lambda kv: Version(kv[0])))
        err = (r.get("last_failure") or "-").replace("|", "\\|")
        lines.append(f"| {key} | {r['min_warp'] or 'none measured'} | {err} | {seen} |")
    lines += ["", "## Ground truth that changes before 1.12.1", "",
              "Each variant below contradicted its labels on an old release (the oracle measured it there); the "
              "bisection up to " + bounds.get("upto", "1.12.1") + " found the first release from which the "
              "labels hold: Warp changed the program's gradient there. The case.yaml carries a "
              "[release row](glossary.md#release-row) (an expectation limited by a `warp:` specifier) for the "
              "releases before it.", "",
              "| variant | labels hold from | last release that contradicts them | what the oracle measured there |",
              "|---|---|---|---|"]
    for key, r in sorted(bounds["variants"].items()):
        last = r.get("last_contradiction")
        c = r["checks"].get(last) if last else None
        what = "-" if not c else (f"{c.get('oracle')}, relative error "
                                  f"{'n/a' if c.get('error') is None else format(float(c['error']), '.3g')}")
        lines.append(f"| {key} | {r.get('labels_hold_from') or 'not within the range'} | {last or '-'} | {what} |")
    why = [(key, r["mechanism"]) for key, r in sorted(bounds["variants"].items()) if r.get("mechanism")]
    if why:
        lines += ["", "What changes at the boundary, measured (the `mechanism` of each entry):", ""]
        lines += [f"- {key}: {text}" for key, text in why]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# The engine across releases (docs/data/engine-<release>.json, :mod:`defects4warp.engine_matrix`)


def _vkey(r: str):
    try:
        return (0, Version(r))
    except InvalidVersion:
        return (1, r)


def engine_docs(root: Path = ROOT) -> dict:
    """``{release: engine-release document}`` committed under ``root`` (see :mod:`defects4warp.engine_matrix`),
    each rescored against the case labels and ``min_warp`` of ``root``'s corpus now
    (:func:`defects4warp.engine_matrix.rescore`).

    Raises
    ------
    PageSourceError
        When a file is not a valid engine-release document (names the file and the field).
    """
    from .engine_matrix import EngineFileError, read_all

    try:
        docs = read_all(root)
    except EngineFileError as exc:
        raise PageSourceError(str(exc)) from None
    return _rescored(docs, root)


def _rescored(docs: dict, root: Path) -> dict:
    """``docs`` (``{key: engine-release document}``) each rescored against the labels of ``root``'s corpus
    now (:func:`defects4warp.engine_matrix.rescore`); as they are when ``root`` has no corpus."""
    from .engine_matrix import rescore

    cases = corpus_cases(root)
    return {k: rescore(d, cases) for k, d in docs.items()} if cases else docs


#: The engines docs/engines.md compares the reference engine with (each a built-in engine,
#: :func:`defects4warp.engines.get_engine`), in the order of its table.
BASELINE_ENGINES = ("warp-gradcheck", "fd-only", "tracker-only", "static-only", "always-bug", "always-no-bug")

#: The release the comparison in docs/engines.md is measured on (the newest supported release when it was
#: chosen; move it, and re-measure, when a newer one is supported).
BASELINE_RELEASE = "1.19.0"


def baseline_path(root: Path, engine: str, release: str) -> Path:
    """``<root>/docs/data/baselines/<engine>-<release>.json``: one baseline engine's answers on the whole
    corpus, in the engine-release format (:mod:`defects4warp.engine_matrix`)."""
    return Path(root) / "docs" / "data" / "baselines" / f"{engine}-{release}.json"


def baseline_docs(root: Path = ROOT) -> dict:
    """``{(engine, release): document}`` of every committed ``docs/data/baselines/*.json``, each rescored
    against the labels of ``root``'s corpus now, as :func:`engine_docs`.

    Raises
    ------
    PageSourceError
        When a file is not a valid engine-release document, or its name does not say the engine and
        release it holds (names the file).
    """
    from .engine_matrix import EngineFileError, read

    out = {}
    try:
        for p in sorted((Path(root) / "docs" / "data" / "baselines").glob("*.json")):
            doc = read(p)
            name = (doc.get("engine") or {}).get("name")
            if p.name != f"{name}-{doc['release']}.json":
                raise EngineFileError(f"{p}: holds engine '{name}' on release '{doc['release']}', its name says "
                                      "another")
            out[(name, doc["release"])] = doc
    except EngineFileError as exc:
        raise PageSourceError(str(exc)) from None
    return _rescored(out, root)


def corpus_cases(root: Path = ROOT) -> dict:
    """``{case id: Case}`` of ``root``'s ``corpus/`` (labels and ``min_warp`` as they are now), ``{}`` when
    ``root`` has no corpus folder (a trial root of synthetic engine files). Cases that do not load are left
    out here (``defects4warp validate`` reports them)."""
    from .case import load_corpus

    folder = Path(root) / "corpus"
    if not folder.is_dir():
        return {}
    cases, _errors = load_corpus(folder)
    return {c.id: c for c in cases}


def page_releases(root: Path = ROOT, docs: dict | None = None) -> list:
    """The supported releases (:data:`defects4warp.envs.RELEASES`) and any other
    release an engine file holds, oldest first."""
    from .envs import RELEASES

    docs = engine_docs(root) if docs is None else docs
    return sorted(set(RELEASES) | set(docs), key=_vkey)


def truth_by_release(root: Path = ROOT) -> dict:
    """``{release: {(case, variant label, scale): validation check}}`` merged from every committed validation JSON."""
    from .matrix import _key
    from .report import merge_validations

    files = validation_files(root)
    if not files:
        return {}
    merged = merge_validations([_read(p, "releases") for p in files])
    return {rel: {_key(c): c for c in r["checks"]} for rel, r in merged["releases"].items()}


def measure_command(release: str, what: str = "") -> str:
    """The command that measures ``release`` (quoted in pages where data is missing)."""
    return f"`defects4warp pages --measure --warp {release}{what}`"


def _label(run: dict) -> str:
    return run["variant"] + (" (script)" if run.get("program") == "script" else "")


def _rkey(run: dict) -> tuple:
    return (run["case"], _label(run), run.get("scale", "small"))


def _exp_text(e: dict | None) -> str:
    return "unscored" if not e else f"{e['verdict']} {'/'.join(e.get('classes') or [])}".strip()


def answer_cell(run: dict) -> str:
    """The engine's answer in one matrix cell: ``bug overwrite`` (verdict and
    top-1 class) followed by `` x`` when the class is wrong, `` !`` when the
    verdict is wrong; ``ERROR`` (the run ended in a harness or engine error),
    ``unsup`` (older than the variant's ``min_warp``), ``skip`` (not diagnosed)."""
    if run.get("unsupported"):
        return "unsup"
    if run.get("skipped"):
        return "skip"
    if run.get("verdict") == "error":
        return "ERROR"
    top = run["top"][0][0] if run.get("top") else ""
    text = f"{run['verdict']} {top}".strip()
    c = run.get("correct")
    if c is None:
        return text + " (unscored)"
    return text + ("" if c["class"] else (" x" if c["verdict"] else " !"))


def _summary(runs: list) -> dict:
    from .engine_matrix import full_record
    from .scoring import summarize

    return summarize([full_record(r) for r in runs])


def _f(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def _engine_text(doc: dict) -> str:
    e = doc["engine"]
    code = f", code {e['code']}" if e.get("code") else ""
    commit = f", commit {doc['commit']}" if doc.get("commit") else ""
    return f"`{e['name']}` {e.get('version', '')}{code}{commit}"


def _truth_counts(runs: list, truth: dict | None) -> str:
    if truth is None:
        return "not validated"
    checked = [truth.get(_rkey(r)) for r in runs if not r.get("unsupported")]
    have = [c for c in checked if c is not None]
    bad = sum(1 for c in have if c.get("status") == "failed")
    miss = len(checked) - len(have)
    return (f"{len(have)} validated" + (f", {bad} contradict the labels" if bad else "")
            + (f", {miss} not" if miss else ""))


def _stale_engine_lines(docs: dict, have: list) -> list:
    """Lines naming the releases whose engine file was measured by a built-in
    engine whose code differs from the code this checkout ships
    (:func:`defects4warp.store.code_digest`, first 16 hex digits), with the
    command that re-measures them; empty when every file is current."""
    from .store import code_digest

    now = code_digest()[:16]
    old = {}
    for r in have:
        code = (docs[r].get("engine") or {}).get("code")
        if code and code != now:
            old.setdefault(code, []).append(r)
    if not old:
        return []
    L = []
    for code, rs in old.items():
        L.append(f"**Measured with an older engine:** {len(rs)} of {len(have)} releases ({', '.join(rs)}) were "
                 f"measured with engine code {code}, not the code this commit ships ({now}); their answers may "
                 f"differ from the shipped engine's. `defects4warp pages --measure --no-validate --warp "
                 f"{','.join(rs)}` measures them again.")
    return L + [""]


@_wrapped
def render_release_matrix(root: Path = ROOT) -> str:  # noqa: C901 - one page, section by section
    """docs/release-matrix.md: per release the engine's accuracy and cost,
    per split, the release x case matrix of its answers, and every run it
    got wrong; releases without an engine file are listed as not measured."""
    from .machine import one_line

    docs = engine_docs(root)
    truth = truth_by_release(root)
    rels = page_releases(root, docs)
    have = [r for r in rels if r in docs]
    L = ["# Release matrix: the engine on every supported release", "",
         "Generated by `defects4warp pages` from `docs/data/engine-<release>.json` (the engine's answers, "
         "`defects4warp pages --measure`) and the committed validation JSON (ground truth, as in "
         "docs/version-matrix.md); do not edit by hand.", "",
         "Scored against the case labels for each release as case.yaml says them now (rescored when the pages "
         "are rendered, so a corrected label or `min_warp` needs no new engine run); `ground truth` says how many runs the "
         "independent oracle validated on that release and how many of those contradict the labels. Harness "
         "errors are runs that ended in an `error` verdict (a crash, a timeout, a lost worker). Seconds and "
         "objective evaluations are medians per run; CPU s is the CPU time of the measurement (harness and "
         "workers) per run diagnosed, not reused from the result store.", "",
         "## Per release", "",
         "| release | engine | runs | scored | verdict accuracy | class accuracy | detection rate | false-positive "
         "rate | harness errors | unsupported | median s / run | median objective evals | CPU s / run | ground "
         "truth | measured |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    machines = {}
    for r in rels:
        if r not in docs:
            L.append(f"| {r} | not measured: {measure_command(r)} | - | - | - | - | - | - | - | - | - | - | - | "
                     f"{_truth_counts([], truth.get(r)) if r not in truth else 'validated'} | - |")
            continue
        d = docs[r]
        s = _summary(d["runs"])
        cpu = d.get("cpu_s")
        per = "-" if not cpu or not d.get("measured") else f"{cpu / d['measured']:.1f}"
        machines.setdefault(one_line(d["machine"]) if d.get("machine") else "unknown machine", []).append(r)
        L.append(f"| {r} | {_engine_text(d)} | {s['runs']} | {s['scored']} | {_f(s['verdict_accuracy'])} | "
                 f"{_f(s['class_accuracy'])} | {_f(s['detection_rate'])} | {_f(s['false_positive_rate'])} | "
                 f"{s['errors']} | {s['unsupported']} | {_f(s['median_wall_s_per_run'], 2)} | "
                 f"{_f(s['median_objective_evals'], 0)} | {per} | {_truth_counts(d['runs'], truth.get(r))} | "
                 f"{d.get('measured_on', '-')}, device `{d['device']}` |")
    L.append("")
    subsets = [f"{r} (`--cases {docs[r]['corpus']['selection']}`)" for r in have
               if (docs[r].get("corpus") or {}).get("selection", "*") != "*"]
    if subsets:
        L += ["Measured on a subset of the corpus only: " + ", ".join(subsets) + ".", ""]
    for m, rs in machines.items():
        L.append(f"Measured on {m}: {', '.join(rs)}.")
    if machines:
        L.append("")
    L += _stale_engine_lines(docs, have)
    if have:
        L += ["## Per split", "",
              "The `test` split was written without reading the engine; `dev` is what its rules were written from.",
              "", "| release | split | scored | verdict accuracy | class accuracy | detection rate "
              "| false-positive rate | harness errors |", "|---|---|---|---|---|---|---|---|"]
        for r in have:
            runs = docs[r]["runs"]
            for split in sorted({x.get("split") or "-" for x in runs}):
                s = _summary([x for x in runs if (x.get("split") or "-") == split])
                L.append(f"| {r} | {split} | {s['scored']} | {_f(s['verdict_accuracy'])} | {_f(s['class_accuracy'])} "
                         f"| {_f(s['detection_rate'])} | {_f(s['false_positive_rate'])} | {s['errors']} |")
        L += ["", "## The engine's answer, case by case", "",
              "Each cell: `ok` where the engine's verdict and top-1 class are right; otherwise its verdict and "
              "top-1 class, with ` x` marking a wrong class and ` !` a wrong verdict; `ERROR` a harness error, "
              "`unsup` a release older than the program's `min_warp`, ` ?` a run whose labels the oracle "
              "contradicts on that release. `expected` is the label on the newest release measured; a cell whose "
              "release expects something else says so in brackets.", "",
              "| case | variant | expected | " + " | ".join(have) + " |", "|---|---|---|" + "---|" * len(have)]
        rows = {}
        for r in have:
            for x in docs[r]["runs"]:
                rows.setdefault(_rkey(x), {})[r] = x
        for k in sorted(rows):
            per = rows[k]
            newest = next((per[r] for r in reversed(have) if r in per and per[r].get("expected")), None)
            exp = newest.get("expected") if newest else None
            cells = []
            for r in have:
                x = per.get(r)
                if x is None:
                    cells.append("-")
                    continue
                c = answer_cell(x)
                if (x.get("correct") or {}).get("class") and x.get("verdict") != "error":
                    c = "ok"
                if x.get("expected") and x["expected"] != exp:
                    c += f" [exp {_exp_text(x['expected'])}]"
                chk = (truth.get(r) or {}).get(k)
                if chk is not None and chk.get("status") == "failed":
                    c += " ?"
                cells.append(c)
            v = k[1] if k[2] == "small" else f"{k[1]} @{k[2]}"
            L.append(f"| {k[0]} | {v} | {_exp_text(exp)} | " + " | ".join(cells) + " |")
        L += ["", "## Runs the engine got wrong", ""]
        for r in have:
            bad = [x for x in docs[r]["runs"] if x.get("verdict") == "error"
                   or (x.get("correct") is not None and not x["correct"]["class"])]
            L.append(f"**Warp {r}** ({len(bad)})" + (":" if bad else ": none."))
            for x in bad:
                v = _label(x) + ("" if x.get("scale", "small") == "small" else f" @{x['scale']}")
                if x.get("verdict") == "error":
                    what = f"harness error: {x.get('error') or 'no message'}".replace("\n", " ")[:300]
                else:
                    top = ", ".join(f"{c} {s:.2f}" if s is not None else c for c, s in x.get("top", []))
                    what = f"answered {x['verdict']} ({top or 'no class'})"
                chk = (truth.get(r) or {}).get(_rkey(x))
                gt = "" if chk is None else f"; oracle: {_oracle(chk)}"
                L.append(f"- {x['case']}/{v}: expected {_exp_text(x.get('expected'))}; {what}{gt}")
            L.append("")
    missing = [r for r in rels if r not in docs]
    if missing:
        L += ["## Not measured", "",
              f"No engine file for Warp {', '.join(missing)}. `defects4warp pages --measure --warp "
              f"{','.join(missing)}` measures them one release at a time (validating first where no committed "
              "validation covers the release), reusing the result store.", ""]
    return "\n".join(L).rstrip("\n") + "\n"


def _oracle(check: dict) -> str:
    from .matrix import oracle_cell

    return oracle_cell(check) + (" (contradicts the labels)" if check.get("status") == "failed" else "")


def _answers(doc: dict) -> dict:
    """:func:`defects4warp.matrix.answer_changes` input from an engine-release document."""
    from .matrix import expected_text

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
    from .builtins import load
    from .builtins_page import changes

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
    import statistics

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
def render_upgrade_audit(root: Path = ROOT) -> str:  # noqa: C901 - one page, section by section
    """docs/upgrade-audit.md: for each pair of consecutive releases, the ground
    truth that changes and the bugs whose gradient error changes size
    (validation JSON), the engine's answers that change (engine files) and the
    builtin adjoints that change (builtins data). Section titles and line
    formats are those of ``defects4warp audit`` (:data:`defects4warp.matrix.SECTIONS`)."""
    from .builtins_page import cell_text
    from .matrix import (
        ERROR_SIZE_FACTOR, SECTIONS, answer_changes, contradictions, error_size_changes, error_size_intro,
        noise_sentence, section_lines, truth_changes,
    )

    docs = engine_docs(root)
    truth = truth_by_release(root)
    rels = page_releases(root, docs)
    pairs = list(zip(rels, rels[1:]))
    costs = measurement_costs(root, docs)
    L = ["# Upgrade audits: what changes from one Warp release to the next", "",
         "Generated by `defects4warp pages` from the committed validation JSON (ground truth), "
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
    body = []
    for a, b in pairs:
        row = [f"{a} -> {b}"]
        body += [f"## Warp {a} -> {b}", ""]
        unvalidated, unmeasured = [r for r in (a, b) if r not in truth], [r for r in (a, b) if r not in docs]
        if unvalidated or unmeasured:
            body += [_uncovered_sentence(a, b, unvalidated, unmeasured, costs), ""]
        # ground truth
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
        # engine answers
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
        if len(unvalidated) == 2:
            body += [f"### {SECTIONS['contradictions']}", "", "Neither release is validated.", ""]
        else:
            body += section_lines("contradictions", contradictions({r: truth[r] for r in (a, b) if r in truth}), "###",
                                  intro=None if not unvalidated else
                                  f"Not validated on Warp {unvalidated[0]}: only the other release is checked.")
        # builtins
        bc = _builtins_changes(a, b)
        if bc is None:
            row.append("not measured")
            body += [f"### {SECTIONS['builtins']}", "",
                     f"Not measured by the builtins conformance suite on {a} or {b} "
                     f"(`defects4warp builtins --warp {a},{b} --write-package-data`).", ""]
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
        L.append("| " + " | ".join(row) + " |")
    text = "\n".join(L + [""] + body).rstrip("\n") + "\n"
    return text + _kept_block(_existing(root, "docs/upgrade-audit.md"), *PROGRAM_AUDIT_MARKERS)


#: Markers of the hand-written section of docs/upgrade-audit.md on the program audit (measured runs of
#: `defects4warp audit PATH`, not rendered from committed data): kept as it is after the generated page.
PROGRAM_AUDIT_MARKERS = ("<!-- program-audit:start (hand-written, kept by defects4warp pages) -->",
                         "<!-- program-audit:end -->")


def _kept_block(existing: str | None, start: str, end: str) -> str:
    """The text from ``start`` to ``end`` (markers included) of ``existing``, after a blank line; empty when
    the page or either marker is missing."""
    if not existing or start not in existing or end not in existing.split(start, 1)[1]:
        return ""
    return "\n" + start + existing.split(start, 1)[1].split(end, 1)[0] + end + "\n"


#: What docs/results.md says of Warp's kernel cache when the engine file does not record it (its
#: ``kernel_cache``): the committed engine files were measured after earlier runs of the same corpus
#: had compiled its kernels. The cold figure is a first run of the whole corpus (`defects4warp run`,
#: reference engine, Warp 1.19.0) on 2 shared cores, measured at commit 2ef3c4d.
RESULTS_KERNEL_CACHE = ("with Warp's kernel cache warm: its kernels compiled by earlier runs; a first run on a "
                        "cold cache compiles every kernel, and took 35 min on 2 shared cores")

#: Markers of the generated block of docs/results.md (the hand-written sections around it are kept).
RESULTS_START, RESULTS_END = "<!-- pages:engine-results:start -->", "<!-- pages:engine-results:end -->"


def _splice(existing: str | None, start: str, end: str, block: str, path: str) -> str:
    """``existing`` with the text between ``start`` and ``end`` replaced by ``block`` (markers kept).

    Raises
    ------
    PageSourceError
        When the page or one of its markers is missing (names the page).
    """
    if existing is None:
        raise PageSourceError(f"{path}: missing (it holds hand-written sections around its generated block)")
    if start not in existing or end not in existing.split(start, 1)[1]:
        raise PageSourceError(f"{path}: no {start} ... {end} markers around the generated block")
    pre, rest = existing.split(start, 1)
    post = rest.split(end, 1)[1]
    return f"{pre}{start}\n{block.rstrip()}\n{end}{post}"


def _existing(root: Path, rel: str) -> str | None:
    p = root / rel
    return p.read_text() if p.is_file() else None


@_wrapped
def render_results(root: Path = ROOT) -> str:
    """docs/results.md: its generated block (between :data:`RESULTS_START` and
    :data:`RESULTS_END`) from the engine file of the newest release measured;
    the hand-written sections around it are kept as they are."""
    from .report import run_markdown

    docs = engine_docs(root)
    title = "Results: the reference engine on the bundled corpus"
    if not docs:
        block = (f"# {title}\n\nGenerated by `defects4warp pages`; no `docs/data/engine-<release>.json` is committed "
                 f"yet: {measure_command('1.19.0')} measures the newest release.\n")
    else:
        from .engine_matrix import full_record
        from .scoring import summarize

        rel = max(docs, key=_vkey)
        d = docs[rel]
        recs = [full_record(x) for x in d["runs"]]
        s = summarize(recs)
        s.update({"engine": d["engine"]["name"], "engine_version": d["engine"].get("version", ""),
                  "warp_version": d.get("warp_version", rel), "device": d["device"], "machine": d.get("machine"),
                  "date": d.get("measured_on", "n/a"), "jobs": d.get("jobs", 1), "wall_s": d.get("wall_s") or 0.0,
                  "complete": d.get("complete", True), "kernel_cache": d.get("kernel_cache") or RESULTS_KERNEL_CACHE})
        text = run_markdown({"summary": s, "results": recs}, title=title,
                            source=f"Generated by `defects4warp pages` from `docs/data/engine-{rel}.json` (the newest "
                                   "release measured; docs/release-matrix.md has every release); do not edit between "
                                   "the markers.")
        split = ["", "## Per split (this run)", "",
                 "| split | scored runs | verdict accuracy | class accuracy | detection rate | false-positive rate "
                 "| median s / run | median objective evals |", "|---|---|---|---|---|---|---|---|"]
        for name in sorted({x.get("split") or "-" for x in d["runs"]}):
            g = summarize([x for x in recs if (x.get("split") or "-") == name])
            split.append(f"| {name} | {g['scored']} | {_f(g['verdict_accuracy'])} | {_f(g['class_accuracy'])} | "
                         f"{_f(g['detection_rate'])} | {_f(g['false_positive_rate'])} | "
                         f"{_f(g['median_wall_s_per_run'], 2)} | {_f(g['median_objective_evals'], 0)} |")
        sel = (d.get("corpus") or {}).get("selection", "*")
        if sel != "*":
            split += ["", f"Measured on a subset of the corpus only (`--cases {sel}`)."]
        split += tier_table(docs, root)
        block = text.rstrip("\n") + "\n" + "\n".join(split) + "\n"
    return _splice(_existing(root, "docs/results.md"), RESULTS_START, RESULTS_END, block, "docs/results.md")


def case_tiers(root: Path = ROOT) -> dict:
    """``{case id: tier}`` (:data:`defects4warp.case.TIERS`) from the ``provenance`` of every
    ``corpus/*/case.yaml`` under ``root`` (read as YAML only: a case that does not load is still
    tiered by its provenance; one without a readable provenance is left out)."""
    out = {}
    for f in sorted((root / "corpus").glob("*/case.yaml")):
        try:
            prov = (load_yaml(f.read_text(encoding="utf-8")) or {}).get("provenance")
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(prov, str):
            out[f.parent.name] = provenance_tier(prov)
    return out


def tier_table(docs: dict, root: Path = ROOT) -> list:
    """Markdown lines: the engine per provenance tier on every release with an engine file
    (``{release: engine document}``), scored against today's labels: scored runs, detection rate,
    false-positive rate and class accuracy per tier. The mined tier's buggy variants are bugs only on
    the releases before their fix, so its detection rate is measured on old releases; a release whose
    file was measured with older engine code is marked ``*``."""
    from .engine_matrix import full_record
    from .scoring import summarize
    from .store import code_digest

    tiers = case_tiers(root)
    now = code_digest()[:16]
    L = ["", "## Per provenance tier, every release", "",
         *wrap_prose("Each tier scored alone (`run --tier`): `original` cases written for this corpus, `mined` "
                     "cases taken from a real fix history (docs/mined.md), `report` cases restating a public bug "
                     "report. Cells: scored runs / detection rate / false-positive rate / class accuracy; `-` "
                     "where the tier has no run of that kind on the release. A mined bug is a bug only on the "
                     "releases before its fix. `*`: the release's file was measured with older engine code (its "
                     "answers are rescored against today's labels, not measured again).").splitlines(), "",
         "| release | " + " | ".join(TIERS) + " |", "|---|" + "---|" * len(TIERS)]
    for rel in sorted(docs, key=_vkey):
        d = docs[rel]
        recs = [full_record(x) for x in d["runs"]]
        cells = []
        for t in TIERS:
            g = [r for r in recs if tiers.get(r["case"]) == t]
            if not g:
                cells.append("-")
                continue
            m = summarize(g)
            cells.append(f"{m['scored']} / {_f(m['detection_rate'])} / {_f(m['false_positive_rate'])} / "
                         f"{_f(m['class_accuracy'])}")
        older = "" if (d.get("engine") or {}).get("code") in (None, now) else " *"
        L.append(f"| {rel}{older} | " + " | ".join(cells) + " |")
    return L


#: Markers of the generated comparison block of docs/engines.md.
ENGINES_START, ENGINES_END = "<!-- pages:engines-measured:start -->", "<!-- pages:engines-measured:end -->"


def baselines_command() -> str:
    """The command that measures the baseline engines' files missing or stale on :data:`BASELINE_RELEASE`."""
    return "`defects4warp pages --measure --baselines`"


def engines_measured_block(root: Path = ROOT, release: str = BASELINE_RELEASE) -> str:
    """The generated block of docs/engines.md: the reference engine
    (``docs/data/engine-<release>.json``) and every baseline engine of
    :data:`BASELINE_ENGINES` (``docs/data/baselines/<engine>-<release>.json``)
    on the whole corpus on one release, per split, rescored against today's
    labels; then the reference engine per taxonomy family of the expected
    class. An engine without a file gets a row naming the command that
    measures it; one measured with other harness code says so."""
    from .engine_matrix import EngineFileError, data_path, full_record, read
    from .machine import one_line
    from .scoring import summarize_groups
    from .store import code_digest

    path = data_path(root, release)  # this release's file only, not every release's
    try:
        ref = _rescored({release: read(path)}, root)[release] if path.is_file() else None
    except EngineFileError as exc:
        raise PageSourceError(str(exc)) from None
    base = baseline_docs(root)
    rows = [("reference", ref)] + [(e, base.get((e, release))) for e in BASELINE_ENGINES]
    now = code_digest()[:16]
    L = [f"Generated by `defects4warp pages` from `docs/data/engine-{release}.json` (the reference engine) and "
         f"`docs/data/baselines/<engine>-{release}.json` ({baselines_command()} measures the missing or stale "
         "ones), scored against the case labels as case.yaml says them now; do not edit between the markers. "
         "Every engine on the corpus on Warp " + release + "; medians per run (the wall time of a run depends on "
         "how many ran in parallel: the jobs of each file are below). The `test` split was written by helpers who "
         "never read the engine; it is scored, never used to write or tune a rule.", "",
         "| engine | split | scored runs | verdict accuracy | class accuracy | detection rate | false-positive rate "
         "| harness errors | median s / run | median objective evals |", "|---|---|---|---|---|---|---|---|---|---|"]
    notes, missing = {}, []
    for name, d in rows:
        if d is None:
            missing.append(name)
            L.append(f"| `{name}` | not measured | - | - | - | - | - | - | - | - |")
            continue
        groups = summarize_groups([full_record(x) for x in d["runs"]], "split")
        for split, g in groups.items():
            L.append(f"| `{name}` | {split} | {g['scored']} | {_f(g['verdict_accuracy'])} | {_f(g['class_accuracy'])} "
                     f"| {_f(g['detection_rate'])} | {_f(g['false_positive_rate'])} | {g['errors']} | "
                     f"{_f(g['median_wall_s_per_run'], 2)} | {_f(g['median_objective_evals'], 0)} |")
        code = (d.get("engine") or {}).get("code")
        older = "" if code in (None, now) else f", measured with engine code {code}, not this checkout's {now}"
        sel = (d.get("corpus") or {}).get("selection", "*")
        older += "" if sel == "*" else f", a subset of the corpus only (`--cases {sel}`)"
        older += "" if d.get("complete", True) else ", incomplete (the measurement was cut short)"
        jobs = int(d.get("jobs") or 1)
        where = (f"device `{d['device']}` of " + (one_line(d["machine"]) if d.get("machine") else "a machine not "
                                                   "recorded"))
        notes.setdefault(where, []).append(f"`{name}` ({d.get('measured_on', 'date not recorded')}, {jobs} "
                                           f"job{'' if jobs == 1 else 's'}{older})")
    L += [""] + ([f"Measured on {w}: " + ", ".join(v) + "." for w, v in notes.items()] or ["Nothing measured yet."])
    if missing:
        what = measure_command(release) if "reference" in missing else ""
        L += ["", "Not measured on Warp " + release + ": " + ", ".join(f"`{m}`" for m in missing) + " ("
              + " and ".join(x for x in (what, baselines_command() if set(missing) - {"reference"} else "")
                             if x) + ")."]
    if ref is not None:
        recs = [full_record(x) for x in ref["runs"]]
        by = {sp: summarize_groups([r for r in recs if (r.get("split") or "-") == sp], "family")
              for sp in ("dev", "test")}
        from .taxonomy import FAMILIES

        L += ["", f"The reference engine on Warp {release} by taxonomy family of the expected class (scored runs "
              "and class accuracy; docs/taxonomy.md lists the classes of each family):", "",
              "| family | dev runs | dev class accuracy | test runs | test class accuracy |", "|---|---|---|---|---|"]
        for fam in FAMILIES:
            cells = []
            for sp in ("dev", "test"):
                g = by[sp].get(fam)
                cells += ["0", "-"] if g is None else [str(g["scored"]), _f(g["class_accuracy"])]
            L.append(f"| {fam} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


@_wrapped
def render_engines(root: Path = ROOT) -> str:
    """docs/engines.md: the source-rule table (between ``<!-- rules-table -->``
    markers) from the rule registry (:func:`defects4warp.rules.registry_table`)
    and the comparison of the engines on the newest release (between
    :data:`ENGINES_START` and :data:`ENGINES_END`, :func:`engines_measured_block`);
    the rest of the page is kept."""
    from .rules import registry_table
    from .rules.__main__ import BEGIN, END

    text = _splice(_existing(root, "docs/engines.md"), BEGIN, END, registry_table(), "docs/engines.md")
    return _splice(text, ENGINES_START, ENGINES_END, engines_measured_block(root), "docs/engines.md")


@_wrapped
def render_builtins(root: Path = ROOT) -> str:
    """docs/builtins.md: its generated part from the committed builtins conformance data
    (``harness/data/builtins/*-cpu.json``, :func:`defects4warp.builtins.page.page_markdown`)."""
    from .builtins import load, measured_releases
    from .builtins_page import END, START, corpus_builtins, page_markdown, splice

    existing = _existing(root, "docs/builtins.md")
    _splice(existing, START, END, "", "docs/builtins.md")  # the page and its markers must be there
    docs = {r: load.__wrapped__(r, "cpu") for r in measured_releases("cpu")}
    # the same page as `defects4warp builtins --write-package-data` writes (with the corpus cases table)
    return splice(existing, page_markdown(docs, cases=corpus_builtins()))


#: Generated pages (or parts) not rendered here, and why.
NOT_GENERATED = {
    "docs/results.md (sections after the generated block)":
        "the generated tier (mutants) is written from `defects4warp mutate` output that is not committed (the "
        "baseline engines are compared in docs/engines.md, generated)",
    "docs/engines.md (v4 fit, evidence and side-by-side tables)":
        "they come from `fit-weights` and scripts/side_by_side.py runs whose inputs are not committed (their "
        "outputs docs/data/fit-v4.json and fit-v4-evid.json are); the rule table and the comparison of the "
        "engines are generated",
}


@dataclass(frozen=True)
class Page:
    """A generated page: its path (relative to the root), its renderer, and a description of its sources."""

    path: str
    render: object
    sources: str


#: The pages ``defects4warp pages`` writes and checks.
PAGES = (
    Page("docs/version-matrix.md", render_version_matrix, " + ".join(VALIDATION_GLOBS)),
    Page("docs/release-matrix.md", render_release_matrix, "docs/data/engine-*.json + the validation JSON"),
    Page("docs/upgrade-audit.md", render_upgrade_audit,
         "the validation JSON + docs/data/engine-*.json + harness/data/builtins"),
    Page("docs/results.md", render_results, "the newest docs/data/engine-*.json (generated block only)"),
    Page("docs/engines.md", render_engines,
         f"the rule registry + docs/data/engine-{BASELINE_RELEASE}.json + docs/data/baselines/*.json "
         "(generated blocks only)"),
    Page("docs/builtins.md", render_builtins, "harness/data/builtins/*-cpu.json (generated part only)"),
    Page("docs/old-releases.md", render_old_releases, f"{MIN_WARP_JSON} + {BOUNDARIES_JSON}"),
)


def check_pages(root: Path = ROOT, *, diffs: dict | None = None, max_lines: int = 20) -> list:
    """Names of the pages whose committed text differs from what their JSON renders to (empty: all current).

    Parameters
    ----------
    root : Path
        Folder holding docs/ and docs/data/ (default: this checkout).
    diffs : dict, optional
        When given, filled with ``{page path: [lines]}`` for every differing
        page: the start of a unified diff (:func:`difflib.unified_diff`,
        ``committed/PAGE`` -> ``generated/PAGE``, 3 lines of context) of at
        most ``max_lines`` lines, then ``"... N more lines"`` when it is
        longer; a missing page gets one line saying so.
    max_lines : int
        Diff lines kept per page (default 20: enough to see the first
        differing rows of a table without flooding a terminal).

    Raises
    ------
    PageSourceError
        When a source file is missing or malformed (names the file).
    """
    import difflib

    stale = []
    for p in PAGES:
        path = root / p.path
        committed = path.read_text() if path.is_file() else None
        text = p.render(root)
        if committed == text:
            continue
        stale.append(p.path)
        if diffs is None:
            continue
        if committed is None:
            diffs[p.path] = [f"(no committed {p.path}: `defects4warp pages` writes it)"]
            continue
        lines = list(difflib.unified_diff(committed.splitlines(), text.splitlines(), f"committed/{p.path}",
                                          f"generated/{p.path}", lineterm=""))
        more = len(lines) - max_lines
        diffs[p.path] = lines[:max_lines] + ([f"... {more} more lines"] if more > 0 else [])
    return stale


def write_pages(root: Path = ROOT) -> list:
    """Rewrite every page of :data:`PAGES` (atomically); returns the ones whose text changed."""
    import os
    import tempfile

    from .jsonio import normal_mode

    changed = []
    for p in PAGES:
        path = root / p.path
        text = p.render(root)
        if path.is_file() and path.read_text() == text:
            continue
        fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".md", dir=path.parent)
        normal_mode(fd)  # the umask's mode (0644 under 022), not mkstemp's 0600
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        changed.append(p.path)
    return changed


def missing_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`) no committed validation covers."""
    from .envs import RELEASES

    have = validated_releases(root)
    return [r for r in (releases or RELEASES) if r not in have]


def unmeasured_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`) with no engine file."""
    from .envs import RELEASES

    have = engine_docs(root)
    return [r for r in (releases or RELEASES) if r not in have]


def older_engine_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`)
    whose engine file was measured with built-in engine code other than this
    checkout's (:func:`defects4warp.store.code_digest`)."""
    from .envs import RELEASES
    from .store import code_digest

    have, now = engine_docs(root), code_digest()[:16]
    return [r for r in (releases or RELEASES) if r in have
            and (have[r].get("engine") or {}).get("code") not in (None, now)]


def measure_order(releases: list) -> list:
    """The order ``pages --measure`` takes ``releases`` in: the releases the
    engine was built on (:data:`defects4warp.envs.ENGINE_MIN_RELEASE` and
    newer) oldest first, then the older ones newest first, so that a
    measurement cut short keeps the releases that matter most."""
    from .envs import ENGINE_MIN_RELEASE

    new = sorted((r for r in releases if _vkey(r) >= _vkey(ENGINE_MIN_RELEASE)), key=_vkey)
    old = sorted((r for r in releases if _vkey(r) < _vkey(ENGINE_MIN_RELEASE)), key=_vkey, reverse=True)
    return new + old


def measure(cases: list, releases: list, root: Path = ROOT, *, engine_name: str = "reference", device: str = "cpu",
            jobs: int = 1, timeout_s: float = 300.0, store=None, fresh: bool = False, executor=None,
            validate: bool = True, programs: str = "auto", selection: str = "*", on_result=None, on_start=None,
            log=None) -> list:
    """Fill in, one release at a time, what the pages need for ``releases``.

    For each release (in the order given): when no committed validation
    covers it and ``validate`` is true, validate ``cases`` with the oracle
    (``docs/data/validation-<release>.json``); then, when its engine file is
    missing or stale (:func:`defects4warp.engine_matrix.stale_reason`), run the
    engine and write ``docs/data/engine-<release>.json``. Each file is written
    atomically once its release is complete, so a killed measurement keeps
    whole releases; results in ``store`` are reused (a killed release resumes).
    ``on_start(release, runs)`` is called before each engine run and
    ``on_result(record)`` after each diagnosis (progress); ``log(text)`` gets
    one line per step.

    Returns
    -------
    list[tuple]
        ``(release, what)`` for each file written (``"validation"`` or ``"engine"``).
    """
    import datetime

    from .engine_matrix import corpus_digest, data_path, engine_identity
    from .engines import get_engine
    from .machine import describe
    from .runner import plan
    from .validate import validate_releases

    log = log or (lambda _m: None)
    ident = engine_identity(get_engine(engine_name, timeout_s=timeout_s))
    digest = corpus_digest(plan(cases, programs=programs))
    done = []
    for rel in releases:
        if validate and rel not in validated_releases(root):
            log(f"Warp {rel}: validating {len(cases)} cases with the oracle (no committed validation)")
            validate_releases(cases, [rel], device=device, jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh,
                              executor=executor, programs=programs,
                              json_path=str(root / "docs" / "data" / f"validation-{rel}.json"),
                              meta={"machine": describe(), "measured_on": datetime.date.today().isoformat()})
            done.append((rel, "validation"))
        if _measure_file(data_path(root, rel), rel, cases, ident, digest, engine_name=engine_name, device=device,
                         jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh, executor=executor,
                         programs=programs, selection=selection, on_result=on_result, on_start=on_start, log=log):
            done.append((rel, "engine"))
    return done


def _measure_file(path: Path, rel: str, cases: list, ident: dict, digest: str, *, engine_name: str, device: str,
                  jobs: int, timeout_s: float, store, fresh: bool, executor, programs: str, selection: str,
                  on_result, on_start, log) -> bool:
    """Measure one engine-release file at ``path`` when it is missing or stale
    (:func:`defects4warp.engine_matrix.stale_reason`) or ``fresh``; True when written."""
    from .engine_matrix import bundle_path, measure_release, read, read_bundle, stale_reason, write, write_bundle
    from .runner import plan

    try:
        old = read(path) if path.is_file() else None
    except Exception as exc:  # noqa: BLE001 - an unreadable file is measured again, saying why
        old, why = None, f"unreadable ({exc})"
    else:
        why = stale_reason(old, ident, digest, device)
    if why is None and not fresh:
        log(f"Warp {rel}: {path.name} is current (engine {ident['name']} {ident['version']}, same corpus); kept")
        return False
    log(f"Warp {rel}: running {ident['name']} {ident['version']} on {len(cases)} cases ({why or '--fresh'})")
    if on_start:
        on_start(rel, len(plan(cases, programs=programs)))
    seed = None
    if bundle_path(path).is_file() and not fresh:
        try:
            seed = read_bundle(bundle_path(path))[1]
        except Exception as exc:  # noqa: BLE001 - an unreadable bundle is measured again, saying why
            log(f"Warp {rel}: {bundle_path(path).name} unreadable ({exc}); measuring every run")
    entries = []
    doc = measure_release(rel, cases, engine_name=engine_name, device=device, jobs=jobs, timeout_s=timeout_s,
                          store=store, fresh=fresh, executor=executor, on_result=on_result, programs=programs,
                          selection=selection, seed=seed, bundle=entries, log=log)
    path.parent.mkdir(parents=True, exist_ok=True)
    if entries:
        write_bundle(bundle_path(path), {"release": rel, "warp_version": doc["warp_version"], "engine": doc["engine"],
                                         "device": device, "corpus": doc["corpus"]}, entries)
    write(path, doc)
    per = f", {doc['cpu_s'] / doc['measured']:.1f} CPU s per diagnosed run" if doc["measured"] else ""
    log(f"Warp {rel}: wrote {path} ({len(doc['runs'])} runs: {doc['measured']} diagnosed, {doc['reused']} reused; "
        f"{doc['wall_s']:.0f} s wall, {doc['cpu_s']:.0f} CPU s{per})")
    return True


def measure_baselines(cases: list, root: Path = ROOT, *, release: str = BASELINE_RELEASE,
                      engines: tuple = BASELINE_ENGINES, device: str = "cpu", jobs: int = 1, timeout_s: float = 300.0,
                      store=None, fresh: bool = False, executor=None, programs: str = "auto", selection: str = "*",
                      on_result=None, on_start=None, log=None) -> list:
    """Measure each baseline engine of ``engines`` on ``release`` into
    ``docs/data/baselines/<engine>-<release>.json`` (:func:`baseline_path`)
    where the file is missing or stale, one engine at a time, as
    :func:`measure` does for the reference engine (same arguments; results in
    ``store`` are reused).

    Returns
    -------
    list[str]
        The engines whose file was written.
    """
    from .engine_matrix import corpus_digest, engine_identity
    from .engines import get_engine
    from .runner import plan

    log = log or (lambda _m: None)
    digest = corpus_digest(plan(cases, programs=programs))
    done = []
    for name in engines:
        ident = engine_identity(get_engine(name, timeout_s=timeout_s))
        if _measure_file(baseline_path(root, name, release), release, cases, ident, digest, engine_name=name,
                         device=device, jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh, executor=executor,
                         programs=programs, selection=selection, on_result=on_result, on_start=on_start, log=log):
            done.append(name)
    return done
