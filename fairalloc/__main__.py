"""``python -m fairalloc``: the same command line as ``fairalloc``."""

import sys

from fairalloc.cli import main

if __name__ == "__main__":
    sys.exit(main())
