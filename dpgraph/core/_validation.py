"""Re-export of :mod:`dpgraph.validation` for code written before it was public."""

from ..validation import check_epsilon, check_level, check_positive_int, check_probability

__all__ = ["check_epsilon", "check_level", "check_positive_int", "check_probability"]
