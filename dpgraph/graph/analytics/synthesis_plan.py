"""What a synthesis costs, before it runs, and its progress while it runs.

:func:`~.synthesis.synthesize` spends its time in four stages: the
spectral prior (``eigen_products()`` products of the release with a block
of vectors, :mod:`.spectral`), the candidate pass (a dense release: every
vertex pair scored once; a sparse one: its released pairs only), the
selection under the degree targets, and building the networkx graph.
:func:`synthesis_plan` predicts each from operation counts times fixed
per-operation constants (measured on a 2-core AMD EPYC), never from a speed
measured at call time, so the same release gets the same prediction -- and
the same decision -- on a quiet or a loaded machine.  A prediction above
``max_seconds`` (without one: :data:`~.triangle_planning.UNLIMITED_CEILING`,
hours) is refused before any work.  The prediction assumes the degree prior
(rank one); a release whose spectrum has structure scores ``k`` columns a
pair, and the bar's total grows when ``k`` is known.  The degree
distribution the targets come from is not counted (it is computed once per
release and cached; ``R.degree_distribution()`` alone shows its time).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ..._numba import numba_enabled
from .._memory import release_kind
from ..kinds import offers
from ..packed import words_per_row
from .community_planning import eigen_products
from .triangle_planning import CostLimitError, Deadline, _secs, how_to_allow, limit_seconds

__all__ = ["SynthesisPlan", "SynthesisProgress", "synthesis_plan"]

#: seconds per unit of work on a 2-core AMD EPYC, measured under a load average of about 12
#: and divided by 6 (the machine's slowdown at that load against a quiet one): fixed, so a
#: prediction does not move with the load of the machine it is made on
_SEC_BYTE = 5e-9           # packed product: one byte of the upper triangle (tables, reads)
_SEC_BYTE_COL = 1.8e-9     # packed product: one byte, one column
_SEC_PAIR_ROW = 4e-9       # fused numba candidate pass: one vertex pair, its bit and compare
_SEC_PAIR = 3e-9           # fused numba candidate pass: one vertex pair, one prior column
_SEC_PAIR_NUMPY = 9e-8     # numpy candidate pass: one vertex pair (unpack, product, masks)
_SEC_RELEASED = 1e-7       # sparse release: one released pair (its prior and the top-k)
_SEC_CSR = 8e-9            # sparse (CSR) product: one stored pair (its float copy, the reads)
_SEC_CSR_COL = 2e-9        # sparse (CSR) product: one stored pair, one column
_SEC_CANDIDATE = 1e-6      # the top-k's final sort and the selection: one candidate
_SEC_EDGE = 3e-6           # building the networkx graph: one edge
START_BLOCK = 4            # the spectral prior's first eigen block (it doubles while all clear)


@dataclass(frozen=True)
class SynthesisPlan:
    """The decision taken before a synthesis, with its numbers.

    Attributes
    ----------
    n : int
    edges : int
        The synthetic edge count m_out.
    stages : tuple of (str, float)
        Each stage and its predicted seconds, in the order they run.
    max_seconds : float or None
        The caller's limit (None: none set; only hours are refused).
    reason : str
        One sentence: the prediction and the decision.
    """

    n: int
    edges: int
    stages: tuple
    max_seconds: float | None
    reason: str

    @property
    def seconds(self) -> float:
        """Predicted seconds of the whole call."""
        return float(sum(s for _, s in self.stages))


def pass_seconds(R: Any, rank: int) -> float:
    """Predicted seconds of the candidate pass with a rank-``rank`` prior."""
    n = R.number_of_nodes()
    pairs = float(n) * (n - 1) / 2
    if release_kind(R) == "sparse":
        return R.number_of_released_edges() * _SEC_RELEASED * max(1, rank) ** 0.5
    if numba_enabled() and hasattr(R.adjacency, "words"):
        return pairs * (_SEC_PAIR_ROW + _SEC_PAIR * rank)
    return pairs * _SEC_PAIR_NUMPY


def _product_seconds(R: Any, n: int, cols: int) -> float:
    """Model seconds of one product of the release with ``cols`` vectors: a packed release
    pays per byte of its upper triangle a fixed part (the byte tables, the reads) and a part
    per column; a CSR one the same per stored pair."""
    if "csr" in offers(R):
        return int(R.adjacency.indptr[-1]) * (_SEC_CSR + _SEC_CSR_COL * cols)
    return 8 * n * words_per_row(n) / 2 * (_SEC_BYTE + _SEC_BYTE_COL * cols)


def _candidates(R: Any, budget: int) -> int:
    """Candidates the selection sorts: the budget, at most a sparse release's released pairs."""
    if release_kind(R) == "sparse":
        return min(budget, int(R.number_of_released_edges()))
    return budget


