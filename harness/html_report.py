"""A self-contained HTML report of a run, with matplotlib figures.

Figures (PNG, embedded as base64 so the page is one file): the confusion
matrix of expected vs diagnosed class as a heatmap, per-class recall and
precision bars, seconds per case, and, when runs on several Warp releases are
given, verdict and class accuracy across releases.
"""

from __future__ import annotations

import base64
import html
import io

from .machine import one_line


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _top(d: dict) -> str:
    cls = d.get("classes") or []
    return cls[0]["id"] if cls else d.get("verdict", "-")


def figures(doc: dict, others: list | None = None) -> dict:
    """name -> base64 PNG for the run ``doc`` (and release comparison with ``others``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = {}
    scored = [r for r in doc["results"] if r.get("correct") is not None]
    exp = [r["expected"]["classes"][0] for r in scored]
    got = [_top(r["diagnosis"]) for r in scored]
    rows = sorted(set(exp))
    cols = sorted(set(got) | set(rows))
    m = np.zeros((len(rows), len(cols)))
    for e, g in zip(exp, got):
        m[rows.index(e), cols.index(g)] += 1
    fig, ax = plt.subplots(figsize=(1.0 + 0.32 * len(cols), 1.0 + 0.32 * len(rows)))
    ax.imshow(m, cmap="Blues")
    ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_xlabel("diagnosed (top-1)")
    ax.set_ylabel("expected (first class)")
    for i in range(len(rows)):
        for j in range(len(cols)):
            if m[i, j]:
                ax.text(j, i, int(m[i, j]), ha="center", va="center", fontsize=6,
                        color="white" if m[i, j] > m.max() / 2 else "black")
    ax.set_title("confusion matrix")
    out["confusion"] = _png(fig)

    pc = doc["summary"]["per_class"]
    names = [c for c in pc if pc[c]["support"]]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(names)), 3.2))
    x = np.arange(len(names))
    ax.bar(x - 0.2, [pc[c]["recall"] or 0 for c in names], 0.4, label="recall")
    ax.bar(x + 0.2, [pc[c]["precision"] or 0 for c in names], 0.4, label="precision")
    ax.set_xticks(x, names, rotation=90, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    ax.set_title("per-class recall and precision")
    out["per_class"] = _png(fig)

    per_case = {}
    for r in doc["results"]:
        per_case[r["case"]] = per_case.get(r["case"], 0.0) + float((r["diagnosis"].get("cost") or {}).get("wall_s") or 0.0)
    cases = sorted(per_case, key=per_case.get, reverse=True)
    fig, ax = plt.subplots(figsize=(max(6, 0.18 * len(cases)), 3.2))
    ax.bar(range(len(cases)), [per_case[c] for c in cases], color="tab:gray")
    ax.set_xticks(range(len(cases)), cases, rotation=90, fontsize=5)
    ax.set_ylabel("seconds (all variants)")
    ax.set_title("diagnosis cost per case")
    out["cost"] = _png(fig)

    runs = [doc] + list(others or [])
    releases = sorted({r["summary"]["warp_version"] for r in runs}, key=lambda v: tuple(int(p) for p in v.split(".")[:3]))
    if len(releases) > 1:
        by = {r["summary"]["warp_version"]: r["summary"] for r in runs}
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.plot(releases, [by[v]["verdict_accuracy"] for v in releases], marker="o", label="verdict accuracy")
        ax.plot(releases, [by[v]["class_accuracy"] for v in releases], marker="s", label="class accuracy")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("Warp release")
        ax.legend(fontsize=7)
        ax.set_title("accuracy across Warp releases")
        out["releases"] = _png(fig)
    return out


def html_report(doc: dict, others: list | None = None, title: str = "defects4warp run") -> str:
    """The HTML page (one file, figures embedded)."""
    s = doc["summary"]
    figs = figures(doc, others)
    e = html.escape

    def fmt(x, d=3):
        return "n/a" if x is None else f"{x:.{d}f}"

    rows = "".join(f"<tr><td>{e(k)}</td><td>{v}</td></tr>" for k, v in [
        ("engine", e(f"{s['engine']} {s.get('engine_version') or ''}")), ("Warp", e(s["warp_version"])),
        ("device", e(s["device"])), ("cases / variants / runs", f"{s['cases']} / {s['variants']} / {s['runs']}"),
        ("verdict accuracy", fmt(s["verdict_accuracy"])), ("class accuracy", fmt(s["class_accuracy"])),
        ("detection rate", fmt(s["detection_rate"])), ("false-positive rate", fmt(s["false_positive_rate"])),
        ("median seconds per run", fmt(s.get("median_wall_s_per_run"), 2)),
        ("machine", e(one_line(s["machine"])) if s.get("machine") else "n/a")])
    missed = "".join(
        f"<tr><td>{e(r['case'])}</td><td>{e(r['variant'])}</td><td>{e(' '.join([r['expected']['verdict']] + r['expected']['classes']))}</td>"
        f"<td>{e(r['diagnosis']['verdict'] + ' ' + _top(r['diagnosis']))}</td></tr>"
        for r in doc["results"] if r.get("correct") and not r["correct"]["class"])
    imgs = "".join(f'<h2>{e(name.replace("_", " "))}</h2><img alt="{e(name)}" src="data:image/png;base64,{b64}">'
                   for name, b64 in figs.items())
    note = "" if s.get("complete", True) else "<p><b>Incomplete run</b>: interrupted before every variant finished.</p>"
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{e(title)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;font-size:13px}}img{{max-width:100%}}</style></head>
<body><h1>{e(title)}</h1>{note}<table>{rows}</table>{imgs}{reliability_html(doc)}
<h2>runs whose top-1 class missed</h2><table><tr><th>case</th><th>variant</th><th>expected</th><th>diagnosed</th></tr>{missed}</table>
</body></html>
"""


