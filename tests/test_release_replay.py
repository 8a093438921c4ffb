"""The release differential's 1.13.0 entry: a replayed atomic counter, and a copy
whose destination a kernel then stores into.

Warp 1.13 made array-store adjoints consume (read and zero) the output
adjoint. A kernel whose store index is the value of ``wp.atomic_add`` on a
counter, without ``@wp.func_replay``, replays the counter in the backward pass
and its replayed stores land on colliding slots: before 1.13 each reads the
same adjoint, from 1.13 only the first one does. So the gradient of a
replay_side_effect program changes at 1.13.0, as an overwrite's does; the
evidence table's ``release_first_change:1.13.0`` rows named only overwrite,
double_count and stale_gradient_read, and on Warp <= 1.12.1 the differential
outweighed the source finding (``rule:atomic_index``): replay_side_effect
cases ranked ``overwrite`` first on 1.0.2-1.9.1.

Likewise a taped ``wp.clone``/``wp.copy`` whose destination a kernel then
stores into: before 1.17 the copy's adjoint assigns the destination's adjoint
to the source, after the store's adjoint ran; before 1.13 that adjoint is
still there (the gradient passes as the identity), from 1.13 it has been
consumed (zero). So copy_adjoint is also named by the 1.13.0 entry, where the
traced call made a copy (``release_first_change:1.13.0:no_copies`` where it
made none, as for 1.17.0).
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from defects4warp.envs import MARKER, cache_root


def test_the_1_13_entry_supports_replay_side_effect_in_both_tables():
    from defects4warp import evidence_table as evidence

    v3 = evidence.load_table(evidence.TABLE_PATH.with_name("evidence_table_v3.yaml"))
    shipped = evidence.load_table()
    eid = "release_first_change:1.13.0"
    assert "replay_side_effect" in evidence.evidence_classes(eid, shipped)
    w = shipped.weights(eid)
    assert w["replay_side_effect"] == pytest.approx(w["double_count"])
    assert v3.weights(eid)["replay_side_effect"] * 8.0 == pytest.approx(w["replay_side_effect"], rel=1e-6)


def test_the_1_13_entry_names_copy_adjoint_only_where_the_call_made_a_copy():
    from defects4warp.evidence_table import evidence_classes
    from defects4warp.engines.assess import release

    assert "copy_adjoint" in evidence_classes("release_first_change:1.13.0")
    assert evidence_classes("release_first_change:1.13.0:no_copies") == (
        "overwrite", "double_count", "stale_gradient_read", "replay_side_effect")
    diff = {"current": "1.9.1", "other": "1.19.0", "direction": "newer", "first_change": "1.13.0",
            "compared": {"1.19.0": {"objective_same": True, "gradient_changed": True, "b_agrees": True,
                                    "relative_change": 0.15}}}
    assert [e.id for e in release.assess_differential(diff, copies=0).cited] == ["release_first_change:1.13.0:no_copies"]
    assert [e.id for e in release.assess_differential(diff, copies=3).cited] == ["release_first_change:1.13.0"]


def test_a_copy_on_the_tape_with_a_change_at_1_13_ranks_copy_adjoint_first():
    from defects4warp.evidence_table import load_table
    from defects4warp.engines.evidence import fold, rank
    from defects4warp.engines.assess import Evidence

    table = load_table()
    classes = ["overwrite", "double_count", "stale_gradient_read", "copy_adjoint", "replay_side_effect"]
    base = [Evidence("candidate", "engine"), Evidence("signature:subtly_wrong", "fd"),
            Evidence("launch_all_kernels_pass", "launches"), Evidence("release_first_change:1.13.0", "release")]
    ranked = rank(fold(base + [Evidence("rule:copy_on_tape", "source")], table, classes)[0], table.scores)
    assert ranked[0]["id"] == "copy_adjoint" and ranked[1]["id"] == "overwrite"
    # the same change at 1.13 without the source finding of a copy recorded on the tape: overwrite first
    assert rank(fold(base, table, classes)[0], table.scores)[0]["id"] == "overwrite"


def test_a_counter_index_with_a_change_at_1_13_ranks_replay_side_effect_first():
    from defects4warp.evidence_table import load_table
    from defects4warp.engines.evidence import fold, rank
    from defects4warp.engines.assess import Evidence

    table = load_table()
    classes = ["overwrite", "double_count", "stale_gradient_read", "replay_side_effect", "dynamic_loop"]
    ev = [Evidence("candidate", "engine"), Evidence("rule:atomic_index", "source"),
          Evidence("release_first_change:1.13.0", "release")]
    weights, _ = fold(ev, table, classes)
    ranked = rank(weights, table.scores)
    assert ranked[0]["id"] == "replay_side_effect"
    # without the source finding the change at 1.13 still points at overwrite first
    weights, _ = fold([ev[0], ev[2]], table, classes)
    assert rank(weights, table.scores)[0]["id"] == "overwrite"


_COMPACTION = textwrap.dedent("""
    import json, numpy as np, warp as wp
    wp.config.quiet = True

    @wp.kernel
    def compact(x: wp.array(dtype=float), count: wp.array(dtype=int), out: wp.array(dtype=float)):
        i = wp.tid()
        if x[i] > 0.0:
            s = wp.atomic_add(count, 0, 1)
            out[s] = 2.0 * x[i]

    @wp.kernel
    def total(out: wp.array(dtype=float), w: wp.array(dtype=float), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, w[i] * out[i])

    x = wp.array(np.array([1.0, -1.0, 2.0, 3.0, -2.0, 0.5, -0.1, 4.0], dtype=np.float32), requires_grad=True)
    w = wp.array(np.arange(1, 17, dtype=np.float32))
    count = wp.zeros(1, dtype=int)
    out = wp.zeros(16, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(compact, dim=8, inputs=[x, count], outputs=[out], device="cpu")
        wp.launch(total, dim=16, inputs=[out, w], outputs=[loss], device="cpu")
    tape.backward(loss)
    print("RESULT " + json.dumps({"warp": wp.config.version, "grad": x.grad.numpy().tolist()}))
""")


@pytest.mark.slow
def test_a_replayed_counter_gradient_changes_at_1_13(tmp_path):
    """Measured: every replayed store reads slot 0's adjoint (w[0] = 1, so 2.0 per kept
    element) on 1.12.1; from 1.13.0 the first read consumes it. The true gradient is
    2 w[slot]: [2, 0, 4, 6, 0, 8, 0, 10]."""
    grads = {}
    for release in ("1.12.1", "1.13.0"):
        env = cache_root() / f"warp-{release}"
        if not (env / MARKER).exists():
            pytest.skip(f"the Warp {release} environment has not been created (defects4warp.envs.ensure_env)")
        (tmp_path / "compaction.py").write_text(_COMPACTION)
        proc = subprocess.run([str(env / "bin" / "python"), "compaction.py"], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        assert line is not None, proc.stderr[-3000:]
        res = json.loads(line[len("RESULT "):])
        assert res["warp"] == release
        grads[release] = res["grad"]
    assert grads["1.12.1"] == [2.0, 0.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
    assert grads["1.13.0"] == [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


_CLONE_THEN_STORE = textwrap.dedent("""
    import json, numpy as np, warp as wp
    wp.config.quiet = True

    @wp.kernel
    def triple(q: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = 3.0 * q[i]

    @wp.kernel
    def total(q: wp.array(dtype=float), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, q[i])

    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        out = wp.clone(x)
        wp.launch(triple, dim=3, inputs=[x], outputs=[out], device="cpu")
        wp.launch(total, dim=3, inputs=[out], outputs=[loss], device="cpu")
    tape.backward(loss)
    print("RESULT " + json.dumps({"warp": wp.config.version, "grad": x.grad.numpy().tolist()}))
""")


@pytest.mark.slow
def test_a_clone_then_store_gradient_changes_at_1_13_and_at_1_17(tmp_path):
    """Measured: the identity (1.0) on 1.12.1, zero on 1.13.0, the true 3.0 on 1.17.0."""
    want = {"1.12.1": [1.0, 1.0, 1.0], "1.13.0": [0.0, 0.0, 0.0], "1.17.0": [3.0, 3.0, 3.0]}
    for rel, grad in want.items():
        env = cache_root() / f"warp-{rel}"
        if not (env / MARKER).exists():
            pytest.skip(f"the Warp {rel} environment has not been created (defects4warp.envs.ensure_env)")
        (tmp_path / "clone_store.py").write_text(_CLONE_THEN_STORE)
        proc = subprocess.run([str(env / "bin" / "python"), "clone_store.py"], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        assert line is not None, proc.stderr[-3000:]
        res = json.loads(line[len("RESULT "):])
        assert (res["warp"], res["grad"]) == (rel, grad)
