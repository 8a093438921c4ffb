import numpy as np


def make_problem(device, scale="small"):
    keep = []
    while True:
        keep.append(np.empty(1 << 28))  # 2 GiB each, until the address-space cap refuses
