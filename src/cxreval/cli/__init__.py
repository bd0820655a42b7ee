"""The ``cxreval`` command line. Each ``cli/<command>.py`` module defines ``register(app)``; no analysis
logic lives here: commands parse options, call the library and write files."""

__all__: list[str] = []
