"""Maintainer tooling for the mined tier: Warp's changelog table, the manifest of
mined bugs, and the triggering checks of mined cases (not a user verb).

Usage (from the repository root, with the worktree's interpreter)::

    python scripts/mined.py extract-changelog --mirror /path/to/warp/.git   # (re)build the entry list
    python scripts/mined.py check CASE --warp 1.8.0 [--variant buggy] [--repeat 3]
    python scripts/mined.py verify [--cases GLOB] [--repeat 3]              # writes docs/data/mined-checks.json
    python scripts/mined.py verify-debug [--cases GLOB]                    # only the debug-mode runs, merged in
    python scripts/mined.py summarise-validation v1.json v2.json ...        # validate --json files -> docs/data/mined-validation.json
    python scripts/mined.py summarise-runs r1.json r2.json ...              # run --tier mined --json files -> docs/data/mined-engines.json
    python scripts/mined.py render                                         # writes docs/mined.md

Files:

* ``docs/data/warp-changelog-gradients.yaml`` (schema
  ``harness/schemas/warp-changelog.schema.json``): every gradient-related
  "Fixed" entry of Warp's CHANGELOG.md from 1.0.0, with its release, issues,
  fix commits, first tag holding the commit, and a status (a case, or the
  reason it has none).
* ``docs/data/mined-manifest.yaml`` (schema
  ``harness/schemas/mined-manifest.schema.json``): the mined bugs, one row per
  mined case: the releases its triggering check runs on (``before``: the bug
  shows, ``after``: it does not).
* ``docs/data/mined-checks.json``: what ``verify`` measured, per case the
  triggering runs of each side and release and one debug-mode run per
  variant (``debug``), and ``ok`` (:func:`case_ok`); written atomically
  after every case, so an interrupted run keeps what it did.

Releases outside the supported list (``defects4warp.envs.RELEASES``, e.g.
1.8.0) are installed into ``<envs cache>/mined-warp-X`` on the same shared
NumPy base as the supported environments (``envs.ensure_base``); nothing of it
is used by the harness. The check itself runs ``scripts/mined_trigger.py`` in
the release's interpreter (see its docstring for the two check kinds).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from defects4warp.report.pages.prose import wrap_prose

from defects4warp import envs
from defects4warp.corpus.case import load_case
from defects4warp.run.runner import write_json_atomic

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
TABLE = ROOT / "docs" / "data" / "warp-changelog-gradients.yaml"
MANIFEST = ROOT / "docs" / "data" / "mined-manifest.yaml"
CHECKS = ROOT / "docs" / "data" / "mined-checks.json"
VALIDATION = ROOT / "docs" / "data" / "mined-validation.json"
ENGINES = ROOT / "docs" / "data" / "mined-engines.json"
PAGE = ROOT / "docs" / "mined.md"
TRIGGER = ROOT / "scripts" / "mined_trigger.py"

#: Words that make a changelog entry gradient-related (matched case-insensitively);
#: each hit is then reviewed by hand (``related: false`` keeps a reviewed non-gradient hit out).
GRADIENT_WORDS = re.compile(r"grad|adjoint|\btape\b|Tape\.|backward|requires_grad|differentia|autodiff|adj_|"
                            r"reverse[- ]mode|derivative", re.I)

#: Seconds one triggering check may take (cold kernel cache included).
CHECK_TIMEOUT_S = 600


# ---------------------------------------------------------------- environments

def release_python(version: str, log=print) -> str:
    """Interpreter with ``warp-lang==version``: the supported environment
    (:func:`defects4warp.envs.ensure_env`) or, for any other release, a
    maintainer-only one in ``<envs cache>/mined-warp-<version>``.

    Raises
    ------
    RuntimeError
        When pip cannot install the release (pip's last line in the message).
    """
    if version in envs.RELEASES or version == envs.installed_warp_version():
        return str(envs.ensure_env(version, log))
    root = envs.cache_root() / f"mined-warp-{version}"
    py = root / "bin" / "python"
    if (root / envs.MARKER).is_file():
        return str(py)
    base = envs.ensure_base(version, log)
    import venv  # noqa: PLC0415 (only this rare path needs it)

    log(f"installing warp-lang=={version} into {root} (maintainer-only environment)")
    venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(root)
    site = root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    res = subprocess.run([str(base / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                          "--disable-pip-version-check", "--no-cache-dir", "--target", str(site),
                          f"warp-lang=={version}"], capture_output=True, text=True)
    if res.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"pip could not install warp-lang=={version}: {res.stderr.strip().splitlines()[-1:]}")
    base_site = base / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "_defects4warp_base.pth").write_text(f"{base_site}\n")
    (root / envs.MARKER).write_text(f"warp-lang=={version}\nbase={base.name}\n")
    return str(py)


# ---------------------------------------------------------------- checks

def mined_record(case_id: str) -> dict:
    """The ``mined:`` record of ``corpus/<case_id>/case.yaml`` (after the loader's format check)."""
    load_case(CORPUS / case_id)
    data = yaml.safe_load((CORPUS / case_id / "case.yaml").read_text())
    if data.get("provenance") != "mined" or "mined" not in data:
        raise SystemExit(f"corpus/{case_id}/case.yaml: provenance is not 'mined' or there is no mined: record")
    return data["mined"]


def run_check(case_id: str, version: str, variant: str = "buggy") -> dict:
    """One triggering check of ``case_id``'s ``variant`` on ``version``; the
    worker's JSON record plus ``release`` and ``exit`` (0 passed, 1 failed,
    2 the program did not run, other: crash or timeout)."""
    rec = mined_record(case_id)
    py = release_python(version)
    try:
        res = subprocess.run([py, str(TRIGGER), str(CORPUS / case_id / variant), json.dumps(rec["trigger"])],
                             capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, cwd=str(ROOT))
        line = [l for l in res.stdout.splitlines() if l.startswith("{")]
        doc = json.loads(line[-1]) if line else {"passed": False, "error": res.stderr.strip()[-500:]}
        code = res.returncode
    except subprocess.TimeoutExpired:
        doc, code = {"passed": False, "error": f"timed out after {CHECK_TIMEOUT_S} s"}, -1
    doc.update({"release": version, "variant": variant, "exit": code})
    return doc


def run_debug_check(case_id: str, version: str, variant: str) -> dict:
    """One debug-mode run of ``case_id``'s ``variant`` on ``version``
    (``scripts/mined_trigger.py --debug``: ``wp.config.mode = "debug"``, bounds-checked
    array access, then ``objective()`` and one ``gradient()``). Returns the worker's
    record plus ``release``, ``variant`` and ``exit`` (0 passed; 1 a failed assertion;
    2 the program raised; a negative status: killed by that
    signal, e.g. -4 when a failed assertion traps, as on 1.19.0; -1 timeout)."""
    py = release_python(version)
    try:
        res = subprocess.run([py, str(TRIGGER), "--debug", str(CORPUS / case_id / variant)],
                             capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, cwd=str(ROOT))
        line = [l for l in res.stdout.splitlines() if l.startswith("{")]
        code = res.returncode
        asserts = sorted({l.strip() for l in res.stderr.splitlines() if l.startswith("Assertion failed")})
        doc = json.loads(line[-1]) if line else {
            "passed": False, "assertions": asserts,
            "error": f"exit {code}" + (f" (signal {-code})" if code < 0 else "") + ": " + res.stderr.strip()[-300:]}
    except subprocess.TimeoutExpired:
        doc, code = {"passed": False, "error": f"timed out after {CHECK_TIMEOUT_S} s"}, -1
    doc.update({"release": version, "variant": variant, "exit": code})
    return doc


def debug_release(row: dict) -> str:
    """The release a manifest row's debug-mode runs use: the newest of its ``before`` and ``after``."""
    from packaging.version import Version  # noqa: PLC0415

    return max(row["before"] + row["after"], key=Version)


def debug_checks(case_id: str, row: dict) -> dict:
    """Every variant of ``case_id`` run once in Warp's debug mode on :func:`debug_release`:
    ``{variant: {"release", "passed", "assertions", "seconds", "error"}}``. Admission
    needs every ``passed`` True: a program that indexes out of bounds computes from
    memory contents (the reason warp-sim-featherstone-joint-solve was removed)."""
    rel = debug_release(row)
    out = {}
    for v in sorted(x.name for x in load_case(CORPUS / case_id).variants):
        r = run_debug_check(case_id, rel, v)
        out[v] = {"release": rel, "passed": r["exit"] == 0, "assertions": r.get("assertions", []),
                  "finite": r.get("finite"), "seconds": r.get("seconds"), "error": r.get("error")}
        print(f"{case_id} debug {v} on {rel}: {'passed' if out[v]['passed'] else 'FAILED'}", flush=True)
    return out


def case_ok(out: dict) -> bool:
    """A case's record in mined-checks.json is admitted when every triggering run was as
    expected and every variant's debug-mode run passed (a record without debug runs is not)."""
    return (all(v["as_expected"] == v["runs"] for s in ("before", "after") for v in out.get(s, {}).values())
            and bool(out.get("debug")) and all(d["passed"] for d in out["debug"].values()))


def row_variants(row: dict) -> dict:
    """The variant the check runs on for each side of a manifest row: for
    Warp's own fixes (``source: warp``) the row's ``variant`` (default
    ``buggy``) on both sides, the release being what changes; for a
    downstream fix (``source: downstream``) the fix is in the program, so
    ``before`` runs the buggy variant and ``after`` the fixed one, on the
    same pinned releases."""
    if row["source"] == "downstream":
        return {"before": "buggy", "after": "fixed"}
    v = row.get("variant", "buggy")
    return {"before": v, "after": v}


def verify(pattern: str, repeat: int) -> dict:
    """Run every manifest row's triggering check ``repeat`` times on each
    release of ``before`` (must fail every time: exit 1) and ``after`` (must
    pass every time), on the variants :func:`row_variants` names, then every
    variant once in debug mode (:func:`debug_checks`); a case's ``ok`` is
    :func:`case_ok`. Returns and writes :data:`CHECKS`."""
    manifest = yaml.safe_load(MANIFEST.read_text())
    doc = json.loads(CHECKS.read_text()) if CHECKS.is_file() else {"repeat": repeat, "cases": {}}
    for row in manifest["bugs"]:
        cid = row["case"]
        if not fnmatch.fnmatch(cid, pattern):
            continue
        out = {"before": {}, "after": {}}
        variants = row_variants(row)
        for side, want in (("before", 1), ("after", 0)):
            for rel in row[side]:
                runs = [run_check(cid, rel, variants[side]) for _ in range(repeat)]
                out[side][rel] = {"variant": variants[side], "runs": len(runs),
                                  "as_expected": sum(r["exit"] == want for r in runs),
                                  "max_abs_error": [r.get("max_abs_error") for r in runs],
                                  "seconds": [r.get("seconds") for r in runs],
                                  "errors": sorted({r["error"] for r in runs if r.get("error")})}
                print(f"{cid} {side} {rel}: {out[side][rel]['as_expected']}/{repeat} as expected", flush=True)
        out["debug"] = debug_checks(cid, row)
        out["ok"] = case_ok(out)
        doc["repeat"] = repeat
        doc["cases"][cid] = out
        write_json_atomic(str(CHECKS), doc)
    return doc


def verify_debug(pattern: str) -> dict:
    """Only the debug-mode runs (:func:`debug_checks`) of the manifest rows matching
    ``pattern``, merged into the cases' existing records of :data:`CHECKS` (their
    triggering runs kept); a case with no record gets one with only ``debug``."""
    manifest = yaml.safe_load(MANIFEST.read_text())
    doc = json.loads(CHECKS.read_text()) if CHECKS.is_file() else {"repeat": 3, "cases": {}}
    for row in manifest["bugs"]:
        cid = row["case"]
        if not fnmatch.fnmatch(cid, pattern):
            continue
        out = doc["cases"].setdefault(cid, {"before": {}, "after": {}})
        out["debug"] = debug_checks(cid, row)
        out["ok"] = case_ok(out)
        write_json_atomic(str(CHECKS), doc)
    return doc


def summarise_validation(files: list) -> dict:
    """``docs/data/mined-validation.json`` from ``defects4warp validate --json``
    files of mined cases: per case, release and variant the check status, the
    expected verdict, the oracle's verdict and its maximum relative error.
    Later files override earlier ones for the same case and release."""
    out = {"description": "defects4warp validate (the independent oracle, CPU) on every mined case, on the supported "
                          "releases its expectations claim, summarised by scripts/mined.py summarise-validation: per "
                          "case, release and variant the check status, the expected verdict, the oracle's verdict "
                          "and its maximum relative error.", "cases": {}}
    for f in files:
        doc = json.loads(Path(f).read_text())
        for rel, r in doc["releases"].items():
            for c in r["checks"]:
                o = c.get("oracle") or {}
                out["cases"].setdefault(c["case"], {}).setdefault(rel, {})[c["variant"]] = {
                    "status": c["status"], "expected": (c.get("expected") or {}).get("verdict"),
                    "oracle": o.get("verdict"), "max_relative_error": o.get("max_relative_error")}
    return out


# ---------------------------------------------------------------- changelog

def summarise_runs(files: list, previous: dict | None = None) -> dict:
    """``docs/data/mined-engines.json`` from ``defects4warp run --tier mined --json`` files: per engine and
    release, the tier's scored runs, detection rate, false-positive rate and class accuracy, and per run the
    expected and the engine's verdict and top class. ``previous`` (the committed file) keeps the
    (engine, release) pairs the given files do not hold.

    Raises
    ------
    SystemExit
        A file that is not a run's ``{summary, results}`` or holds a case outside the mined tier (names it).
    """
    out = {"description": "The engines on the mined tier (run --tier mined --split test --warp R --json, one file "
                          "per engine and release; scripts/mined.py summarise-runs).",
           "engines": dict((previous or {}).get("engines", {}))}
    for f in files:
        doc = json.loads(Path(f).read_text())
        if not isinstance(doc, dict) or "summary" not in doc or "results" not in doc:
            raise SystemExit(f"{f}: not a `defects4warp run --json` file ({{summary, results}})")
        sm = doc["summary"]
        eng, rel = sm.get("engine", "reference"), sm.get("warp_version")
        runs = []
        for r in doc["results"]:
            if r.get("tier") not in (None, "mined"):
                raise SystemExit(f"{f}: {r.get('case')} is of tier {r.get('tier')!r}, not mined: run with --tier mined")
            d = r.get("diagnosis") or {}
            top = (d.get("classes") or [{}])[0].get("id")
            runs.append({"case": r["case"], "variant": r["variant"],
                         "expected": (r.get("expected") or {}).get("verdict"), "verdict": d.get("verdict"),
                         "top": top, "correct": r.get("correct")})
        out["engines"].setdefault(eng, {})[rel] = {
            "scored": sm.get("scored"), "detection_rate": sm.get("detection_rate"),
            "false_positive_rate": sm.get("false_positive_rate"), "class_accuracy": sm.get("class_accuracy"),
            "verdict_accuracy": sm.get("verdict_accuracy"), "runs": runs}
    return out


def parse_changelog(text: str) -> list:
    """Every "Fixed" entry of a Warp CHANGELOG.md from 1.0.0 on: ``{release,
    text}``. From 1.4.0 the file has ``### Fixed`` sections; before, a release
    is one flat list, whose bullets starting with "Fix" count."""
    from packaging.version import InvalidVersion, Version  # noqa: PLC0415

    out, rel, sec, cur = [], None, None, None

    def flush():
        nonlocal cur
        if cur:
            out.append(cur)
        cur = None

    for line in text.splitlines():
        m = re.match(r"^## \[?([0-9][^\] ]*)\]? - ", line)
        if m:
            flush()
            rel, sec = m.group(1), None
            continue
        m = re.match(r"^### (.*)", line)
        if m:
            flush()
            sec = m.group(1).strip().lower()
            continue
        try:
            v = Version(rel) if rel else None
        except InvalidVersion:
            v = None
        if v is None or v < Version("1.0.0") or v.is_prerelease:
            continue
        bullet = re.match(r"^(\s*)- (.*)", line)
        if sec is not None and not sec.startswith("fixed"):
            continue
        if bullet:
            flush()
            body = bullet.group(2).strip()
            if sec is None and not re.match(r"(Fix|Fixed)\b", body):
                continue
            cur = {"release": rel, "text": body}
        elif cur is not None and line.strip():
            cur["text"] += " " + line.strip()
        elif not line.strip():
            flush()
    flush()
    return out


def extract_changelog(mirror: str) -> list:
    """Gradient-related Fixed entries of the mirror's CHANGELOG.md with their
    issue numbers, the commits whose message names one of them, and the first
    release tag holding the first such commit (read from git: ``git tag
    --contains``; the release that ships the fix is measured separately)."""
    def git(*a):
        return subprocess.run(["git", "-C", mirror, *a], capture_output=True, text=True).stdout

    text = git("show", "HEAD:CHANGELOG.md")
    rows = []
    for e in parse_changelog(text):
        if not GRADIENT_WORDS.search(e["text"]):
            continue
        issues = sorted({int(n) for n in re.findall(r"GH-(\d+)", e["text"])})
        commits = []
        for n in issues:
            for line in git("log", "--format=%H %s", "--all", "-E", f"--grep=GH-{n}([^0-9]|$)").splitlines():
                commits.append(line.split(" ", 1)[0])
        tags = {t for c in commits for t in git("tag", "--contains", c).split() if re.match(r"^v\d+\.\d+\.\d+$", t)}
        first_tag = min(tags, key=lambda t: tuple(int(x) for x in t[1:].split(".")))[1:] if tags else None
        rows.append({"release": e["release"], "text": re.sub(r"\s+", " ", e["text"]), "issues": issues,
                     "commits": commits[:4], "first_tag": first_tag})
    return rows


# ---------------------------------------------------------------- page

STATUS_WORDS = {
    "case": "reproduced by a mined case",
    "cuda_only": "CUDA only (no CPU code path)",
    "raises": "raises or fails to build instead of giving a wrong value",
    "not_reproduced": "not reproduced on any installable release tried",
    "not_autodiff": "not an automatic-differentiation value (tooling, docs, spatial gradients)",
    "unmeasured": "not measured yet",
}


RECORD_DOC = """
## The `mined:` record of a case

A mined case has `provenance: mined`, `split: test` and a `mined:` block in its case.yaml (schema
`harness/schemas/case.schema.json`, property `mined`; the loader rejects `provenance: mined` without it):

| field | meaning |
|---|---|
| `repository`, `licence` | where the bug comes from and the SPDX licence of what was taken; the variant files keep the notice |
| `issue`, `changelog` | the issue or pull request, and the id of the entry in `docs/data/warp-changelog-gradients.yaml` |
| `fix_commit`, `parent_commit` | the commit that fixes the bug and its parent (the last code with the bug) |
| `files`, `minimisation` | the files the program was taken from (the fix's own test, or the changed source when the fix added no test) and what was cut, renamed or written anew, and why |
| `buggy_release`, `fixed_release` | the newest release measured with the bug and the first measured without it: the release that ships the fix, measured with the triggering check (installing releases outside the supported list where needed), not read from the changelog |
| `introduced_release` | for a regression, the first release measured with the bug |
| `pinned` | downstream code: the releases the check runs on (e.g. `warp-lang`); the fix is in the program, so the buggy variant is the code before the fix commit and the fixed variant the code after it, both on the pinned releases |
| `trigger` | the triggering check run on the buggy variant by `scripts/mined_trigger.py`: the fix's test assertion (`expected_gradient`, with `atol`/`rtol` in `numpy.allclose` form) or a central difference of the objective (`central_difference`), over `calls` gradient calls |

Each buggy variant is the fix's own test or the issue's repro as a `make_problem` adapter; its
expectations say `bug` on the releases before `fixed_release` (from `introduced_release` for a
regression) and `no_bug` from it. The fixed
variant is the same program with the construct that has a right adjoint on every release, so the
oracle's pair check has a twin. `python scripts/mined.py verify` runs each trigger three times on
each release of the manifest's `before` (must fail 3/3) and `after` (must pass 3/3), then runs every
variant once in Warp's debug mode (`wp.config.mode = "debug"`: bounds-checked array access) on the
newest release of the row, which must pass: no failed assertion and finite values (`verify-debug`
runs only these). A downstream
case (`source: downstream` in the manifest: the fix is in the project's code, not in Warp) has no
`buggy_release`/`fixed_release`: its buggy variant is the code at `parent_commit`, its fixed
variant the code at `fix_commit`, and verify runs the buggy variant on `before` and the fixed one
on `after`, both the `pinned` releases.
"""


def render() -> str:
    """docs/mined.md from the table, the manifest and the checks (long prose lines wrapped, pages.prose.wrap_prose)."""
    table = yaml.safe_load(TABLE.read_text())
    manifest = yaml.safe_load(MANIFEST.read_text())
    checks = json.loads(CHECKS.read_text()) if CHECKS.is_file() else {"cases": {}}
    valid = json.loads(VALIDATION.read_text())["cases"] if VALIDATION.is_file() else {}
    ents = table["entries"]
    lines = [
        "# The mined tier: Warp's own gradient fixes",
        "",
        "<!-- generated by scripts/mined.py render from docs/data/warp-changelog-gradients.yaml, "
        "docs/data/mined-manifest.yaml, docs/data/mined-checks.json and docs/data/mined-validation.json; "
        "do not edit -->",
        "",
        table["description"].strip(),
        "",
        "## Status of the changelog entries",
        "",
        "| status | entries |",
        "|---|---|",
    ]
    for s, words in STATUS_WORDS.items():
        n = sum(e["status"] == s for e in ents)
        lines.append(f"| {words} (`{s}`) | {n} |")
    lines += [f"| **all** | **{len(ents)}** |", "", "## Mined cases and their triggering checks", "",
              manifest["description"].strip(), "",
              "| case | changelog entry, Warp commit or downstream fix | bug on (before) | correct on (after) | checks as expected | seconds per check (in the worker) "
              "| validate (oracle) |",
              "|---|---|---|---|---|---|---|"]
    for row in manifest["bugs"]:
        c = checks["cases"].get(row["case"])
        if c:
            got = "; ".join(f"{side} {rel}: {v['as_expected']}/{v['runs']}" for side in ("before", "after")
                            for rel, v in c[side].items())
            dbg = c.get("debug")
            got += ("; debug mode: not run" if not dbg else "; debug mode " + ", ".join(
                f"{v} {'passed' if d['passed'] else 'FAILED'}" for v, d in sorted(dbg.items())))
            secs = [s for side in ("before", "after") for v in c[side].values() for s in v["seconds"] if s]
            sec = f"{min(secs):.1f}-{max(secs):.1f}" if secs else "n/a"
        else:
            got, sec = "not run", "n/a"
        v = valid.get(row["case"], {})
        st = [x["status"] for r in v.values() for x in r.values()]
        val = (f"{st.count('passed')}/{len(st)} passed on {len(v)} releases"
               + (f", {st.count('unsupported')} unsupported as min_warp says" if "unsupported" in st else "")
               if st else "not run")
        if row["source"] == "downstream":
            rec = yaml.safe_load((CORPUS / row["case"] / "case.yaml").read_text())["mined"]
            origin = f"{rec['repository'].removeprefix('https://github.com/')}@{rec['fix_commit'][:8]} (buggy/fixed variant)"
        elif row.get("changelog"):
            origin = row["changelog"]
        else:  # a Warp fix outside the changelog: its commit stands for the entry
            rec = yaml.safe_load((CORPUS / row["case"] / "case.yaml").read_text())["mined"]
            origin = f"NVIDIA/warp@{rec['fix_commit'][:8]} (not in the changelog)"
        lines.append(f"| [{row['case']}](../corpus/{row['case']}/case.yaml) | {origin} | "
                     f"{', '.join(row['before'])} | {', '.join(row['after'])} | {got} | {sec} | {val} |")
    lines += ["", RECORD_DOC.strip(), ""]
    eng = json.loads(ENGINES.read_text()) if ENGINES.is_file() else {"engines": {}}
    if eng["engines"]:
        lines += ["", "## The engines on the mined tier", "",
                  "Each engine on the mined cases alone (`defects4warp run --tier mined --split test --warp R`), on "
                  "releases where some of them are bugs (a mined bug is a bug only before its fix; the other "
                  "variants are expected no_bug there). docs/data/mined-engines.json has every run.", "",
                  "| engine | release | scored runs | detection rate | false-positive rate | class accuracy | "
                  "runs the engine got wrong (verdict or class) |", "|---|---|---|---|---|---|---|"]

        def _f(x):
            return "-" if x is None else f"{x:.3f}"

        for name in sorted(eng["engines"]):
            for rel in sorted(eng["engines"][name], key=lambda v: tuple(int(x) for x in v.split("."))):
                e = eng["engines"][name][rel]
                wrong = [f"{r['case']}/{r['variant']} ({r['verdict']} {r['top'] or ''}, expected {r['expected']})"
                         for r in e["runs"] if r["correct"] and not (r["correct"].get("verdict")
                                                                   and r["correct"].get("class"))]
                lines.append(f"| `{name}` | {rel} | {e['scored']} | {_f(e['detection_rate'])} | "
                             f"{_f(e['false_positive_rate'])} | {_f(e['class_accuracy'])} | "
                             f"{'; '.join(wrong) or 'none'} |")
    lines += ["", "## Every gradient-related Fixed entry, 1.0.0 to 1.16.0 and the fragments after it", "",
              "| id | release | entry | issues | status |", "|---|---|---|---|---|"]
    for e in ents:
        issues = ", ".join(f"[GH-{n}](https://github.com/NVIDIA/warp/issues/{n})" for n in e.get("issues", []))
        text = re.sub(r"\(\[GH-\d+\]\([^)]*\)(, \[GH-\d+\]\([^)]*\))*\)", "", e["text"]).replace("|", "\\|").strip()
        if len(text) > 220:
            text = text[:217] + "..."
        status = f"case [{e['case']}](../corpus/{e['case']}/case.yaml)" if e["status"] == "case" else \
            f"`{e['status']}`: {e.get('reason', '').strip()}"
        if e.get("first_fixed"):
            status += f" First fixed release measured: {e['first_fixed']}."
        lines.append(f"| {e['id']} | {e['release']} | {text} | {issues} | {status.replace('|', '/')} |")
    return wrap_prose("\n".join(lines) + "\n")  # no prose line over 400 characters, as every page


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("extract-changelog", help="print the gradient-related Fixed entries of a mirror as YAML")
    p.add_argument("--mirror", required=True, help="a git directory of NVIDIA/warp")
    p = sub.add_parser("check", help="run one triggering check")
    p.add_argument("case")
    p.add_argument("--warp", required=True, help="comma-separated releases")
    p.add_argument("--variant", default="buggy")
    p.add_argument("--repeat", type=int, default=1)
    p = sub.add_parser("verify", help="run the manifest's checks and write docs/data/mined-checks.json")
    p.add_argument("--cases", default="*")
    p.add_argument("--repeat", type=int, default=3)
    p = sub.add_parser("verify-debug", help="only the debug-mode runs of the manifest's cases, into mined-checks.json")
    p.add_argument("--cases", default="*")
    p = sub.add_parser("summarise-validation", help="write docs/data/mined-validation.json from validate --json files")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("summarise-runs", help="merge run --tier mined --json files into docs/data/mined-engines.json")
    p.add_argument("files", nargs="+")
    sub.add_parser("render", help="write docs/mined.md")
    a = ap.parse_args(argv)
    if a.cmd == "extract-changelog":
        yaml.safe_dump(extract_changelog(a.mirror), sys.stdout, sort_keys=False, width=120, allow_unicode=True)
    elif a.cmd == "check":
        bad = 0
        for rel in a.warp.split(","):
            for _ in range(a.repeat):
                r = run_check(a.case, rel, a.variant)
                print(json.dumps({k: r.get(k) for k in ("release", "variant", "passed", "exit", "max_abs_error",
                                                        "seconds", "error")}))
                bad += r["exit"] not in (0, 1)
        return 1 if bad else 0
    elif a.cmd == "verify":
        doc = verify(a.cases, a.repeat)
        picked = [c for cid, c in doc["cases"].items() if fnmatch.fnmatch(cid, a.cases)]
        return 0 if all(case_ok(c) for c in picked) else 1
    elif a.cmd == "verify-debug":
        doc = verify_debug(a.cases)
        picked = [c for cid, c in doc["cases"].items() if fnmatch.fnmatch(cid, a.cases)]
        return 0 if all(case_ok(c) for c in picked) else 1
    elif a.cmd == "summarise-validation":
        write_json_atomic(str(VALIDATION), summarise_validation(a.files))
        print(f"wrote {VALIDATION.relative_to(ROOT)}")
    elif a.cmd == "summarise-runs":
        prev = json.loads(ENGINES.read_text()) if ENGINES.is_file() else None
        write_json_atomic(str(ENGINES), summarise_runs(a.files, prev))
        print(f"wrote {ENGINES.relative_to(ROOT)}")
    elif a.cmd == "render":
        PAGE.write_text(render())
        print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
