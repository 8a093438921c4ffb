import warp as wp


@wp.func
def claim_slot(counter: wp.array(dtype=wp.int32), slot_of: wp.array(dtype=wp.int32), tid: int):
    slot = wp.atomic_add(counter, 0, 1)
    slot_of[tid] = slot
    return slot


@wp.func_replay(claim_slot)
def replay_claim_slot(counter: wp.array(dtype=wp.int32), slot_of: wp.array(dtype=wp.int32), tid: int):
    return slot_of[tid]


@wp.kernel
def collect_hits(
    raw_time: wp.array(dtype=wp.float64),
    amplitude: wp.array(dtype=wp.float64),
    strip: wp.array(dtype=wp.int32),
    t0: wp.array(dtype=wp.float64),
    threshold: wp.float64,
    counter: wp.array(dtype=wp.int32),
    slot_of: wp.array(dtype=wp.int32),
    hit_time: wp.array(dtype=wp.float64),
    hit_ref: wp.array(dtype=wp.float64),
    ref_time: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    if amplitude[i] > threshold:
        k = claim_slot(counter, slot_of, i)
        hit_time[k] = raw_time[i] - t0[strip[i]]
        hit_ref[k] = ref_time[i]


@wp.kernel
def timing_residual(
    hit_time: wp.array(dtype=wp.float64),
    hit_ref: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    d = hit_time[k] - hit_ref[k]
    wp.atomic_add(loss, 0, d * d)
