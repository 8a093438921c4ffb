import numpy as np
import warp as wp


@wp.kernel
def zone_delivery(
    opening: wp.array(dtype=wp.float64),
    share: wp.array2d(dtype=wp.float64),
    flow: wp.array(dtype=wp.float64),
    delivered: wp.array(dtype=wp.float64),
):
    z, v = wp.tid()
    u = wp.clamp(opening[v], wp.float64(0.0), wp.float64(1.0))
    wp.atomic_add(delivered, z, share[z, v] * flow[v] * u)


@wp.kernel
def schedule_cost(
    delivered: wp.array(dtype=wp.float64),
    demand: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    z = wp.tid()
    r = delivered[z] - demand[z]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def pumping_cost(opening: wp.array(dtype=wp.float64), pump_cost: wp.float64, loss: wp.array(dtype=wp.float64)):
    v = wp.tid()
    wp.atomic_add(loss, 0, pump_cost * opening[v])


class DripNetwork:
    def __init__(self, n_zones, n_valves, rng, device):
        self.device = device
        self.n_zones = n_zones
        self.n_valves = n_valves
        share = rng.uniform(0.0, 1.0, size=(n_zones, n_valves)) * (rng.uniform(size=(n_zones, n_valves)) < 0.4)
        share /= np.maximum(share.sum(axis=0, keepdims=True), 1e-9)
        self.share = wp.array(share, dtype=wp.float64, device=device)
        self.flow = wp.array(rng.uniform(0.8, 1.6, size=n_valves), dtype=wp.float64, device=device)
        self.demand = wp.array(rng.uniform(0.1, 0.6, size=n_zones), dtype=wp.float64, device=device)

    def cost(self, opening, pump_cost):
        delivered = wp.zeros(self.n_zones, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(zone_delivery, dim=(self.n_zones, self.n_valves), inputs=[opening, self.share, self.flow],
                  outputs=[delivered], device=self.device)
        wp.launch(schedule_cost, dim=self.n_zones, inputs=[delivered, self.demand], outputs=[loss], device=self.device)
        wp.launch(pumping_cost, dim=self.n_valves, inputs=[opening, wp.float64(pump_cost)], outputs=[loss],
                  device=self.device)
        return loss
