import warp as wp

FAR = 20.0
SPHERES = wp.constant(3)


@wp.kernel
def render_depth(
    centers: wp.array(dtype=wp.vec3),
    radii: wp.array(dtype=wp.float32),
    width: int,
    pixel: float,
    depth: wp.array(dtype=wp.float32),
):
    tid = wp.tid()
    px = (float(tid % width) - 0.5 * float(width)) * pixel
    py = (float(tid // width) - 0.5 * float(width)) * pixel
    o = wp.vec3(px, py, -10.0)
    best = float(FAR)
    for k in range(SPHERES):
        oc = o - centers[k]
        b = oc[2]
        disc = b * b - (wp.dot(oc, oc) - radii[k] * radii[k])
        t = wp.where(disc > 0.0, -b - wp.sqrt(wp.max(disc, 0.0)), float(FAR))
        best = wp.min(best, t)
    depth[tid] = best


@wp.kernel
def depth_loss(depth: wp.array(dtype=wp.float32), observed: wp.array(dtype=wp.float32), loss: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    if observed[tid] < FAR:
        e = depth[tid] - observed[tid]
        wp.atomic_add(loss, 0, e * e)
