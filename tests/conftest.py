from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="session")
def programs():
    return PROGRAMS


@pytest.fixture(autouse=True, scope="session")
def _results_outside_the_checkout(tmp_path_factory):
    """Runs invoked by tests store their history in a temporary folder."""
    mp = pytest.MonkeyPatch()
    mp.setenv("DEFECTS4WARP_RESULTS", str(tmp_path_factory.mktemp("results")))
    yield
    mp.undo()
