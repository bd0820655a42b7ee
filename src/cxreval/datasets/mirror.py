"""GitHub-hosted reference files (model predictions, CheXpert test labels, official splits), fetched
from pinned commit URLs and verified by SHA-256, or taken from a local mirror folder.

Each file is identified by its path in a mirror folder laid out like the project's ``shared/data``
(e.g. ``chexpert_test/groundtruth.csv``). :data:`PINNED` gives, for every such file, the repository,
the full commit, the path in the repository, the size and the SHA-256; the raw URL is
``https://raw.githubusercontent.com/<repo>/<commit>/<path>``. :func:`fetch_file` looks in the mirror
first, then in the cache (``resolve_cache_dir()/mirror``), then downloads into the cache with
:func:`pooch.retrieve` (download to a temporary file, SHA-256 check against the pin, move into place);
every copy is checked against the pinned SHA-256 (``pooch.file_hash``) before it is used. Being offline raises
:class:`~cxreval.exceptions.DataUnavailableError` (callers such as ``cxreval demo`` then mark a section
as unavailable), never a crash.

Files that are not on GitHub at a pinned commit (e.g. the IQA fixture of the tests) are only read from a mirror:
:func:`mirror_path`.

Mirror folder: the ``mirror=`` argument, else ``$CXREVAL_DATA_MIRROR`` (the one environment variable for a local
copy of these files, :data:`MIRROR_ENV`), else ``../shared/data`` relative to the working directory when it
exists (:func:`default_mirror`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .._typing import PathLike
from .._validation import did_you_mean
from ..exceptions import DataUnavailableError, UnknownNameError
from ..progress import Progress, as_progress
from ._fetch import quiet_pooch, resolve_cache_dir
from ._pinned import _BY_PATH, PINNED, RAW_BASE_URL, MirrorFile

__all__ = [
    "PINNED",
    "default_mirror",
]

MIRROR_ENV = "CXREVAL_DATA_MIRROR"
"""The environment variable naming a local folder laid out like the data mirror (``../shared/data``): the one
name for the local copy of the reference files, read by the library, the CLI, the demo, the tests and the
benchmarks."""

log = logging.getLogger(__name__)


def read_manifest(path: PathLike) -> tuple[MirrorFile, ...]:
    """Read a ``MANIFEST.tsv`` (columns ``local_path, repo, commit, repo_path, bytes, sha256``): its downloadable
    files.

    A row whose ``blob_matches_local`` (when the column is present) is not ``True`` is a file derived from the
    repository's blob (an R data set exported to CSV): the raw URL does not give its bytes, so it is not pinned
    for download and is left out; such a file is read from a mirror folder only.

    Raises
    ------
    SchemaError
        If a column is missing or a size is not an integer; the message names the row.
    """
    import csv

    from ..exceptions import SchemaError

    need = ("local_path", "repo", "commit", "repo_path", "bytes", "sha256")
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise SchemaError(
                f"Manifest {str(path)!r} is missing column(s) {missing}; it has {reader.fieldnames}."
            )
        out = []
        for i, row in enumerate(reader):
            if str(row.get("blob_matches_local", "True")).strip() != "True":
                continue  # derived from the blob, not the blob itself: mirror only
            try:
                n = int(row["bytes"])
            except (TypeError, ValueError) as exc:
                raise SchemaError(
                    f"Manifest {str(path)!r} row {i}: 'bytes' must be an integer, got {row['bytes']!r}."
                ) from exc
            out.append(
                MirrorFile(
                    row["local_path"], row["repo"], row["commit"], row["repo_path"], n, row["sha256"].lower()
                )
            )
    return tuple(out)


def default_mirror(mirror: PathLike | None = None) -> Path | None:
    """The mirror folder: the argument, else ``$CXREVAL_DATA_MIRROR``, else ``../shared/data`` if it exists."""
    if mirror is not None:
        return Path(mirror).expanduser()
    env = os.environ.get(MIRROR_ENV)
    if env:
        return Path(env).expanduser()
    guess = Path.cwd().parent / "shared" / "data"
    return guess if guess.is_dir() else None


def pinned_file(local_path: str, *, files: Sequence[MirrorFile] = PINNED) -> MirrorFile:
    """The pinned entry of ``local_path``.

    Raises
    ------
    UnknownNameError
        If no entry has that path (with a did-you-mean hint; also an ``InvalidParameterError``).
    """
    by = _BY_PATH if files is PINNED else {f.local_path: f for f in files}
    if local_path in by:
        return by[local_path]
    hint = did_you_mean(str(local_path), by, cutoff=0.5)
    raise UnknownNameError(
        f"No pinned reference file {local_path!r}; see cxreval.datasets.mirror.PINNED.{hint}"
    )


def pinned_files(prefix: str, *, files: Sequence[MirrorFile] = PINNED) -> tuple[MirrorFile, ...]:
    """Entries whose ``local_path`` starts with ``prefix`` (e.g. ``"nih_fold_predictions/"``)."""
    return tuple(f for f in files if f.local_path.startswith(prefix))


def _known_hash(entry: MirrorFile) -> str:
    return f"sha256:{entry.sha256}"


def _verified(path: Path, entry: MirrorFile) -> bool:
    import pooch  # imported when used: importing cxreval.datasets stays cheap

    return (
        path.is_file()
        and path.stat().st_size == entry.n_bytes
        and pooch.file_hash(str(path), alg="sha256") == entry.sha256
    )


def _copy_file_url(url: str, output_file: str, pooch_: object = None) -> None:
    """A pooch downloader for ``file://`` URLs (tests and offline copies laid out like raw.githubusercontent.com)."""
    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlparse(url).path), output_file)


