"""The probe protocol: the probe list written once (:data:`defects4warp.probes.CATALOGUE`)."""

from __future__ import annotations

import pytest

from defects4warp import probes
from defects4warp.engines import reference, release


def test_the_engine_lists_are_the_catalogues():
    """The engine's, the worker's, the differential's and the assessed lists come from the catalogue."""
    assert reference.PROBES == ("determinism", "trace", "noise", "fd", "sweep", "reference", "nan_scan", "horizon",
                                "train", "launches")
    assert probes.DEFAULT_PROBES == ("determinism", "noise", "fd", "sweep", "reference", "nan_scan", "tracker",
                                     "horizon", "train", "launches")
    assert probes.ASSESSED == ("determinism", "noise", "nan_scan", "fd", "sweep", "tracker", "horizon", "train",
                               "launches", "trace")
    assert release.DIFFERENTIAL_PROBES["probes"] == ["determinism", "noise", "fd"]
    assert reference.ReferenceEngine.options["probes"] == list(reference.PROBES)


@pytest.mark.parametrize("entry", probes.CATALOGUE, ids=lambda e: e.name)
def test_catalogue_entry_is_registered(entry):
    """Every catalogue entry is a registered probe, and an assessed one has an assessor."""
    probes.load()
    assert probes.REGISTRY[entry.name].name == entry.name
    if entry.assessed is not None:
        assert entry.name in probes.ASSESSORS, f"{entry.name} is assessed but registers no @assessor"


def test_every_registered_probe_is_in_the_catalogue():
    """No probe registers itself outside the one list."""
    assert set(probes.load()) == set(probes.MODULES)
    assert len(set(probes.MODULES)) == len(probes.MODULES)
    assert sorted(e.assessed for e in probes.CATALOGUE if e.assessed) == list(range(1, len(probes.ASSESSED) + 1))
