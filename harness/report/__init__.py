"""What renders results: the Markdown and HTML reports of a run, the engine's committed files per release and
the pages of docs/ rendered from them (:mod:`.pages`), the builtins conformance page, the capture table, the
program audit's report and the corpus exported as agent tasks.

Nothing here measures a gradient: a module reads run documents, committed data or the result store and writes
text (``engine_matrix`` and ``pages.measuring`` start runs through :mod:`defects4warp.run.runner` when data is
missing). The modules are units of their own in tests/test_layers.py, all in the reports layer.
"""
