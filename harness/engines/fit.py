"""Fit the evidence table's weights from labelled runs (``defects4warp maint fit-weights``).

Data: JSON lines (gzip'd or not) of one record per run: the worker's
measurement document, the release differential, the variant's folder and its
expectation, so refitting never measures anything again. They are written by
``scripts/collect_evidence.py`` (measuring) or by ``defects4warp maint fit-weights
--export-inputs`` from a committed measurement bundle; the committed inputs of
the engine's table live in ``docs/data/fit-inputs/`` with their SHA-256 in
``SHA256SUMS`` beside them (:func:`check_inputs`). A record's ``path`` may be
relative to the corpus folder. Only the ``dev`` split and the generated
(mutant) tier may be fitted on: a record of the ``test`` split raises
:class:`FitError`.

The fit starts from the live table (:data:`TABLE_PATH`, or the table given):
its structure and weights are the prior, and a written table keeps its rows'
sources and its no_bug rows. The hand-set v3 table (:data:`HANDSET_PATH`) stays
beside it for comparison.

Model: the engine's own fold (:func:`defects4warp.engines.evidence.fold`) read as
a multinomial logistic regression. For run i with cited evidence strengths
``s_e`` and candidate classes K_i (the bug classes the taxonomy allows under
the measured signature, plus those ``add``/``late`` rows create), the logit
of class c in K_i is ``sum_e s_e W[e, c]`` over the table's (evidence, class)
pairs, and P(c) is their softmax over K_i. The structure (which evidence may
support which class) is the hand-set table's; only the weights are fitted,
by maximum likelihood of the expected classes (any of a run's expected
classes counts: the likelihood is the probability mass on them) with an L2
penalty ``lam/2 ||W - beta W_v3||^2`` toward the hand-set weights scaled by a
temperature ``beta`` (itself fitted first, by likelihood, on a grid): the
hand-set table is the prior, the data move it where they disagree.

Three models are compared under cross-validation that leaves out whole
groups: a corpus run's group is the taxonomy family of its expected class
(taping, kernel, custom, warp), a mutant's its mutation operator:

``v3``           the hand-set weights, scores normalised (weight / sum)
``temperature``  the hand-set weights times ``beta``, softmax (calibration only: same ranking)
``fitted``       every weight fitted as above

Metrics on bug runs the engine calls bug: top-1 and top-3 class accuracy,
the multi-class Brier score (sum over classes of (p_c - y_c)^2, y the
one-hot of the expected class the model ranks highest) and the reliability
of the top-1 probability (10 equal-width bins: mean confidence, accuracy,
count).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from ..corpus.case import default_corpus
from ..evidence_table import TABLE_PATH, EvidenceTable, clear_cache, load_table
from ..jsonio import restore
from ..taxonomy import BUG_CLASSES, CLASSES

#: The hand-set v3 table, kept beside the engine's table so that a fitted table can always be compared with it.
HANDSET_PATH = TABLE_PATH.with_name("evidence_table_v3.yaml")

#: The committed fit inputs of the engine's table: a ``sha256sum`` manifest beside the files it lists
#: (a source checkout's ``docs/data/fit-inputs/``).
INPUTS_MANIFEST = Path(__file__).resolve().parents[2] / "docs" / "data" / "fit-inputs" / "SHA256SUMS"

#: Temperatures tried for the hand-set weights (multiplicative, on the logits).
BETAS = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0)
#: L2 strength toward beta * W_v3 (per run-averaged likelihood; chosen by the issue's CV below).
LAMBDA = 0.05
#: Gradient steps and Adam step size of the fit.
STEPS, LR = 600, 0.05


class FitError(ValueError):
    """Refused input (a test-split record) or nothing to fit."""


def _unstrict(d: dict) -> dict:
    return {k: (float(v) if v in ("nan", "inf", "-inf") else v) for k, v in d.items()}


def _open_text(path):
    """A text reader of ``path``, gzip'd (``.gz``) or not."""
    return gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8")


