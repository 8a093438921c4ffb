"""A self-contained HTML report of a run, with matplotlib figures.

Figures (PNG, embedded as base64 so the page is one file): the confusion
matrix of expected vs diagnosed class as a heatmap, per-class recall and
precision bars (classes grouped by taxonomy family), the seconds of the
costliest cases (the time of the rest stated under it), and, when runs on several Warp
releases are given, verdict and class accuracy across releases; a reliability
diagram of the class scores in bins of equal run counts, or why the runs cannot
make one (:func:`reliability_html`). The page also
states the corpus, the date, the wall time and the skipped runs with their
reason.
"""

from __future__ import annotations

import base64
import html
import io

from ..machine import one_line


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _top(d: dict) -> str:
    cls = d.get("classes") or []
    return cls[0]["id"] if cls else d.get("verdict", "-")


#: Cases named on the cost chart; the time of the others is stated under it.
TOP_CASES = 20


def _hbars(ax, labels, series, colors, fontsize=8):
    """Horizontal bars, one row per label (top to bottom in the given order);
    ``series`` is ``[(name, values)]``, drawn side by side within a row."""
    import numpy as np

    y = np.arange(len(labels))
    h = 0.8 / len(series)
    for k, ((name, vals), c) in enumerate(zip(series, colors)):
        ax.barh(y - 0.4 + h * (k + 0.5), vals, h, label=name, color=c)
    ax.set_yticks(y, labels, fontsize=fontsize)
    ax.set_ylim(len(labels) - 0.5, -0.5)


def cost_bars(doc: dict, top_cases: int = TOP_CASES) -> tuple:
    """The cost chart's data: ``(labels, seconds, rest_cases, rest_seconds)``,
    the ``top_cases`` cases with the most diagnosis seconds (all variants
    summed), costliest first, and how many other cases there are and the
    seconds they took together (stated under the chart, not drawn as a bar,
    so the named bars keep a readable scale)."""
    per_case = {}
    for r in doc["results"]:
        per_case[r["case"]] = per_case.get(r["case"], 0.0) + float((r["diagnosis"].get("cost") or {}).get("wall_s") or 0.0)
    cases = sorted(per_case, key=lambda c: (-per_case[c], c))
    shown, rest = cases[:top_cases], cases[top_cases:]
    return shown, [per_case[c] for c in shown], len(rest), sum(per_case[c] for c in rest)


def figures(doc: dict, others: list | None = None, *, top_cases: int = TOP_CASES) -> dict:
    """name -> base64 PNG for the run ``doc`` (and release comparison with ``others``).

    Parameters
    ----------
    doc : dict
        A run document (``{"summary", "results"}``).
    others : list of dict, optional
        Runs of the same engine on other Warp releases (the accuracy-across-
        releases figure is drawn when they span more than one release).
    top_cases : int
        The cost chart names the ``top_cases`` most expensive cases and states
        the time of the rest under it (default :data:`TOP_CASES`).

    Labels are horizontal and one per row (classes grouped by taxonomy
    family, the costliest cases first), and legends sit outside the bars.
    """
    import matplotlib

    matplotlib.use("Agg")

    scored = [r for r in doc["results"] if r.get("correct") is not None]
    drawn = {"confusion": _confusion_figure(scored), "per_class": _per_class_figure(doc["summary"]["per_class"]),
             "cost": _cost_figure(doc, top_cases), "releases": _releases_figure([doc] + list(others or []))}
    return {k: v for k, v in drawn.items() if v is not None}


def _class_order(c):
    """Sort key of a class id: its taxonomy family, then the id (an id outside the taxonomy last)."""
    from ..taxonomy import CLASSES

    return (CLASSES[c].family if c in CLASSES else "~", c)


