"""defects4warp: a verified corpus of gradient bugs in NVIDIA Warp programs,
with a harness that scores diagnostic engines on it."""

__version__ = "0.1.0"
