"""The program audit's report (:mod:`defects4warp.program_audit`): its Markdown, and the one line for an
upgrade ticket its JSON document carries."""

from __future__ import annotations


#: Plain words for the access patterns of the conformance suite (ticket lines and tables).
PATTERN_WORDS = {
    "[component_write]": "component-write", "[component_add]": "component +=", "[component_mul]": "component *=",
    "[local_component_write]": "local vector component write", "[local_component_add]": "local vector component +=",
    "[local_attribute_write]": "local vector attribute write", "[local_matrix_write]": "local matrix element write",
    "[local_matrix_add]": "local matrix element +=",
}


def _words(builtin: str) -> str:
    return PATTERN_WORDS.get(builtin, builtin.strip("[]")) if builtin.startswith("[") else f"wp.{builtin}"


def gradient_wrong(eng: dict, agrees_fd):
    """Whether a release's gradient is wrong: the engine's FD comparison of call 1 (or its verdict),
    else the release differential's FD agreement; None when neither was measured."""
    if eng.get("fd_agrees") is not None:
        return not eng["fd_agrees"]
    if eng.get("verdict") in ("bug", "no_bug"):
        return eng["verdict"] == "bug"
    return None if agrees_fd is None else not agrees_fd


def ticket_line(doc: dict) -> str:
    """One line for an upgrade ticket: ``gradient unchanged (...)`` or, per change, ``gradient of `k`
    changes at 1.14.0: the component-write adjoint was fixed there; 1.13.0 and earlier were wrong``."""
    rows = doc["rows"]
    ran = [r["release"] for r in rows if r["runs"]]
    failed = [r["release"] + (" (refused)" if r.get("refused") else "") for r in rows if not r["runs"]]
    tail = f"; did not run on {', '.join(failed)}" if failed else ""
    if len(ran) < 2:
        return (f"gradient not compared: the program ran on {len(ran)} of {len(rows)} releases"
                + (f" ({ran[0]})" if ran else "") + tail)
    if not doc["changes"]:
        wrong = [gradient_wrong(r.get("engine") or {}, None) for r in rows if r["runs"]]
        classes = sorted({(r.get("engine") or {}).get("class") for r in rows if r["runs"]} - {None})
        verdict = ""
        if wrong and all(w is True for w in wrong):
            verdict = "; wrong on every release that ran (engine: " + ", ".join(classes or ["bug"]) + ")"
        elif wrong and all(w is False for w in wrong):
            verdict = "; it agrees with finite differences on every release that ran"
        return f"gradient unchanged ({ran[0]} .. {ran[-1]}, {len(ran)} releases, {_dev(doc)}){verdict}{tail}"
    parts = []
    for c in doc["changes"]:
        ps = ", ".join(f"`{p}`" for p in sorted(c["params"]))
        if c["first_change"]:
            prev = c["bracket"][0] if c["bracket"][1] == c["first_change"] else None
            s = f"gradient of {ps} changes at {c['first_change']}"
        else:
            prev = None
            s = f"gradient of {ps} changes between {c['bracket'][0]} and {c['bracket'][1]}"
        why = _why(c)
        if why:
            s += f": {why}"
        lo = prev or c["bracket"][0]
        if c["old_wrong"] and c["new_wrong"] is False:
            s += f"; {lo} and earlier were wrong"
        elif c["old_wrong"] is False and c["new_wrong"]:
            s += f"; {c['first_change'] or c['bracket'][1]} and later are wrong"
        elif c["old_wrong"] and c["new_wrong"]:
            s += "; wrong on both sides"
        parts.append(s)
    return "; ".join(parts) + tail


def _why(c: dict) -> str:
    fixed = sorted({_words(b["builtin"]) for b in c["builtins"] if b["fixed"] is True})
    broke = sorted({_words(b["builtin"]) for b in c["builtins"] if b["fixed"] is False})
    there = "there" if c["first_change"] else "in between"
    out = []
    if fixed:
        out.append(f"the {' and '.join(fixed)} adjoint{'s were' if len(fixed) > 1 else ' was'} fixed {there}")
    if broke:
        out.append(f"the {' and '.join(broke)} adjoint{'s' if len(broke) > 1 else ''} became wrong {there}")
    if c.get("loss"):
        out.append(f"the loss changes too ({_fmt(c['loss'][0], '.6g')} -> {_fmt(c['loss'][1], '.6g')}): the program "
                   "computes something else on these releases")
    pinned = [e for e in c["changelog"] if e["release"] == c["first_change"]]
    if not out and pinned:
        out.append(f"Warp {pinned[0]['release']}'s changelog: {pinned[0]['text']}")
    return "; ".join(out)


def _dev(doc: dict) -> str:
    return "CPU only" if doc["cpu_only"] else f"device {doc['device']}"


def _fmt(x, spec=".4g"):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return format(x, spec)