def _confusion_figure(scored: list):
    """The confusion matrix of the ``scored`` runs (expected first class x diagnosed top-1), base64 PNG;
    None without a scored run."""
    import matplotlib.pyplot as plt
    import numpy as np

    exp = [r["expected"]["classes"][0] for r in scored]
    got = [_top(r["diagnosis"]) for r in scored]
    rows = sorted(set(exp), key=_class_order)
    cols = sorted(set(got) | set(rows), key=_class_order)
    if rows:
        m = np.zeros((len(rows), len(cols)))
        for e, g in zip(exp, got):
            m[rows.index(e), cols.index(g)] += 1
        fig, ax = plt.subplots(figsize=(2.5 + 0.3 * len(cols), 1.8 + 0.3 * len(rows)))
        share = m / np.maximum(m.sum(axis=1, keepdims=True), 1)  # colour by the share of the row, so rare classes show
        ax.imshow(share, cmap="Blues", aspect="auto", vmin=0, vmax=1)
        ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", rotation_mode="anchor", fontsize=8)
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        ax.set_xlabel("diagnosed (top-1 class, or the verdict when no class)")
        ax.set_ylabel("expected (first class)")
        for i in range(len(rows)):
            for j in range(len(cols)):
                if m[i, j]:
                    ax.text(j, i, int(m[i, j]), ha="center", va="center", fontsize=7,
                            color="white" if share[i, j] > 0.5 else "black")
        ax.set_title("confusion matrix (runs; colour: share of the expected class's runs)")
        return _png(fig)
    return None


def _per_class_figure(pc: dict):
    """Per-class recall and precision (``pc``: the summary's ``per_class``), base64 PNG; None when no class
    has support."""
    import matplotlib.pyplot as plt

    names = sorted((c for c in pc if pc[c]["support"]), key=_class_order)
    if names:
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.28 * len(names)))
        _hbars(ax, [f"{c} ({pc[c]['support']})" for c in names],
               [("recall", [pc[c]["recall"] or 0 for c in names]),
                ("precision", [pc[c]["precision"] or 0 for c in names])], ["tab:blue", "tab:orange"])
        ax.set_xlim(0, 1.0)
        ax.set_xlabel("fraction (class label: runs expecting it)")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False)
        ax.set_title("per-class recall and precision", pad=22)
        return _png(fig)
    return None


