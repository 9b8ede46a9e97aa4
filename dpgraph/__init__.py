"""dpgraph: differentially private graph release for the cut function.

A curator releases a synthetic graph that is eps-differentially private for
every vertex pair (mechanism E of Wang, Ying and Zhang: randomized response on
every pair); analysts answer any number of questions from it with debiased
estimators that carry exact error bars, at no further privacy cost.

Layers: :mod:`dpgraph.core` (statistical queries on any finite universe)
beneath :mod:`dpgraph.graph` (release, cuts, analytics), with experiments and
the command line on top.
"""

from . import (
    bounds,
    core,
    datasets,
    local,  # collection without a trusted curator (edge LDP); registers its file kind
)
from ._version import __version__
from .core import Estimate
from .exceptions import BudgetExceededError, SeededReleaseWarning
from .graph import PrivateGraph, load, release
from .graph.signing import generate_signing_key
from .ledger import PrivacyLedger
from .planner import plan  # accuracy of a release from public quantities

__all__ = [
    "BudgetExceededError",
    "Estimate",
    "PrivacyLedger",
    "PrivateGraph",
    "SeededReleaseWarning",
    "__version__",
    "bounds",
    "core",
    "datasets",
    "generate_signing_key",
    "load",
    "local",
    "plan",
    "release",
]