def synthesis_plan(R: Any, m_out: int, budget: int, rank: int | None,
                   max_seconds: float | None) -> SynthesisPlan:
    """Predict what :func:`~.synthesis.synthesize` costs and decide; refuse over the limit.

    Raises
    ------
    CostLimitError
        The predicted seconds exceed ``max_seconds`` (or hours without one),
        before any work; the message gives each stage and the
        ``max_seconds`` that allows the call.
    """
    limit, given = limit_seconds(max_seconds)
    n = R.number_of_nodes()
    cols = START_BLOCK if rank is None else int(rank) + 8
    stages = (("spectral prior", eigen_products() * _product_seconds(R, n, cols)),
              ("candidate pass", pass_seconds(R, 1 if rank is None else int(rank))),
              ("selection", _candidates(R, budget) * _SEC_CANDIDATE),
              ("graph", m_out * _SEC_EDGE))
    total = sum(s for _, s in stages)
    what = (f"R.synthesize() on {n:,} nodes: about {_secs(total)} predicted ("
            + ", ".join(f"{name} {_secs(s)}" for name, s in stages) + "; operation-count model)")
    if total > limit:
        raise CostLimitError(f"{what}; {how_to_allow(total, given, limit)}; nothing was computed")
    return SynthesisPlan(n, m_out, stages, limit if given else None,
                         f"{what}, {'within max_seconds=' + format(limit, 'g') if given else 'no limit set'}")


class SynthesisProgress:
    """A tqdm bar in predicted seconds over the stages of a plan, and the caller's deadline.

    The bar's unit is a predicted second, so its rate is this machine's speed
    now against the model and its time left follows the load.  ``advance``
    moves it by a fraction of a stage and checks the deadline (a
    :class:`~.triangle_planning.Deadline`: past ``max_seconds`` the call stops
    with :class:`~.triangle_planning.CostLimitError`, keeping nothing).
    ``show=None`` shows the bar for 5,000 nodes or more when the error stream
    is a terminal; tqdm missing means no bar.
    """

    def __init__(self, plan: SynthesisPlan, show: bool | None) -> None:
        self.stages = dict(plan.stages)
        self.total = plan.seconds
        self.done_s = 0.0
        self.done: dict = {}
        self.products = 0
        self.first_spectral = self.stages.get("spectral prior", 0.0)
        limit = plan.max_seconds
        self.deadline = Deadline(f"R.synthesize() on {plan.n:,} nodes",
                                 limit if limit is not None else 0.0, limit is not None, plan.seconds)
        self.bar = None
        on = (plan.n >= 5000 and sys.stderr.isatty()) if show is None else bool(show)
        if on:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # pragma: no cover - optional
                return
            self.bar = tqdm(total=self.total, desc="synthesize", unit="s predicted",
                            leave=False)

    def resize(self, stage: str, seconds: float) -> None:
        """A stage's prediction, once what it depends on (the prior's rank) is known."""
        self.total += seconds - self.stages.get(stage, 0.0)
        self.stages[stage] = seconds
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def advance(self, stage: str, fraction: float) -> None:
        """``fraction`` of ``stage`` done since the last call; stop if over the caller's limit."""
        step = min(self.stages.get(stage, 0.0) * fraction,
                   self.stages.get(stage, 0.0) - self.done.get(stage, 0.0))
        self._move(stage, max(step, 0.0))

    def finish(self, stage: str) -> None:
        """``stage`` is complete: the bar moves by whatever of it is left."""
        self._move(stage, max(self.stages.get(stage, 0.0) - self.done.get(stage, 0.0), 0.0))

    def product(self) -> None:
        """One product of the spectral prior: 1 / ``eigen_products()`` of its stage (a block
        that doubles takes more products than predicted: the stage grows by each)."""
        stage = "spectral prior"
        self.products += 1
        per = self.first_spectral / eigen_products()
        if self.done.get(stage, 0.0) + per > self.stages[stage] + 1e-12:
            self.resize(stage, self.stages[stage] + per)
        self._move(stage, per)

    def _move(self, stage: str, step: float) -> None:
        self.done[stage] = self.done.get(stage, 0.0) + step
        self.done_s += step
        if self.bar is not None:
            self.bar.set_postfix_str(stage, refresh=False)
            self.bar.update(step)
        self.deadline.check()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
