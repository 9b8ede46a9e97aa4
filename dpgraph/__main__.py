"""``python -m dpgraph``: the same command line as the ``dpgraph`` script."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
