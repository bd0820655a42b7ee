"""The reference localization pipeline of the ChestX-ray8 paper's synthetic study, written out verbatim.

``PAPER_SCRIPT`` is the study script of the source document (``skimage.transform.resize`` +
``scipy.ndimage.label`` + ``find_objects``, ``regionprops``, ``fractions.Fraction`` scoring), run as it is by
:func:`reference_study`; ``ref_boxes_from`` is its heatmap -> boxes step. The tests compare
``cxreval.localization.simulate_localization`` with it, and ``python bench/run.py localization`` times
cxreval against it.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
from scipy import ndimage
from skimage.transform import resize

__all__ = ["PAPER_SCRIPT", "ref_boxes_from", "reference_study"]


def ref_boxes_from(hm, order, thr, conn=8):
    up = resize(hm, (1024, 1024), order=order, mode="edge", anti_aliasing=False)
    norm = 255 * (up - up.min()) / (up.max() - up.min())
    lab, _ = ndimage.label(norm > thr, structure=np.ones((3, 3)) if conn == 8 else None)
    return [(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in ndimage.find_objects(lab)]


PAPER_SCRIPT = r"""
import os
from fractions import Fraction
import numpy as np
from scipy import ndimage
from skimage.measure import regionprops
from skimage.transform import resize
IMG, CELL = 1024, 32
TS = [Fraction(t) for t in ("0.1", "0.25", "0.5", "0.75", "0.9")]
def area(b): return max(0, b[2] - b[0]) * max(0, b[3] - b[1])
def inter(p, g): return area((max(p[0], g[0]), max(p[1], g[1]), min(p[2], g[2]), min(p[3], g[3])))
def iou(p, g):
    i = inter(p, g); return Fraction(i, area(p) + area(g) - i)
def iobb(p, g): return Fraction(inter(p, g), area(p))
g = (400, 400, 500, 500)
cases = {"exact": g, "2x per axis, centred": (350, 350, 550, 550),
         "3x per axis, centred": (300, 300, 600, 600), "whole image": (0, 0, IMG, IMG),
         "10 x 10 inside": (445, 445, 455, 455), "shifted by half a width": (400, 450, 500, 550)}
print("Part A: exact boxes against a 100 x 100 reference")
for name, p in cases.items():
    u, b = iou(p, g), iobb(p, g)
    print(f" {name:24s} IoU {str(u):>7s} = {float(u):.4f} IoBB {str(b):>5s} = {float(b):.4f}"
          f" IoBB>0.25 {b > Fraction(1, 4)!s:5s} IoBB>=0.25 {b >= Fraction(1, 4)}")
SIZES = {"large": ((260, 360), (320, 460)), "medium": ((90, 150), (90, 150)), "small": ((24, 48), (24, 48))}
N = int(os.environ.get("SEED_N", 60))
rng = np.random.default_rng(int(os.environ.get("SEED_SEED", 0)))
def coverage(b):
    edges = np.arange(0, IMG + 1, CELL)
    fr = np.clip(np.minimum(edges[1:], b[2]) - np.maximum(edges[:-1], b[0]), 0, None) / CELL
    fc = np.clip(np.minimum(edges[1:], b[3]) - np.maximum(edges[:-1], b[1]), 0, None) / CELL
    return np.outer(fr, fc)
def make_case(size):
    (hlo, hhi), (wlo, whi) = SIZES[size]
    h, w = rng.integers(hlo, hhi + 1), rng.integers(wlo, whi + 1)
    r0, c0 = rng.integers(32, IMG - 32 - h + 1), rng.integers(32, IMG - 32 - w + 1)
    box = (int(r0), int(c0), int(r0 + h), int(c0 + w))
    clean = ndimage.gaussian_filter(coverage(box), 0.8, mode="constant")
    clean /= clean.max()
    noisy = clean.copy()
    has_d = rng.random() < 0.4
    if has_d:
        while True:
            cr, cc = rng.uniform(2, 30, size=2)
            if abs(cr * CELL - (r0 + h / 2)) > h / 2 + 96 or abs(cc * CELL - (c0 + w / 2)) > w / 2 + 96:
                break
        yy, xx = np.mgrid[0:32, 0:32] + 0.5
        noisy += rng.uniform(0.3, 0.9) * np.exp(-((yy - cr) ** 2 + (xx - cc) ** 2) / 2.0)
    noisy += rng.normal(0, 0.03, noisy.shape)
    return box, clean, noisy, has_d
