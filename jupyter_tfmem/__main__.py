"""``python -m jupyter_tfmem``: the same as the ``tfmem`` command."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
