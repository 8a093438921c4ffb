import numpy as np


def make_problem(device, scale="small"):
    return np.zeros(3)
