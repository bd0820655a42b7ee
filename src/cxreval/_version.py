"""The version of cxreval, in the core layer so that every layer can read it (``cxreval.__version__``)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
