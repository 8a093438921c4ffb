"""Every bundled case is verified by measurement on the installed Warp.

This is ``defects4warp validate`` as a test: one test per case, so a failure
names the case and says what was measured.
"""

import pytest

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.run.runner import installed_warp_version, plan
from defects4warp.validate import validate_cases

# the first test's setup validates every selected case (about 5-9 minutes on 2 cores), over the suite's
# per-test limit of 600 s; a hung variant is still killed by validate_cases' own 300 s limit
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

CASES, _ = load_corpus(default_corpus())
WARP = installed_warp_version()


@pytest.fixture(scope="module")
def validated(request):
    """The cases this session selected (all, or those ``-k`` keeps) validated in one call, two
    checks at a time across cases, so a case of one variant leaves no core idle as one call per
    case did: case id -> CaseCheck."""
    picked = {item.callspec.params["case"].id for item in request.session.items
              if item.module is request.module and "case" in getattr(getattr(item, "callspec", None), "params", {})}
    cost = _committed_seconds()
    # longest first (checks are started in the order given, fixed twins first): a case that takes a minute to
    # compile (Warp's FEM examples) started last would leave the other core idle at the end
    chosen = sorted((c for c in CASES if c.id in picked), key=lambda c: -cost.get(c.id, 0.0))
    return {cc.case: cc for cc in validate_cases(chosen, device="cpu", jobs=2, timeout_s=300)}


def _committed_seconds() -> dict:
    """Case id -> seconds its checks took in the committed validation of this release
    (docs/data/validation-<release>.json), for the order of the checks only; {} where there is none."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "data" / f"validation-{WARP}.json"
    try:
        checks = json.loads(path.read_text())["releases"][WARP]["checks"]
    except (OSError, ValueError, KeyError):
        return {}
    out = {}
    for c in checks:
        out[c["case"]] = out.get(c["case"], 0.0) + float(c.get("seconds") or 0.0)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_validates(case, validated):
    """The independent oracle confirms every expectation on this release (an
    unresolved check is not a pass)."""
    checks = validated[case.id].variants
    assert len(checks) == len(plan([case]))
    failures = [f"{c.variant}@{c.scale}: {c.status}: {c.message}" for c in checks if c.status in ("failed", "unresolved")]
    assert not failures, "; ".join(failures)
    if checks and all(c.status == "skipped" for c in checks):
        pytest.skip(f"{case.id}: " + checks[0].message)  # e.g. requires: [torch], not installed here
    assert any(c.expected for c in checks), f"{case.id} has no expectation for Warp {WARP}"


BREADTH_CLASSES = ["overwrite", "struct_overwrite", "offtape_mutation", "tape_scope", "missing_requires_grad",
                   "missing_tape_zero", "stale_gradient_read", "double_count", "seed_mismatch", "rng_replay", "truncation",
                   "inplace_math", "component_reassign", "dynamic_loop", "nonsmooth_nan", "where_nan",
                   "custom_adjoint_error", "copy_adjoint", "warp_adjoint_bug"]


def test_corpus_breadth():
    """The coverage the corpus promises (docs/authoring.md, README)."""
    from collections import Counter

    from defects4warp.taxonomy import CLASSES

    per_class = Counter(c for case in CASES for c in set(case.classes))
    assert len(CASES) >= 110
    assert set(CLASSES) <= set(per_class), sorted(set(CLASSES) - set(per_class))
    assert all(per_class[c] >= 3 for c in CLASSES), {c: per_class[c] for c in CLASSES if per_class[c] < 3}
    # the shapes users write: a training script with main() next to the modules it calls
    user_shaped = [c for c in CASES if any((v.path / "train.py").is_file() for v in c.variants)]
    assert len(user_shaped) >= 20
    assert sum(1 for c in CASES if c.provenance.startswith("http")) >= 30
    assert sum(1 for c in CASES for v in c.variants
               if v.name != "fixed" and any(e.verdict == "no_bug" for e in v.expectations)) >= 30
    assert sum(1 for c in CASES if c.split == "test") >= 20
    multi_file = [c for c in CASES if any(len(list(v.path.glob("*.py"))) > 1 for v in c.variants)]
    dormant = [c for c in CASES if any(e.scale == "production" and e.verdict == "bug"
                                       for v in c.variants for e in v.expectations)]
    no_bug = [c for c in CASES if all(e.verdict == "no_bug" for v in c.variants if v.name != "fixed"
                                      for e in v.expectations)]
    public = [c for c in CASES if c.provenance != "original"]
    two_bugs = [c for c in CASES if any(e.verdict == "bug" and len(e.classes) > 1
                                        for v in c.variants for e in v.expectations)]
    assert len(multi_file) >= 8
    assert len(dormant) >= 5
    assert len(no_bug) >= 8
    assert len(public) >= 12
    assert len(two_bugs) >= 2
    domains = {c.domain for c in CASES}
    assert len(domains) >= 15
