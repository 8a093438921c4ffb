"""Every bundled case is verified by measurement on the installed Warp.

This is ``defects4warp validate`` as a test: one test per case, so a failure
names the case and says what was measured.
"""

import pytest

from harness.case import default_corpus, load_corpus
from harness.runner import installed_warp_version, plan
from harness.validate import validate_item

pytestmark = pytest.mark.slow

CASES, _ = load_corpus(default_corpus())
WARP = installed_warp_version()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_validates(case):
    checks = [validate_item(it, "cpu", WARP, timeout_s=300) for it in plan([case])]
    failures = [f"{c.variant}@{c.scale}: {c.message}" for c in checks if not c.ok]
    assert not failures, "; ".join(failures)
    assert any(c.expected for c in checks), f"{case.id} has no expectation for Warp {WARP}"


def test_corpus_breadth():
    classes = {c for case in CASES for c in case.classes}
    assert len(CASES) >= 12
    assert len(classes - {"correct"}) >= 10
    assert "copy_adjoint" in classes
    assert sum(c.provenance != "original" for c in CASES) >= 2
    assert classes & {"piecewise_constant", "stochastic_forward", "nonsmooth_tie", "fd_precision",
                      "chaotic_horizon", "surrogate_gradient"}
