def make_problem(device, scale="small"):
    raise RuntimeError("cannot build the scene")
