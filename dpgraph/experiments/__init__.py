"""The paper's experiments, each runnable from ``dpgraph experiment NAME``.

Submodules are imported on demand (they pull in matplotlib and the datasets):

- :mod:`dpgraph.experiments.ratings`: the command line of the statistical-query experiments
  on ratings (section VI-A), re-exporting them from
  :mod:`~dpgraph.experiments.heterogeneity`, :mod:`~dpgraph.experiments.query_set_size`,
  :mod:`~dpgraph.experiments.scaling` and :mod:`~dpgraph.experiments.total_budget`
  (one release against many workloads), with their data in
  :mod:`~dpgraph.experiments.ratings_data`;
- :mod:`dpgraph.experiments.continuous`: the continuous universe (section V);
- :mod:`dpgraph.experiments.facebook_cuts` and :mod:`dpgraph.experiments.peers`: graphs.

Shared plumbing (output files, progress bars, common options) is in
:mod:`dpgraph.experiments._harness`.
"""
