"""Debiased graph analytics on a PrivateGraph (filled in by the analytics work)."""

from __future__ import annotations

__all__ = ["AnalyticsMixin"]


class AnalyticsMixin:
    """PrivateGraph methods for graph statistics beyond cuts."""
