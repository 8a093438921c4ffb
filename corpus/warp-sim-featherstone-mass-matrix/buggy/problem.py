# SPDX-FileCopyrightText: Copyright (c) 2022 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/sim/integrator_featherstone.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.func
def dense_index(stride: int, i: int, j: int):
    return i * stride + j


@wp.func
def dense_gemm(
    m: int,
    n: int,
    p: int,
    transpose_A: bool,
    transpose_B: bool,
    add_to_C: bool,
    A_start: int,
    B_start: int,
    C_start: int,
    A: wp.array(dtype=float),
    B: wp.array(dtype=float),
    # outputs
    C: wp.array(dtype=float),
):
    # multiply a `m x p` matrix A by a `p x n` matrix B to produce a `m x n` matrix C
    for i in range(m):
        for j in range(n):
            sum = float(0.0)
            for k in range(p):
                if transpose_A:
                    a_i = k * m + i
                else:
                    a_i = i * p + k
                if transpose_B:
                    b_j = j * p + k
                else:
                    b_j = k * n + j
                sum += A[A_start + a_i] * B[B_start + b_j]

            if add_to_C:
                C[C_start + i * n + j] += sum
            else:
                C[C_start + i * n + j] = sum


@wp.kernel
def eval_dense_gemm_batched(
    m: wp.array(dtype=int),
    n: wp.array(dtype=int),
    p: wp.array(dtype=int),
    transpose_A: bool,
    transpose_B: bool,
    A_start: wp.array(dtype=int),
    B_start: wp.array(dtype=int),
    C_start: wp.array(dtype=int),
    A: wp.array(dtype=float),
    B: wp.array(dtype=float),
    C: wp.array(dtype=float),
):
    # on the CPU each thread computes the whole matrix multiply
    # on the GPU each block computes the multiply with one output per-thread
    batch = wp.tid()  # /kNumThreadsPerBlock;
    add_to_C = False

    dense_gemm(
        m[batch],
        n[batch],
        p[batch],
        transpose_A,
        transpose_B,
        add_to_C,
        A_start[batch],
        B_start[batch],
        C_start[batch],
        A,
        B,
        C,
    )


@wp.func
def dense_cholesky(
    n: int,
    A: wp.array(dtype=float),
    R: wp.array(dtype=float),
    A_start: int,
    R_start: int,
    # outputs
    L: wp.array(dtype=float),
):
    # compute the Cholesky factorization of A = L L^T with diagonal regularization R
    for j in range(n):
        s = A[A_start + dense_index(n, j, j)] + R[R_start + j]

        for k in range(j):
            r = L[A_start + dense_index(n, j, k)]
            s -= r * r

        s = wp.sqrt(s)
        invS = 1.0 / s

        L[A_start + dense_index(n, j, j)] = s

        for i in range(j + 1, n):
            s = A[A_start + dense_index(n, i, j)]

            for k in range(j):
                s -= L[A_start + dense_index(n, i, k)] * L[A_start + dense_index(n, j, k)]

            L[A_start + dense_index(n, i, j)] = s * invS


@wp.func_grad(dense_cholesky)
def adj_dense_cholesky(
    n: int,
    A: wp.array(dtype=float),
    R: wp.array(dtype=float),
    A_start: int,
    R_start: int,
    # outputs
    L: wp.array(dtype=float),
):
    # nop, use dense_solve to differentiate through (A^-1)b = x
    pass


@wp.kernel
def eval_dense_cholesky_batched(
    A_starts: wp.array(dtype=int),
    A_dim: wp.array(dtype=int),
    A: wp.array(dtype=float),
    R: wp.array(dtype=float),
    L: wp.array(dtype=float),
):
    batch = wp.tid()

    n = A_dim[batch]
    A_start = A_starts[batch]
    R_start = n * batch

    dense_cholesky(n, A, R, A_start, R_start, L)


@wp.func
def dense_subs(
    n: int,
    L_start: int,
    b_start: int,
    L: wp.array(dtype=float),
    b: wp.array(dtype=float),
    # outputs
    x: wp.array(dtype=float),
):
    # Solves (L L^T) x = b for x given the Cholesky factor L
    # forward substitution solves the lower triangular system L y = b for y
    for i in range(n):
        s = b[b_start + i]

        for j in range(i):
            s -= L[L_start + dense_index(n, i, j)] * x[b_start + j]

        x[b_start + i] = s / L[L_start + dense_index(n, i, i)]

    # backward substitution solves the upper triangular system L^T x = y for x
    for i in range(n - 1, -1, -1):
        s = x[b_start + i]

        for j in range(i + 1, n):
            s -= L[L_start + dense_index(n, j, i)] * x[b_start + j]

        x[b_start + i] = s / L[L_start + dense_index(n, i, i)]


@wp.func
def dense_solve(
    n: int,
    L_start: int,
    b_start: int,
    L: wp.array(dtype=float),
    b: wp.array(dtype=float),
    # outputs
    x: wp.array(dtype=float),
    tmp: wp.array(dtype=float),
):
    # helper function to include tmp argument for backward pass
    dense_subs(n, L_start, b_start, L, b, x)


