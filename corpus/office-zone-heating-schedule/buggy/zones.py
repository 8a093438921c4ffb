import warp as wp


@wp.kernel
def heating_input(
    day_power: wp.array(dtype=wp.float64),
    night_power: wp.array(dtype=wp.float64),
    daytime: int,
    heat: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    heat[i] = day_power[i] if daytime == 1 else night_power[i]


@wp.kernel
def step_zones(
    temp: wp.array(dtype=wp.float64),
    heat: wp.array(dtype=wp.float64),
    outdoor: wp.float64,
    coupling: wp.float64,
    envelope: wp.float64,
    capacity: wp.float64,
    dt: wp.float64,
    temp_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = temp.shape[0]
    t = temp[i]
    tl = temp[wp.max(i - 1, 0)]
    tr = temp[wp.min(i + 1, n - 1)]
    flow = heat[i] - envelope * (t - outdoor) + coupling * (tl + tr - wp.float64(2.0) * t)
    temp_next[i] = t + dt / capacity * flow


class ZoneModel:
    def __init__(self, n, coupling, envelope, capacity, dt, device):
        self.n = n
        self.coupling = coupling
        self.envelope = envelope
        self.capacity = capacity
        self.dt = dt
        self.device = device

    def run(self, temp0, day_power, night_power, schedule, outdoor):
        temps = [temp0]
        t = temp0
        for k in range(len(schedule)):
            heat = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(heating_input, dim=self.n, inputs=[day_power, night_power, int(schedule[k])], outputs=[heat], device=self.device)
            t_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                step_zones,
                dim=self.n,
                inputs=[
                    t,
                    heat,
                    wp.float64(outdoor[k]),
                    wp.float64(self.coupling),
                    wp.float64(self.envelope),
                    wp.float64(self.capacity),
                    wp.float64(self.dt),
                ],
                outputs=[t_next],
                device=self.device,
            )
            temps.append(t_next)
            t = t_next
        return temps
