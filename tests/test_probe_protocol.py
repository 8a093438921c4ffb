"""The probe protocol: the probe list written once (:data:`defects4warp.probes.CATALOGUE`), its measuring halves
registered in :mod:`defects4warp.probes` and its interpretation halves in :mod:`defects4warp.engines.assess`."""

from __future__ import annotations

import pytest


from defects4warp import probes
from defects4warp.engines import assess, reference, release


def test_the_engine_lists_are_the_catalogues():
    """The engine's, the worker's, the differential's and the assessed lists come from the catalogue."""
    assert reference.PROBES == ("determinism", "trace", "noise", "fd", "sweep", "reference", "nan_scan", "horizon",
                                "train", "launches")
    assert probes.DEFAULT_PROBES == ("determinism", "noise", "fd", "sweep", "reference", "nan_scan", "tracker",
                                     "horizon", "train", "launches")
    assert probes.ASSESSED == ("determinism", "noise", "nan_scan", "fd", "sweep", "tracker", "horizon", "train",
                               "launches", "trace", "source", "builtins", "release", "ablation")
    assert release.DIFFERENTIAL_PROBES["probes"] == ["determinism", "noise", "fd"]
    assert reference.ReferenceEngine.options["probes"] == list(reference.PROBES)


@pytest.mark.parametrize("entry", probes.CATALOGUE, ids=lambda e: e.name)
def test_catalogue_entry_is_registered(entry):
    """Every measured catalogue entry is a registered probe, and an assessed one has an assessor (the module of
    its name in :mod:`defects4warp.engines.assess`)."""
    probes.load()
    assess.load()
    if entry.measured:
        assert probes.get(entry.name).name == entry.name
    else:
        assert entry.name not in probes.REGISTRY and entry.name not in probes.MODULES
    if entry.assessed is not None:
        assert entry.name in assess.ASSESSORS, f"{entry.name} is assessed but registers no @assessor"
        assert assess.ASSESSORS[entry.name].__module__ == f"{assess.__name__}.{entry.name}"


def test_every_registered_probe_is_in_the_catalogue():
    """No probe registers itself outside the one list."""
    assert set(probes.load()) - set(probes.REQUESTED) == set(probes.MODULES)
    assert set(probes.MODULES) | set(probes.REQUESTED) == {e.name for e in probes.CATALOGUE if e.measured}
    assert len(set(probes.MODULES)) == len(probes.MODULES) and not set(probes.MODULES) & set(probes.REQUESTED)


def test_a_requested_probe_is_on_no_list_and_asked_for_by_a_listed_one():
    """A requested probe (the ablation) runs only when a listed probe asks: on no list, not imported by load()."""
    assert probes.REQUESTED == ("ablation",)
    for e in probes.CATALOGUE:
        if e.requested_by:
            assert not (e.engine or e.worker or e.differential) and e.requested_by in probes.ENGINE_PROBES
    assert sorted(e.assessed for e in probes.CATALOGUE if e.assessed) == list(range(1, len(probes.ASSESSED) + 1))


# -- the evidence each probe may cite (generated checks, one per citing party / row / probe) -------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from defects4warp.evidence_table import load_table  # noqa: E402

probes.load()
assess.load()  # every assessor declares its citations
TABLE = load_table()
ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ("1.19.0", "1.12.1")
LABELS = sorted({label for by in assess.CITES.values() for label in by})


@pytest.mark.parametrize("party", sorted(assess.CITES))
def test_check_declared_ids_exist_in_the_table(party):
    """Every id (or family ``prefix:*``) a party declares has a row in the evidence table."""
    missing = [(label, p) for label, ids in assess.CITES[party].items() for p in ids
               if not any(assess.id_matches(eid, p) for eid in TABLE.rows)]
    assert not missing, f"{party} declares evidence the table has no row for: {missing}"


@pytest.mark.parametrize("eid", sorted(TABLE.rows))
def test_check_table_row_declared_by_exactly_one_party(eid):
    """Every evidence-table row is declared by exactly one citing party, under one probe."""
    owners = [(party, label) for party, by in assess.CITES.items() for label, ids in by.items()
              if any(assess.id_matches(eid, p) for p in ids)]
    assert len(owners) == 1, f"evidence table row {eid} is declared by {owners or 'no party'}"