def _cost_figure(doc: dict, top_cases: int):
    """The diagnosis cost of the costliest cases (:func:`cost_bars`), base64 PNG; None without a case."""
    import matplotlib.pyplot as plt

    labels, vals, n_rest, s_rest = cost_bars(doc, top_cases)
    if labels:
        total = sum(vals) + s_rest
        fig, ax = plt.subplots(figsize=(8, 1.4 + 0.28 * len(labels)))
        _hbars(ax, labels, [("seconds", vals)], ["tab:gray"])
        ax.set_xlabel("seconds of diagnosis, all variants of the case"
                      + (f"\nthe other {n_rest} cases took {s_rest:.0f} s together" if n_rest else "")
                      + f" (total {total:.0f} s)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(f"diagnosis cost: the {len(labels)} costliest of {len(labels) + n_rest} cases")
        return _png(fig)
    return None


def _releases_figure(runs: list):
    """Verdict and class accuracy across the Warp releases of ``runs``, base64 PNG; None for one release."""
    import matplotlib.pyplot as plt

    releases = sorted({r["summary"]["warp_version"] for r in runs}, key=lambda v: tuple(int(p) for p in v.split(".")[:3]))
    if len(releases) > 1:
        by = {r["summary"]["warp_version"]: r["summary"] for r in runs}
        fig, ax = plt.subplots(figsize=(7, 3.2))
        ax.plot(releases, [by[v]["verdict_accuracy"] for v in releases], marker="o", label="verdict accuracy")
        ax.plot(releases, [by[v]["class_accuracy"] for v in releases], marker="s", label="class accuracy")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("Warp release")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_title("accuracy across Warp releases")
        return _png(fig)
    return None


def _minutes(seconds) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def html_report(doc: dict, others: list | None = None, title: str = "defects4warp run") -> str:
    """The HTML page (one file, figures embedded): the run's facts (engine,
    release, corpus, date, wall time, run counts with skips), the metrics, the
    figures of :func:`figures`, the runs whose class missed, and the skipped
    runs with their reason."""
    from ..run.history import n_cases
    from .markdown import skipped_runs

    s = doc["summary"]
    figs = figures(doc, others)
    e = html.escape

    def fmt(x, d=3):
        return "n/a" if x is None else f"{x:.{d}f}"

    corpus = s.get("corpus") or {}
    corpus_s = (f"{corpus.get('name', '?')}, {n_cases(corpus.get('cases', s['cases']))}"
                + (f" (subset: {corpus['selection']})" if corpus.get("subset") else "")) if corpus else "n/a"
    rows = "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in [
        ("engine", e(f"{s['engine']} {s.get('engine_version') or ''}")), ("Warp", e(s["warp_version"])),
        ("device", e(s["device"])), ("corpus", e(corpus_s)),
        ("run on", e(str(s.get("date") or "n/a"))),
        ("wall time", e(_minutes(s.get("wall_s"))) + (f" with --jobs {int(s['jobs'])}" if s.get("jobs") else "")),
        ("cases / variants / runs", f"{s['cases']} / {s['variants']} / {s['runs']}"),
        ("runs scored / errors / inconclusive / skipped",
         f"{s.get('scored', 0)} / {s.get('errors', 0)} / {s.get('inconclusive', 0)} / {s.get('skipped', 0)}"),
        ("verdict accuracy", fmt(s["verdict_accuracy"])), ("class accuracy", fmt(s["class_accuracy"])),
        ("detection rate", fmt(s["detection_rate"])), ("false-positive rate", fmt(s["false_positive_rate"])),
        ("median seconds per run", fmt(s.get("median_wall_s_per_run"), 2)),
        ("machine", e(one_line(s["machine"])) if s.get("machine") else "n/a")])
    missed = "".join(
        f"<tr><td>{e(r['case'])}</td><td>{e(r['variant'])}</td><td>{e(' '.join([r['expected']['verdict']] + r['expected']['classes']))}</td>"
        f"<td>{e(r['diagnosis']['verdict'] + ' ' + _top(r['diagnosis']))}</td></tr>"
        for r in doc["results"] if r.get("correct") and not r["correct"]["class"])
    missed = (f"<table><tr><th>case</th><th>variant</th><th>expected</th><th>diagnosed</th></tr>{missed}</table>"
              if missed else "<p>None.</p>")
    skipped = skipped_runs(doc)
    skipped_html = "" if not skipped else (
        "<h2>skipped runs</h2><p>Not diagnosed and not scored: they count in no metric above.</p>"
        "<table><tr><th>case</th><th>variant</th><th>reason</th></tr>"
        + "".join(f"<tr><td>{e(x['case'])}</td><td>{e(x['variant'] + ('' if x['scale'] == 'small' else ' @' + x['scale']))}"
                  f"</td><td>{e(x['reason'])}</td></tr>" for x in skipped) + "</table>")
    imgs = "".join(f'<h2>{e(name.replace("_", " "))}</h2><img alt="{e(name)}" src="data:image/png;base64,{b64}">'
                   for name, b64 in figs.items())
    tiers = "" if not s.get("tiers") else (
        "<h2>per provenance tier</h2><table><tr><th>tier</th><th>runs scored</th><th>detection rate (bug runs)</th>"
        "<th>false-positive rate (no_bug runs)</th><th>class accuracy</th></tr>"
        + "".join(f"<tr><td>{e(name)}</td><td>{m['scored']}</td>"
                  f"<td>{fmt(m['detection_rate'])} ({m['bug_runs']})</td>"
                  f"<td>{fmt(m['false_positive_rate'])} ({m['no_bug_runs']})</td>"
                  f"<td>{fmt(m['class_accuracy'])}</td></tr>"
                  for name, m in s["tiers"].items()) + "</table>")
    note = "" if s.get("complete", True) else "<p><b>Incomplete run</b>: interrupted before every variant finished.</p>"
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{e(title)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}}img{{max-width:100%;display:block}}</style></head>
<body><h1>{e(title)}</h1>{note}<table>{rows}</table>{tiers}{imgs}{reliability_html(doc)}
<h2>runs whose top-1 class missed</h2>{missed}{skipped_html}
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
    from ..engines.fit import metrics

    m = metrics(preds, bins=bins)
    return {"runs": m["runs"], "brier": m.get("brier"), "bins": m.get("reliability", [])}


