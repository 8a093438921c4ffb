import subprocess
import time


def make_problem(device, scale="small"):
    subprocess.Popen(["sleep", "60"], start_new_session=True)
    time.sleep(3600)
