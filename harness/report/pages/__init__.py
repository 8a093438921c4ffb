"""Every generated page of docs/, rendered from the committed data it is made of.

One table, :data:`defects4warp.report.pages.registry.PAGES`, says for each generated
page (or generated block of a page with hand-written sections) which committed
files it is rendered from and by which function. ``defects4warp maint pages``
rewrites the pages from those files (nothing is measured), ``--check`` only
compares (CI: the committed pages are what the committed data renders to), and
``--measure`` first fills in what is missing, one release at a time
(:func:`defects4warp.report.pages.measuring.measure`): the ground truth
(``docs/data/validation-<release>.json``, the independent oracle) where no
committed validation covers the release, and the engine's answers
(``docs/data/engine-<release>.json``, :mod:`defects4warp.report.engine_matrix`) where
no current engine file exists; the result store is reused, so an interrupted
measurement resumes.

Parts of pages whose sources are not committed are listed in
:data:`defects4warp.report.pages.registry.NOT_GENERATED` with the reason.

The modules, lowest first (each imports only those above it):

- :mod:`.prose`: text shared by every page (wrapping long prose, splicing a
  generated block between markers of a hand-written page, number cells); the
  standard library only, so scripts that write pages of their own use it.
- :mod:`.sources`: reading the committed data (validation JSON, engine files,
  baseline files, the corpus labels).
- one module per page: :mod:`.versions` (version matrix, old releases),
  :mod:`.release_matrix`, :mod:`.upgrade_audit`, :mod:`.results`,
  :mod:`.engines_page`, :mod:`.builtins_page`.
- :mod:`.registry`: the table of pages, checking and writing them.
- :mod:`.measuring`: filling in missing data for ``pages --measure``.
"""
