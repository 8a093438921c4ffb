"""``python -m defects4warp`` is the ``defects4warp`` command (from a checkout, ``python -m harness`` too)."""

from .cli import main

if __name__ == "__main__":
    main()
