"""The bench suites, one module per capability; ``bench/run.py`` runs them (``python bench/run.py --list``)."""

SUITES = (
    "classification",
    "ranking",
    "agreement",
    "fusion",
    "localization",
    "iqa",
    "labeller",
    "reader",
    "predict",
    "scale",
    "cli",
    "datasets",
    "latent",
    "planning",
    "soft",
    "mrmc",
    "subgroups",
)

__all__ = ["SUITES"]