cases_b = {s: [make_case(s) for _ in range(N)] for s in SIZES}
def hand_bilinear(hm):
    x = (np.arange(IMG) + 0.5) / CELL - 0.5
    i0 = np.clip(np.floor(x).astype(int), 0, 31); i1 = np.clip(i0 + 1, 0, 31)
    t = np.clip(x - i0, 0, 1)
    rows = hm[i0] * (1 - t)[:, None] + hm[i1] * t[:, None]
    return rows[:, i0] * (1 - t) + rows[:, i1] * t
def upsample(hm, order): return resize(hm, (IMG, IMG), order=order, mode="edge", anti_aliasing=False)
def boxes_from(hm, order, thr, conn=8):
    up = upsample(hm, order)
    norm = 255 * (up - up.min()) / (up.max() - up.min())
    st = np.ones((3, 3)) if conn == 8 else None
    lab, n = ndimage.label(norm > thr, structure=st)
    return [(s[0].start, s[1].start, s[0].stop, s[1].stop) for s in ndimage.find_objects(lab)], lab
def tiny_box(hm):
    up = upsample(hm, 1)
    r, c = np.unravel_index(np.argmax(up), up.shape)
    return [(int(r) - 3, int(c) - 3, int(r) + 3, int(c) + 3)]
def score(preds_gts, rule, T):
    hit, fp = 0, 0
    for preds, gt in preds_gts:
        ok = [(iou(p, gt) if rule == "IoU" else iobb(p, gt)) > T for p in preds]
        hit += any(ok); fp += len(ok) - sum(ok)
    return hit / len(preds_gts), fp / len(preds_gts)
hm0 = cases_b["medium"][0][2]
print("\nChecks")
print(f" hand bilinear vs skimage resize(order=1): max |diff| = {np.abs(hand_bilinear(hm0) - upsample(hm0, 1)).max():.1e}")
print(f" np.repeat vs skimage resize(order=0): differing pixels = "
      f"{int((np.repeat(np.repeat(hm0, 32, 0), 32, 1) != upsample(hm0, 0)).sum())}")
mism = conn_diff = 0
for s in SIZES:
    for box, clean, noisy, _ in cases_b[s]:
        for thr in (60, 180):
            b8, lab = boxes_from(noisy, 1, thr)
            rp = sorted((r.bbox for r in regionprops(lab)), key=lambda t: t)
            mism += sorted(b8) != [tuple(int(v) for v in t) for t in rp]
            conn_diff += sorted(b8) != sorted(boxes_from(noisy, 1, thr, conn=4)[0])
print(f" find_objects vs regionprops boxes: differing box sets = {mism} of {2 * 3 * N}")
print(f" 8- vs 4-connectivity: differing box sets = {conn_diff} of {2 * 3 * N}")
runs, allpairs = {}, []
for s in SIZES:
    for variant in ("noise-free", "noisy"):
        k = 1 if variant == "noise-free" else 2
        for order, oname in ((1, "bilinear"), (0, "nearest"))[:1 if variant == "noise-free" else 2]:
            for thr in (60, 180):
                runs[(variant, "heatmap", oname, thr, s)] = [(boxes_from(c[k], order, thr)[0], c[0]) for c in cases_b[s]]
        runs[(variant, "tiny box", "bilinear", "-", s)] = [(tiny_box(c[k]), c[0]) for c in cases_b[s]]
        runs[(variant, "whole image", "-", "-", s)] = [([(0, 0, IMG, IMG)], c[0]) for c in cases_b[s]]
for v in runs.values():
    allpairs += [(p, gt) for preds, gt in v for p in preds]
oracle = [([c[0]], c[0]) for s in SIZES for c in cases_b[s]]
print(" oracle (reference box as prediction): Acc 1 and AFP 0 for every T and rule:",
      all(score(oracle, r, T) == (1.0, 0.0) for r in ("IoU", "IoBB") for T in TS))
for s in SIZES:
    hs = [c[0][2] - c[0][0] for c in cases_b[s]]; ws = [c[0][3] - c[0][1] for c in cases_b[s]]
    inside = all(0 <= c[0][0] and c[0][2] <= IMG and 0 <= c[0][1] and c[0][3] <= IMG for c in cases_b[s])
    print(f" data {s:6s}: {len(hs)} images, heights {min(hs)}-{max(hs)}, widths {min(ws)}-{max(ws)}, "
          f"boxes in image {inside}, distractors {sum(c[3] for c in cases_b[s])}")
