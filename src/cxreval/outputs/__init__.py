"""Atomic output folders and files: a run either leaves its whole result at ``--out`` or nothing.

Every command writes into a temporary sibling of its output folder and renames it into place only when
the run succeeded, with a ``run.json`` that records the run::

    with output_folder(out, overwrite=False, inputs=[labels_csv]) as d:
        table.to_csv(d / "auc.csv", index=False)          # written into the temporary folder
    # here: out/ holds auc.csv and run.json; on any exception or Ctrl-C, out/ is untouched

Procedure
---------
1. :func:`check_output_path` (called on entry, before any work): ``out`` must not be a file, its nearest
   existing ancestor must be a writable folder, and an existing ``out`` is refused unless ``overwrite``.
   ``out`` may never be an input, nor hold one (at any depth), nor — when replacing it would remove
   something — lie inside a folder input; ``overwrite`` replaces only a folder cxreval wrote (one holding
   cxreval's ``run.json``), never a folder of other files.
2. A lock file ``.<name>.cxreval-lock`` beside ``out`` is created with ``O_EXCL``; a second run into the same
   ``out`` fails with :class:`OutputError` while the first holds it. A lock left by a killed run (its
   process no longer exists on this host) is taken over.
3. Files go into ``.<name>.tmp-<pid>-<random>`` beside ``out`` (same file system, so the final ``rename`` is
   atomic). On success ``run.json`` is written (argv, version, inputs with SHA-256, start/end UTC, status,
   files), an existing ``out`` is moved aside (``overwrite``), the temporary folder is renamed to ``out`` and
   the old folder removed. On failure the temporary folder is removed and ``out`` is left as it was; an
   ``OSError`` while writing (disk full, read-only file system, permission denied, quota) becomes one
   :class:`OutputError` naming ``out`` and the cause.

A SIGKILL during the run leaves only the hidden temporary folder and lock (never a partial ``out``); the
next run into the same ``out`` removes both. A run killed in the instant between moving the previous ``out``
aside and renaming the new folder in leaves the previous output hidden; the next run puts it back first.
"""

from ._folder import output_folder

__all__ = [
    "output_folder",
]
