"""Public metadata fetcher: the ``torchxrayvision==1.5.7`` wheel from PyPI, verified and unpacked.

The wheel carries real dataset metadata (ChestX-ray14 ``Data_Entry_2017_v2020.csv.gz``, ``BBox_List_2017``,
Google's 2019 expert labels, VinDr-CXR reader labels, OpenI reports, CheXpert train labels). cxreval
obtains it with :func:`pooch.retrieve` (download into a temporary file, SHA-256 check against the pinned
value, move into place; nothing partial is kept) and extracts the listed files into the cache directory.

What pooch does and does not do here: pooch has no PyPI downloader, and the wheel must come from PyPI
through ``pip download --no-deps`` (the one index reachable from every machine cxreval supports, with
pip's proxy/index configuration; nothing is installed), so pooch is given a small downloader that runs
pip; pooch owns the temporary file, the hash check and the move. A wheel passed with ``--from-wheel`` is
hashed in place with ``pooch.file_hash`` (no copy). The wheel itself is not kept (it lives in a temporary
folder): the cache holds the extracted files and a ``.wheel_sha256`` stamp, which makes the call idempotent.
Extraction uses :mod:`zipfile` rather than ``pooch.Unzip``: the files are wanted flat under
``torchxrayvision-data/`` (``Unzip`` keeps the wheel's ``torchxrayvision/data/`` folders), each written
atomically (``.part`` then rename), and a wheel that lacks one must be refused (``Unzip`` silently extracts
nothing for a missing member).

Cache directory: ``$CXREVAL_CACHE`` if set, else ``$XDG_CACHE_HOME/cxreval`` (``~/.cache/cxreval``);
every function takes ``cache_dir=`` to override both.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .._typing import PathLike
from .._validation import check_path
from ..exceptions import DataUnavailableError, InvalidParameterError
from ..progress import Progress, as_progress

__all__ = [
    "WHEEL_NAME",
    "WHEEL_VERSION",
    "WHEEL_FILE",
    "WHEEL_SHA256",
    "WHEEL_SIZE",
    "METADATA_FILES",
    "FetchResult",
    "resolve_cache_dir",
    "fetch_metadata",
    "metadata_path",
    "quiet_pooch",
]

log = logging.getLogger(__name__)

WHEEL_NAME = "torchxrayvision"
WHEEL_VERSION = "1.5.7"
WHEEL_FILE = f"{WHEEL_NAME}-{WHEEL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "95f6c3475661f3515d4258deb0855bd5d1b1a56e0b65384251d3dd3fa61fac41"
WHEEL_SIZE = 29_002_185
METADATA_FILES: tuple[str, ...] = (
    "Data_Entry_2017_v2020.csv.gz",
    "BBox_List_2017.csv.gz",
    "google2019_nih-chest-xray-labels.csv.gz",
    "vinbigdata-train.csv.gz",
    "NLMCXR_reports.tgz",
    "chexpert_train.csv.gz",
    "PADCHEST_chest_x_ray_images_labels_160K_01.02.19.csv.gz",
)
_IN_WHEEL = "torchxrayvision/data/"


def resolve_cache_dir(cache_dir: PathLike | None = None) -> Path:
    """The cache directory: the argument, else ``$CXREVAL_CACHE``, else ``$XDG_CACHE_HOME/cxreval``."""
    check_path(cache_dir, name="cache_dir", func="resolve_cache_dir")
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("CXREVAL_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cxreval"


@dataclass(frozen=True)
class FetchResult:
    """Where the metadata lies and what this call did (``downloaded``, ``extracted`` or ``cached``); with
    ``cxreval data fetch --all`` also the cached copy of every pinned reference file (``pinned``: mirror path to
    file)."""

    directory: Path
    files: dict[str, Path]
    action: str
    wheel_sha256: str
    pinned: dict[str, Path] = field(default_factory=dict)

    @property
    def pinned_directory(self) -> Path | None:
        """The folder holding the cached pinned files (``<cache>/mirror``); None without them."""
        return Path(os.path.commonpath([str(p) for p in self.pinned.values()])) if self.pinned else None

    @property
    def pinned_bytes(self) -> int:
        """Total size of the cached pinned files."""
        return sum(p.stat().st_size for p in self.pinned.values())

    def to_dict(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "files": {k: str(v) for k, v in self.files.items()},
            "action": self.action,
            "wheel_sha256": self.wheel_sha256,
            "pinned": {k: str(v) for k, v in self.pinned.items()},
            "pinned_bytes": self.pinned_bytes,
        }


@contextlib.contextmanager
def quiet_pooch() -> Iterator[None]:
    """Silence pooch's own INFO lines ("Downloading data from ...") for the duration; cxreval logs its own."""
    import pooch  # imported when used: importing cxreval.datasets stays cheap

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _mismatch(wheel: Path, got: str, expected: str) -> DataUnavailableError:
    return DataUnavailableError(
        f"Checksum mismatch for wheel {str(wheel)!r}: SHA-256 {got}, expected {expected} "
        f"({WHEEL_NAME}=={WHEEL_VERSION}). The file is corrupt or not the pinned release; delete it and fetch again."
    )