def load_records(paths: list, *, allow_test: bool = False, corpus=None) -> list:
    """Records of fit-input files (``scripts/collect_evidence.py`` output, or
    ``fit-weights --export-inputs``; JSON lines, gzip'd when the name ends in ``.gz``).
    A relative ``path`` of a record is resolved against ``corpus`` (default: the bundled corpus).

    Raises
    ------
    FitError
        When a record is of the test split and ``allow_test`` is False (the
        fit never sees the test split; evaluation passes ``allow_test=True``).
    """
    out = []
    root = Path(corpus or default_corpus())
    for p in paths:
        with _open_text(p) as f:
            for line in f:
                if not line.strip():
                    continue
                r = restore(json.loads(line, object_hook=_unstrict))  # lossless non-finite floats
                if r.get("split") == "test" and not allow_test:
                    raise FitError(f"{p}: {r['case']}/{r['variant']} is in the test split: never fitted on")
                if r.get("path") and not Path(r["path"]).is_absolute():
                    r["path"] = str(root / r["path"])
                out.append(r)
    return out


def sha256_of(path) -> str:
    """Hex SHA-256 of the file at ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_inputs(manifest) -> list:
    """The input files a checksum manifest lists, after checking each one's SHA-256.

    Parameters
    ----------
    manifest : path-like
        ``sha256sum`` format (``<hex digest>  <file name>`` per line, names relative to the
        manifest's folder; ``#`` comments allowed), e.g. ``docs/data/fit-inputs/SHA256SUMS``.

    Returns
    -------
    list[pathlib.Path]
        The listed files, in the manifest's order.

    Raises
    ------
    FitError
        When the manifest lists nothing, or a listed file is missing or has another digest
        (the message names the file and both digests).
    """
    manifest = Path(manifest)
    out = []
    for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        digest, name = line.split(None, 1)
        path = manifest.parent / name.strip().lstrip("*")
        if not path.is_file():
            raise FitError(f"{manifest}:{n}: {path} is missing")
        got = sha256_of(path)
        if got != digest.lower():
            raise FitError(f"{manifest}:{n}: {path} has SHA-256 {got}, the manifest records {digest}")
        out.append(path)
    if not out:
        raise FitError(f"{manifest}: lists no input")
    return out


def group_of(rec: dict) -> str:
    """CV group: ``op:<operator>`` for a mutant, ``family:<family>`` of the expected class otherwise."""
    feats = rec.get("features") or []
    if "generated" in feats:
        ops = [f for f in feats if f != "generated"]
        return "op:" + (ops[0].replace("-", "_") if ops else "?")
    exp = (rec.get("expected") or {}).get("classes") or ["?"]
    return "family:" + (CLASSES[exp[0]].family if exp[0] in CLASSES else "?")


def sample(rec: dict, table: EvidenceTable) -> dict | None:
    """One run as the fit sees it: the engine's verdict under ``table`` and, for
    a bug verdict, the cited evidence and the candidate classes; None when
    the run cannot be interpreted (no document, an error)."""
    from .reference import interpret

    if not rec.get("doc") or rec["diagnosis"].get("verdict") in ("error", "refused"):
        return None
    d = interpret(rec["doc"], path=rec["path"], differential=rec.get("differential"), table=table)
    exp = rec.get("expected") or {}
    s = {"case": rec["case"], "variant": rec["variant"], "group": group_of(rec), "split": rec.get("split"),
         "expected_verdict": exp.get("verdict"), "expected": list(exp.get("classes") or []), "verdict": d["verdict"],
         "classes": d["classes"], "signature": d["signature"]}
    if d["verdict"] == "bug":
        s["cited"] = [(e["id"], e["strength"]) for e in d["cited"]]
        s["allowed"] = [c for c in sorted(BUG_CLASSES) if d["signature"] in CLASSES[c].signatures]
    return s


class Design:
    """The (evidence, class) pairs of a table and each bug sample's feature matrix.

    Attributes
    ----------
    pairs : list[tuple[str, str]]
        Parameter index -> (evidence id, class); the ``*`` class of the
        ``candidate`` row is expanded into one pair per bug class (a per-class bias).
    theta0 : ndarray, shape (len(pairs),), float64
        The table's weights.
    """

    def __init__(self, table: EvidenceTable, *, dense: bool = False):
        self.table = table
        self.dense = dense
        self.pairs = []
        for eid, ws in table.rows.items():
            if table.modes.get(eid) not in ("allowed", "add", "lift", "late"):
                continue
            for c, w in ws.items():
                for cc in (sorted(BUG_CLASSES) if c == "*" else [c]):
                    if cc in BUG_CLASSES:
                        self.pairs.append((eid, cc))
        if dense:
            # every evidence id may also move every bug class (prior weight 0): lift rows then
            # raise (or lower) any candidate, so the data can add associations the hand-set table lacks
            # and each signature row may weigh every class the taxonomy allows under that signature
            have = set(self.pairs)
            for eid in table.rows:
                extra = self._dense_targets(eid)
                self.pairs += [(eid, c) for c in extra if (eid, c) not in have]
        self.index = {p: i for i, p in enumerate(self.pairs)}
        self.theta0 = np.array([self.table.rows[e].get(c, self.table.rows[e].get("*", 0.0)) if c in self.table.rows[e]
                                or "*" in self.table.rows[e] else 0.0 for e, c in self.pairs], dtype=np.float64)

    def _dense_targets(self, eid) -> list:
        """Classes a dense design adds for ``eid`` beyond the table's rows."""
        if self.table.modes.get(eid) == "lift":
            return sorted(BUG_CLASSES)
        if eid.startswith("signature:"):
            sig = eid.split(":", 1)[1]
            return sorted(c for c in BUG_CLASSES if sig in CLASSES[c].signatures)
        return []

    def _w(self, eid, c):
        ws = self.table.rows[eid]
        return ws.get(c, ws.get("*", 0.0))

    def features(self, s: dict) -> tuple:
        """(candidate classes, F) for a bug sample: F[k, j] is the strength with
        which pair j feeds class k's logit, shape (len(K), len(pairs)), following
        :func:`defects4warp.engines.evidence.fold`'s modes."""
        rows, modes = self.table.rows, self.table.modes
        cand, contrib = [], {}

        def put(c, eid, strength, only_existing):
            if c not in BUG_CLASSES or (only_existing and c not in cand):
                return
            if c not in cand:
                cand.append(c)
            j = self.index.get((eid, c))
            if j is None:
                return
            contrib[(c, j)] = contrib.get((c, j), 0.0) + strength

        for stage in ("add", "lift", "late"):
            for eid, strength in s["cited"]:
                mode = modes.get(eid, "add")
                if (mode if mode != "allowed" else "add") != stage:
                    continue
                targets = list(rows.get(eid, {}))
                if self.dense:
                    targets += [c for c in self._dense_targets(eid) if c not in targets]
                for c in targets:
                    for cc in (s["allowed"] if c == "*" else [c]):
                        if mode == "allowed" and cc not in s["allowed"]:
                            continue
                        put(cc, eid, strength, stage == "lift")
        F = np.zeros((len(cand), len(self.pairs)))
        pos = {c: k for k, c in enumerate(cand)}
        for (c, j), v in contrib.items():
            F[pos[c], j] += v
        return cand, F


def _softmax(z):
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


def _nll_grad(theta, data, lam, prior):
    """Mean negative log-likelihood of the expected classes, its gradient, plus the L2 term."""
    g = np.zeros_like(theta)
    nll = 0.0
    n = 0
    for cand, F, y in data:
        if not y.any():
            continue
        p = _softmax(F @ theta)
        mass = float(p[y].sum())
        nll -= math.log(max(mass, 1e-300))
        q = np.where(y, p, 0.0) / max(mass, 1e-300)
        g += F.T @ (p - q)
        n += 1
    n = max(n, 1)
    d = theta - prior
    return nll / n + 0.5 * lam * float(d @ d), g / n + lam * d


def fit_theta(data, prior, lam=LAMBDA, steps=STEPS, lr=LR):
    """Adam on :func:`_nll_grad` from ``prior``; returns the fitted weights."""
    theta = prior.copy()
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    for t in range(1, steps + 1):
        _, g = _nll_grad(theta, data, lam, prior)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return theta


def fit_beta(data, theta0):
    """The temperature of the hand-set weights with the best likelihood on ``data``."""
    best = min(BETAS, key=lambda b: _nll_grad(b * theta0, data, 0.0, theta0)[0])
    return float(best)


def _encode(design, samples):
    out = []
    for s in samples:
        cand, F = design.features(s)
        y = np.array([c in s["expected"] for c in cand], dtype=bool)
        out.append((cand, F, y))
    return out


def predict(model: str, design: Design, s: dict, theta=None) -> dict:
    """{class: probability} of a bug sample under ``model`` (``v3`` normalised, else softmax of F theta)."""
    cand, F = design.features(s)
    if not cand:
        return {}
    z = F @ (design.theta0 if theta is None else theta)
    if model == "v3":
        z = np.maximum(z, 0.0)
        tot = z.sum() or 1.0
        return {c: float(v / tot) for c, v in zip(cand, z)}
    return {c: float(p) for c, p in zip(cand, _softmax(z))}


def metrics(preds: list, *, bins: int = 10) -> dict:
    """Top-1, top-3, Brier and reliability of ``[(probabilities, expected classes)]``."""
    n = len(preds)
    if not n:
        return {"runs": 0}
    top1 = top3 = 0
    brier = 0.0
    rel = [[0.0, 0, 0] for _ in range(bins)]
    for probs, expected in preds:
        ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
        ids = [c for c, _ in ranked]
        hit = bool(ids) and ids[0] in expected
        top1 += hit
        top3 += any(c in expected for c in ids[:3])
        truth = next((c for c in ids if c in expected), expected[0] if expected else None)
        brier += sum((p - (1.0 if c == truth else 0.0)) ** 2 for c, p in probs.items()) + (
            1.0 if truth not in probs else 0.0)
        conf = ranked[0][1] if ranked else 0.0
        b = min(int(conf * bins), bins - 1)
        rel[b][0] += conf
        rel[b][1] += int(hit)
        rel[b][2] += 1
    return {"runs": n, "top1": top1 / n, "top3": top3 / n, "brier": brier / n,
            "reliability": [{"bin": [i / bins, (i + 1) / bins], "confidence": (c / k if k else None),
                             "accuracy": (h / k if k else None), "count": k} for i, (c, h, k) in enumerate(rel)]}


def cross_validate(samples: list, design: Design, *, groups_prefix: str, lam: float = LAMBDA,
                   dense: Design | None = None) -> dict:
    """Leave-one-group-out over the groups starting with ``groups_prefix``
    (``family:`` or ``op:``); the training set is every other bug sample.
    With ``dense`` (a :class:`Design` with ``dense=True``) a fourth model,
    ``fitted_dense``, is fitted on it."""
    bug = [s for s in samples if s["verdict"] == "bug" and s["expected_verdict"] == "bug"]
    groups = sorted({s["group"] for s in bug if s["group"].startswith(groups_prefix)})
    models = ("v3", "temperature", "fitted") + (("fitted_dense",) if dense is not None else ())
    preds = {k: [] for k in models}
    per_group = {}
    for g in groups:
        test = [s for s in bug if s["group"] == g]
        train = [s for s in bug if s["group"] != g]
        data = _encode(design, train)
        beta = fit_beta(data, design.theta0)
        theta = fit_theta(data, beta * design.theta0, lam=lam)
        gp = {k: [] for k in models}
        if dense is not None:
            theta_d = fit_theta(_encode(dense, train), beta * dense.theta0, lam=lam)
        for s in test:
            gp["v3"].append((predict("v3", design, s), s["expected"]))
            gp["temperature"].append((predict("softmax", design, s, beta * design.theta0), s["expected"]))
            gp["fitted"].append((predict("softmax", design, s, theta), s["expected"]))
            if dense is not None:
                gp["fitted_dense"].append((predict("softmax", dense, s, theta_d), s["expected"]))
        for k in preds:
            preds[k] += gp[k]
        per_group[g] = {k: metrics(v)["top1"] for k, v in gp.items()} | {"runs": len(test), "beta": beta}
    return {"groups": per_group, **{k: metrics(v) for k, v in preds.items()}}


def write_table(path, table: EvidenceTable, design: Design, theta, *, scores: str, fit_meta: dict,
                source: str, base_path=None) -> None:
    """Write a table with ``theta``'s weights (atomically); its other rows, row order, description and
    the priors' sources are those of the table fitted from (``base_path``, default the live
    :data:`TABLE_PATH`); no_bug rows unchanged. The rows of a
    fitted evidence id for a class the fit has no weight for (a no_bug class a source rule
    names: the fold and the fit weigh bug classes only) are kept in their place among that
    id's rows with weight 0: they say which classes the evidence points at
    (:func:`defects4warp.engines.evidence.evidence_classes`) and move no score."""
    import os
    import tempfile

    import yaml

    base = yaml.safe_load(Path(base_path or TABLE_PATH).read_text(encoding="utf-8"))
    old = {(r["id"], r["class"]): r for r in base["rows"]}
    rows = []
    done = set()
    for (eid, c), w in zip(design.pairs, theta):
        r0 = old.get((eid, c)) or old.get((eid, "*"))
        rows.append({"id": eid, "class": c, "weight": round(float(w), 6), "mode": table.modes[eid],
                     "source": f"{source}; prior: {r0['source']}" if r0 else source})
        done.add(eid)
    fitted = set(design.pairs)
    for i, r in enumerate(base["rows"]):
        if r["id"] in done and r["class"] != "*" and (r["id"], r["class"]) not in fitted:
            # before the first fitted row of its id whose class comes after it in the base table
            later = {x["class"] for x in base["rows"][i + 1:] if x["id"] == r["id"]}
            at = next((k for k, x in enumerate(rows) if x["id"] == r["id"] and x["class"] in later), None)
            if at is None:
                at = max(k for k, x in enumerate(rows) if x["id"] == r["id"]) + 1
            rows.insert(at, dict(r, weight=0.0, source=f"{r['source']}; not fitted, weight 0 (a class the fold and "
                                 "the fit never weigh; the row says which classes the evidence points at)"))
    rows += [r for r in base["rows"] if r["id"] not in done]
    doc = {"version": base.get("version", 1), "scores": scores, "description": base.get("description"),
           "fit": fit_meta}
    doc.update({k: base[k] for k in ("refusals", "release_changes") if k in base})
    doc["rows"] = rows
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".table-", suffix=".yaml", dir=d)
    from ..jsonio import normal_mode

    normal_mode(fd)  # the umask's mode (0644 under 022), not mkstemp's 0600
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False, width=160)
    os.replace(tmp, path)
    clear_cache()  # the next load_table() reads what was just written