def _downloader(url: str, entry: MirrorFile, timeout: float) -> Callable[[str, str, object], None]:
    """pooch's downloader for ``url`` whose failures are one :class:`DataUnavailableError` line."""
    import pooch

    scheme = urllib.parse.urlparse(url).scheme
    kinds: dict[str, Callable[[], Callable[..., object]]] = {
        "file": lambda: _copy_file_url,
        "http": lambda: pooch.HTTPDownloader(timeout=timeout),
        "https": lambda: pooch.HTTPDownloader(timeout=timeout),
        "ftp": lambda: pooch.FTPDownloader(timeout=timeout),
    }
    if scheme not in kinds:
        raise DataUnavailableError(
            f"Cannot download {entry.local_path!r} from {url}: the URL scheme must be one of {sorted(kinds)}."
        )
    inner = kinds[scheme]()

    def download(url: str, output_file: str, pooch_: object) -> None:
        import requests

        try:
            inner(url, output_file, pooch_)
        except (requests.RequestException, OSError, ValueError) as exc:
            raise DataUnavailableError(
                f"Could not download {entry.local_path!r} from {url} ({_why_not(exc, url, timeout)}). "
                f"{offline_advice(entry.local_path)}"
            ) from None

    return download


def offline_advice(local_path: str) -> str:
    """What to do without the network: the one environment variable that names a local copy of the data."""
    return (
        f"To work offline, set {MIRROR_ENV} to a folder laid out like the data mirror (holding {local_path})."
    )


def _why_not(exc: BaseException, url: str, timeout: float) -> str:
    """A download failure in a few words (the library's own exception chain runs to dozens of lines)."""
    import requests

    host = urllib.parse.urlparse(url).netloc or url
    if isinstance(exc, requests.Timeout):
        return f"{host} did not answer within {timeout:g} s"
    if isinstance(exc, requests.ConnectionError):
        return f"no connection to {host}; offline, or behind a proxy that blocks it?"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} from {host}"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


