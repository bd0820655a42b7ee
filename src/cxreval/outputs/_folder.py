"""The output folder itself: checks of ``out``, its lock, the temporary folder renamed into place, atomic
files."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from .._typing import PathLike
from ..exceptions import CxrevalError
from ._errors import OutputError
from ._run_record import (
    RUN_FILE,
    is_cxreval_folder,
    utc_now,
    write_run_record,
)

__all__ = [
    "check_output_path",
    "output_folder",
    "atomic_file",
    "write_error",
    "path_inside",
    "remove_killed_tmp",
]

_LOCK_SUFFIX = ".cxreval-lock"
_TMP_MARK = ".tmp-"
_TORN_LOCK_AGE_S = 10.0


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    return p


_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.EFBIG})
"""The errors of a file system that cannot take the output (full, read-only, not permitted, over quota)."""


def _normal(path: PathLike) -> Path:
    """``path`` absolute, with ``..`` resolved as the kernel does (``a/ghost/../res`` is ``a/res``, and no
    ``ghost`` folder is ever created)."""
    p = Path(path).expanduser().absolute()
    if ".." in p.parts:
        p = Path(os.path.realpath(p)) if p.name == ".." else Path(os.path.realpath(p.parent)) / p.name
    return p


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _check_inputs(out: Path, inputs: Sequence[str | os.PathLike[str]], *, replaces: bool) -> None:
    """Refuse an ``out`` that is an input, holds one, or (when writing it would remove something) lies inside
    a folder input."""
    real_out = _real(out)
    for x in inputs:
        if x is None:
            continue
        p = Path(x).expanduser().absolute()
        if not p.exists():
            continue
        real_in = _real(p)
        if real_in == real_out:
            raise OutputError(
                f"out={str(out)!r} is the input {p}; writing there would destroy it. Choose another path."
            )
        if real_out in real_in.parents:
            raise OutputError(
                f"out={str(out)!r} holds the input {p}; writing there would remove it. Choose another path."
            )
        if replaces and real_in.is_dir() and real_in in real_out.parents:
            raise OutputError(
                f"out={str(out)!r} lies inside the input folder {p}, and replacing it would change that "
                f"input. Choose an output path outside {p}."
            )


def check_output_path(
    out: PathLike,
    *,
    overwrite: bool = False,
    kind: str = "folder",
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Check that ``out`` can receive a new output (``kind`` 'folder' or 'file') before any work starts.

    ``inputs`` are the run's input files and folders: ``out`` must not be one, hold one, or lie inside a
    folder input when replacing it would remove something. With ``overwrite``, an existing non-empty folder
    is replaced only when cxreval wrote it (it holds cxreval's ``run.json``).

    Returns the absolute path. Raises :class:`OutputError` naming the path and the fix.
    """
    out = _normal(out)
    exists = out.exists() or out.is_symlink()
    nonempty = exists and out.is_dir() and any(out.iterdir())
    _check_inputs(out, inputs, replaces=nonempty or (kind == "file" and exists))
    if out.is_symlink() and not out.exists():
        raise OutputError(_dangling_link(out))
    if exists:
        if kind == "folder" and not out.is_dir():
            raise OutputError(
                f"out={str(out)!r} is a file; an output folder is expected. Choose another path."
            )
        if kind == "file" and out.is_dir():
            raise OutputError(
                f"out={str(out)!r} is a folder; an output file is expected. Choose another path."
            )
        if not overwrite and (kind == "file" or nonempty):
            raise OutputError(
                f"out={str(out)!r} already exists. Choose a new path or pass overwrite=True to replace it whole."
            )
        if kind == "folder" and nonempty and not is_cxreval_folder(out):
            raise OutputError(
                f"out={str(out)!r} is a folder cxreval did not write (it has no cxreval {RUN_FILE}); "
                f"overwrite=True replaces only an earlier cxreval output. Choose a new path."
            )
    anc = _nearest_existing(out.parent)
    if not anc.is_dir():
        raise OutputError(f"out={str(out)!r}: {anc} is a file, so nothing can be created under it.")
    if not os.access(anc, os.W_OK | os.X_OK):
        ro = bool(os.statvfs(anc).f_flag & os.ST_RDONLY)
        raise OutputError(
            f"out={str(out)!r}: the folder {anc} is not writable"
            + (" (read-only file system)." if ro else ".")
        )
    return out


def _dangling_link(out: Path) -> str:
    """Why the symbolic link ``out`` leads nowhere: a loop, or a target that does not exist."""
    import errno

    try:
        os.stat(out)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return (
                f"out={str(out)!r} is a symbolic link that loops (it leads back to itself: "
                f"{os.readlink(out)!r}); remove the link or choose another path."
            )
    return (
        f"out={str(out)!r} is a symbolic link to {os.readlink(out)!r}, which does not exist; remove the link "
        f"or choose another path."
    )


