"""``docs/builtins.md`` and the release-to-release changes of builtin adjoints.

The report page of the builtins conformance suite (:mod:`defects4warp.builtins`,
whose committed results it reads).

Input everywhere: ``docs = {release: compact document}`` (the committed
``harness/data/builtins/<release>-<device>.json`` files, see
:func:`defects4warp.builtins.conformance.compact`). An overload a release does not
list is ``absent`` there.
"""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from ..builtins import load, measured_releases
from ..corpus.case import default_corpus, load_corpus
from ..run.matrix import SECTIONS
from ..paths import PACKAGE_DIR

#: Markers delimiting the generated part of docs/builtins.md (hand-written text outside them is kept).
START, END = "<!-- generated:start -->", "<!-- generated:end -->"

STATES = ("agrees", "wrong", "zero", "build_error", "inconclusive")


def state_of(doc: dict | None, oid: str) -> str:
    if doc is None:
        return "not measured"
    c = doc["cells"].get(oid)
    return c["state"] if c else "absent"


def cell_text(doc: dict | None, oid: str) -> str:
    """Short text of one matrix cell: ``ok``, ``wrong 0.53``, ``zero (nd)`` (declared not differentiable), ..."""
    if doc is None:
        return " "
    c = doc["cells"].get(oid)
    if c is None:
        return "-"
    s = c["state"]
    if s == "agrees":
        return "ok"
    if s == "wrong":
        return "wrong (FD 0)" if c.get("fd_zero") or c.get("rel_err") is None else f"wrong {c['rel_err']:.2g}"
    if s == "zero":
        return "zero (nd)" if c.get("differentiable") is False else "zero"
    if s == "build_error":
        return "build error"
    return s


def changes(docs: dict, a: str, b: str) -> list:
    """Overloads whose state differs between releases ``a`` and ``b``.

    Returns
    -------
    list[dict]
        ``{"id", "builtin", "from", "to", "rel_err_from", "rel_err_to"}`` sorted by id;
        appearing or disappearing overloads are included only when the other
        side is not ``agrees`` (a new overload that agrees is not a change of
        an adjoint). Empty when either release is not measured.
    """
    da, db = docs.get(a), docs.get(b)
    if da is None or db is None:
        return []
    out = []
    for oid in sorted(set(da["cells"]) | set(db["cells"])):
        sa, sb = state_of(da, oid), state_of(db, oid)
        if sa == sb:
            continue
        if {sa, sb} <= {"absent", "agrees"}:
            continue
        ca, cb = da["cells"].get(oid, {}), db["cells"].get(oid, {})
        out.append({"id": oid, "builtin": (ca or cb).get("builtin"), "from": sa, "to": sb,
                    "rel_err_from": ca.get("rel_err"), "rel_err_to": cb.get("rel_err")})
    return out


def coverage(doc: dict) -> dict:
    n = {s: 0 for s in STATES}
    for c in doc["cells"].values():
        n[c["state"]] = n.get(c["state"], 0) + 1
    n["measured"] = len(doc["cells"])
    n["builtins"] = len({c["builtin"] for c in doc["cells"].values()})
    return n


def _spans(rels: list, hit: list) -> str:
    """``hit`` (a subset of the ordered ``rels``) as runs of consecutive measured releases: ``1.0.2-1.7.2, 1.9.1``."""
    out, run = [], []
    for r in rels:
        if r in hit:
            run.append(r)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = []
    if run:
        out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def defective_builtins(docs: dict) -> list:
    """Builtins (overload families, the ``builtin`` field of a cell) with a ``wrong`` or ``zero`` overload on
    some measured release.

    Returns
    -------
    list[dict]
        Sorted by builtin: ``{"builtin", "releases"}`` (measured releases, oldest first, on which some
        overload is wrong or zero), ``"declared"`` (releases among them where such an overload is
        declared differentiable or the release has no flag) and ``"not_differentiable"`` (those where
        every such overload is declared not differentiable), ``"states"`` (the set of defect states)
        and ``"overloads"`` (the defective overload ids).
    """
    rels = sorted(docs, key=Version)
    by = {}
    for r in rels:
        for oid, c in docs[r]["cells"].items():
            if c["state"] not in ("wrong", "zero"):
                continue
            b = by.setdefault(c["builtin"], {"builtin": c["builtin"], "releases": [], "declared": [],
                                             "not_differentiable": [], "states": set(), "overloads": set()})
            b["states"].add(c["state"])
            b["overloads"].add(oid)
            if r not in b["releases"]:
                b["releases"].append(r)
            if c.get("differentiable") is not False and r not in b["declared"]:
                b["declared"].append(r)
    for b in by.values():
        b["not_differentiable"] = [r for r in b["releases"] if r not in b["declared"]]
    return [by[k] for k in sorted(by)]


def cases_table(docs: dict, cases: dict) -> list:
    """Lines of the "builtin -> corpus case(s)" table.

    ``cases`` maps a builtin name to the ids of the corpus cases tagged with it (``tags.builtins``
    in case.yaml). One row per :func:`defective_builtins` entry.
    """
    rels = sorted(docs, key=Version)
    L = ["| builtin | wrong or zero on (measured releases) | declared not differentiable there | corpus case(s) |",
         "|---|---|---|---|"]
    for b in defective_builtins(docs):
        states = " / ".join(sorted(b["states"]))
        nd = _spans(rels, b["not_differentiable"]) or "-"
        got = ", ".join(f"`{c}`" for c in sorted(cases.get(b["builtin"], ()))) or "none"
        L.append(f"| `{b['builtin']}` | {states}: {_spans(rels, b['releases'])} | {nd} | {got} |")
    return L