def _download(entry: MirrorFile, dest: Path, *, base_url: str, timeout: float) -> Path:
    """Download ``entry`` to ``dest`` with :func:`pooch.retrieve`: into a temporary file next to ``dest``,
    SHA-256 checked against the pin, then moved into place (nothing partial is left on failure)."""
    import pooch

    url = entry.url(base_url)
    log.info("downloading %s", url)
    try:
        with quiet_pooch():
            got = pooch.retrieve(
                url,
                known_hash=_known_hash(entry),
                fname=dest.name,
                path=dest.parent,
                downloader=_downloader(url, entry, timeout),
                progressbar=False,
            )
    except DataUnavailableError as exc:  # raised by the downloader: one line, without pooch's frames
        raise DataUnavailableError(str(exc)) from None
    except ValueError as exc:  # pooch: the downloaded file's hash differs from the known one
        found = re.search(r"but got ([0-9a-fA-F]+)", str(exc))
        raise DataUnavailableError(
            f"Checksum mismatch for {url}: SHA-256 {found.group(1) if found else 'of another file'}, expected "
            f"{entry.sha256} ({entry.local_path}). The download is corrupt or not the pinned file."
        ) from exc
    return Path(got)


def fetch_file(
    local_path: str,
    *,
    mirror: PathLike | None = None,
    cache_dir: PathLike | None = None,
    base_url: str = RAW_BASE_URL,
    timeout: float = 30.0,
    download: bool = True,
    files: Sequence[MirrorFile] = PINNED,
) -> Path:
    """Return a verified local copy of a pinned reference file.

    Parameters
    ----------
    local_path : str
        The file's path in a mirror folder, e.g. ``"chexpert_test/groundtruth.csv"``.
    mirror : path, optional
        Mirror folder (see :func:`default_mirror`; pass it explicitly to skip the defaults).
    cache_dir : path, optional
        Cache root (see :func:`cxreval.datasets.resolve_cache_dir`); downloads go to ``<cache>/mirror``.
    base_url : str, default=RAW_BASE_URL
        Where raw files are served (``file://`` URLs work, for tests and offline copies).
    timeout : float, default=30
        Network timeout in seconds.
    download : bool, default=True
        If False, never use the network.
    files : sequence of MirrorFile, default=PINNED
        The pinned entries.

    Returns
    -------
    path : Path

    Raises
    ------
    DataUnavailableError
        Offline, not in the mirror or cache, or a copy whose SHA-256 differs from the pinned one.
    InvalidParameterError
        ``local_path`` is not pinned.
    """
    entry = pinned_file(local_path, files=files)
    mirror_dir = default_mirror(mirror)
    if mirror_dir is not None:
        p = mirror_dir / entry.local_path
        if p.is_file():
            if not _verified(p, entry):
                raise DataUnavailableError(
                    f"Mirror copy {str(p)!r} does not match the pinned SHA-256 {entry.sha256} "
                    f"({entry.repo}@{entry.commit[:7]} {entry.repo_path})."
                )
            return p
    cached = resolve_cache_dir(cache_dir) / "mirror" / entry.local_path
    if _verified(cached, entry):
        return cached
    if not download:
        raise DataUnavailableError(
            f"{entry.local_path!r} is neither in the mirror ({mirror_dir}) nor cached "
            f"({cached}) and downloading is off."
        )
    return _download(entry, cached, base_url=_pinned_base_url(base_url), timeout=timeout)


def _pinned_base_url(base_url: str = RAW_BASE_URL) -> str:
    """``base_url``, or ``$CXREVAL_PINNED_BASE_URL`` when ``base_url`` is the default: a local index laid out
    as ``<base>/<repo>/<commit>/<path>`` (an ``http(s)://`` or ``file://`` URL) serves the pinned files."""
    if base_url == RAW_BASE_URL:
        return os.environ.get("CXREVAL_PINNED_BASE_URL") or RAW_BASE_URL
    return base_url


