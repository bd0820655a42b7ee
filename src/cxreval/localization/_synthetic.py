"""The ChestX-ray14 article's synthetic study: an error model for heatmaps with exact reference boxes.

Each "heatmap" is the exact fraction of each ``32 x 32``-pixel cell that the reference box covers,
blurred with a Gaussian of 0.8 cells (``scipy.ndimage.gaussian_filter``, ``mode='constant'``; computed by
:func:`gaussian_blur`, bit for bit) and scaled
to a peak of 1. The noisy map adds, with probability 0.4, a distractor blob away from the box, and
Gaussian noise of standard deviation 0.03. Boxes of three size classes (60 images each by default)
are scored for four localizers: the protocol's pipeline (both upsamplings, both thresholds), a
6 x 6 box at the map's peak, the whole image, and an oracle. The generator is consumed in the order
of the article's reference script (its worked example of the ChestX-ray8 protocol), so
:func:`simulate_localization` with ``rng=seed`` prints what that script prints for that generator seed and
``per_size``; with ``rng=0`` and the default ``per_size`` it prints the article's "Output:" block.

Boxes are cxreval's ``(x_min, y_min, x_max, y_max)``; the script's ``(r0, c0, r1, c1)`` is the same box
with the axes swapped, and every printed quantity is symmetric in the axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._typing import RNGLike
from .._validation import check_positive_int, normalize_rng
from ..exceptions import InvalidParameterError
from ._boxes import ThresholdLike, box_area, contains, exceeds, intersection_area, iobb_exact, iou_exact
from ._heatmap_runs import BlockExtremes, batch_runs
from ._heatmaps import HeatmapRuns, check_heatmaps, extremes_peaks, heatmaps_to_boxes, runs_to_boxes, upsample
from ._protocol import DEFAULT_T, score_images
from ._synth_result import SynthCells, SynthResult
from ._table4 import TABLE4_ACC, denominators

if TYPE_CHECKING:
    pass

__all__ = [
    "SIZES",
    "ErrorModel",
    "SyntheticCase",
    "coverage",
    "gaussian_blur",
    "ErrorModelMaps",
    "error_model_maps",
    "synthetic_cases",
    "simulate_localization",
    "part_a_lines",
    "part_c_lines",
]

SIZES: Mapping[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "large": ((260, 360), (320, 460)),
    "medium": ((90, 150), (90, 150)),
    "small": ((24, 48), (24, 48)),
}
"""Size classes: ((min height, max height), (min width, max width)) in pixels, inclusive."""


@dataclass(frozen=True)
class ErrorModel:
    """Parameters of the heatmap error model (the article's values by default)."""

    image_size: int = 1024
    map_size: int = 32
    blur_cells: float = 0.8
    p_distractor: float = 0.4
    distractor_amplitude: tuple[float, float] = (0.3, 0.9)
    distractor_margin: float = 96.0
    distractor_range: tuple[float, float] = (2.0, 30.0)
    noise_sd: float = 0.03

    @property
    def cell(self) -> int:
        return self.image_size // self.map_size

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SyntheticCase:
    """One synthetic image: reference box ``(x_min, y_min, x_max, y_max)``, clean and noisy maps."""

    box: tuple[int, int, int, int]
    clean: np.ndarray
    noisy: np.ndarray
    has_distractor: bool


def coverage(box: Sequence[float], model: ErrorModel = ErrorModel()) -> np.ndarray:
    """Fraction of each map cell covered by ``box`` (``(x_min, y_min, x_max, y_max)``); shape (rows, cols)."""
    edges = np.arange(0, model.image_size + 1, model.cell)
    fr = np.clip(np.minimum(edges[1:], box[3]) - np.maximum(edges[:-1], box[1]), 0, None) / model.cell
    fc = np.clip(np.minimum(edges[1:], box[2]) - np.maximum(edges[:-1], box[0]), 0, None) / model.cell
    return np.outer(fr, fc)


def gaussian_blur(a: np.ndarray, sigma: float, *, truncate: float = 4.0) -> np.ndarray:
    """``scipy.ndimage.gaussian_filter(a, sigma, mode='constant')`` of a 2-D float map, to the last bit, in NumPy.

    The kernel is ``exp(-x**2 / (2 sigma**2))`` on ``x = -r .. r`` (``r = int(truncate * sigma + 0.5)``),
    divided by its sum; each axis in turn (rows, then columns) is correlated with it over zeros outside the
    map, adding the centre term and then the symmetric pairs from the outermost in, the order of SciPy's
    symmetric-kernel loop, so the sums round alike (``tests/localization/test_synthetic.py`` checks it against
    SciPy). Importing ``scipy.ndimage`` costs more than the whole synthetic study's maps."""
    r = int(truncate * sigma + 0.5)
    x = np.arange(-r, r + 1)
    w = np.exp(-0.5 / (sigma * sigma) * x**2.0)
    w = w / w.sum()
    out = np.asarray(a, dtype=float)
    for axis in (0, 1):
        v = np.moveaxis(out, axis, -1)
        n = v.shape[-1]
        pad = np.zeros(v.shape[:-1] + (n + 2 * r,))
        pad[..., r : r + n] = v
        acc = pad[..., r : r + n] * w[r]
        for j in range(r, 0, -1):
            acc = acc + (pad[..., r - j : r - j + n] + pad[..., r + j : r + j + n]) * w[r + j]
        out = np.moveaxis(acc, -1, axis)
    return np.ascontiguousarray(out)


class ErrorModelMaps(NamedTuple):
    """What :func:`error_model_maps` returns: the clean map, the noisy map and whether a distractor was added."""

    clean: np.ndarray
    noisy: np.ndarray
    has_distractor: bool


def error_model_maps(
    box: Sequence[float], rng: RNGLike, model: ErrorModel = ErrorModel(), *, cover: np.ndarray | None = None
) -> ErrorModelMaps:
    """Clean map, noisy map and whether a distractor was added, for one box (the reference script's draw order).

    ``cover`` replaces the box's coverage (e.g. several boxes of one image); the distractor is kept away
    from ``box``. A box so large that no distractor centre can lie ``distractor_margin`` pixels outside
    it on either axis gets no distractor (the draw that decides it is still consumed). ``rng``: a Generator is
    drawn from (and left advanced, for the next box); an int seeds a fresh one; None draws fresh entropy.
    """
    rng = normalize_rng(rng)
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    clean = gaussian_blur(coverage(box, model) if cover is None else cover, model.blur_cells)
    clean /= clean.max()
    noisy = clean.copy()
    has_d = rng.random() < model.p_distractor
    c = model.cell
    lo, hi = model.distractor_range[0] * c, model.distractor_range[1] * c
    m = model.distractor_margin
    # a box too large to leave room for a distractor (possible for real boxes) gets none
    room = lo < y0 - m or hi > y1 + m or lo < x0 - m or hi > x1 + m
    has_d = has_d and room
    if has_d:
        while True:
            cr, cc = rng.uniform(*model.distractor_range, size=2)
            if (
                abs(cr * c - (y0 + h / 2)) > h / 2 + model.distractor_margin
                or abs(cc * c - (x0 + w / 2)) > w / 2 + model.distractor_margin
            ):
                break
        yy, xx = np.mgrid[0 : model.map_size, 0 : model.map_size] + 0.5
        noisy += rng.uniform(*model.distractor_amplitude) * np.exp(-((yy - cr) ** 2 + (xx - cc) ** 2) / 2.0)
    noisy += rng.normal(0, model.noise_sd, noisy.shape)
    return ErrorModelMaps(clean, noisy, bool(has_d))


def synthetic_cases(
    rng: RNGLike = None,
    *,
    per_size: int = 60,
    sizes: Mapping[str, tuple] = SIZES,
    model: ErrorModel = ErrorModel(),
) -> dict[str, list[SyntheticCase]]:
    """Draw ``per_size`` synthetic images per size class, consuming ``rng`` in the reference script's order (``None``: fresh
    entropy; an int reproduces the draw)."""
    gen = normalize_rng(rng)
    per_size = check_positive_int(per_size, name="per_size", func="synthetic_cases")
    img, c = model.image_size, model.cell
    out: dict[str, list[SyntheticCase]] = {}
    for s, ((hlo, hhi), (wlo, whi)) in sizes.items():
        if hhi > img - 2 * c or whi > img - 2 * c:
            raise InvalidParameterError(
                f"size class {s!r} is too large for a {img}-pixel image with a {c}-pixel margin."
            )
        cases = []
        for _ in range(per_size):
            h, w = gen.integers(hlo, hhi + 1), gen.integers(wlo, whi + 1)
            r0, c0 = gen.integers(c, img - c - h + 1), gen.integers(c, img - c - w + 1)
            box = (int(c0), int(r0), int(c0 + w), int(r0 + h))
            clean, noisy, has_d = error_model_maps(box, gen, model)
            cases.append(SyntheticCase(box, clean, noisy, has_d))
        out[s] = cases
    return out


def _fmt_frac(f: Fraction) -> str:
    return str(f)


def part_a_lines(image_size: int = 1024) -> list[str]:
    """Part A: the two measures on six exact boxes against a 100 x 100 reference."""
    g = (400, 400, 500, 500)
    cases = {
        "exact": g,
        "2x per axis, centred": (350, 350, 550, 550),
        "3x per axis, centred": (300, 300, 600, 600),
        "whole image": (0, 0, image_size, image_size),
        "10 x 10 inside": (445, 445, 455, 455),
        "shifted by half a width": (450, 400, 550, 500),
    }
    q = Fraction(1, 4)
    lines = ["Part A: exact boxes against a 100 x 100 reference"]
    for name, p in cases.items():
        u, b = iou_exact(p, g), iobb_exact(p, g)
        lines.append(
            f" {name:24s} IoU {_fmt_frac(u):>7s} = {float(u):.4f} IoBB {_fmt_frac(b):>5s} = "
            f"{float(b):.4f} IoBB>0.25 {b > q!s:5s} IoBB>=0.25 {b >= q}"
        )
    return lines


def part_c_lines(table: Mapping[str, Sequence[float]] = TABLE4_ACC, *, n_max: int = 200) -> list[str]:
    """Part C: denominators ``n <= n_max`` that reproduce every Acc. of each Table 4 column."""
    lines = [f"Part C: denominators n <= {n_max} that reproduce every Acc. of a Table 4 column"]
    for name, vals in table.items():
        out = []
        for mode in ("trunc", "round"):
            ns = denominators(vals, n_max=n_max, mode=mode)
            out.append(f"{mode}: {ns[:4]}{' ...' if len(ns) > 4 else ''} ({len(ns)})")
        lines.append(f" {name:13s} " + " ".join(out))
    return lines


def _hand_bilinear(hm: np.ndarray, img: int) -> np.ndarray:
    """The reference script's hand-written separable bilinear upsampling (weights form), for its printed check."""
    n = hm.shape[0]
    x = (np.arange(img) + 0.5) / (img / n) - 0.5
    i0 = np.clip(np.floor(x).astype(int), 0, n - 1)
    i1 = np.clip(i0 + 1, 0, n - 1)
    t = np.clip(x - i0, 0, 1)
    rows = hm[i0] * (1 - t)[:, None] + hm[i1] * t[:, None]
    return rows[:, i0] * (1 - t) + rows[:, i1] * t


def _localize(maps: np.ndarray, img: int) -> tuple[dict[tuple, list[np.ndarray]], list[HeatmapRuns]]:
    """Every localizer on one stack of maps: ``({(localizer, upsampling, threshold): boxes per map}, runs)``; the
    bilinear runs and the peaks share each batch's block extremes."""
    out: dict[tuple, list[np.ndarray]] = {}
    maps = check_heatmaps(maps, batch=True)
    peaks = np.zeros((len(maps), 2), dtype=np.int64)

    def keep_peaks(b0: int, batch: np.ndarray, extremes: BlockExtremes) -> None:
        peaks[b0 : b0 + len(batch)] = extremes_peaks(batch, extremes)

    runs = batch_runs(maps, img, img, [60.0, 180.0], True, on_extremes=keep_peaks)
    for thr, r in zip((60, 180), runs):
        out[("heatmap", "bilinear", thr)] = runs_to_boxes(r)
    nb = heatmaps_to_boxes(maps, image_shape=(img, img), upsampling="nearest", thresholds=(60.0, 180.0)).boxes
    for thr, b in zip((60, 180), nb):
        out[("heatmap", "nearest", thr)] = list(b)
    out[("tiny box", "bilinear", "-")] = [np.array([[c - 3, r - 3, c + 3, r + 3]]) for r, c in peaks]
    out[("whole image", "-", "-")] = [np.array([[0, 0, img, img]]) for _ in range(len(maps))]
    return out, runs


def skimage_resize(image: np.ndarray, size: int, *, order: int) -> np.ndarray:
    """``skimage.transform.resize(image, (size, size), order=order, mode='edge', anti_aliasing=False)`` of a float64
    map (``order`` 0 or 1), computed as skimage computes it, to the last bit: ``scipy.ndimage.zoom`` to
    ``(size, size)`` with ``mode='nearest'`` and ``grid_mode=True``, clipped to the map's range. Output pixel ``k``
    of an axis of ``n`` cells sits at ``c = (k + 0.5) n / size - 0.5``; order 0 takes cell ``floor(c + 0.5)``,
    order 1 weighs cells ``floor(c)`` and ``floor(c) + 1`` (clipped to the map) by ``1 - t`` and ``t``, summing
    ``value * row weight * column weight`` over the four corners in raster order as SciPy does. The reference of
    the study's printed checks, without importing ``skimage.transform`` or ``scipy.ndimage`` (more than half
    of the command's start-up); ``tests/localization/test_synthetic.py`` checks it against both."""
    if order not in (0, 1):
        raise InvalidParameterError(f"skimage_resize: order must be 0 or 1; got {order!r}.")
    image = np.asarray(image, dtype=float)

    def axis(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = (np.arange(size) + 0.5) * (n / size) - 0.5
        if order == 0:
            i = np.clip(np.floor(c + 0.5).astype(np.int64), 0, n - 1)
            return i, i, np.zeros(size)
        f = np.floor(c)
        return np.clip(f.astype(np.int64), 0, n - 1), np.clip(f.astype(np.int64) + 1, 0, n - 1), c - f

    r0, r1, tr = axis(image.shape[0])
    c0, c1, tc = axis(image.shape[1])
    if order == 0:
        out = image[r0][:, c0]
    else:
        wr0, wr1 = (1.0 - tr)[:, None], tr[:, None]
        wc0, wc1 = 1.0 - tc, tc
        top, bottom = image[r0], image[r1]
        out, term = np.empty((size, size)), np.empty((size, size))
        np.take(top, c0, axis=1, out=out)
        out *= wr0
        out *= wc0
        for rows, wr, cols, wc in ((top, wr0, c1, wc1), (bottom, wr1, c0, wc0), (bottom, wr1, c1, wc1)):
            np.take(rows, cols, axis=1, out=term)
            term *= wr
            term *= wc
            out += term
    lo, hi = (np.nanmin, np.nanmax) if np.isnan(image.min()) else (np.min, np.max)
    return np.clip(out, lo(image), hi(image), out=out)


def simulate_localization(
    rng: RNGLike = None,
    *,
    per_size: int = 60,
    model: ErrorModel = ErrorModel(),
    T_values: Sequence[ThresholdLike] = DEFAULT_T,
) -> SynthResult:
    """Run the ChestX-ray14 article's synthetic study and return its printed output and tables.

    Parameters
    ----------
    rng : int, Generator or None, default=None
        The generator seed (the reference script uses ``np.random.default_rng(0)``: ``rng=0`` prints its
        output); ``None`` draws fresh entropy, a different result on each call; an int reproduces one.
    per_size : int, default=60
        Images per size class.
    model : ErrorModel
    T_values : sequence, default=(0.1, 0.25, 0.5, 0.75, 0.9)

    Returns
    -------
    res : SynthResult
        ``res.lines`` equals the reference script's printed output for the default arguments.
    """
    per_size = check_positive_int(per_size, name="per_size", func="simulate_localization")
    seed = rng if isinstance(rng, (int, np.integer)) else None
    TS = [Fraction(str(t)) if not isinstance(t, Fraction) else t for t in T_values]
    img = model.image_size
    cases = synthetic_cases(rng, per_size=per_size, model=model)
    N = per_size
    lines = part_a_lines(img)

    # localizers on every map stack
    loc: dict[tuple[str, str], dict[tuple, list[np.ndarray]]] = {}
    runs_noisy: dict[str, list[HeatmapRuns]] = {}
    for s in SIZES:
        for variant in ("noise-free", "noisy"):
            maps = np.stack([c.clean if variant == "noise-free" else c.noisy for c in cases[s]])
            loc[(variant, s)], runs = _localize(maps, img)
            if variant == "noisy":
                runs_noisy[s] = runs

    # checks
    hm0 = cases["medium"][0].noisy
    lines += ["", "Checks"]
    sk = skimage_resize(hm0, img, order=1)
    d_bil = np.abs(_hand_bilinear(hm0, img) - sk).max()  # the script's check, as printed
    d_cx = float(np.abs(upsample(hm0, (img, img)) - sk).max())  # cxreval's own upsampling
    d_nn = int((upsample(hm0, (img, img), upsampling="nearest") != skimage_resize(hm0, img, order=0)).sum())
    lines.append(f" hand bilinear vs skimage resize(order=1): max |diff| = {d_bil:.1e}")
    lines.append(f" np.repeat vs skimage resize(order=0): differing pixels = {d_nn}")
    mism = conn_diff = 0
    for s in SIZES:
        for level, r in zip((60, 180), runs_noisy[s]):
            b8 = loc[("noisy", s)][("heatmap", "bilinear", level)]
            bp = runs_to_boxes(r, connectivity=8, method="pixels")
            b4 = runs_to_boxes(r, connectivity=4)
            for k in range(N):
                mism += sorted(map(tuple, b8[k].tolist())) != sorted(map(tuple, bp[k].tolist()))
                conn_diff += sorted(map(tuple, b8[k].tolist())) != sorted(map(tuple, b4[k].tolist()))
    lines.append(f" find_objects vs regionprops boxes: differing box sets = {mism} of {2 * 3 * N}")
    lines.append(f" 8- vs 4-connectivity: differing box sets = {conn_diff} of {2 * 3 * N}")

    # runs in the script's order, and every scored (box, reference) pair
    order: list[tuple] = []
    for s in SIZES:
        for variant in ("noise-free", "noisy"):
            for oname in ("bilinear",) if variant == "noise-free" else ("bilinear", "nearest"):
                for thr_px in (60, 180):
                    order.append((variant, "heatmap", oname, thr_px, s))
            order.append((variant, "tiny box", "bilinear", "-", s))
            order.append((variant, "whole image", "-", "-", s))
    runs_b = {key: loc[(key[0], key[4])][key[1:4]] for key in order}
    refs_by_size = {s: np.array([c.box for c in cases[s]], dtype=np.int64).reshape(-1, 4) for s in SIZES}
    P_parts: list[np.ndarray] = []
    G_parts: list[np.ndarray] = []
    run_id: list[np.ndarray] = []
    image_no: list[np.ndarray] = []
    for ri, key in enumerate(order):
        for k, pb in enumerate(runs_b[key]):
            P_parts.append(pb.reshape(-1, 4))
            G_parts.append(np.repeat(refs_by_size[key[4]][k : k + 1], len(pb), axis=0))
            run_id.append(np.full(len(pb), ri))
            image_no.append(np.full(len(pb), k))
    P = np.concatenate(P_parts).astype(np.int64)
    G = np.concatenate(G_parts).astype(np.int64)

    oracle_refs = [refs_by_size[s][k : k + 1] for s in SIZES for k in range(N)]
    ok = True
    for rule in ("IoU", "IoBB"):
        sc = score_images(oracle_refs, oracle_refs, rule=rule, T_values=TS)
        ok &= bool((sc.acc() == 1.0).all() and (sc.afp() == 0.0).all())
    lines.append(f" oracle (reference box as prediction): Acc 1 and AFP 0 for every T and rule: {ok}")
    for s in SIZES:
        b = refs_by_size[s]
        hs, ws = b[:, 3] - b[:, 1], b[:, 2] - b[:, 0]
        inside = bool(((b[:, :2] >= 0) & (b[:, 2:] <= img)).all())
        nd = sum(c.has_distractor for c in cases[s])
        lines.append(
            f" data {s:6s}: {len(hs)} images, heights {hs.min()}-{hs.max()}, widths {ws.min()}-{ws.max()}, "
            f"boxes in image {inside}, distractors {nd}"
        )
    inter = intersection_area(P, G).astype(np.int64)
    ap, ag = box_area(P).astype(np.int64), box_area(G).astype(np.int64)
    union = ap + ag - inter
    viol = int((inter * union < inter * ap).sum())  # IoBB < IoU  <=>  i/ap < i/u
    cont = contains(P, G)
    insd = contains(G, P)
    cont_ne = int((inter[cont] * union[cont] != inter[cont] * ap[cont]).sum())
    insd_ne = int((inter[insd] != ap[insd]).sum())
    lines.append(
        f" {len(P)} scored boxes: IoBB < IoU in {viol}; containing the reference {int(cont.sum())}, "
        f"IoBB != IoU in {cont_ne}; inside it {int(insd.sum())}, IoBB != 1 in {insd_ne}"
    )
    either = 0
    for T in TS:
        a_iobb = exceeds(P, G, T, measure="iobb")
        either += int(((exceeds(P, G, T, measure="iou") | a_iobb) != a_iobb).sum())
    lines.append(
        f" 'IoU > T or IoBB > T' differs from 'IoBB > T' in {either} of {len(P) * len(TS)} "
        "box-threshold pairs"
    )
    # the box formula against pixel counts (separable: a box's pixel set is a product of two ranges)
    q = P[:400]
    g4 = G[:400]
    ar = np.arange(img)[None, :]
    rp = (ar >= np.maximum(q[:, 1:2], 0)) & (ar < q[:, 3:4])
    cp = (ar >= np.maximum(q[:, 0:1], 0)) & (ar < q[:, 2:3])
    rg = (ar >= g4[:, 1:2]) & (ar < g4[:, 3:4])
    cg = (ar >= g4[:, 0:1]) & (ar < g4[:, 2:3])
    pix_i = (rp & rg).sum(1) * (cp & cg).sum(1)
    pix_p = rp.sum(1) * cp.sum(1)
    pm = int((pix_i * ap[:400] != inter[:400] * pix_p).sum())
    lines.append(f" box formula vs pixel count (first 400 boxes): IoBB mismatches = {pm}")

    # Part B
    lines += ["", "Part B: Acc / AFP at T = " + ", ".join(str(float(t)) for t in TS)]
    show = [
        ("heatmap", "bilinear", 60),
        ("heatmap", "bilinear", 180),
        ("heatmap", "nearest", 60),
        ("heatmap", "nearest", 180),
        ("tiny box", "bilinear", "-"),
        ("whole image", "-", "-"),
    ]
    rows = []
    cache: dict[tuple, object] = {}
    for variant in ("noise-free", "noisy"):
        lines.append(f"[{variant}]")
        for lname, up, thr in show[:2] if variant == "noise-free" else show:
            for s in SIZES:
                for rule in ("IoU", "IoBB"):
                    if lname == "whole image" and rule == "IoBB":
                        continue
                    key = (variant, lname, up, thr, s)
                    sc = score_images(
                        runs_b[key], [refs_by_size[s][k : k + 1] for k in range(N)], rule=rule, T_values=TS
                    )
                    cache[key + (rule,)] = sc
                    hits, fps = sc.hits.sum(axis=1), sc.false_positives.sum(axis=1)
                    cells = [(int(h) / N, int(f) / N) for h, f in zip(hits, fps)]
                    lab = f"{lname} {up} {thr}" if lname == "heatmap" else lname
                    lines.append(
                        f" {lab:20s} {s:6s} {rule:4s} " + " ".join(f"{a:.3f}/{f:.3f}" for a, f in cells)
                    )
                    for T, (a, f), h, fp in zip(TS, cells, hits, fps):
                        rows.append(
                            {
                                "variant": variant,
                                "localizer": lname,
                                "upsampling": up,
                                "threshold": str(thr),
                                "size": s,
                                "rule": rule,
                                "T": str(T),
                                "acc": a,
                                "afp": f,
                                "hits": int(h),
                                "false_positives": int(fp),
                                "n_images": N,
                            }
                        )
    lines += [""] + part_c_lines()

    checks: dict[str, object] = {
        "bilinear_max_abs_diff": float(d_bil),
        "cxreval_bilinear_max_abs_diff": d_cx,
        "nearest_differing_pixels": d_nn,
        "box_extraction_mismatches": mism,
        "connectivity_differences": conn_diff,
        "oracle_ok": ok,
        "n_scored_boxes": len(P),
        "iobb_lt_iou": viol,
        "containing": int(cont.sum()),
        "containing_iobb_ne_iou": cont_ne,
        "inside": int(insd.sum()),
        "inside_iobb_ne_1": insd_ne,
        "or_rule_differs": either,
        "pixel_count_mismatches": pm,
    }
    areas = {s: float(np.median(box_area(refs_by_size[s]))) / (img * img) for s in SIZES}
    synth_cells = SynthCells(
        tuple(rows),
        tuple(order),
        np.concatenate(run_id).astype(np.int64),
        np.concatenate(image_no).astype(np.int64),
        P,
        G,
        MappingProxyType(areas),
    )
    return SynthResult(tuple(lines), synth_cells, checks, None if seed is None else int(seed), N)
