"""The one seam for parallel work: ``map(func, items) -> list``, in order, results identical to serial.

Map-style work (bootstrap replicates in shards, heatmaps → boxes in chunks of maps) is written as a pure,
top-level function applied to a list of items, and handed to an *executor*. Where it runs is the
executor's business and nobody else's:

* :class:`SerialExecutor` (the default everywhere): in this process, in order.
* :class:`ProcessExecutor`: a ``concurrent.futures.ProcessPoolExecutor`` on this machine; ``func`` (with
  its bound data) goes to each worker once, and the items are cut into contiguous chunks, one task each.
* :class:`DaskExecutor`: a ``dask.distributed`` client (a local cluster of ``N`` worker processes or a
  scheduler address); the optional ``dask`` extra (``pip install cxreval[dask]``).

Every executor says whether it runs in this process (``in_process``: then work may read arrays in memory
and report progress item by item) and takes an ``on_item`` callback, called with each item as its result
comes in (the :class:`Executor` protocol). Any object with a ``map(func, items)`` method returning the
results in the order of ``items`` plugs in the same way (:func:`get_executor` adds what it lacks); every
public ``executor=`` is an :data:`ExecutorLike`, which :func:`get_executor` turns into one, and
:func:`open_executor` does the same as a context manager that closes whatever the executor started (a Dask
``LocalCluster`` and its worker processes), also on an error or Ctrl-C. The specs, as the CLI's ``--executor``:

=========================  ==========================================================================
``serial`` (or ``None``)   in this process
``process`` / ``process:N``  worker processes on this machine (all CPUs / ``N``)
``dask:local:N``           a ``distributed.LocalCluster`` of ``N`` single-threaded worker processes,
                           started on first use and closed when the executor is closed
``dask://HOST:PORT``       the Dask scheduler at ``tcp://HOST:PORT`` (also ``dask:tcp://HOST:PORT``);
                           the workers must see the input paths (shared storage)
``dask``                   the current default client, else a new LocalCluster
=========================  ==========================================================================

Randomness never depends on the executor: every random draw happens before mapping (the bootstrap draws
its whole resampling plan with ``rng`` first; each shard only reads rows of it), so the same inputs and
seed give identical outputs on every executor. Functions handed to a process or Dask executor must be
picklable: module-level functions, or ``functools.partial`` of them with picklable arguments.

Two modules go with the seam. Large arrays reach the workers through a *spill folder*
(:func:`cxreval.spill.spill_arrays` writes them once as ``.npy`` files, each task carries their paths and
:func:`~cxreval.spill.load_spilled` memory-maps them), not inside every task. Work that reports its progress
takes a ``progress=`` object of the :class:`cxreval.progress.Progress` protocol (``add(description, total)``,
``advance(task, n)``, ``done(task)``; the CLI's progress bars are one), typically advanced from ``on_item``.

Examples
--------
>>> ex = get_executor("serial")
>>> ex.map(abs, [-2, 1, -3])
[2, 1, 3]
>>> get_executor("process:2")
ProcessExecutor(max_workers=2)
>>> from cxreval.executor._local import SerialExecutor
>>> get_executor(None) == SerialExecutor()
True
>>> seen = []; ex.map(abs, [-2, 1], on_item=seen.append), seen
([2, 1], [-2, 1])
"""

from ._local import Executor, ExecutorLike
from ._specs import get_executor, open_executor

__all__ = [
    "Executor",
    "ExecutorLike",
    "get_executor",
    "open_executor",
]
