"""Controlled, reproducible degradations of radiographs, driven by a plan file.

Every transform works on a float64 image in ``[0, data_range]`` and returns one in the same range
(clipped), with no rounding except where the transform itself is a quantiser (JPEG is 8-bit by
definition). The kinds follow a scanner's visualisation settings and beyond:

============================  =========================================================================
transform                     parameters
============================  =========================================================================
``window``                    ``level``, ``width`` (fractions of the range): ``(x - (level - width/2)) / width``
``contrast_stretch``          ``low``, ``high`` (percentiles): ``(x - P_low) / (P_high - P_low)``
``gamma``                     ``gamma``: ``R (x / R) ** gamma``
``unsharp_mask``              ``sigma``, ``amount``: ``x + amount (x - G_sigma * x)``
``gaussian_blur``             ``sigma`` (pixels; ``scipy.ndimage.gaussian_filter``, reflect, truncate 4)
``gaussian_noise``            ``sigma`` (fraction of the range): ``x + R N(0, sigma)``
``poisson_noise``             ``peak`` (photon count at full range): ``R Poisson(peak x / R) / peak``
``resample``                  ``factor`` (> 1), ``order`` (spline order, default 1): down by ``factor``
                              with anti-aliasing, then back up to the original size
``jpeg``                      ``quality`` (1-95): rounded to 8 bits, Pillow JPEG, decoded
============================  =========================================================================

A plan is YAML (or JSON)::

    seed: 0
    output_dtype: same          # same | uint8 | uint16 | float32
    degradations:
      - {name: blur_s1, transform: gaussian_blur, params: {sigma: 1.0}}
      - {transform: gaussian_noise, params: {sigma: [0.01, 0.02]}}   # a list expands to one entry each

Noise draws use ``numpy.random.default_rng([seed, image_index, degradation_index])`` unless an entry
gives its own ``seed`` (then ``default_rng(seed + image_index)``); the manifest records it.

:func:`degrade_folder` (what ``cxreval iqa degrade`` and the demo run) makes a self-contained folder: the
sources copied byte for byte into ``references/``, the degraded images in ``images/``, and a
:class:`DegradeResult` whose tables name both by paths relative to that folder; :meth:`DegradeResult.save`
writes ``manifest`` and ``pairs`` (the input of ``cxreval iqa score``, whose relative paths are read against
the pairs file's folder).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import check_positive_int, is_number, normalize_rng, read_yaml_file
from ..exceptions import InvalidParameterError, SchemaError
from ..io.images import IMAGE_SUFFIXES, box_downsample, read_image, write_image
from ..outputs._folder import path_inside
from ..results import TableResult
from ._image import check_image

__all__ = [
    "TRANSFORMS",
    "apply_degradation",
    "read_plan",
    "DegradationPlan",
    "DegradeResult",
    "degrade_images",
    "degrade_folder",
    "MANIFEST_COLUMNS",
    "PAIR_COLUMNS",
    "REFERENCES_DIR",
    "IMAGES_DIR",
    "BUILTIN_PLANS",
    "plan_source",
    "sample_images",
    "shrink_images",
    "ImageFiles",
    "image_files",
]

MANIFEST_COLUMNS: tuple[str, ...] = (
    "source",
    "source_sha256",
    "reference",
    "test",
    "degradation",
    "transform",
    "params",
    "seed",
    "dtype",
    "data_range",
    "sha256",
)
"""Columns of the manifest (one row per degraded image)."""

PAIR_COLUMNS: tuple[str, ...] = ("image", "reference", "test", "degradation")
"""Columns of the pairs table (``image``: the reference's file stem); :func:`cxreval.iqa.score_pairs` carries
``image`` and ``degradation`` onto every score row."""

REFERENCES_DIR = "references"
"""Sub-folder of :func:`degrade_folder`'s output holding the copies of the source images."""

IMAGES_DIR = "images"
"""Sub-folder of :func:`degrade_folder`'s output holding the degraded images."""


def _clip(x: np.ndarray, r: float) -> np.ndarray:
    return np.clip(x, 0.0, r)


def _window(x: np.ndarray, r: float, rng: np.random.Generator, *, level: float, width: float) -> np.ndarray:
    if width <= 0:
        raise InvalidParameterError(f"window: 'width' must be > 0. Got {width!r}.")
    lo = (level - width / 2.0) * r
    return _clip((x - lo) / (width * r) * r, r)


def _contrast_stretch(
    x: np.ndarray, r: float, rng: np.random.Generator, *, low: float = 2.0, high: float = 98.0
) -> np.ndarray:
    p_lo, p_hi = np.percentile(x / r, [low, high])
    if p_hi <= p_lo:
        raise InvalidParameterError(f"contrast_stretch: percentiles {low} and {high} give an empty range.")
    return _clip((x / r - p_lo) / (p_hi - p_lo), 1.0) * r


def _gamma(x: np.ndarray, r: float, rng: np.random.Generator, *, gamma: float) -> np.ndarray:
    if gamma <= 0:
        raise InvalidParameterError(f"gamma: 'gamma' must be > 0. Got {gamma!r}.")
    return r * np.power(_clip(x, r) / r, gamma)


def _positive(transform: str, name: str, value: object) -> float:
    """A parameter that must be a finite number > 0 (a sigma of 0 or less is no degradation at all)."""
    if not is_number(value) or not np.isfinite(value) or value <= 0:
        raise InvalidParameterError(f"{transform}: {name!r} must be a number > 0. Got {value!r}.")
    return float(value)


def _unsharp(x: np.ndarray, r: float, rng: np.random.Generator, *, sigma: float, amount: float) -> np.ndarray:
    from scipy import ndimage

    sigma = _positive("unsharp_mask", "sigma", sigma)
    amount = _positive("unsharp_mask", "amount", amount)
    return _clip(x + amount * (x - ndimage.gaussian_filter(x, sigma, mode="reflect", truncate=4.0)), r)


def _blur(x: np.ndarray, r: float, rng: np.random.Generator, *, sigma: float) -> np.ndarray:
    from scipy import ndimage

    sigma = _positive("gaussian_blur", "sigma", sigma)
    return _clip(ndimage.gaussian_filter(x, sigma, mode="reflect", truncate=4.0), r)


def _gnoise(x: np.ndarray, r: float, rng: np.random.Generator, *, sigma: float) -> np.ndarray:
    sigma = _positive("gaussian_noise", "sigma", sigma)
    return _clip(x / r + rng.normal(0.0, sigma, x.shape), 1.0) * r


def _pnoise(x: np.ndarray, r: float, rng: np.random.Generator, *, peak: float) -> np.ndarray:
    if peak <= 0:
        raise InvalidParameterError(f"poisson_noise: 'peak' must be > 0. Got {peak!r}.")
    return _clip(r * rng.poisson(_clip(x, r) / r * peak) / peak, r)


def _resample(
    x: np.ndarray, r: float, rng: np.random.Generator, *, factor: float, order: int = 1
) -> np.ndarray:
    from skimage.transform import resize

    if factor <= 1:
        raise InvalidParameterError(f"resample: 'factor' must be > 1. Got {factor!r}.")
    small = (max(1, int(round(x.shape[0] / factor))), max(1, int(round(x.shape[1] / factor))))
    down = resize(x, small, order=order, mode="reflect", anti_aliasing=True, preserve_range=True)
    return _clip(
        resize(down, x.shape, order=order, mode="reflect", anti_aliasing=False, preserve_range=True), r
    )


def _jpeg(x: np.ndarray, r: float, rng: np.random.Generator, *, quality: int) -> np.ndarray:
    from PIL import Image

    if not 1 <= int(quality) <= 95:
        raise InvalidParameterError(f"jpeg: 'quality' must be in 1..95. Got {quality!r}.")
    u8 = np.rint(_clip(x, r) / r * 255.0).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(u8, mode="L").save(buf, format="JPEG", quality=int(quality))
    buf.seek(0)
    with Image.open(buf) as im:
        return np.asarray(im, dtype=np.float64) / 255.0 * r


TRANSFORMS: dict[str, Callable[..., np.ndarray]] = {
    "window": _window,
    "contrast_stretch": _contrast_stretch,
    "gamma": _gamma,
    "unsharp_mask": _unsharp,
    "gaussian_blur": _blur,
    "gaussian_noise": _gnoise,
    "poisson_noise": _pnoise,
    "resample": _resample,
    "jpeg": _jpeg,
}
_RANDOM = {"gaussian_noise", "poisson_noise"}


def apply_degradation(
    image: np.ndarray,
    transform: str,
    params: Mapping[str, object] | None = None,
    *,
    data_range: float,
    rng: RNGLike = None,
) -> np.ndarray:
    """Apply one named transform (see the module table) to a float image in ``[0, data_range]``.

    Parameters
    ----------
    image : array-like of shape (H, W)
    transform : str
        A key of :data:`TRANSFORMS`.
    params : mapping
        The transform's parameters.
    data_range : float
    rng : None, int or numpy.random.Generator
        Used by the noise transforms.

    Returns
    -------
    degraded : numpy.ndarray of shape (H, W), float64

    Examples
    --------
    >>> import numpy as np
    >>> apply_degradation(np.full((2, 2), 0.25), "gamma", {"gamma": 0.5}, data_range=1.0).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    if transform not in TRANSFORMS:
        raise InvalidParameterError(
            f"Unknown degradation {transform!r}; expected one of {sorted(TRANSFORMS)}."
        )
    x = check_image(image, name="image", func=f"degradation {transform!r}")
    r = float(data_range)
    try:
        return TRANSFORMS[transform](x, r, normalize_rng(rng), **dict(params or {}))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(
            f"degradation {transform!r}: bad parameters {dict(params or {})}: {exc}"
        ) from exc


@dataclass(frozen=True)
class DegradationPlan:
    """A parsed plan: ``entries`` are ``(name, transform, params, seed_or_None)``."""

    seed: int
    output_dtype: str
    entries: tuple[tuple[str, str, dict, int | None], ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "output_dtype": self.output_dtype,
            "degradations": [
                {"name": n, "transform": t, "params": p, "seed": s} for n, t, p, s in self.entries
            ],
        }


def read_plan(source: str | Path | Mapping[str, object]) -> DegradationPlan:
    """Read and validate a plan (YAML/JSON file or an already-parsed mapping; its typed model and format are
    ``iqa/_plan_file.py``)."""
    from .._config import validate_config
    from ._plan_file import PlanFile

    where = str(source) if not isinstance(source, Mapping) else "plan"
    raw = dict(source) if isinstance(source, Mapping) else read_yaml_file(source, what="Plan file")
    plan = validate_config(PlanFile, raw, where=where)
    entries = tuple((e.name, e.transform, dict(e.params), e.seed) for e in plan.degradations)
    return DegradationPlan(plan.seed, plan.output_dtype, entries)


@dataclass(frozen=True)
class DegradeResult(TableResult):
    """What :func:`degrade_images` / :func:`degrade_folder` wrote.

    Attributes
    ----------
    manifest : pandas.DataFrame
        One row per written image, columns :data:`MANIFEST_COLUMNS`: ``source, source_sha256, reference, test,
        degradation, transform, params`` (JSON), ``seed``, ``dtype``, ``data_range``, ``sha256``.
    plan : DegradationPlan
    skipped : tuple of str
        Files of the input folder that are not images (:func:`degrade_folder`), left alone.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"manifest": "manifest.csv", "pairs": "pairs.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = MANIFEST_COLUMNS

    manifest: pd.DataFrame
    plan: DegradationPlan
    skipped: tuple[str, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """The manifest."""
        return self.manifest

    def pairs(self) -> pd.DataFrame:
        """The (reference, test) table for ``cxreval iqa score``: columns :data:`PAIR_COLUMNS`."""
        m = self.manifest
        return pd.DataFrame(
            {
                "image": [Path(str(r)).stem for r in m["reference"]],
                "reference": m["reference"],
                "test": m["test"],
                "degradation": m["degradation"],
            },
            columns=list(PAIR_COLUMNS),
        )

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"manifest": self.manifest, "pairs": self.pairs()}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write ``manifest`` and ``pairs`` (CSV + Parquet), ``manifest.json`` (the plan and every row) and
        ``summary.md``: with the images :func:`degrade_folder` wrote, what ``cxreval iqa degrade`` writes."""
        from ..io._write import write_summary

        paths = super().save(folder)
        (Path(folder) / "manifest.json").write_text(
            json.dumps(
                {"plan": self.plan.to_dict(), "files": self.manifest.to_dict(orient="records")}, indent=1
            )
        )
        write_summary(Path(folder), self.summary())
        return paths

    def summary(self, title: str = "cxreval iqa degrade") -> str:
        """What was written, as Markdown (``summary.md`` of ``cxreval iqa degrade``)."""
        n_src = int(self.manifest["source"].nunique()) if len(self.manifest) else 0
        return (
            f"# {title}\n\n{n_src} source image(s) x {len(self.plan.entries)} degradation(s) = "
            f"{len(self.manifest)} image(s) in `{IMAGES_DIR}/`.\n\n"
            f"Skipped non-image files: {list(self.skipped) or 'none'}.\n"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "n_images": int(self.manifest["source"].nunique()),
            "n_written": int(len(self.manifest)),
            "plan": self.plan.to_dict(),
            "skipped": list(self.skipped),
        }

    def _figure(self) -> Any:
        """Test images written per degradation."""
        from .._plots import bars

        counts = self.manifest.groupby("degradation", sort=False).size().rename("images").reset_index()
        return bars(counts, x="degradation", y="images", title="Degraded test images per degradation")


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def degrade_images(
    images: Sequence[str | Path], plan: DegradationPlan | str | Path | Mapping[str, object], out: str | Path
) -> DegradeResult:
    """Apply every degradation of ``plan`` to every image and write the results and a manifest.

    Outputs are ``out/<stem>__<degradation>.<png|tif>`` (PNG for integer types, TIFF for float32); the
    manifest is returned (the command line writes it as ``manifest.csv``/``.json``).
    """
    plan = plan if isinstance(plan, DegradationPlan) else read_plan(plan)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, path in enumerate(sorted(Path(p) for p in images)):
        img = read_image(path)
        lo, hi = float(np.min(img.image)), float(np.max(img.image))
        if lo < 0 or hi > img.data_range:
            raise SchemaError(
                f"{path}: pixel values {lo:g}..{hi:g} lie outside the data range 0..{img.data_range:g} "
                f"of its type ({img.dtype}); the degradations would clip them. Rescale float images "
                "to [0, 1] (or store them as 8/16-bit integers) first."
            )
        src_sha = _sha256(path)
        dtype = (
            plan.output_dtype
            if plan.output_dtype != "same"
            else (img.dtype if img.dtype in ("uint8", "uint16") else "float32")
        )
        for j, (name, transform, params, seed) in enumerate(plan.entries):
            seed_used = [plan.seed, i, j] if seed is None else int(seed) + i
            rng = np.random.default_rng(seed_used)
            y = apply_degradation(img.image, transform, params, data_range=img.data_range, rng=rng)
            suffix = ".tif" if dtype == "float32" else ".png"
            target = path_inside(out, f"{path.stem}__{name}{suffix}", what="degraded image name")
            write_image(target, y, data_range=img.data_range, dtype=dtype)
            rows.append(
                {
                    "source": str(path),
                    "source_sha256": src_sha,
                    "reference": str(path),
                    "test": str(target),
                    "degradation": name,
                    "transform": transform,
                    "params": json.dumps(params, sort_keys=True),
                    "seed": json.dumps(seed_used) if transform in _RANDOM else "",
                    "dtype": dtype,
                    "data_range": img.data_range,
                    "sha256": _sha256(target),
                }
            )
    return DegradeResult(pd.DataFrame(rows), plan)


class ImageFiles(NamedTuple):
    """What :func:`image_files` returns: the image files and the names of the folder's other files."""

    files: list[Path]
    skipped: list[str]


def image_files(
    images: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> ImageFiles:
    """The image files of a folder (by suffix, sorted) and the names of its other files; or the given paths."""
    if isinstance(images, (str, os.PathLike)):
        folder = Path(images)
        if not folder.is_dir():
            raise SchemaError(f"images: {folder} is not a folder.")
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        skipped = sorted(
            p.name for p in folder.iterdir() if p.is_file() and p.suffix.lower() not in IMAGE_SUFFIXES
        )
        if not files:
            raise SchemaError(f"images: {folder} holds no image files ({', '.join(IMAGE_SUFFIXES)}).")
        return ImageFiles(files, skipped)
    files = sorted(Path(p) for p in images)
    if not files:
        raise SchemaError("images: no image files given.")
    names = [p.name for p in files]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SchemaError(
            f"images: file name(s) {twice} appear more than once; the copies in "
            f"{REFERENCES_DIR}/ need distinct names."
        )
    return ImageFiles(files, [])


def degrade_folder(
    images: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    plan: DegradationPlan | str | Path | Mapping[str, object],
    out: PathLike,
    *,
    sample: int | None = None,
    max_size: int | None = None,
) -> DegradeResult:
    """Degrade images into a self-contained folder: ``out/references/`` and ``out/images/``
    (``cxreval iqa degrade`` and the demo's IQA section).

    ``sample`` images of the sorted names are chosen (:func:`sample_images`); each is copied byte for byte to
    ``out/references/<name>`` (left as is when it already lies there), or with ``max_size`` block-averaged
    there as a 16-bit PNG (:func:`shrink_images`), and degraded by :func:`degrade_images` into
    ``out/images/<stem>__<degradation>.<png|tif>``. The images are written into ``out`` now; the result's
    tables name them by paths relative to ``out`` (``source`` and ``reference`` are the copy), so the folder
    can be moved, mounted elsewhere or opened as a reader study. :meth:`DegradeResult.save` into ``out``
    writes the tables and ``summary.md``.

    Parameters
    ----------
    images : path or sequence of paths
        A folder (its files with an image suffix, :data:`~cxreval.io.images.IMAGE_SUFFIXES`, are used and the
        others listed in ``skipped``) or image files with distinct names.
    plan : DegradationPlan, path, name or mapping
        See :func:`read_plan`; a name of :data:`BUILTIN_PLANS` is the packaged plan (:func:`plan_source`).
    out : path
        The folder to write into (created if needed).
    sample : int, optional
        Degrade this many of the images, spread over the sorted names; default: all.
    max_size : int, optional
        Block-average each image to at most this many pixels on its longest side; default: copy as is.

    Returns
    -------
    res : DegradeResult

    Raises
    ------
    SchemaError
        Not a folder, no image files, repeated file names, a bad plan, or a float image outside [0, 1].
    """
    func = "degrade_folder"
    for name, value in (("sample", sample), ("max_size", max_size)):
        if value is not None:
            check_positive_int(value, name=name, func=func)
    plan = plan if isinstance(plan, (DegradationPlan, Mapping)) else plan_source(plan)
    plan = plan if isinstance(plan, DegradationPlan) else read_plan(plan)
    files, skipped = image_files(images)
    chosen = files if sample is None else sample_images(files, sample)
    out = Path(out)
    if max_size is not None:
        chosen = shrink_images(chosen, out / REFERENCES_DIR, max_size)
    if chosen != files:  # a chosen or shrunk subset: the folder's other files are not listed
        files, skipped = chosen, []
    refs = out / REFERENCES_DIR
    refs.mkdir(parents=True, exist_ok=True)
    copies = []
    for p in files:
        target = refs / p.name
        if not (target.exists() and target.resolve() == p.resolve()):
            shutil.copyfile(p, target)
        copies.append(target)
    res = degrade_images(copies, plan, out / IMAGES_DIR)
    root = out.resolve()
    manifest = res.manifest.copy()
    for col in ("source", "reference", "test"):
        manifest[col] = [str(Path(v).resolve().relative_to(root)) for v in manifest[col]]
    return DegradeResult(manifest, res.plan, tuple(skipped))


BUILTIN_PLANS: tuple[str, ...] = ("demo",)
"""Plans packaged with cxreval (``src/cxreval/data/iqa_plans/<name>.yaml``), named by ``--plan <name>``:
``demo`` is the plan of ``cxreval demo``'s IQA section (blur, noise, JPEG, resampling, gamma, unsharp mask)."""


def plan_source(value: PathLike) -> Path:
    """The plan file ``value`` names: a packaged plan (:data:`BUILTIN_PLANS`) or a YAML/JSON file's path."""
    if str(value) in BUILTIN_PLANS:
        return Path(__file__).resolve().parents[1] / "data" / "iqa_plans" / f"{value}.yaml"
    return Path(value)


def sample_images(files: Sequence[Path], n: int) -> list[Path]:
    """``n`` of ``files`` spread over their sorted names: every ``len // n``-th name from the first (all of
    them when there are at most ``n``); deterministic, no random choice."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(f"sample: the number of images must be a positive int. Got {n!r}.")
    files = sorted(files)
    step = max(1, len(files) // int(n))
    return files[::step][: int(n)]


def shrink_images(
    files: Sequence[Path], folder: PathLike, max_size: int, names: Sequence[str] | None = None
) -> list[Path]:
    """Block-average each image so its longest side is at most ``max_size`` pixels and write it to
    ``folder/<name>.png`` as a 16-bit PNG in the image's data range; returns the written paths.

    The factor is ``ceil(longest side / max_size)`` (1: the image is rewritten unchanged, as 16-bit); the mean is
    over ``factor x factor`` blocks, the remainder cropped (:func:`~cxreval.io.images.box_downsample`, ``'pool'``,
    float64). ``names`` are the output stems (default: each file's stem)."""
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 1:
        raise InvalidParameterError(f"max_size must be a positive int (pixels). Got {max_size!r}.")
    names = [p.stem for p in files] if names is None else list(names)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for p, name in zip(files, names):
        img = read_image(p)
        f = max(1, int(np.ceil(max(img.image.shape) / int(max_size))))
        target = path_inside(folder, f"{name}.png", what="image name")
        write_image(
            target,
            box_downsample(np.asarray(img.image, dtype=np.float64), f, convention="pool"),
            data_range=img.data_range,
            dtype="uint16",
        )
        written.append(target)
    return written