def fetch_all_pinned(
    *,
    cache_dir: PathLike | None = None,
    mirror: PathLike | None = None,
    progress: Progress | None = None,
    files: Sequence[MirrorFile] = PINNED,
    **kwargs: Any,
) -> dict[str, Path]:
    """Every pinned file (as :func:`fetch_file` gives it: mirror, cache, then its pinned URL, SHA-256 checked),
    copied into ``<cache>/mirror`` so that later offline runs find them without the mirror; one progress step
    per file.

    Returns
    -------
    paths : dict of str to Path
        Each pinned file's local path to its cached copy.
    """
    prog = as_progress(progress, func="fetch_all_pinned")
    task = prog.add("pinned reference files", total=len(files))
    root = resolve_cache_dir(cache_dir) / "mirror"
    out: dict[str, Path] = {}
    for e in files:
        p = fetch_file(e.local_path, mirror=mirror, cache_dir=cache_dir, files=files, **kwargs)
        out[e.local_path] = _into_cache(p, root / e.local_path)
        prog.advance(task)
    prog.done(task)
    return out


def fetch_folder(
    prefix: str,
    *,
    mirror: PathLike | None = None,
    cache_dir: PathLike | None = None,
    files: Sequence[MirrorFile] = PINNED,
    **kwargs: Any,
) -> Path:
    """A folder holding verified copies of exactly the pinned files directly under ``prefix`` (e.g.
    ``"nih_fold_predictions/"``): the mirror's folder when it holds those files and no other, else
    ``<cache>/mirror/<prefix>`` (each file fetched as :func:`fetch_file` does: mirror, cache, then its pinned URL,
    SHA-256 checked; copies from the mirror are put beside the cached ones).

    Raises
    ------
    DataUnavailableError
        As :func:`fetch_file`; also no pinned file under ``prefix``.
    """
    entries = [e for e in pinned_files(prefix, files=files) if "/" not in e.local_path[len(prefix) :]]
    if not entries:
        raise DataUnavailableError(f"No pinned file under {prefix!r}; see cxreval.datasets.mirror.PINNED.")
    paths = [
        fetch_file(e.local_path, mirror=mirror, cache_dir=cache_dir, files=files, **kwargs) for e in entries
    ]
    parents = {p.parent for p in paths}
    if len(parents) == 1:
        folder = parents.pop()
        if {f.name for f in folder.iterdir() if f.is_file()} == {p.name for p in paths}:
            return folder
    cache = resolve_cache_dir(cache_dir) / "mirror" / prefix  # one folder of exactly the pinned files
    for e, p in zip(entries, paths):
        _into_cache(p, resolve_cache_dir(cache_dir) / "mirror" / e.local_path)
    return cache


def _into_cache(path: Path, dest: Path) -> Path:
    """``dest``, a copy of the verified file ``path`` (a mirror copy put beside the cached ones; written to a
    temporary name, then moved into place)."""
    if path != dest:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.part")
        shutil.copyfile(path, tmp)
        tmp.replace(dest)
    return dest


def fetch_files(local_paths: Iterable[str], **kwargs: Any) -> dict[str, Path]:
    """:func:`fetch_file` for several files; returns ``{local_path: path}``."""
    return {p: fetch_file(p, **kwargs) for p in local_paths}


def mirror_path(relative: str, *, mirror: PathLike | None = None) -> Path:
    """A file or folder that is only available from a mirror (not pinned on GitHub).

    Raises
    ------
    DataUnavailableError
        If there is no mirror or it lacks ``relative``.
    """
    mirror_dir = default_mirror(mirror)
    if mirror_dir is None:
        raise DataUnavailableError(
            f"{relative!r} is only available from a data mirror; set {MIRROR_ENV} to a folder laid out like "
            f"the data mirror (holding {relative}), or pass it as mirror=."
        )
    p = mirror_dir / relative
    if not p.exists():
        raise DataUnavailableError(f"{relative!r} is not in the data mirror {str(mirror_dir)!r}.")
    return p
