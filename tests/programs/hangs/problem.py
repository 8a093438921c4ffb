import time


def make_problem(device, scale="small"):
    time.sleep(3600)
