# SPDX-FileCopyrightText: Copyright (c) 2021 Toni-SM
# SPDX-License-Identifier: MIT
# Adapted from Toni-SM/skrl skrl/models/warp/gaussian.py (MIT License).

import math

import numpy as np
import warp as wp

LOG_SQRT_2_PI = wp.constant(math.log(math.sqrt(2 * math.pi)))

NUM_SAMPLES, NUM_OBS, NUM_ACTIONS = 4, 3, 2


@wp.func
def _log_prob(
    action: float,
    loc: float,
    scale: float,
):
    return -wp.pow(action - loc, 2.0) / (2.0 * wp.pow(scale, 2.0)) - wp.log(scale) - LOG_SQRT_2_PI


@wp.kernel
def _gaussian(
    # inputs
    loc: wp.array2d(dtype=float),
    log_std: wp.array1d(dtype=float),
    log_std_min: float,
    log_std_max: float,
    clip_actions_min: wp.array1d(dtype=float),
    clip_actions_max: wp.array1d(dtype=float),
    clip_mean_actions_min: wp.array1d(dtype=float),
    clip_mean_actions_max: wp.array1d(dtype=float),
    taken_actions: wp.array2d(dtype=float),
    reduction: int,
    m: float,
    key: int,
    # outputs
    actions: wp.array2d(dtype=float),
    log_prob: wp.array2d(dtype=float),
    scale: wp.array1d(dtype=float),
):
    i, j = wp.tid()
    subkey = wp.rand_init(key + i, j)
    # clamp mean actions
    if clip_mean_actions_min:
        loc[i, j] = wp.clamp(loc[i, j], clip_mean_actions_min[j], clip_mean_actions_max[j])
    # clamp log standard deviations and compute distribution parameters
    scale[j] = wp.exp(wp.clamp(log_std[j], log_std_min, log_std_max))
    # sample actions
    if clip_actions_min:
        actions[i, j] = wp.clamp(wp.randn(subkey) * scale[j] + loc[i, j], clip_actions_min[j], clip_actions_max[j])
    else:
        actions[i, j] = wp.randn(subkey) * scale[j] + loc[i, j]
    # log of the probability density function
    if taken_actions:
        # mean
        if reduction == 0:
            wp.atomic_add(log_prob[i], 0, _log_prob(taken_actions[i, j], loc[i, j], scale[j]) / m)
        # sum
        elif reduction == 1:
            wp.atomic_add(log_prob[i], 0, _log_prob(taken_actions[i, j], loc[i, j], scale[j]))
        # prod
        elif reduction == 2:
            pass
        # none
        else:
            log_prob[i, j] = _log_prob(taken_actions[i, j], loc[i, j], scale[j])
    else:
        # mean
        if reduction == 0:
            wp.atomic_add(log_prob[i], 0, _log_prob(actions[i, j], loc[i, j], scale[j]) / m)
        # sum
        elif reduction == 1:
            wp.atomic_add(log_prob[i], 0, _log_prob(actions[i, j], loc[i, j], scale[j]))
        # prod
        elif reduction == 2:
            pass
        # none
        else:
            log_prob[i, j] = _log_prob(actions[i, j], loc[i, j], scale[j])


@wp.kernel
def _linear(
    obs: wp.array2d(dtype=float),
    weight: wp.array2d(dtype=float),
    bias: wp.array1d(dtype=float),
    out: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    acc = bias[j]
    for k in range(obs.shape[1]):
        acc += weight[j, k] * obs[i, k]
    out[i, j] = acc


@wp.kernel
def _negative_mean(log_prob: wp.array2d(dtype=float), n: float, loss: wp.array1d(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, -log_prob[i, 0] / n)


class Policy:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(7)
        self.observations = wp.array(rng.uniform(-1.0, 1.0, (NUM_SAMPLES, NUM_OBS)).astype(np.float32), device=device)
        self.taken_actions = wp.array(rng.uniform(-0.8, 0.8, (NUM_SAMPLES, NUM_ACTIONS)).astype(np.float32),
                                      device=device)
        self.params = {
            "weight": wp.array(rng.uniform(-1.5, 1.5, (NUM_ACTIONS, NUM_OBS)).astype(np.float32), device=device,
                               requires_grad=True),
            "bias": wp.array(np.array([0.3, -0.2], dtype=np.float32), device=device, requires_grad=True),
        }
        self.log_std = wp.array(np.array([-0.5, -0.3], dtype=np.float32), device=device)
        self.clip_min = wp.array(np.full(NUM_ACTIONS, -1.0, dtype=np.float32), device=device)
        self.clip_max = wp.array(np.full(NUM_ACTIONS, 1.0, dtype=np.float32), device=device)
        self.key = 42

    def compute(self):
        mean_actions = wp.empty((NUM_SAMPLES, NUM_ACTIONS), dtype=wp.float32, device=self.device, requires_grad=True)
        wp.launch(_linear, dim=mean_actions.shape,
                  inputs=[self.observations, self.params["weight"], self.params["bias"]],
                  outputs=[mean_actions], device=self.device)
        return mean_actions, {"log_std": self.log_std}

    def act(self, taken_actions):
        mean_actions, outputs = self.compute()
        log_std = outputs["log_std"]

        shape = mean_actions.shape
        actions = wp.empty(shape=shape, dtype=wp.float32, device=self.device, requires_grad=True)
        log_prob = wp.zeros(shape=(shape[0], 1), dtype=wp.float32, device=self.device, requires_grad=True)
        scale = wp.empty(shape=log_std.shape, dtype=wp.float32, device=self.device, requires_grad=True)

        wp.launch(
            _gaussian,
            dim=shape,
            inputs=[
                mean_actions,
                log_std,
                -20.0,
                2.0,
                None,
                None,
                self.clip_min,
                self.clip_max,
                taken_actions,
                1,
                shape[1],
                self.key,
            ],
            outputs=[actions, log_prob, scale],
            device=self.device,
        )

        outputs["log_prob"] = log_prob
        outputs["mean_actions"] = mean_actions
        outputs["stddev"] = scale
        return actions, outputs

    def _loss(self):
        _, outputs = self.act(self.taken_actions)
        loss = wp.zeros(1, dtype=wp.float32, device=self.device, requires_grad=True)
        wp.launch(_negative_mean, dim=NUM_SAMPLES, inputs=[outputs["log_prob"], float(NUM_SAMPLES)],
                  outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self._loss().numpy()[0])

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        tape = wp.Tape()
        with tape:
            loss = self._loss()
        tape.backward(loss=loss)
        return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
    return Policy(device)