@wp.func_grad(dense_solve)
def adj_dense_solve(
    n: int,
    L_start: int,
    b_start: int,
    L: wp.array(dtype=float),
    b: wp.array(dtype=float),
    # outputs
    x: wp.array(dtype=float),
    tmp: wp.array(dtype=float),
):
    if not tmp or not wp.adjoint[x] or not wp.adjoint[L]:
        return
    for i in range(n):
        tmp[b_start + i] = 0.0

    dense_subs(n, L_start, b_start, L, wp.adjoint[x], tmp)

    for i in range(n):
        wp.adjoint[b][b_start + i] += tmp[b_start + i]

    # A* = -adj_b*x^T
    for i in range(n):
        for j in range(n):
            wp.adjoint[L][L_start + dense_index(n, i, j)] += -tmp[b_start + i] * x[b_start + j]


@wp.kernel
def eval_dense_solve_batched(
    L_start: wp.array(dtype=int),
    L_dim: wp.array(dtype=int),
    b_start: wp.array(dtype=int),
    L: wp.array(dtype=float),
    b: wp.array(dtype=float),
    # outputs
    x: wp.array(dtype=float),
    tmp: wp.array(dtype=float),
):
    batch = wp.tid()

    dense_solve(L_dim[batch], L_start[batch], b_start[batch], L, b, x, tmp)


@wp.kernel
def _weighted_sum(x: wp.array(dtype=float), w: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w[i] * x[i])


ROWS = [6, 6]
DOFS = [3, 3]


class ArticulationBatch:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(3)
        count = len(DOFS)
        self.count = count
        M_start, J_start, H_start, dof_start = [], [], [], []
        m_off = j_off = h_off = d_off = 0
        M_blocks = []
        for rows, dofs in zip(ROWS, DOFS):
            M_start.append(m_off)
            J_start.append(j_off)
            H_start.append(h_off)
            dof_start.append(d_off)
            inertia = np.diag([0.2, 0.3, 0.25, 2.0, 2.0, 2.0]) + 0.02 * np.ones((6, 6))
            M_blocks.append(inertia.reshape(-1))
            m_off += rows * rows
            j_off += rows * dofs
            h_off += dofs * dofs
            d_off += dofs
        self.M_rows = wp.array(ROWS, dtype=int, device=device)
        self.J_rows = wp.array(ROWS, dtype=int, device=device)
        self.J_cols = wp.array(DOFS, dtype=int, device=device)
        self.H_rows = wp.array(DOFS, dtype=int, device=device)
        self.M_start = wp.array(M_start, dtype=int, device=device)
        self.J_start = wp.array(J_start, dtype=int, device=device)
        self.H_start = wp.array(H_start, dtype=int, device=device)
        self.dof_start = wp.array(dof_start, dtype=int, device=device)
        self.M = wp.array(np.concatenate(M_blocks), dtype=float, device=device)
        self.armature = wp.array(np.full(d_off, 0.01), dtype=float, device=device)
        self.sizes = (j_off, h_off, d_off)
        self.weights = wp.array(np.linspace(1.0, 2.0, d_off), dtype=float, device=device)
        self.params = {
            "J": wp.array(rng.uniform(-1.0, 1.0, j_off), dtype=float, device=device, requires_grad=True),
            "joint_tau": wp.array(rng.uniform(-1.0, 1.0, d_off), dtype=float, device=device, requires_grad=True),
        }

    def _forward(self, loss, requires_grad):
        j_size, h_size, d_size = self.sizes
        dev = self.device
        P = wp.zeros(j_size, dtype=float, device=dev, requires_grad=requires_grad)
        H = wp.zeros(h_size, dtype=float, device=dev, requires_grad=requires_grad)
        L = wp.zeros(h_size, dtype=float, device=dev, requires_grad=requires_grad)
        joint_qdd = wp.zeros(d_size, dtype=float, device=dev, requires_grad=requires_grad)
        joint_solve_tmp = wp.zeros(d_size, dtype=float, device=dev, requires_grad=True) if requires_grad else None
        J = self.params["J"]

        # form P = M*J
        wp.launch(
            eval_dense_gemm_batched,
            dim=self.count,
            inputs=[self.M_rows, self.J_cols, self.J_rows, False, False, self.M_start, self.J_start, self.J_start,
                    self.M, J],
            outputs=[P],
            device=dev,
        )

        # form H = J^T*P
        wp.launch(
            eval_dense_gemm_batched,
            dim=self.count,
            inputs=[self.J_cols, self.J_cols, self.J_rows, True, False, self.J_start, self.J_start, self.H_start, J, P],
            outputs=[H],
            device=dev,
        )

        # compute decomposition
        wp.launch(
            eval_dense_cholesky_batched,
            dim=self.count,
            inputs=[self.H_start, self.H_rows, H, self.armature],
            outputs=[L],
            device=dev,
        )

        # solve for qdd
        wp.launch(
            eval_dense_solve_batched,
            dim=self.count,
            inputs=[self.H_start, self.H_rows, self.dof_start, L, self.params["joint_tau"]],
            outputs=[joint_qdd, joint_solve_tmp],
            device=dev,
        )
        wp.launch(_weighted_sum, dim=d_size, inputs=[joint_qdd, self.weights, loss], device=dev)

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._forward(loss, False)
        return float(loss.numpy()[0])

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
        tape = wp.Tape()
        with tape:
            self._forward(loss, True)
        tape.backward(loss=loss)
        return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
    return ArticulationBatch(device)
