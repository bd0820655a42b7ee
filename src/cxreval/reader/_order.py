"""The seeded orders of a study: each reader's item order per task, and which readers read which image.
Seeded by the study file's ``seed`` and names (the same on every visit, every server and every backend)."""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["reader_order", "priority_order", "assign_images"]


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def reader_order(keys: list[str], *, seed: int, reader: str, task: str) -> list[str]:
    """The item order of one reader and task: a permutation of the sorted keys, seeded by
    ``(seed, reader, task)`` so that it is the same on every visit and differs between readers."""
    rng = np.random.default_rng([seed, _stable_int(reader), _stable_int(task)])
    ordered = sorted(keys)
    return [ordered[i] for i in rng.permutation(len(ordered))]


def priority_order(keys: list[str], priority: dict[str, int]) -> list[str]:
    """The keys by their ``priority`` (lowest first; ties and keys without one, after, by key): the same for every
    reader (a relabelling plan's order, ``order: priority``)."""
    last = max(priority.values(), default=0) + 1
    return sorted(keys, key=lambda k: (priority.get(k, last), k))


def assign_images(
    keys: list[str], readers: tuple[str, ...], *, per_image: int, seed: int
) -> dict[str, set[str]]:
    """``{reader: keys}``: each image read by ``per_image`` distinct readers, the load balanced (every reader
    gets ``len(keys) * per_image // len(readers)`` images, or one more): the images in a seeded random order,
    each given to the ``per_image`` readers with the fewest images so far, ties broken at random (so pairs of
    readers are drawn at random, as VinDr-CXR's 3 of 17). ``per_image=0`` gives every reader every image.
    """
    if per_image == 0:
        return {r: set(keys) for r in readers}
    rng = np.random.default_rng([seed, _stable_int("assignment")])
    order = [sorted(keys)[i] for i in rng.permutation(len(keys))]
    load = np.zeros(len(readers), dtype=np.int64)
    out: dict[str, set[str]] = {r: set() for r in readers}
    for key in order:
        chosen = np.lexsort((rng.random(len(readers)), load))[:per_image]
        load[chosen] += 1
        for i in chosen:
            out[readers[int(i)]].add(key)
    return out