def _verify(wheel: Path, expected: str) -> str:
    import pooch

    got = pooch.file_hash(str(wheel), alg="sha256")
    if got != expected:
        raise _mismatch(wheel, got, expected)
    return got


def _download(dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "-d",
        str(dest),
        f"{WHEEL_NAME}=={WHEEL_VERSION}",
    ]
    log.info("downloading %s==%s (%.1f MB) with pip", WHEEL_NAME, WHEEL_VERSION, WHEEL_SIZE / 1e6)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DataUnavailableError(
            f"Could not run pip to download {WHEEL_NAME}=={WHEEL_VERSION}: {exc}"
        ) from exc
    wheel = dest / WHEEL_FILE
    if proc.returncode != 0 or not wheel.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DataUnavailableError(
            f"Could not download {WHEEL_NAME}=={WHEEL_VERSION} from PyPI (offline?): {tail[0]}. "
            f"Download {WHEEL_FILE} elsewhere and run `cxreval data fetch --from-wheel PATH`."
        )
    return wheel


def _pip_downloader(url: str, output_file: str, pooch_: object) -> None:
    """A pooch downloader that runs ``pip download`` and moves the wheel to pooch's temporary ``output_file``."""
    with tempfile.TemporaryDirectory(dir=Path(output_file).parent) as tmp:
        os.replace(_download(Path(tmp)), output_file)


def _retrieve_wheel(folder: Path, expected: str) -> Path:
    """Download the pinned wheel into ``folder`` with :func:`pooch.retrieve` (pip downloads, pooch verifies)."""
    import pooch

    url = f"https://pypi.org/project/{WHEEL_NAME}/{WHEEL_VERSION}/#{WHEEL_FILE}"
    try:
        with quiet_pooch():
            return Path(
                pooch.retrieve(
                    url,
                    known_hash=f"sha256:{expected}",
                    fname=WHEEL_FILE,
                    path=folder,
                    downloader=_pip_downloader,
                    progressbar=False,
                )
            )
    except DataUnavailableError as exc:  # raised by the downloader: one line, without pooch's frames
        raise DataUnavailableError(str(exc)) from None
    except ValueError as exc:  # pooch: the downloaded file's hash differs from the pinned one
        found = re.search(r"but got ([0-9a-fA-F]+)", str(exc))
        raise _mismatch(
            folder / WHEEL_FILE, found.group(1) if found else "of another file", expected
        ) from exc