def run_fit(data_paths: list, *, lam: float = LAMBDA, table_path=None) -> dict:
    """Cross-validate the three models and fit the final weights on every record.

    Parameters
    ----------
    data_paths : list[path-like]
        Fit-input files (:func:`load_records`).
    lam : float
        L2 strength (default :data:`LAMBDA`).
    table_path : path-like, optional
        The table to start from (its structure and weights are the prior; default the live
        :data:`TABLE_PATH`).

    Returns
    -------
    dict
        ``cv_family`` and ``cv_operator`` (:func:`cross_validate`), ``beta``,
        ``theta`` (fitted on all), ``design``, ``samples``, ``date``, ``data``,
        ``sha256`` (of each input), ``table`` (the path started from).
    """
    table = load_table(table_path)
    recs = load_records(data_paths)
    samples = [s for s in (sample(r, table) for r in recs) if s is not None]
    if not samples:
        raise FitError("no usable records")
    design = Design(table)
    dense = Design(table, dense=True)
    out = {"date": _dt.date.today().isoformat(), "data": [str(p) for p in data_paths],
           "sha256": {str(p): sha256_of(p) for p in data_paths}, "table": str(table_path or TABLE_PATH),
           "records": len(recs), "samples": len(samples), "lambda": lam}
    out["cv_family"] = cross_validate(samples, design, groups_prefix="family:", lam=lam, dense=dense)
    out["cv_operator"] = cross_validate(samples, design, groups_prefix="op:", lam=lam, dense=dense)
    bug = [s for s in samples if s["verdict"] == "bug" and s["expected_verdict"] == "bug"]
    data = _encode(design, bug)
    out["beta"] = fit_beta(data, design.theta0)
    out["theta"] = fit_theta(data, out["beta"] * design.theta0, lam=lam)
    out["theta_dense"] = fit_theta(_encode(dense, bug), out["beta"] * dense.theta0, lam=lam)
    out["design_dense"] = dense
    out["design"] = design
    out["samples_list"] = samples
    out["bug_runs"] = len(bug)
    return out
