"""Struct arguments in the runtime trace on Warp releases without ``wp.types.is_struct``.

``wp.types.is_struct`` exists from Warp 1.11. Before, the recorder's struct test
raised ``AttributeError`` (caught: False), so every struct argument was recorded
as a plain value: no struct field was traced, and a struct field's array
overwritten after it was read showed as a whole-array ``overwrite`` (or not at
all), never as ``struct_write_after_read``, on 1.0.2-1.10.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from defects4warp.envs import MARKER, cache_root

wp = pytest.importorskip("warp")

PROGRAMS = Path(__file__).parent / "programs"


@wp.struct
class _Pair:
    q: wp.array(dtype=float)
    k: float


def test_a_struct_is_recognised_without_wp_types_is_struct(monkeypatch):
    from defects4warp.measure import trace_state

    s = _Pair()
    s.q = wp.zeros(3, dtype=float)
    s.k = 2.0
    monkeypatch.delattr(wp.types, "is_struct")  # Warp 1.0.2-1.10.1
    assert trace_state._is_struct(s) is True
    assert trace_state._is_struct(s.q) is False
    assert trace_state._is_struct(2.0) is False
    fields = dict(trace_state._struct_fields(s))
    assert list(fields) == ["q", "k"] and fields["q"] is s.q


def test_a_launch_with_a_struct_records_its_fields_without_wp_types_is_struct(monkeypatch):
    from defects4warp.measure import trace as tm

    @wp.kernel
    def _scaled_sum(s: _Pair, out: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(out, 0, s.k * s.q[i])

    s = _Pair()
    s.q = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    s.k = 2.0
    out = wp.zeros(1, dtype=float, requires_grad=True)

    def call():
        tape = wp.Tape()
        with tape:
            wp.launch(_scaled_sum, dim=3, inputs=[s], outputs=[out])
        tape.backward(loss=out)
        return {"q": s.q.grad.numpy().copy()}

    call()
    out.zero_()
    s.q.grad.zero_()
    monkeypatch.delattr(wp.types, "is_struct")
    _, trace = tm.trace_call(call, params={"q": s.q})
    (launch,) = [e for e in trace["events"] if e["kind"] == "launch"]
    by_field = {e["field"]: e for e in launch["args"] if e.get("field")}
    assert sorted(by_field) == ["s.k", "s.q"]
    assert by_field["s.q"]["reads"] is True and by_field["s.k"]["value"] == 2.0


# the same subprocess script the older-release trace tests run (programs traced, findings listed)
from test_trace import _LEGACY_SCRIPT as _SCRIPT  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("release", ["1.9.1", "1.10.1"])
def test_struct_write_after_read_on_old_releases(release):
    from defects4warp.paths import import_root

    env = cache_root() / f"warp-{release}"
    if not (env / MARKER).exists():
        pytest.skip(f"the Warp {release} environment has not been created (defects4warp.envs.ensure_env)")
    proc = subprocess.run(
        [str(env / "bin" / "python"), "-c", _SCRIPT, import_root(),
         str(PROGRAMS / "trace_struct"), str(PROGRAMS / "trace_struct_fixed")],
        capture_output=True, text=True, timeout=900,
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, proc.stderr[-3000:]
    res = json.loads(line[len("RESULT "):])
    assert res["warp"] == release
    assert res["ids"] == {"trace_struct": ["struct_write_after_read"], "trace_struct_fixed": []}
