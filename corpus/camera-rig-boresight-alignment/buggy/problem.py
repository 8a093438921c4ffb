import numpy as np
import warp as wp


@wp.func
def axis_angle_matrix(w: wp.vec3d) -> wp.mat33d:
    theta = wp.length(w)
    k = w / theta
    c = wp.cos(theta)
    s = wp.sin(theta)
    t = wp.float64(1.0) - c
    R = wp.mat33d()
    for i in range(3):
        for j in range(3):
            R[i, j] = t * k[i] * k[j]
    R[0, 0] = R[0, 0] + c
    R[1, 1] = R[1, 1] + c
    R[2, 2] = R[2, 2] + c
    R[0, 1] = R[0, 1] - s * k[2]
    R[0, 2] = R[0, 2] + s * k[1]
    R[1, 0] = R[1, 0] + s * k[2]
    R[1, 2] = R[1, 2] - s * k[0]
    R[2, 0] = R[2, 0] - s * k[1]
    R[2, 1] = R[2, 1] + s * k[0]
    return R


@wp.kernel
def reprojection(
    rotvec: wp.array(dtype=wp.vec3d),
    landmarks: wp.array(dtype=wp.vec3d),
    observed: wp.array2d(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    cam, j = wp.tid()
    R = axis_angle_matrix(rotvec[cam])
    r = wp.transpose(R) * landmarks[j] - observed[cam, j]
    wp.atomic_add(loss, 0, wp.dot(r, r))


def rotation(w):
    theta = np.linalg.norm(w)
    k = w / theta
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(theta) * K + (1.0 - np.cos(theta)) * K @ K


class RigAlignment:
    def __init__(self, device, cameras, landmarks):
        self.device = device
        self.cameras = cameras
        self.n_landmarks = landmarks
        rng = np.random.default_rng(3)
        dirs = rng.normal(size=(landmarks, 3))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        true_rv = rng.normal(scale=0.6, size=(cameras, 3))
        obs = np.stack([(rotation(w).T @ dirs.T).T for w in true_rv])
        obs += rng.normal(scale=0.01, size=obs.shape)
        self.landmarks = wp.array(dirs, dtype=wp.vec3d, device=device)
        self.observed = wp.array(obs, dtype=wp.vec3d, device=device)
        guess = true_rv + rng.normal(scale=0.15, size=true_rv.shape)
        self.rotvec = wp.array(guess, dtype=wp.vec3d, device=device, requires_grad=True)
        self.params = {"rotvec": self.rotvec}

    def loss(self):
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            reprojection,
            dim=(self.cameras, self.n_landmarks),
            inputs=[self.rotvec, self.landmarks, self.observed],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {"rotvec": self.rotvec.grad.numpy().copy()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["rotvec"]
            self.rotvec.assign(self.rotvec.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return RigAlignment(device, cameras=16, landmarks=32)
    return RigAlignment(device, cameras=4, landmarks=6)