def audit_program_markdown(doc: dict) -> str:
    """The program audit ``doc`` (:func:`audit_program`) as Markdown: the releases table, the changes
    and the ticket line."""
    L = [f"# Program audit: {doc['target']}", ""]
    if doc.get("script"):
        s = doc["script"]
        L += [f"Script `{s.get('entry')}`" + (f" with arguments `{' '.join(s.get('args') or [])}`"
                                               if s.get("args") else "") + ", run as it is on each release.", ""]
    if doc["cpu_only"]:
        L += [f"Measured on the CPU only (device `{doc['device']}`): no GPU was measured; `--device cuda:0` measures "
              "on a GPU where Warp finds one.", ""]
    else:
        L += [f"Measured on device `{doc['device']}`.", ""]
    L += [f"A param's gradient counts as changed when its relative change (||g_b - g_a|| over the larger norm) "
          f"exceeds {doc['grad_rtol']:g}. Engine: {doc.get('engine') or 'not run'}"
          + (" (its own release differential off: this audit compares the releases)" if doc.get("engine") == "reference"
             else "") + ".", "",
          "| release | runs | loss | gradient norm per param | change vs first | engine verdict | class "
          "| wall s | compile s | CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        c = r.get("cost") or {}
        e = r.get("engine") or {}
        if r["runs"]:
            norms = ", ".join(f"{k} {_fmt(p['norm'])}" for k, p in r["params"].items())
            chg = r.get("change") or {}
            ch = ", ".join(f"{k} {_fmt(chg[k], '.3g')}" for k in list(r["params"]) + sorted(set(chg) - set(r["params"]))
                           if k in chg)
            runs = "yes"
        else:
            norms = ch = "-"
            runs = ("refused: " if r.get("refused") else "no: ") + _cell(r.get("error"), 320)
        verdict = e.get("verdict") or "-"
        if e.get("error") and verdict not in ("bug", "no_bug"):
            verdict += f" ({_cell(e['error'], 120)})"
        L.append(f"| {r['release']} | {runs} | {_fmt(r.get('loss'), '.9g')} | {norms} | {ch} | {verdict} "
                 f"| {e.get('class') or '-'} | {_fmt(c.get('wall_s'), '.1f')} | {_fmt(c.get('compile_s'), '.2f')} "
                 f"| {_fmt(c.get('cpu_s'), '.1f')} |")
    L += ["", f"## Where the gradient changes ({len(doc['changes'])})", ""]
    if not doc["changes"]:
        L += ["Nowhere between the releases that ran.", ""]
    for c in doc["changes"]:
        ps = ", ".join(f"`{p}` {_fmt(v, '.3g')}" for p, v in sorted(c["params"].items()))
        L.append(f"### {c['between'][0]} -> {c['between'][1]}: {ps}")
        L.append("")
        if c["first_change"]:
            how = {"adjacent": "no supported release lies in between",
                   "bisected": "bisected over the supported releases in between"
                   + (f", measuring {', '.join(c['measured'])}" if c.get("measured") else "")}.get(c["how"], c["how"])
            L.append(f"First release where it changes: **{c['first_change']}** ({how}).")
        else:
            L.append(f"It changes between {c['bracket'][0]} and {c['bracket'][1]}"
                     + (f" ({c['note']})" if c.get("note") else "") + ".")
        L.append("")
        if c["builtins"]:
            L += ["Builtins and access patterns the launched kernels use whose measured adjoint changed there "
                  "(harness/data/builtins, docs/builtins.md):", "",
                  "| overload | between | from | to | used by |", "|---|---|---|---|---|"]
            for b in c["builtins"]:
                L.append(f"| `{b['id']}` | {b['between'][0]} -> {b['between'][1]} | {b['from']} | {b['to']} "
                         f"| {', '.join(b['functions'])} |")
        else:
            L.append("No builtin or access pattern the launched kernels use changed its measured adjoint there.")
        L.append("")
        if c["changelog"]:
            L += ["Changelog entries of those releases:", ""]
            L += [f"- {e['release']}: {e['text']} ({e['source']})" for e in c["changelog"]]
        else:
            L.append("No changelog entry for those releases (no changelog table committed).")
        L.append("")
    m = doc.get("machine") or {}
    on = f" on {m.get('cpu')}, {m.get('cores')} cores" if m else ""
    L += [f"Wall {doc['wall_s']:.1f} s, CPU {doc['cpu_s']:.1f} s in all{on}"
          + (f", {doc['measured_on']}" if doc.get("measured_on") else "") + ".", "", "**Ticket:** " + doc["ticket"], ""]
    return "\n".join(L)


def _cell(text, n: int = 200) -> str:
    s = " ".join(str(text or "").split())
    s = s.replace("|", "\\|")
    return s if len(s) <= n else s[: n - 3] + "..."
