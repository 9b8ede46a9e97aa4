"""When may a test that needs real data skip?

Only when no data directory is configured at all (a developer's machine
without the files).  With DPGRAPH_DATA_DIR set, as in CI, a missing or broken
file must fail the test, not skip it.
"""

import os

from dpgraph import datasets


def data_missing(name: str) -> bool:
    """True if dataset ``name`` is absent *and* DPGRAPH_DATA_DIR is unset."""
    return not os.environ.get("DPGRAPH_DATA_DIR") and not datasets.available(name)
