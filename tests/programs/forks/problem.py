import os
import subprocess


def make_problem(device, scale="small"):
    # a child that detaches into its own session, and a double-forked grandchild
    subprocess.Popen(["sleep", "987.25"], start_new_session=True)
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            os.execvp("sleep", ["sleep", "987.25"])
        os._exit(0)
    raise RuntimeError("the scene needs a server that is not running")