def write_error(out: Path, exc: OSError, *, made: Sequence[Path] = ()) -> OutputError | None:
    """The :class:`OutputError` for an ``OSError`` raised while writing ``out`` (None when ``exc`` is not a
    write error: it names a file that is not part of the output, or it names none and its errno is not one of
    a file system refusing the output).

    The output's files are ``out``, what lies under it, its hidden temporary folders and lock beside it (and
    under them), and the parent folders the run creates (``made``)."""
    if isinstance(exc, CxrevalError):
        return None
    names = [
        f for f in (exc.filename, getattr(exc, "filename2", None)) if isinstance(f, (str, bytes, os.PathLike))
    ]
    if names:
        parent, mine = _real(out.parent), {_real(m) for m in made}

        def ours(f: str | bytes | os.PathLike[str]) -> bool:
            q = _real(Path(os.fsdecode(f)).absolute())
            for a in (q, *q.parents):
                if a in mine or (
                    a.parent == parent and (a.name == out.name or a.name.startswith(f".{out.name}."))
                ):
                    return True
            return False

        if not any(ours(f) for f in names):
            return None
    elif exc.errno not in _WRITE_ERRNOS and not any(os.strerror(e) in str(exc) for e in _WRITE_ERRNOS):
        return None  # (pyarrow's write errors carry the cause only in their text)
    cause = exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return OutputError(f"out={str(out)!r}: could not write the output ({cause}); nothing was written.")


def path_inside(folder: PathLike, name: object, *, what: str) -> Path:
    """``folder / name`` for a file whose name comes from the user's data or options (a study id, a split or
    degradation name), refused when it could name a file outside ``folder``: the one builder of such paths.

    ``name`` is a relative path whose parts are separated by ``/`` (a CheXpert study id
    ``patient00001/study1`` makes a sub-folder); it may not be empty, absolute (``/x``, ``\\x``, a drive on Windows), hold a
    ``..`` part (with ``/`` or ``\\`` around it), a NUL or another control character, and the joined path, with
    ``.`` and ``..`` resolved as text, must stay under ``folder``.

    Raises
    ------
    SchemaError
        Naming ``what`` (e.g. ``"study_id"``), the value and what is expected.

    Examples
    --------
    >>> path_inside("out/images", "patient1/study1.png", what="study_id").as_posix()
    'out/images/patient1/study1.png'
    >>> path_inside("out/images", "../../x.png", what="study_id")
    Traceback (most recent call last):
    ...
    cxreval.exceptions.SchemaError: The study_id '../../x.png' cannot name a file inside out/images: ...
    """
    from ..exceptions import SchemaError

    base = Path(folder)
    text = name if isinstance(name, str) else None
    why = ""
    if text is None:
        why = f"it is not text ({type(name).__name__})"
    elif not text.strip():
        why = "it is blank"
    elif any(ord(c) < 32 or ord(c) == 127 for c in text):
        why = "it holds a control character"
    elif text.startswith(("/", "\\")) or Path(text).is_absolute() or Path(text).drive:
        why = "it is an absolute path"
    elif ".." in text.replace("\\", "/").split("/"):
        why = "it holds a '..' part, which leads out of the folder"
    else:
        joined = os.path.normpath(os.path.join(str(base), text))
        if os.path.relpath(joined, os.path.normpath(str(base))).split(os.sep)[0] == "..":
            why = "it leads out of the folder"
    if why:
        raise SchemaError(
            f"The {what} {name!r} cannot name a file inside {base}: {why}. Expected a relative name "
            f"(parts separated by '/', none of them '..')."
        )
    return base / text  # type: ignore[operator]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _take_lock(lock: Path, out: Path) -> None:
    payload = f"{os.getpid()} {socket.gethostname()}\n".encode()
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid_s, host = lock.read_text().split()[:2]
                stale = host == socket.gethostname() and not _pid_alive(int(pid_s))
            except FileNotFoundError:  # released meanwhile: try again
                continue
            except (OSError, ValueError):  # empty or torn: a run killed between creating and writing it
                try:
                    stale = time.time() - lock.stat().st_mtime > _TORN_LOCK_AGE_S
                except FileNotFoundError:
                    continue
            if not stale:
                raise OutputError(
                    f"out={str(out)!r} is being written by another cxreval run (lock {lock}). Wait for it "
                    f"to finish, or remove the lock file if no run is active."
                ) from None
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        return
    raise OutputError(f"out={str(out)!r}: could not take the lock {lock}.")


