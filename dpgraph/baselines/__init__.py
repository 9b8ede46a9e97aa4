"""Peers that mechanism E is compared against (accuracy baselines, not hardened releases).

- :func:`mwem`: MWEM (Hardt, Ligett & McSherry 2012) for linear queries over a finite universe.
- :func:`mwem_statistical`: the paper's sub-database adaptation of MWEM to statistical queries
  (parallel composition over disjoint sub-databases).
- :func:`tmf`: TmF, Top-m Filter (Nguyen, Imine & Rusinowitch 2015), an edge-DP graph release in
  O(m + output).
- :func:`privgraph`: PrivGraph (Yuan et al. 2023), an edge-DP graph release through noisy
  communities, their degrees and the counts between them.
"""

from .mwem import DEFAULT_PASSES, DEFAULT_T, UPDATES, MWEMResult, mwem, mwem_statistical
from .privgraph import PrivGraphResult, privgraph
from .tmf import TmFResult, tmf

__all__ = [
    "DEFAULT_PASSES", "DEFAULT_T", "UPDATES", "MWEMResult", "PrivGraphResult", "TmFResult", "mwem",
    "mwem_statistical", "privgraph", "tmf",
]
