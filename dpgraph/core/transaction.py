"""The release transaction: the one sequence every release in dpgraph follows.

A release spends privacy, so the order of its steps carries the security
argument.  Every release path (a graph in memory, dense or sparse, a
blockwise store, a database of rows through :class:`~dpgraph.core.MechanismE`)
goes through :class:`ReleaseTransaction`:

1. **Open** (``ReleaseTransaction(epsilon, K=..., seed=..., ledger=...)``):
   epsilon is validated and the flip probability certified (exact
   arithmetic: the sampler's worst likelihood ratio is at most e^epsilon), the
   ledger's type is checked and the seed resolved into a random source.
   Nothing has been drawn from it and nothing charged.
2. **Check**: the caller validates everything else that can fail (the input,
   the vertex set, sizes, free memory and disk, the output location).  A
   failure here costs no budget.
3. **Commit** (:meth:`ReleaseTransaction.commit`): the ledger, when given, is
   charged under its lock (a refusal raises
   :class:`~dpgraph.BudgetExceededError` and nothing is released); a seeded
   (predictable) stream is warned about, once; the random source is handed to
   the sampler.  Only then are flips drawn.

A charge is never refunded: an error after the commit (a full disk, a killed
process) may have revealed part of a release, so the budget stays spent.
"""

from __future__ import annotations

from ..ledger import PrivacyLedger
from ..validation import check_epsilon
from .degree_fusion import split_epsilon
from .laplace import DiscreteLaplace, discrete_laplace
from .probabilities import RRProbabilities, rr_probabilities
from .randomness import RandomSource, SeedLike, resolve_random, warn_if_seeded

__all__ = ["ReleaseTransaction"]


class ReleaseTransaction:
    """Validate, charge and hand out randomness for one release, in that order.

    Parameters
    ----------
    epsilon : float
        Privacy parameter per row (per vertex pair for a graph), finite and > 0.
    K : int, default 2
        Values a row can take (2 for a vertex pair: edge or no edge).
    seed : None, int, numpy.random.Generator, numpy.random.RandomState, random.Random or RandomSource
        ``None`` (default): a cryptographically secure stream keyed from OS
        entropy, the only choice for a real release.  Anything else makes the
        release reproducible and therefore predictable (tests and experiments
        only); committing warns once (:class:`~dpgraph.SeededReleaseWarning`).
    ledger : PrivacyLedger, optional
        The privacy budget to charge ``epsilon`` to at :meth:`commit`.
    laplace_share : float in [0, 1), default 0
        A composed release: this fraction of ``epsilon`` certifies discrete
        Laplace noise (``laplace``) and the rest the randomized response
        (``probabilities``); the two parts sum to at most ``epsilon``
        (:func:`~dpgraph.core.degree_fusion.split_epsilon`), which is charged
        once.  0: randomized response alone, at ``epsilon``.
    laplace_sensitivity : int, default 2
        The sensitivity the Laplace part is certified for.

    Attributes
    ----------
    probabilities : RRProbabilities
        The certified flip probabilities of the release (of its randomized
        response part).
    laplace : DiscreteLaplace or None
        The certified noise of the Laplace part (None without one).
    epsilon : float
        The validated epsilon, charged at commit (both parts together).

    Examples
    --------
    >>> tx = ReleaseTransaction(1.0)
    >>> round(tx.probabilities.flip_probability, 6)
    0.268941
    >>> source = tx.commit()      # nothing charged (no ledger), secure: no warning
    >>> source.secure
    True
    >>> tx.commit()
    Traceback (most recent call last):
    ...
    RuntimeError: a release transaction commits once; open a new one for another release
    """

    def __init__(self, epsilon: float, *, K: int = 2, seed: SeedLike = None,
                 ledger: PrivacyLedger | None = None, laplace_share: float = 0.0,
                 laplace_sensitivity: int = 2) -> None:
        self.laplace: DiscreteLaplace | None = None
        if laplace_share == 0:
            self.probabilities: RRProbabilities = rr_probabilities(epsilon, K)
            self._epsilon = self.probabilities.epsilon
        else:
            pairs, noise = split_epsilon(epsilon, laplace_share)
            self.probabilities = rr_probabilities(pairs, K)
            self.laplace = discrete_laplace(noise, laplace_sensitivity)
            self._epsilon = check_epsilon(epsilon)
        if ledger is not None and not isinstance(ledger, PrivacyLedger):
            raise TypeError(
                f"ledger must be a dpgraph.PrivacyLedger or None, got {type(ledger).__name__}; "
                "open one with dpgraph.PrivacyLedger.open(path, total_epsilon=...)"
            )
        self.ledger = ledger
        self._source: RandomSource = resolve_random(seed)
        self._committed = False

    @property
    def epsilon(self) -> float:
        """The validated privacy parameter (both parts of a composed release)."""
        return self._epsilon

    @property
    def secure(self) -> bool:
        """Whether the release will draw from the unpredictable (secure) stream."""
        return self._source.secure

    def commit(self, *, label: str | None = None) -> RandomSource:
        """Charge the ledger, warn if seeded, and return the random source.

        Call it after every check that can fail and immediately before
        sampling.

        Parameters
        ----------
        label : str, optional
            A note for the ledger entry (stored in clear: nothing private).
            The seeded-release warning names the first line outside dpgraph
            (the user's call of the public release function), found by
            walking the stack.

        Returns
        -------
        RandomSource

        Raises
        ------
        BudgetExceededError
            The ledger refuses the charge; nothing may be released.
        RuntimeError
            On a second commit (one transaction, one release).
        """
        if self._committed:
            raise RuntimeError("a release transaction commits once; open a new one for another "
                               "release")
        self._committed = True
        if self.ledger is not None:
            self.ledger._charge(self.epsilon, label)  # epsilon was validated at open
        warn_if_seeded(self._source)
        return self._source

    def __repr__(self) -> str:
        state = "committed" if self._committed else "open"
        ledger = "" if self.ledger is None else ", ledger"
        laplace = "" if self.laplace is None else f", laplace_epsilon={self.laplace.epsilon!r}"
        return (f"ReleaseTransaction(epsilon={self.epsilon!r}{laplace}, K={self.probabilities.K}, "
                f"{'secure' if self.secure else 'seeded'}{ledger}, {state})")

