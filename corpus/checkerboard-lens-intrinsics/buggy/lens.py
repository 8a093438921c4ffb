import warp as wp


@wp.struct
class Lens:
    intrinsics: wp.array(dtype=wp.float64)
    distortion: wp.array(dtype=wp.float64)
    pixels: wp.array(dtype=wp.vec2d)


@wp.kernel
def project_view(lens: Lens, points: wp.array(dtype=wp.vec3d), rot: wp.mat33d, trans: wp.vec3d):
    i = wp.tid()
    pc = rot * points[i] + trans
    u = pc[0] / pc[2]
    v = pc[1] / pc[2]
    r2 = u * u + v * v
    d = wp.float64(1.0) + lens.distortion[0] * r2 + lens.distortion[1] * r2 * r2
    f = lens.intrinsics[0]
    lens.pixels[i] = wp.vec2d(f * d * u + lens.intrinsics[1], f * d * v + lens.intrinsics[2])


class Camera:
    def __init__(self, intrinsics, distortion, num_points, device):
        self.device = device
        self.num_points = num_points
        self.lens = Lens()
        self.lens.intrinsics = intrinsics
        self.lens.distortion = distortion
        self.lens.pixels = wp.zeros(num_points, dtype=wp.vec2d, requires_grad=True, device=device)

    def project(self, points, rot, trans):
        wp.launch(project_view, dim=self.num_points, inputs=[self.lens, points, rot, trans], device=self.device)
        return self.lens.pixels
