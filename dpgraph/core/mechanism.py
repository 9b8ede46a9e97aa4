"""Mechanism E: randomized response on every row of a database."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ledger import PrivacyLedger
from ..validation import InstanceOf, validate_params
from .estimate import Estimate
from .estimators import Channel
from .probabilities import CertifiedRelease, RRProbabilities, rr_probabilities
from .queries import StatisticalQuery
from .randomness import SeedLike
from .sampling import rr_sample
from .transaction import ReleaseTransaction
from .universe import Universe

__all__ = ["MechanismE"]


class MechanismE(CertifiedRelease):
    """The paper's mechanism E on a finite universe, with its companion estimators.

    Every row is released independently: its true value with probability 1/g,
    flipped to each other value with probability e^-eps/g
    (g = 1 + (K-1) e^-eps).  The
    probabilities actually sampled are certified dyadic rationals (see
    :mod:`dpgraph.core.probabilities`), so the release is exactly eps-DP; the
    estimators use the same public probabilities.

    Parameters
    ----------
    universe : Universe
        The K values a row can take.
    epsilon : float
        Privacy parameter (> 0, finite).  Neighbouring databases differ in one
        row.

    Examples
    --------
    >>> import numpy as np
    >>> U = Universe([1, 2, 3, 4, 5])
    >>> M = MechanismE(U, epsilon=1.0)
    >>> X = np.array([5, 4, 4, 1, 3] * 2000)
    >>> Y = M.release(X, seed=0)            # a seed is for reproducibility only
    >>> q = StatisticalQuery.linear([0, 0, 0, 1, 1], n=X.size, universe=U)
    >>> est = M.estimate(q, Y)
    >>> abs(est.value - q(X)) < 4 * est.std
    True
    """

    @validate_params(universe=InstanceOf(Universe, what="a dpgraph.core.Universe, e.g. "
                                         "Universe([1, 2, 3, 4, 5])", example=Universe([0, 1])))
    def __init__(self, universe: Universe, epsilon: float) -> None:
        self.universe = universe
        self.probabilities: RRProbabilities = rr_probabilities(epsilon, universe.K)
        self.channel: Channel = Channel.randomized_response(self.probabilities)

    def release(self, X: Any, seed: SeedLike = None, *,
                ledger: PrivacyLedger | None = None) -> np.ndarray:
        """Release a database of labels; eps-DP for every row.

        Parameters
        ----------
        X : array_like
            Rows as labels of the universe, any shape.
        seed : None, int or numpy.random.Generator
            ``None`` (default) uses a cryptographically secure stream keyed
            from OS entropy: the only safe choice for a real release.  A seed
            makes the release reproducible and is for tests and experiments.
        ledger : dpgraph.PrivacyLedger, optional
            Charge ``epsilon`` to this privacy budget after validating ``X``
            and before drawing any randomness; over budget raises
            :class:`dpgraph.BudgetExceededError` and nothing is released.

        Returns
        -------
        numpy.ndarray
            Released labels, same shape as X.
        """
        tx = ReleaseTransaction(self.epsilon, K=self.universe.K, seed=seed, ledger=ledger)
        idx = self.universe.encode(X)
        source = tx.commit()  # the seeded-release warning names the user's line
        return self.universe.decode(rr_sample(idx, tx.probabilities, source))

    def estimate(
        self, query: StatisticalQuery, Y: Any, proper: bool = True
    ) -> Estimate:
        """Answer a statistical query (or a batch) from a release ``Y``.

        Parameters
        ----------
        query : StatisticalQuery
        Y : array_like
            The released labels, one per row of the query.
        proper : bool, default True
            True gives the proper estimator (Lemma 3), False the unbiased
            estimator q_u (Lemma 2), which is also ``raw`` of the proper one.
            The proper estimator is q_u clipped to the range of q and, for
            integer-valued row functions, rounded onto the lattice
            {k / sum_i c_i}.  That lattice contains every achievable answer; it
            equals the set of achievable answers when each row function takes
            every integer between its min and max (counting queries), and is
            a superset otherwise: the exact projection onto q(D^n) is a
            subset-sum problem, intractable in general.

        Returns
        -------
        Estimate
            For q_u the std is exact when K = 2 and the worst case over the
            true rows when K > 2 (``exact_std`` says which).  For the proper
            estimate the std is that of q_u (its RMSE is at most std + half a
            lattice step) and the interval is q_u's, clipped to the range.
        """
        if not isinstance(query, StatisticalQuery):
            raise TypeError("query must be a StatisticalQuery")
        if query.K != self.universe.K:
            raise ValueError(
                f"query is tabulated on K={query.K} values but the universe has {self.universe.K}"
            )
        idx = self.universe.encode(Y, name="Y")
        return query.answer(query.sums(idx), self.channel, proper)

    def __repr__(self) -> str:
        return (
            f"MechanismE(K={self.universe.K}, epsilon={self.epsilon!r}, "
            f"flip_probability={self.flip_probability!r})"
        )
