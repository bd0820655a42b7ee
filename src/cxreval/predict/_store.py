"""The resume store of a prediction run: one small ``.npz`` shard per batch, beside the output folder.

A run writes each batch's scores, CAM maps and read errors to ``<partial>/g<group>-<seq>.npz`` (written to
a temporary name, then renamed, so a shard is whole or absent). A run that stops (Ctrl-C, crash, power
loss) leaves the shards; the next run with the same settings reads them, skips the images they hold and
continues. The settings that change results (model specs, preprocessing, heatmap options, DICOM
windowing) are kept in ``config.json``; a run with other settings refuses the store instead of mixing
results (``restart=True`` discards it). Images that failed to read are tried again on the next run.

:func:`write_heatmaps_npz` streams maps into one ``.npz`` (keys ``"<image id>/<finding>"``, the layout
``cxreval localize`` reads) one shard at a time, so memory does not grow with the number of images.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._typing import PathLike
from ..exceptions import SchemaError

__all__ = ["Shard", "PartialStore", "NpzWriter"]

_CONFIG = "config.json"


@dataclass(frozen=True)
class Shard:
    """One stored batch of one preprocessing group."""

    group: int
    seq: int
    ids: np.ndarray  # images predicted (str)
    scores: dict[int, np.ndarray]  # model index -> (n, k) float64
    maps: dict[int, np.ndarray]  # model index -> (n, k, h, w) float64 (heatmaps only)
    err_ids: np.ndarray
    err_paths: np.ndarray
    err_msgs: np.ndarray


class PartialStore:
    """Shards of a run in progress, in ``folder`` (see the module docstring)."""

    def __init__(self, folder: PathLike, config: Mapping[str, object], *, restart: bool = False) -> None:
        self.folder = Path(folder)
        self.config = json.loads(json.dumps(config, default=str))
        cfg_file = self.folder / _CONFIG
        if self.folder.exists() and restart:
            shutil.rmtree(self.folder)
        if cfg_file.is_file() and not self.shard_files():  # a run that stopped before its first batch
            cfg_file.unlink()
        if cfg_file.is_file():
            old = json.loads(cfg_file.read_text())
            if old != self.config:
                diff = sorted(k for k in set(old) | set(self.config) if old.get(k) != self.config.get(k))
                raise SchemaError(
                    f"unfinished results in {self.folder} were made with other settings ({diff}); "
                    "run with the same settings to resume, or pass restart=True to discard them."
                )
        elif self.folder.exists() and any(self.folder.iterdir()):
            raise SchemaError(
                f"{self.folder} exists but is not a cxreval resume store (no {_CONFIG}); remove it."
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        cfg_file.write_text(json.dumps(self.config, indent=2, sort_keys=True) + "\n")
        self._seq: dict[int, int] = {}
        for s in self.shard_files():
            g, q = self._parse(s)
            self._seq[g] = max(self._seq.get(g, -1), q)

    @staticmethod
    def _parse(p: Path) -> tuple[int, int]:
        g, q = p.stem[1:].split("-")
        return int(g), int(q)

    def shard_files(self) -> list[Path]:
        return sorted(p for p in self.folder.glob("g*-*.npz") if not p.name.startswith("."))

    def write(
        self,
        group: int,
        ids: Iterable[str],
        scores: Mapping[int, np.ndarray],
        maps: Mapping[int, np.ndarray],
        errors: Iterable[tuple[str, str, str]],
    ) -> Path:
        """Store one batch atomically; ``errors`` are ``(study_id, path, message)``."""
        seq = self._seq.get(group, -1) + 1
        self._seq[group] = seq
        err = list(errors)
        arrays: dict[str, np.ndarray] = {
            "ids": np.asarray(list(ids), dtype=str),
            "err_ids": np.asarray([e[0] for e in err], dtype=str),
            "err_paths": np.asarray([e[1] for e in err], dtype=str),
            "err_msgs": np.asarray([e[2] for e in err], dtype=str),
        }
        arrays.update({f"scores_{m}": np.asarray(v, dtype=np.float64) for m, v in scores.items()})
        arrays.update({f"maps_{m}": np.asarray(v, dtype=np.float64) for m, v in maps.items()})
        final = self.folder / f"g{group}-{seq:06d}.npz"
        tmp = self.folder / f".tmp-{secrets.token_hex(4)}.npz"
        np.savez(tmp, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, final)
        return final

    def shards(self, *, with_maps: bool = True) -> Iterator[Shard]:
        for p in self.shard_files():
            g, q = self._parse(p)
            with np.load(p, allow_pickle=False) as z:
                scores = {int(k[7:]): z[k] for k in z.files if k.startswith("scores_")}
                maps = {int(k[5:]): z[k] for k in z.files if k.startswith("maps_")} if with_maps else {}
                yield Shard(g, q, z["ids"], scores, maps, z["err_ids"], z["err_paths"], z["err_msgs"])

    def done(self, group: int) -> set[str]:
        """Images of ``group`` already predicted."""
        out: set[str] = set()
        for s in self.shards(with_maps=False):
            if s.group == group:
                out.update(s.ids.tolist())
        return out

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class NpzWriter:
    """Write arrays one at a time into a compressed ``.npz`` readable by ``numpy.load`` (no pickles)."""

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self._zip = zipfile.ZipFile(self.path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.n = 0

    def add(self, key: str, array: np.ndarray) -> None:
        with self._zip.open(key + ".npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array(fh, np.asanyarray(array), allow_pickle=False)
        self.n += 1

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> NpzWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
