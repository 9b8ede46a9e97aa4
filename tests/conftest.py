"""Shared test configuration.

Tests and CI point DPGRAPH_DATA_DIR at ../shared/datasets (DESIGN.md section 4);
when it is unset and that folder exists beside the project, use it.
"""

import os
from pathlib import Path

_shared = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
if "DPGRAPH_DATA_DIR" not in os.environ and _shared.is_dir():
    os.environ["DPGRAPH_DATA_DIR"] = str(_shared)