#: Fewest runs in a bin of the reliability diagram: a fraction of fewer runs moves by 1/4 or more
#: with one run, too coarse to compare with a score.
MIN_BIN_RUNS = 5


def confidence_bins(points: list, *, min_count: int = MIN_BIN_RUNS, max_bins: int = 10) -> list:
    """Bins of equal run counts over the top-1 class score, for a reliability diagram.

    Equal-width bins put every run of an engine whose scores sit near 1 in one bin (one dot at
    (1, 1)); bins of equal counts (quantiles) spread them over what the scores actually are.
    Runs with the same score never straddle two bins, so a bin can hold more than its share.

    Parameters
    ----------
    points : list[(float, bool)]
        ``(top-1 score, whether the top-1 class is expected)`` per run.
    min_count : int, default :data:`MIN_BIN_RUNS`
        Fewest runs in a bin; the number of bins is ``min(max_bins, len(points) // min_count)``
        (at least 1), and a last bin with fewer runs joins the one before it.
    max_bins : int, default 10

    Returns
    -------
    list[dict]
        Per bin, lowest score first: ``lo``, ``hi`` (its lowest and highest score),
        ``confidence`` (mean score), ``accuracy`` (fraction right), ``count``, ``right``,
        ``low``/``high`` (the Wilson 95% interval of the fraction: Wilson 1927, z = 1.96).
    """
    pts = sorted((float(c), bool(h)) for c, h in points)
    n = len(pts)
    if not n:
        return []
    k = max(1, min(max_bins, n // max(1, min_count)))
    groups, i = [], 0
    for j in range(1, k + 1):
        end = round(j * n / k)
        while 0 < end < n and pts[end][0] == pts[end - 1][0]:
            end += 1  # equal scores stay together
        if end > i:
            groups.append(pts[i:end])
            i = end
    if len(groups) > 1 and len(groups[-1]) < min_count:
        groups[-2:] = [groups[-2] + groups[-1]]
    out = []
    for g in groups:
        m, right = len(g), sum(h for _, h in g)
        low, high = _wilson(right, m)
        out.append({"lo": g[0][0], "hi": g[-1][0], "confidence": sum(c for c, _ in g) / m,
                    "accuracy": right / m, "count": m, "right": right, "low": low, "high": high})
    return out


def _wilson(k: int, n: int, z: float = 1.96) -> tuple:
    """The Wilson score interval of the fraction ``k / n`` (Wilson 1927), ``(low, high)``."""
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def reliability_html(doc: dict) -> str:
    """A reliability diagram of the run's class scores (empty when no run qualifies): the top-1
    score of each bug run diagnosed bug, in bins of equal counts (:func:`confidence_bins`), against
    the fraction whose top-1 class is right, with its Wilson 95% interval and the count of each
    bin, next to the bin's mean score; under it, how the scores are spread. A calibrated engine's
    fraction right equals its mean score in every bin.
    When the runs make one bin only (fewer than two bins' worth of :data:`MIN_BIN_RUNS` runs, or
    scores all alike), the figure and the text under its title say so instead of drawing a curve."""
    rel = reliability(doc.get("results") or [])
    if not rel["runs"]:
        return ""
    points = []
    for r in doc.get("results") or []:
        d, exp = r.get("diagnosis") or {}, r.get("expected") or {}
        if exp.get("verdict") == "bug" and d.get("verdict") == "bug" and d.get("classes"):
            ranked = sorted(d["classes"], key=lambda c: (-c["score"], c["id"]))
            points.append((ranked[0]["score"], ranked[0]["id"] in (exp.get("classes") or [])))
    bins = confidence_bins(points)
    n, right = len(points), sum(h for _, h in points)
    lo, hi = min(c for c, _ in points), max(c for c, _ in points)
    why = None
    if len(bins) < 2:
        why = (f"One bin only: {n} run(s) with top-1 scores {lo:.3f} to {hi:.3f}, {right} right. A curve needs "
               + (f"at least {2 * MIN_BIN_RUNS} runs (two bins of {MIN_BIN_RUNS})" if n < 2 * MIN_BIN_RUNS
                  else "scores that differ (the runs' scores are all alike)")
               + ", so this figure cannot say whether the scores are calibrated.")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, hx) = plt.subplots(2, 1, figsize=(5.2, 5.6), gridspec_kw={"height_ratios": [3, 1.2]})
    # one column per bin (scores near 1 crowd an axis of the score itself): its mean score (the
    # fraction right it promises) next to the fraction right, with its Wilson 95% interval
    x = list(range(len(bins)))
    ys = [b["accuracy"] for b in bins]
    ax.plot(x, [b["confidence"] for b in bins], "x", c="grey", ms=7, label="mean top-1 score")
    # (clipped at 0: at a fraction of 0 or 1 the interval's end can miss it by a rounding error)
    ax.errorbar(x, ys, yerr=[[max(0.0, y - b["low"]) for y, b in zip(ys, bins)],
                             [max(0.0, b["high"] - y) for y, b in zip(ys, bins)]],
                fmt="o", c="C0", capsize=3, lw=1, label="fraction right (95% interval)")
    for i, b in enumerate(bins):
        ax.annotate(f"{b['right']}/{b['count']}", (i, b["accuracy"]), fontsize=7, xytext=(5, 3),
                    textcoords="offset points")
    ax.set_xticks(x, [f"{b['lo']:.3f}-{b['hi']:.3f}" for b in bins], fontsize=7, rotation=30, ha="right")
    ax.set_xlim(-0.6, max(len(bins) - 0.4, 0.6))
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("bins of the top-1 class score, equal run counts (labels: right/runs)", fontsize=8)
    ax.set_ylabel("fraction / score")
    ax.legend(fontsize=7, loc="lower right")
    if why:
        ax.text(0.03, 0.5, "\n".join(_wrap(why, 52)), transform=ax.transAxes, fontsize=7, va="center",
                bbox={"fc": "white", "ec": "0.7"})
    ax.set_title(f"reliability ({rel['runs']} bug runs, Brier {rel['brier']:.3f})", fontsize=10)
    hx.hist([c for c, _ in points], bins=20, range=(0, 1), color="C0")
    hx.set_xlim(0, 1)
    hx.set_xlabel("top-1 class score (all runs, 20 bins of 0.05)", fontsize=8)
    hx.set_ylabel("runs")
    fig.tight_layout()
    text = why or (f"{len(bins)} bins of about {n // len(bins)} runs each over the top-1 scores of {n} bug runs "
                   f"diagnosed bug ({lo:.3f} to {hi:.3f}); where the fraction right (dot) lies above the mean "
                   "score (cross), the scores understate how often the top class is right.")
    return (f'<h2>reliability of the class scores</h2><p>{html.escape(text, quote=False)}</p><img alt="reliability" '
            f'src="data:image/png;base64,{_png(fig)}">')


def _wrap(text: str, width: int) -> list:
    """``text`` in lines of at most ``width`` characters, broken at spaces."""
    lines, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    return lines + ([cur] if cur else [])
