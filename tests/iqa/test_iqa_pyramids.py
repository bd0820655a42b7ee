"""The sp5 spatial steerable pyramid (VIF's decomposition): filter design properties and corrDn conventions.

Agreement of the whole VIF with pyiqa's sp5 implementation is in test_peer_values_radiographs.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.iqa._pyramids import build_sp5_pyramid, sp5_filters


def _response(k: np.ndarray, n: int = 64) -> np.ndarray:
    big = np.zeros((n, n))
    r = k.shape[0] // 2
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            big[(i - r) % n, (j - r) % n] = k[i, j]
    return np.fft.fft2(big)


def test_sp5_filters_form_a_near_tight_frame():
    f = sp5_filters()
    h0, l0, lo = (_response(f[k]) for k in ("hi0filt", "lo0filt", "lofilt"))
    bands = sum(np.abs(_response(b)) ** 2 for b in f["bfilts"])
    # |H0|^2 + |L0|^2 (|L/2|^2 + sum |B_b|^2) = 1 up to the design's approximation (Simoncelli & Freeman 1995)
    total = np.abs(h0) ** 2 + np.abs(l0) ** 2 * (np.abs(lo) ** 2 / 4 + bands)
    assert 0.95 < total.min() and total.max() < 1.06
    assert abs(l0[0, 0]) == pytest.approx(1.0, abs=1e-3) and abs(h0[0, 0]) < 1e-6
    assert abs(lo[0, 0]) == pytest.approx(2.0, abs=1e-6)
    for b in f["bfilts"]:
        assert b.shape == (7, 7) and abs(b.sum()) < 1e-12  # band-pass: no DC
    # steering: the six orientations are 30 degrees apart; 0 and 3 are 90 degrees apart
    b = f["bfilts"]
    np.testing.assert_array_equal(b[3], -b[0].T)
    np.testing.assert_array_equal(b[2], -b[1].T)
    np.testing.assert_array_equal(b[5], b[1][:, ::-1])


def _mirror_index(i: int, n: int) -> int:
    while i < 0 or i >= n:
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


def _corr_at(a: np.ndarray, k: np.ndarray, i: int, j: int) -> float:
    r = k.shape[0] // 2
    return sum(
        k[u, v] * a[_mirror_index(i + u - r, a.shape[0]), _mirror_index(j + v - r, a.shape[1])]
        for u in range(k.shape[0])
        for v in range(k.shape[1])
    )


def test_sp5_pyramid_corrdn_conventions():
    rng = np.random.default_rng(3)
    im = rng.random((37, 30))
    f = sp5_filters()
    pyr = build_sp5_pyramid(im, 2)
    assert [p.shape for p in pyr[1]] == [(37, 30)] * 6
    assert [p.shape for p in pyr[2]] == [(19, 15)] * 6 and pyr[3].shape == (10, 8)
    assert pyr[0][0, 1] == pytest.approx(_corr_at(im, f["hi0filt"], 0, 1), abs=1e-12)
    lo0 = np.array([[_corr_at(im, f["lo0filt"], i, j) for j in range(30)] for i in range(37)])
    for b in range(6):
        assert pyr[1][b][36, 2] == pytest.approx(_corr_at(lo0, f["bfilts"][b], 36, 2), abs=1e-12)
    # down-sampling keeps pixels 0, 2, 4, ... (corrDn start [1 1]) of the mirrored correlation
    lo1 = np.array([[_corr_at(lo0, f["lofilt"], i, j) for j in range(0, 30, 2)] for i in range(0, 37, 2)])
    np.testing.assert_allclose(build_sp5_pyramid(im, 1)[2], lo1, atol=1e-12)
    sub = build_sp5_pyramid(im, 2, orientations=(3, 0), highpass=False)
    assert sub[0] is None
    np.testing.assert_array_equal(sub[2][0], pyr[2][3])