viol = sum(iobb(p, gt) < iou(p, gt) for p, gt in allpairs)
cont = [(p, gt) for p, gt in allpairs if p[0] <= gt[0] and p[1] <= gt[1] and p[2] >= gt[2] and p[3] >= gt[3]]
insd = [(p, gt) for p, gt in allpairs if p[0] >= gt[0] and p[1] >= gt[1] and p[2] <= gt[2] and p[3] <= gt[3]]
print(f" {len(allpairs)} scored boxes: IoBB < IoU in {viol}; containing the reference {len(cont)}, "
      f"IoBB != IoU in {sum(iobb(p, g) != iou(p, g) for p, g in cont)}; inside it {len(insd)}, "
      f"IoBB != 1 in {sum(iobb(p, g) != 1 for p, g in insd)}")
either = sum((iou(p, gt) > T or iobb(p, gt) > T) != (iobb(p, gt) > T) for p, gt in allpairs for T in TS)
print(f" 'IoU > T or IoBB > T' differs from 'IoBB > T' in {either} of {len(allpairs) * len(TS)} box-threshold pairs")
pm = 0
for p, gt in allpairs[:400]:
    mp = np.zeros((IMG, IMG), bool); mg = np.zeros((IMG, IMG), bool)
    mp[max(p[0], 0):p[2], max(p[1], 0):p[3]] = True; mg[gt[0]:gt[2], gt[1]:gt[3]] = True
    pm += Fraction(int((mp & mg).sum()), int(mp.sum())) != iobb(p, gt)
print(f" box formula vs pixel count (first 400 boxes): IoBB mismatches = {pm}")
print("\nPart B: Acc / AFP at T = " + ", ".join(str(float(t)) for t in TS))
show = [("heatmap", "bilinear", 60), ("heatmap", "bilinear", 180), ("heatmap", "nearest", 60),
        ("heatmap", "nearest", 180), ("tiny box", "bilinear", "-"), ("whole image", "-", "-")]
for variant in ("noise-free", "noisy"):
    print(f"[{variant}]")
    for loc, up, thr in (show[:2] if variant == "noise-free" else show):
        for s in SIZES:
            for rule in ("IoU", "IoBB"):
                if loc == "whole image" and rule == "IoBB": continue
                cells = [score(runs[(variant, loc, up, thr, s)], rule, T) for T in TS]
                lab = f"{loc} {up} {thr}" if loc == "heatmap" else loc
                print(f" {lab:20s} {s:6s} {rule:4s} " + " ".join(f"{a:.3f}/{f:.3f}" for a, f in cells))
table4 = {"Atelectasis": [0.7277, 0.5500, 0.2833, 0.1666, 0.1333], "Cardiomegaly": [0.9931, 0.9794, 0.8767, 0.7260, 0.6849],
          "Effusion": [0.7124, 0.5424, 0.3333, 0.2418, 0.2091], "Infiltration": [0.7886, 0.5772, 0.4227, 0.3252, 0.2520],
          "Mass": [0.4352, 0.2823, 0.1411, 0.1176, 0.0588], "Nodule": [0.1645, 0.0506, 0.0126, 0.0126, 0.0126],
          "Pneumonia": [0.7500, 0.5583, 0.3833, 0.2583, 0.2416], "Pneumothorax": [0.4591, 0.3469, 0.1836, 0.1020, 0.0816]}
def fits(n, v, mode):
    t = round(v * 10000)
    return any((10000 * k // n if mode == "trunc" else (20000 * k + n) // (2 * n)) == t for k in range(n + 1))
print("\nPart C: denominators n <= 200 that reproduce every Acc. of a Table 4 column")
for name, vals in table4.items():
    out = []
    for mode in ("trunc", "round"):
        ns = [n for n in range(1, 201) if all(fits(n, v, mode) for v in vals)]
        out.append(f"{mode}: {ns[:4]}{' ...' if len(ns) > 4 else ''} ({len(ns)})")
    print(f" {name:13s} " + " ".join(out))
"""


def reference_study(seed: int = 0, per_size: int = 60) -> list[str]:
    """Run the paper's script (verbatim; its seed and N from the environment) and return its printed lines."""
    os.environ["SEED_SEED"], os.environ["SEED_N"] = str(seed), str(per_size)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(PAPER_SCRIPT, "paper_script", "exec"), {"__name__": "paper_script"})
    return buf.getvalue().splitlines()
