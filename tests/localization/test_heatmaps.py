"""Heatmaps -> boxes: equal to the ChestX-ray14 article's reference pipeline (skimage resize + ndimage.label + find_objects)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage
from skimage.transform import resize

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.localization import heatmaps_to_boxes
from cxreval.localization._heatmaps import heatmap_boxes, heatmap_peaks
from cxreval.localization._upsampling import interpolation_matrix, mask_boxes, threshold_mask, upsample


def _ref_boxes(hm, order, thr, conn, shape):
    up = resize(hm, shape, order=order, mode="edge", anti_aliasing=False)
    if up.max() == up.min():
        return []
    norm = 255 * (up - up.min()) / (up.max() - up.min())
    lab, _ = ndimage.label(norm > thr, structure=np.ones((3, 3)) if conn == 8 else None)
    return [(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in ndimage.find_objects(lab)]


def _maps(seed, n, h, w, sigma):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, h, w))
    return np.stack([ndimage.gaussian_filter(x, sigma) for x in m]) if sigma else m


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    h=st.integers(3, 20),
    w=st.integers(3, 20),
    factor=st.sampled_from([4, 8, 16]),
    extra=st.integers(0, 7),
    sigma=st.sampled_from([0, 0.8, 1.5]),
    upsampling=st.sampled_from(["bilinear", "nearest"]),
    conn=st.sampled_from([8, 4]),
)
def test_boxes_equal_reference_pipeline(seed, h, w, factor, extra, sigma, upsampling, conn):
    shape = (h * factor + extra, w * factor)  # integer and non-integer factors
    maps = _maps(seed, 3, h, w, sigma)
    got = heatmaps_to_boxes(
        maps, image_shape=shape, upsampling=upsampling, thresholds=(60.0, 180.0), connectivity=conn
    ).boxes
    order = 1 if upsampling == "bilinear" else 0
    for k in range(3):
        for ti, thr in enumerate((60, 180)):
            assert [tuple(b) for b in got[ti][k].tolist()] == _ref_boxes(maps[k], order, thr, conn, shape)


def test_seed_size_maps_and_dense_path_agree():
    maps = _maps(7, 4, 32, 32, 1.2)
    fast = heatmaps_to_boxes(maps, thresholds=(60.0, 180.0)).boxes
    for k in range(4):
        for ti, thr in enumerate((60.0, 180.0)):
            dense = mask_boxes(threshold_mask(maps[k], threshold=thr))
            np.testing.assert_array_equal(fast[ti][k], dense)
            assert [tuple(b) for b in dense.tolist()] == _ref_boxes(maps[k], 1, thr, 8, (1024, 1024))


def test_upsampling_matches_skimage_and_matrix_form():
    hm = _maps(1, 1, 32, 32, 0)[0]
    up = upsample(hm)
    assert np.abs(up - resize(hm, (1024, 1024), order=1, mode="edge", anti_aliasing=False)).max() < 1e-14
    R = interpolation_matrix(32, 1024)
    assert np.abs(up - R @ hm @ R.T).max() < 1e-14
    assert (upsample(hm, upsampling="nearest") == np.repeat(np.repeat(hm, 32, 0), 32, 1)).all()


def test_peaks_are_argmax_of_dense_map():
    maps = _maps(3, 6, 32, 32, 1.0)
    maps[5] = 0.0
    maps[5, 0, 31] = 1.0  # a corner maximum: held edge values tie
    pk = heatmap_peaks(maps)
    for k in range(6):
        assert tuple(pk[k]) == np.unravel_index(np.argmax(upsample(maps[k])), (1024, 1024))


def test_strict_vs_inclusive_and_constant_map():
    hm = np.zeros((4, 4))
    hm[1, 1] = 1.0
    assert heatmap_boxes(hm, image_shape=(8, 8), upsampling="nearest", threshold=255).shape == (0, 4)
    assert heatmap_boxes(
        hm, image_shape=(8, 8), upsampling="nearest", threshold=255, strict=False
    ).tolist() == [[2, 2, 4, 4]]
    assert heatmap_boxes(np.full((5, 5), 3.0)).shape == (0, 4)
    assert heatmap_boxes(np.full((5, 5), 3.0), upsampling="nearest").shape == (0, 4)


def test_bad_maps():
    with pytest.raises(SchemaError, match=r"must be a 2-D array"):
        heatmap_boxes(np.zeros((2, 3, 4)))
    bad = np.zeros((4, 4))
    bad[2, 1] = np.nan
    with pytest.raises(SchemaError, match=r"must be finite; found nan at index \(2, 1\)"):
        heatmap_boxes(bad)
    with pytest.raises(InvalidParameterError, match=r"threshold must be a number in \[0, 255\]"):
        heatmap_boxes(np.eye(4), threshold=300)
    with pytest.raises(InvalidParameterError, match="'upsampling'"):
        heatmap_boxes(np.eye(4), upsampling="cubic")


def test_heatmaps_to_boxes_reports_progress_per_map():
    from cxreval.progress import NoProgress

    class Counting(NoProgress):
        def __init__(self):
            self.n, self.done_tasks = 0, 0

        def advance(self, task, n=1):
            self.n += n

        def done(self, task):
            self.done_tasks += 1

    maps = np.random.default_rng(0).random((70, 8, 8))
    for executor in (None, "serial"):
        prog = Counting()
        res = heatmaps_to_boxes(maps, image_shape=(32, 32), executor=executor, progress=prog)
        assert (prog.n, prog.done_tasks) == (70, 1)
        want = heatmaps_to_boxes(maps, image_shape=(32, 32)).boxes
        assert all(np.array_equal(a, b) for t0, t1 in zip(want, res.boxes) for a, b in zip(t0, t1))


def test_run_components_are_scipys_connected_components():
    """The union-find behind the boxes partitions random graphs, chains and zig-zags as scipy.sparse.csgraph does."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from cxreval.localization._heatmap_runs import component_roots

    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(1, 300))
        if trial % 3 == 0:
            perm = rng.permutation(n)
            a, b = perm[:-1], perm[1:]
        else:
            m = int(rng.integers(0, 3 * n))
            a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        roots = component_roots(n, a, b)
        k, lab = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
        assert len(np.unique(roots)) == k and len(set(zip(lab.tolist(), roots.tolist()))) == k
        assert np.array_equal(roots[roots], roots)