def fetch_metadata(
    *,
    cache_dir: PathLike | None = None,
    from_wheel: PathLike | None = None,
    expected_sha256: str = WHEEL_SHA256,
    force: bool = False,
    progress: Progress | None = None,
) -> FetchResult:
    """Obtain the public metadata files into the cache (idempotent).

    Parameters
    ----------
    cache_dir : path, optional
        Cache directory (see :func:`resolve_cache_dir`).
    from_wheel : path, optional
        A local copy of the wheel; no network is used.
    expected_sha256 : str
        The pinned SHA-256 of the wheel.
    force : bool, default=False
        Re-extract even when every file is already cached.
    progress : Progress, optional
        Told each step (verifying, downloading, extracting a file) as a task of unknown size; ``None``: the
        steps are logged only.

    Raises
    ------
    DataUnavailableError
        Offline, pip failure, or a wheel whose checksum does not match.
    """
    check_path(cache_dir, name="cache_dir", func="fetch_metadata")
    check_path(from_wheel, name="from_wheel", func="fetch_metadata")
    if not isinstance(expected_sha256, str):
        raise InvalidParameterError(
            f"The 'expected_sha256' parameter of fetch_metadata must be a str. "
            f"Got {expected_sha256!r} instead."
        )
    prog = as_progress(progress, func="fetch_metadata")
    step: list[int] = []

    def say(msg: str) -> None:
        log.info("%s", msg)
        if step:
            prog.done(step.pop())
        step.append(prog.add(msg))

    root = resolve_cache_dir(cache_dir)
    target = root / "torchxrayvision-data"
    stamp = target / ".wheel_sha256"
    files = {name: target / name for name in METADATA_FILES}
    if (
        not force
        and stamp.exists()
        and stamp.read_text().strip() == expected_sha256
        and all(p.exists() for p in files.values())
    ):
        say(f"metadata already cached in {target}")
        prog.done(step.pop())
        return FetchResult(target, files, "cached", expected_sha256)
    target.mkdir(parents=True, exist_ok=True)
    action = "extracted"
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        if from_wheel is not None:
            wheel = Path(from_wheel)
            if not wheel.exists():
                raise DataUnavailableError(f"Wheel {str(wheel)!r} does not exist.")
            say(f"verifying SHA-256 of {wheel.name}")
            digest = _verify(wheel, expected_sha256)
        else:
            say(
                f"downloading {WHEEL_NAME}=={WHEEL_VERSION} from PyPI with pip (SHA-256 verified by pooch) ..."
            )
            wheel = _retrieve_wheel(Path(tmp), expected_sha256)
            digest = expected_sha256
            action = "downloaded"
        try:
            with zipfile.ZipFile(wheel) as zf:
                for name in METADATA_FILES:
                    say(f"extracting {name}")
                    with (
                        zf.open(_IN_WHEEL + name) as src,
                        open(files[name].with_suffix(".part"), "wb") as dst,
                    ):
                        shutil.copyfileobj(src, dst)
                    files[name].with_suffix(".part").replace(files[name])
        except (KeyError, zipfile.BadZipFile) as exc:
            raise DataUnavailableError(
                f"Wheel {str(wheel)!r} does not hold the expected metadata: {exc}"
            ) from exc
    stamp.write_text(digest + "\n")
    if step:
        prog.done(step.pop())
    return FetchResult(target, files, action, digest)


def metadata_path(name: str, *, cache_dir: PathLike | None = None, path: PathLike | None = None) -> Path:
    """Path of one metadata file: ``path`` if given (a user's own copy), else the cached copy.

    Raises
    ------
    DataUnavailableError
        If neither exists, with the command that fetches it.
    """
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"The 'name' parameter of metadata_path must be one of {list(METADATA_FILES)}. "
            f"Got {name!r} instead."
        )
    check_path(path, name="path", func="metadata_path")
    check_path(cache_dir, name="cache_dir", func="metadata_path")
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise DataUnavailableError(f"File {str(p)!r} does not exist.")
        return p
    if name not in METADATA_FILES:
        raise DataUnavailableError(
            f"{name!r} is not one of the fetched metadata files {list(METADATA_FILES)}."
        )
    p = resolve_cache_dir(cache_dir) / "torchxrayvision-data" / name
    if not p.exists():
        raise DataUnavailableError(
            f"{name} is not in the cache {str(p.parent)!r}; run `cxreval data fetch` first "
            f"(or pass the path of your own copy)."
        )
    return p
