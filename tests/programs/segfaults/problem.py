import ctypes


def make_problem(device, scale="small"):
    ctypes.string_at(0)