def page_markdown(docs: dict, *, device: str = "cpu", cases: dict | None = None) -> str:
    """The generated part of docs/builtins.md (between :data:`START` and :data:`END`).

    ``cases`` (optional) maps builtin names to corpus case ids (``tags.builtins``); when given, the page
    has a "Defective builtins and their corpus cases" table (:func:`cases_table`).
    """
    rels = sorted(docs, key=Version)
    L = [START, "", f"Generated by `defects4warp maint builtins --write-package-data` from `harness/data/builtins/*-{device}.json`; "
         "do not edit between the markers.", "", "### Coverage", "",
         "| release | overloads | builtins | agrees | wrong | zero | build error | inconclusive | registry: names / "
         "overloads / declared differentiable |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rels:
        n = coverage(docs[r])
        reg = docs[r].get("registry") or {}
        d = reg.get("differentiable")
        L.append(f"| {r} | {n['measured']} | {n['builtins']} | {n['agrees']} | {n['wrong']} | {n['zero']} | "
                 f"{n['build_error']} | {n['inconclusive']} | {reg.get('names', '?')} / {reg.get('overloads', '?')} / "
                 f"{'no flag' if d is None else d} |")
    bad = sorted({oid for r in rels for oid, c in docs[r]["cells"].items() if c["state"] != "agrees"})
    L += ["", "### Overloads that do not agree on some release", "",
          "`ok` agrees with finite differences; `wrong x` relative error x beyond the FD noise; `zero` the "
          "adjoint is exactly zero where FD is not (`nd`: the release declares it not differentiable); "
          "`-` absent on that release.", ""]
    if bad:
        L.append("| overload | " + " | ".join(rels) + " |")
        L.append("|---|" + "---|" * len(rels))
        for oid in bad:
            L.append(f"| `{oid}` | " + " | ".join(cell_text(docs[r], oid) for r in rels) + " |")
    else:
        L.append("(none)")
    if cases is not None:
        L += ["", "### Defective builtins and their corpus cases", "",
              "Every builtin with an overload measured `wrong` or `zero` on some release, the measured releases "
              "on which it is (runs of consecutive measured releases), those among them on which every such "
              "overload is declared not differentiable, and the corpus cases whose buggy program hits it "
              "(`tags.builtins` in case.yaml).", ""]
        L += cases_table(docs, cases)
    L += ["", "### What changed between consecutive measured releases", ""]
    for a, b in zip(rels, rels[1:]):
        ch = changes(docs, a, b)
        L.append(f"**{a} -> {b}**: " + (f"{len(ch)} overload(s)" if ch else "no adjoint changed") + "")
        for c in ch:
            L.append(f"- `{c['id']}`: {c['from']} -> {c['to']}")
        L.append("")
    L.append(END)
    return "\n".join(L) + "\n"


def splice(existing: str | None, generated: str) -> str:
    """Replace the generated part of ``existing`` (or append it) and keep the hand-written rest."""
    if not existing or START not in existing or END not in existing:
        head = existing.rstrip() + "\n\n" if existing else ""
        return head + generated
    pre = existing.split(START)[0]
    post = existing.split(END, 1)[1]
    return pre + generated.rstrip("\n") + post


def audit_section(a: str, b: str, device: str = "cpu") -> tuple:
    """The builtins part of ``defects4warp audit --from a --to b``.

    Returns
    -------
    tuple
        ``(data, markdown)``: ``data`` is ``{"measured": bool, "changes": [...]}``
        (:func:`changes` over the committed results; CPU data stands in for
        other devices), ``markdown`` a section to append to the audit.
    """
    docs = {}
    for r in (a, b):
        d = load(r, device) or load(r, "cpu")
        if d is not None:
            docs[r] = d
    missing = [r for r in (a, b) if r not in docs]
    lines = ["", f"## {SECTIONS['builtins']}", ""]
    if missing:
        lines.append(f"Not measured by the builtins conformance suite: {', '.join(missing)} "
                     "(`defects4warp maint builtins --warp " + ",".join(missing) + " --write-package-data`).")
        return {"measured": False, "changes": []}, "\n".join(lines) + "\n"
    ch = changes(docs, a, b)
    lines[1] += f" ({len(ch)})"
    if not ch:
        lines.append(f"No builtin overload changes state between {a} and {b} "
                     f"({len(docs[a]['cells'])} and {len(docs[b]['cells'])} overloads measured; docs/builtins.md).")
    else:
        lines += [f"{len(ch)} overload(s) change between {a} and {b} (docs/builtins.md):", "",
                  "| overload | " + a + " | " + b + " |", "|---|---|---|"]
        for c in ch:
            lines.append(f"| `{c['id']}` | {cell_text(docs[a], c['id'])} | {cell_text(docs[b], c['id'])} |")
    return {"measured": True, "changes": ch}, "\n".join(lines) + "\n"


def corpus_builtins(corpus=None) -> dict:
    """``{builtin: [case id, ...]}`` from the ``tags.builtins`` of the cases of ``corpus`` (default: the
    bundled corpus). Cases that fail to load are left out (``defects4warp validate`` reports them)."""
    cases, _ = load_corpus(corpus or default_corpus())
    out = {}
    for c in cases:
        for b in c.builtins:
            out.setdefault(b, []).append(c.id)
    return {b: sorted(ids) for b, ids in out.items()}


def write_page(path=None) -> Path:
    """Regenerate ``docs/builtins.md`` from the committed data; returns its path."""
    path = Path(path) if path else PACKAGE_DIR.parent / "docs" / "builtins.md"
    docs = {r: load.__wrapped__(r, "cpu") for r in measured_releases("cpu")}
    text = splice(path.read_text() if path.is_file() else None, page_markdown(docs, cases=corpus_builtins()))
    tmp = path.with_suffix(".md.part")
    tmp.write_text(text)
    tmp.replace(path)
    return path
