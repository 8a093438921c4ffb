"""Converted cases (``tags.form: both``): the Problem captured from each
variant's script equals its adapter's (params matched by shape and value,
objective, gradient; tolerances in harness/corpus/conversion.py).

Every converted variant is checked by ``defects4warp maint conversion --json
docs/data/conversions.json`` (about 20 minutes on 2 busy cores); the fast test
below checks that this committed measurement covers every converted variant
of the corpus and found each equal, and the slow test re-measures a sample of
six cases chosen to cover float32 and float64, vector dtypes, several params
and files, a helper module holding the params, and a variant this release
refuses to build (both programs alike).
"""

import json
from pathlib import Path

import pytest

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.corpus.conversion import GRADIENT_RTOL, OBJECTIVE_RTOL, compare_case, match_params

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data" / "conversions.json"

#: Re-measured in the slow test (the rest: docs/data/conversions.json).
SAMPLE = ("scanner-axis-scale-calibration", "bearing-vibration-classifier", "drone-fleet-hover-thrust",
          "harbour-buoy-ballast-drift", "cloth-banner-wind-drape", "glyph-sdf-neural-field")


def converted():
    cases, errors = load_corpus(default_corpus())
    assert errors == []
    return [c for c in cases if c.form == "both"]


def test_at_least_30_cases_are_converted():
    assert len(converted()) >= 30


def test_committed_conversion_measurement_covers_every_converted_variant():
    doc = json.loads(DATA.read_text())
    for c in converted():
        assert c.id in doc, f"{c.id} is tagged form: both but not in {DATA.name}; run defects4warp maint conversion"
        for v in c.variants:
            r = doc[c.id].get(v.name)
            assert r is not None, (c.id, v.name)
            assert r["agrees"], (c.id, v.name, r["reasons"])
            if r.get("refused"):  # this release refuses both programs alike (a refused label)
                assert any(e.verdict == "refused" for e in v.expectations), (c.id, v.name)
                continue
            assert r["objective"]["relative_difference"] <= OBJECTIVE_RTOL
            assert r["pairs"] and not r["unmatched_adapter"] and not r["unmatched_captured"]
            assert all(g["relative_difference"] <= GRADIENT_RTOL for g in r["gradient"].values())
            assert r["capture"]["params"], (c.id, v.name)


def test_match_params_by_shape_and_value():
    import numpy as np

    a = {"x": np.array([1.0, 2.0]), "y": np.array([1.0, 2.0, 3.0]), "z": np.zeros(2)}
    c = {"train.py:9": np.array([1.0, 2.0, 3.0]), "train.py:8": np.array([0.0, 0.0]),
         "train.py:7": np.array([1.0, 2.5])}
    pairs, uc, ua = match_params(c, a)
    assert pairs == {"train.py:9": "y", "train.py:8": "z"}
    assert uc == ["train.py:7"] and ua == ["x"]


@pytest.mark.slow
@pytest.mark.parametrize("case_id", SAMPLE)
def test_capture_equals_adapter(case_id):
    [case] = [c for c in converted() if c.id == case_id]
    res = compare_case(case)
    assert set(res) == {v.name for v in case.variants}
    for name, r in res.items():
        assert r["agrees"], (name, r["reasons"])
        if r.get("refused"):
            assert any(e.verdict == "refused" for e in case.variant(name).expectations)
            continue
        assert len(r["pairs"]) >= 1
        assert r["objective"]["relative_difference"] <= OBJECTIVE_RTOL
