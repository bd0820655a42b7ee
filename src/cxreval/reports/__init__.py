"""Report-derived labels: a section-aware, rule-based labeller for radiology report text."""