def reliability(results: list, *, bins: int = 10) -> dict:
    """Calibration of the top-1 class score over scored runs diagnosed ``bug`` and expected ``bug``.

    Returns
    -------
    dict
        ``runs``, ``brier`` (multi-class: sum over the ranked classes of
        (score - y)^2, y the one-hot of the expected class ranked highest, and
        1 when no expected class is ranked), ``bins``: per equal-width bin of
        the top-1 score, ``confidence`` (mean score), ``accuracy`` (fraction
        whose top-1 is expected) and ``count``.
    """
    preds = []
    for r in results:
        d, exp = r.get("diagnosis") or {}, r.get("expected") or {}
        if exp.get("verdict") == "bug" and d.get("verdict") == "bug" and d.get("classes"):
            preds.append(({c["id"]: c["score"] for c in d["classes"]}, list(exp.get("classes") or [])))
    from .engines.fit import metrics

    m = metrics(preds, bins=bins)
    return {"runs": m["runs"], "brier": m.get("brier"), "bins": m.get("reliability", [])}


def reliability_html(doc: dict) -> str:
    """A reliability diagram of the run's class scores (empty when no run qualifies):
    a calibrated engine's points lie on the diagonal."""
    rel = reliability(doc.get("results") or [])
    if not rel["runs"]:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [b for b in rel["bins"] if b["count"]]
    fig, ax = plt.subplots(figsize=(4.2, 4.2))
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1)
    ax.plot([b["confidence"] for b in pts], [b["accuracy"] for b in pts], "o-", c="C0")
    for b in pts:
        ax.annotate(str(b["count"]), (b["confidence"], b["accuracy"]), fontsize=7, xytext=(3, -9),
                    textcoords="offset points")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("top-1 class score")
    ax.set_ylabel("fraction whose top-1 class is right")
    ax.set_title(f"reliability ({rel['runs']} bug runs, Brier {rel['brier']:.3f})", fontsize=10)
    return (f'<h2>reliability of the class scores</h2><img alt="reliability" '
            f'src="data:image/png;base64,{_png(fig)}">')
