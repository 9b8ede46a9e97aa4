"""The statistical-query core: universes, mechanism E, queries, estimators.

Everything in :mod:`dpgraph.graph` is built on this layer: a graph is the
database of its vertex pairs (K = 2) and a cut query is a statistical query.
"""

from .degree_fusion import DegreeFusion, Group, NormalLaplaceInterval, split_epsilon
from .estimate import (
    RESOLVED_FRACTION,
    Z95,
    BoundInterval,
    ConfidenceInterval,
    Estimate,
    FiellerInterval,
    apply_proper,
    fieller_interval,
    project,
)
from .estimators import (
    Channel,
    CountingQuery,
    count_estimate,
    histogram_estimate,
    unbiased_estimate,
)
from .laplace import DiscreteLaplace, discrete_laplace
from .mechanism import MechanismE
from .pairs import pair_count, pair_from_index, pair_index
from .probabilities import RRProbabilities, rr_probabilities
from .queries import StatisticalQuery
from .randomness import RandomSource, SecureRandom, SeededRandom, resolve_random
from .subsampling import (
    KeptResponse,
    SubsampledProbabilities,
    TypedSubsampling,
    keep_numerator,
    kept_response,
    subsampled_probabilities,
    typed_subsampling,
)
from .tables import estimate_columns, estimates_frame
from .transaction import ReleaseTransaction
from .universe import Universe

__all__ = [
    "RESOLVED_FRACTION",
    "Z95",
    "BoundInterval",
    "Channel",
    "ConfidenceInterval",
    "CountingQuery",
    "DegreeFusion",
    "DiscreteLaplace",
    "Estimate",
    "FiellerInterval",
    "Group",
    "KeptResponse",
    "MechanismE",
    "NormalLaplaceInterval",
    "RRProbabilities",
    "RandomSource",
    "ReleaseTransaction",
    "SecureRandom",
    "SeededRandom",
    "StatisticalQuery",
    "SubsampledProbabilities",
    "TypedSubsampling",
    "Universe",
    "apply_proper",
    "count_estimate",
    "discrete_laplace",
    "estimate_columns",
    "estimates_frame",
    "fieller_interval",
    "histogram_estimate",
    "keep_numerator",
    "kept_response",
    "pair_count",
    "pair_from_index",
    "pair_index",
    "project",
    "resolve_random",
    "rr_probabilities",
    "split_epsilon",
    "subsampled_probabilities",
    "typed_subsampling",
    "unbiased_estimate",
]
