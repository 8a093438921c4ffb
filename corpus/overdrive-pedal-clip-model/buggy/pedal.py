import warp as wp

soft_clip_src = """
return x / sqrtf(1.0f + x * x);
"""


@wp.func_native(soft_clip_src)
def soft_clip(x: float) -> float: ...


@wp.kernel
def pedal_output(
    signal: wp.array(dtype=float),
    band: wp.array(dtype=int),
    drive: wp.array(dtype=float),
    level: wp.array(dtype=float),
    blend: float,
    out: wp.array(dtype=float),
):
    i = wp.tid()
    b = band[i]
    x = signal[i]
    out[i] = level[b] * soft_clip(drive[b] * x) + blend * x
