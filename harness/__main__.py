"""``python -m defects4warp`` is the ``defects4warp`` command."""

from .cli import main

if __name__ == "__main__":
    main()
