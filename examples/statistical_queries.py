"""The statistical-query core: mechanism E on a database of ratings.

    python examples/statistical_queries.py

Every row (a rating 1..5) is released by K-ary randomized response; any
statistical query, with a different row function per group of rows if need be,
is then answered by the unbiased companion estimator, with an error bar.
"""

import numpy as np

from dpgraph import bounds
from dpgraph.core import MechanismE, StatisticalQuery, Universe

rng = np.random.default_rng(1)
U = Universe([1, 2, 3, 4, 5])
n = 50_000
X = rng.choice([1, 2, 3, 4, 5], size=n, p=[0.05, 0.1, 0.25, 0.35, 0.25])  # private ratings

M = MechanismE(U, epsilon=1.0)
Y = M.release(X)  # secure randomness by default
print(M)

# A linear query: the share of 4- and 5-star ratings.
q = StatisticalQuery.linear([0, 0, 0, 1, 1], n=n, universe=U)
est = M.estimate(q, Y)
print(f"share of 4-5 stars: {est.value:.4f} +- {est.std:.4f} (truth {q(X):.4f}, naive {q(Y):.4f})")

# A heterogeneous statistical query: two groups of rows, two row functions.
groups = (np.arange(n) >= n // 2).astype(int)
functions = np.array([[0, 0, 0, 0, 1],          # group 0: 5-star indicator
                      [1, 0.5, 0, 0, 0]])       # group 1: a graded "dislike" score
q2 = StatisticalQuery.grouped(functions, groups, universe=U)
est2 = M.estimate(q2, Y)  # proper (Lemma 3) by default; proper=False gives q_u
print(f"heterogeneous query: {est2.value:.4f} (truth {q2(X):.4f}); "
      f"Lemma 3 RMSE bound {bounds.statistical_upper(n, 5, 1.0, proper=True) ** 0.5:.4f}")
