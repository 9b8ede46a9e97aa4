"""The paper's experiments, each runnable from ``dpgraph experiment NAME``.

Submodules are imported on demand (they pull in matplotlib and the datasets):
:mod:`dpgraph.experiments.ratings` (statistical queries on ratings, section VI-A) and
:mod:`dpgraph.experiments.continuous` (continuous universe, section V).
"""
