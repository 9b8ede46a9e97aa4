"""Peers that mechanism E is compared against (accuracy baselines, not hardened releases).

- :func:`mwem`: MWEM (Hardt, Ligett & McSherry 2012) for linear queries over a finite universe.
- :func:`mwem_statistical`: the paper's sub-database adaptation of MWEM to statistical queries
  (parallel composition over disjoint sub-databases).
- :func:`tmf`: TmF, Top-m Filter (Nguyen, Imine & Rusinowitch 2015), an edge-DP graph release in
  O(m + output).
- :func:`privgraph`: PrivGraph (Yuan et al. 2023), an edge-DP graph release through noisy
  communities, their degrees and the counts between them.
- :func:`dp1k`: DP-1K (the dK-1 series of Sala et al. 2011, as PGB benchmarks it), a graph
  realizing a noisy degree histogram, by Havel-Hakimi or a configuration model (edge-DP).
- :func:`ldpgen`: LDPGen (Qin et al. 2017), users report noisy degree vectors to a clustering
  over two rounds, then a block Chung-Lu graph (edge local DP).

Each lives in a module named for what it does (:mod:`.multiplicative_weights`,
:mod:`.top_m_filter`, :mod:`.community_model`, :mod:`.degree_histogram`,
:mod:`.local_generation`), so that the function ``dpgraph.baselines.tmf`` and
its module are two names.
"""

from .community_model import PrivGraphResult, privgraph
from .degree_histogram import DP1KResult, dp1k
from .local_generation import LDPGenResult, ldpgen
from .multiplicative_weights import (
    DEFAULT_PASSES,
    DEFAULT_T,
    UPDATES,
    MWEMResult,
    mwem,
    mwem_statistical,
)
from .top_m_filter import TmFResult, tmf

__all__ = [
    "DEFAULT_PASSES", "DEFAULT_T", "UPDATES", "DP1KResult", "LDPGenResult", "MWEMResult",
    "PrivGraphResult", "TmFResult", "dp1k", "ldpgen", "mwem", "mwem_statistical", "privgraph",
    "tmf",
]
