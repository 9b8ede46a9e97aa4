"""dpgraph in one page: release a graph privately, then ask it questions.

    python examples/quickstart.py

The curator releases once; analysts then ask any number of cut queries from
the release at no further privacy cost.  Each answer comes with an exact
standard error, because the noise of randomized response does not depend on
the graph.
"""

import networkx as nx
import numpy as np

import dpgraph

# A sensitive graph: here a stochastic block model stands in for a social network.
G = nx.stochastic_block_model([150, 150, 100], [[0.10, 0.01, 0.01],
                                                [0.01, 0.08, 0.02],
                                                [0.01, 0.02, 0.12]], seed=7)

# The curator's single privacy-relevant step.  seed=None (the default) draws
# from a cryptographically secure stream: use it for real data.
R = dpgraph.release(G, epsilon=1.0)
print(R)

# Analysts: cut queries with error bars.
S, T = range(150), range(150, 300)
est = R.cut(S, T)
lo, hi = est.ci(0.95)
print(f"edges between blocks 1 and 2: {est.value:.0f} +- {est.std:.0f}  (95% CI {lo:.0f}..{hi:.0f})")
print(f"  truth (only the curator knows): {nx.cut_size(G, S, T)}")
print(f"  naive count on the released graph: {nx.cut_size(R.to_networkx(), S, T)}")

# Many queries at once.
rng = np.random.default_rng(0)
nodes = np.array(R.nodes)
pairs = []
for _ in range(5):
    side = rng.random(nodes.size) < 0.5
    pairs.append((nodes[side], nodes[~side]))
batch = R.cuts(pairs)
for (S, T), e in zip(pairs, batch):
    print(f"random half cut: estimate {e.value:8.1f} +- {e.std:5.1f}   truth {nx.cut_size(G, S, T)}")
