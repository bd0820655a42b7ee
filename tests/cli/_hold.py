"""The run matrix's pause, installed by the test into the process of a run (never by the library): with every
file written into ``output_folder``'s temporary folder, before ``run.json`` and the commit, the run prints
``cxreval: test hold`` on stderr and waits for SIGUSR1 or ``seconds`` (SIGINT still works)."""

from __future__ import annotations

import signal
import sys
import time

MARK = "cxreval: test hold"


def hold(seconds: float) -> None:
    """Pause until SIGUSR1 or ``seconds``, after saying so on stderr."""
    if not hasattr(signal, "sigtimedwait"):
        sys.stderr.write(MARK + "\n")
        sys.stderr.flush()
        time.sleep(seconds)
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        sys.stderr.write(MARK + "\n")
        sys.stderr.flush()
        signal.sigtimedwait({signal.SIGUSR1}, seconds)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def install(seconds: float) -> None:
    """Hold every ``output_folder`` of this process once its files are written: ``write_run_record``, which
    ``output_folder`` calls right before committing, first pauses."""
    import cxreval.outputs._folder as folder

    record = folder.write_run_record

    def held_record(*args: object, **kwargs: object) -> object:
        hold(seconds)
        return record(*args, **kwargs)  # type: ignore[arg-type]

    folder.write_run_record = held_record  # type: ignore[assignment]


MAIN = (
    "import sys; sys.path.insert(0, {path!r}); import _hold; _hold.install({seconds!r}); sys.argv[0] = 'cxreval'; "
    "from cxreval.cli.main import main; sys.exit(main(sys.argv[1:]))"
)
"""``python -c`` code that runs ``cxreval ARGS`` (as ``python -m cxreval`` does) with the hold installed."""
