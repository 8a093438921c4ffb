"""Former home of the measurement worker, now :mod:`harness.probes.worker`.

``python -m harness.measure.worker ...`` still works (it runs the new module),
for scripts and per-release environments that call it by its old name. The
probe runner moved into :mod:`harness.probes` so that :mod:`harness.measure`
(the comparison, judging, source and trace libraries the probes build on)
imports nothing from :mod:`harness.probes`: this file imports nothing at all
when imported, it only forwards when run as a script.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("harness.probes.worker", run_name="__main__", alter_sys=True)