def _remove_stale_tmp(out: Path) -> None:
    """Remove temporary folders/files of killed runs into ``out`` (their pid no longer exists)."""
    prefix = f".{out.name}{_TMP_MARK}"
    if not out.parent.is_dir():
        return
    for p in out.parent.iterdir():
        if not p.name.startswith(prefix):
            continue
        try:
            pid = int(p.name[len(prefix) :].split("-")[0])
        except ValueError:
            continue
        if _pid_alive(pid):
            continue
        if "-old-" in p.name and p.is_dir() and not out.exists():
            # killed between moving the previous output aside and moving the new one in: put it back
            p.rename(out)
            continue
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def remove_killed_tmp(folder: PathLike) -> list[Path]:
    """Remove from ``folder`` the temporary files :func:`atomic_file` left there for runs that were killed
    (their process no longer exists); the files removed."""
    d = Path(folder)
    gone = []
    for p in d.iterdir() if d.is_dir() else ():
        pid = p.name.split(_TMP_MARK, 1)[1].split("-")[0] if _TMP_MARK in p.name and p.is_file() else ""
        if pid.isdigit() and not _pid_alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
            gone.append(p)
    return gone


@contextlib.contextmanager
def output_folder(
    out: PathLike,
    *,
    overwrite: bool = False,
    inputs: Sequence[str | os.PathLike[str]] = (),
    argv: Sequence[str] | None = None,
    meta: dict[str, object] | None = None,
    protect: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Write a run's outputs atomically into the folder ``out`` (see the module docstring).

    Parameters
    ----------
    out : path
        The final output folder.
    overwrite : bool, default=False
        Replace an existing ``out`` whole (never mixing runs); without it an existing non-empty ``out`` is refused.
    inputs : sequence of paths
        Input files or folders, recorded in ``run.json`` with their SHA-256.
    argv : sequence of str, optional
        The command line recorded in ``run.json`` (default ``sys.argv``).
    meta : dict, optional
        Extra JSON-serialisable fields for ``run.json`` (e.g. seed, parameters).
    protect : sequence of paths
        Further inputs (a folder of images, a cache) that ``out`` must not be, hold or replace inside, as
        ``inputs``, but not hashed into ``run.json``.

    Yields
    ------
    tmp : Path
        The temporary folder to write into.
    """

    guarded = [*inputs, *protect]
    out = check_output_path(out, overwrite=overwrite, kind="folder", inputs=guarded)
    made = _make_parents(out)
    lock = out.parent / f".{out.name}{_LOCK_SUFFIX}"
    try:
        _take_lock(lock, out)
    except OSError as exc:
        _raise_write_error(out, exc, made)
    tmp = out.parent / f".{out.name}{_TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    started = utc_now()
    committed = False
    try:
        _remove_stale_tmp(out)
        # again: a killed run's output may be back
        check_output_path(out, overwrite=overwrite, kind="folder", inputs=guarded)
        tmp.mkdir()
        yield tmp
        write_run_record(tmp, started=started, inputs=inputs, argv=argv, meta=meta)
        old = None
        if out.exists():
            if not overwrite and any(out.iterdir()):
                raise OutputError(
                    f"out={str(out)!r} appeared during the run. Pass overwrite=True to replace it."
                )
            old = out.parent / f".{out.name}{_TMP_MARK}{os.getpid()}-old-{secrets.token_hex(4)}"
            out.rename(old)
        tmp.rename(out)
        committed = True
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        err = write_error(out, exc, made=made)
        if err is None:
            raise
        raise err from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
        if not committed:
            _remove_made(made)


def _raise_write_error(out: Path, exc: OSError, made: list[Path]) -> None:
    """Remove the parent folders this run made, then raise ``exc`` as the one-line error naming ``out`` (or as
    it is, when it is not a writing error)."""
    _remove_made(made)
    err = write_error(out, exc, made=made)
    if err is None:
        raise exc
    raise err from exc


def _make_parents(out: Path) -> list[Path]:
    """Create the missing parents of ``out``; return them (deepest first), for removal if the run fails."""
    made = []
    p = out.parent
    while not p.exists() and p.parent != p:
        made.append(p)
        p = p.parent
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _raise_write_error(out, exc, made)
    return made


def _remove_made(made: Sequence[Path]) -> None:
    for p in made:  # deepest first; only while empty
        with contextlib.suppress(OSError):
            p.rmdir()


@contextlib.contextmanager
def atomic_file(
    out: PathLike, *, overwrite: bool = False, inputs: Sequence[str | os.PathLike[str]] = ()
) -> Iterator[Path]:
    """Write one output file atomically: yields a temporary path beside ``out``, renamed onto ``out`` on success.

    ``out`` is checked by :func:`check_output_path` with ``inputs`` (the run's input files and folders: ``out``
    may not be one, nor replace a file inside a folder input)."""
    out = check_output_path(out, overwrite=overwrite, kind="file", inputs=inputs)
    made = _make_parents(out)
    tmp = out.parent / f".{out.name}{_TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        yield tmp
        if not tmp.exists():
            raise OutputError(f"Internal error: nothing was written for {out}.")
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        _remove_made(made)
        err = write_error(out, exc, made=made)
        if err is None:
            raise
        raise err from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        _remove_made(made)
        raise
