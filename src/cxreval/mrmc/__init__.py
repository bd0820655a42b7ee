"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.
"""

__all__: list[str] = []
