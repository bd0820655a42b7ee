"""The rank correlation variants a ranking uses by default: the XQA-Chest paper's formulas (the functions and every
variant are :mod:`cxreval.stats`')."""

from __future__ import annotations

__all__ = ["DEFAULT_KENDALL", "DEFAULT_SPEARMAN"]

DEFAULT_KENDALL = "tau-a"
"""The XQA-Chest paper's KRCC: ``(C - D) / (n (n - 1) / 2)``."""
DEFAULT_SPEARMAN = "formula"
"""The XQA-Chest paper's SRCC: ``1 - 6 sum d² / (n (n² - 1))`` on average ranks."""
