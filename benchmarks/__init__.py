"""Speed and memory benchmarks: ``python -m benchmarks`` runs them all.

Each script imports its helpers as ``from _common import ...``: run as a file
(``python benchmarks/bench_cuts.py``) its folder is on ``sys.path``; run as a
module (``python -m benchmarks.bench_cuts``) this package puts it there.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
