"""Former home of the measurement worker, now :mod:`defects4warp.probes.worker`.

``python -m defects4warp.measure.worker ...`` still works (it runs the new module),
for scripts and per-release environments that call it by its old name. The
probe runner moved into :mod:`defects4warp.probes` so that :mod:`defects4warp.measure`
(the comparison, judging, source and trace libraries the probes build on)
imports nothing from :mod:`defects4warp.probes`: this file imports nothing at all
when imported, it only forwards when run as a script.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module(__spec__.name.rsplit(".", 2)[0] + ".probes.worker", run_name="__main__", alter_sys=True)
