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


@pytest.fixture(autouse=True, scope="session")
def _every_verb_imported():
    """The command line imports a verb's module when the verb is first used (defects4warp.cli.VERBS); the
    tests import them all at the start, as the command line did before, so that a test monkeypatching a
    name a verb module imports (``from ..runner import ...``) never becomes that module's binding for
    the tests after it."""
    from defects4warp.cli import main

    for name in list(main.commands):
        main.commands[name]
    yield