@pytest.fixture(scope="module")
def bundle_citations() -> dict:
    """probe -> {evidence id: count} cited when the committed measurement bundles are re-interpreted
    (as ``pages --rescore`` does, whether or not the bundle is current)."""
    from defects4warp.corpus.case import load_corpus
    from defects4warp.report.engine_matrix import bundle_path, read, read_bundle
    from defects4warp.engines import get_engine
    from defects4warp.run.runner import interpret_item, plan

    cases, _ = load_corpus(ROOT / "corpus", "*")
    engine = get_engine("reference")
    out = {}
    for v in BUNDLED:
        path = ROOT / "docs" / "data" / f"engine-{v}.json"
        old = read(path)
        items = {(it.case.id, it.variant.name, it.scale, it.program): it
                 for it in plan(cases, programs=(old.get("corpus") or {}).get("programs", "auto"))}
        for e in read_bundle(bundle_path(path))[1]:
            it = items.get((e["case"], e["variant"], e["scale"], e["program"]))
            if it is None:
                continue
            res = interpret_item(engine, it, e["record"], old.get("warp_version") or v)
            for c in res["diagnosis"].get("cited") or []:
                out.setdefault(c["probe"], {}).setdefault(c["id"], 0)
                out[c["probe"]][c["id"]] += 1
    return out


@pytest.mark.slow
@pytest.mark.parametrize("label", LABELS)
def test_check_bundle_citations_are_declared(label, bundle_citations):
    """Every id cited under probe ``label`` when the committed bundles are re-interpreted is one it declared."""
    cited = bundle_citations.get(label, {})
    undeclared = {eid: n for eid, n in cited.items() if not assess.declared(eid, label)}
    assert not undeclared, f"probe {label} cites evidence it does not declare: {json.dumps(undeclared)}"


@pytest.mark.slow
def test_check_bundle_citations_come_from_declared_probes(bundle_citations):
    """No evidence in the bundles is cited under a probe name no party declares citations for;
    and the bundles cite many ids (a guard against an empty re-interpretation)."""
    assert set(bundle_citations) <= set(LABELS), sorted(set(bundle_citations) - set(LABELS))
    n_ids = sum(len(v) for v in bundle_citations.values())
    assert n_ids >= 80, n_ids  # 88 (probe, id) pairs in the bundles of 2026-12-04


@pytest.mark.parametrize("name", probes.ASSESSED)
def test_check_assessor_takes_doc_and_context(name):
    """Every assessor has the one form ``assess(doc, ctx) -> Assessment``; on an empty document with an
    empty context it says something or nothing, but never fails."""
    import inspect

    fn = assess.ASSESSORS[name]
    params = list(inspect.signature(fn).parameters.values())
    assert [p.name for p in params[:2]] == ["doc", "ctx"], f"{name}: {fn.__qualname__}{inspect.signature(fn)}"
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:]), f"{name}: knobs are keyword-only"
    ctx = assess.AssessContext(table=TABLE)
    for prev in probes.ASSESSED[: probes.ASSESSED.index(name)]:
        ctx.assessed[prev] = assess.ASSESSORS[prev]({}, ctx)
    assert isinstance(fn({}, ctx), assess.Assessment)


@pytest.mark.parametrize("half", reference.BUG_EVIDENCE, ids=lambda f: f.__name__)
def test_check_bug_evidence_half_takes_doc_and_context(half):
    """Every bug-evidence half has the form ``(doc, ctx) -> Assessment``, and cites only declared ids
    on an empty document with every signature."""
    import inspect

    assert [p.name for p in inspect.signature(half).parameters.values()] == ["doc", "ctx"]
    for sig in reference.SIGNATURE_ROWS:
        ctx = assess.AssessContext(table=TABLE, signature=sig)
        for name in probes.ASSESSED:
            ctx.assessed[name] = assess.ASSESSORS[name]({}, ctx)
        a = half({}, ctx)
        assert isinstance(a, assess.Assessment)
        assert all(assess.declared(e.id, e.probe) for e in a.cited), [e.id for e in a.cited]
