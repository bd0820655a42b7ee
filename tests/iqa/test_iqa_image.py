"""Image I/O as the metrics see it (cxreval.io.images) and MATLAB-convention filtering (cxreval.iqa._image)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from scipy import signal

from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.io.images import box_downsample, read_image, write_image
from cxreval.iqa import get_metric
from cxreval.iqa._image import (
    auto_downsample,
    check_pair,
    conv2,
    downsample_factor,
    filter2_valid,
    gaussian_kernel,
    imfilter,
    rescaled_pair,
)


def test_read_16bit_png_keeps_values(tmp_path):
    a = (np.arange(64 * 64, dtype=np.uint32).reshape(64, 64) * 16).astype(np.uint16)
    Image.fromarray(a).save(tmp_path / "a.png")
    img = read_image(tmp_path / "a.png")
    assert img.dtype == "uint16" and img.data_range == 65535.0
    np.testing.assert_array_equal(img.image, a.astype(float))


def test_read_8bit_and_float_tiff(tmp_path):
    a = np.arange(256, dtype=np.uint8).reshape(16, 16)
    Image.fromarray(a).save(tmp_path / "a.png")
    img = read_image(tmp_path / "a.png")
    assert img.data_range == 255.0 and img.image.dtype == np.float64
    f = np.linspace(0, 1, 100).reshape(10, 10)
    write_image(tmp_path / "f.tif", f, data_range=1.0, dtype="float32")
    g = read_image(tmp_path / "f.tif")
    assert g.data_range == 1.0
    np.testing.assert_allclose(g.image, f, atol=1e-7)


def test_write_read_roundtrip_uint16(tmp_path):
    x = np.random.default_rng(0).random((20, 30))
    write_image(tmp_path / "x.png", x, data_range=1.0, dtype="uint16")
    y = read_image(tmp_path / "x.png")
    np.testing.assert_allclose(y.image / 65535.0, x, atol=0.5 / 65535 + 1e-12)


def test_sixteen_bit_precision_end_to_end(tmp_path):
    """A change below 1/255 of the range survives reading a 16-bit PNG and is seen by a metric."""
    base = (np.random.default_rng(1).random((64, 64)) * 60000).astype(np.uint16)
    changed = base.copy()
    changed[10:20, 10:20] += 100  # 100/65535 = 0.0015 < 1/255 = 0.0039: vanishes after 8-bit rounding
    Image.fromarray(base).save(tmp_path / "a.png")
    Image.fromarray(changed).save(tmp_path / "b.png")
    a, b = read_image(tmp_path / "a.png"), read_image(tmp_path / "b.png")
    assert np.isfinite(get_metric("psnr")(a.image, b.image, data_range=a.data_range))
    assert get_metric("ssim")(a.image, b.image, data_range=a.data_range) < 1.0
    # the same images rounded to 8 bits are (mostly) indistinguishable
    a8 = np.rint(a.image / 257.0)
    b8 = np.rint(b.image / 257.0)
    assert np.sum(a8 != b8) < np.sum(a.image != b.image)


def test_colour_image_rejected_and_grey_rgb_accepted(tmp_path):
    rgb = np.zeros((8, 8, 3), dtype=np.uint8)
    rgb[..., 0] = 10
    Image.fromarray(rgb).save(tmp_path / "c.png")
    with pytest.raises(SchemaError, match="colour image.*channels differ"):
        assert read_image(tmp_path / "c.png").image is None
    grey = np.repeat(np.arange(64, dtype=np.uint8).reshape(8, 8)[..., None], 3, axis=2)
    Image.fromarray(grey).save(tmp_path / "g.png")
    assert read_image(tmp_path / "g.png").image.shape == (8, 8)


def test_missing_file_and_bad_inputs(tmp_path):
    with pytest.raises(DataUnavailableError, match="does not exist"):
        read_image(tmp_path / "nope.png")
    (tmp_path / "bad.png").write_text("not an image")
    with pytest.raises(SchemaError, match="bad.png: cannot be read as an image"):
        read_image(tmp_path / "bad.png")
    x = np.zeros((4, 4))
    with pytest.raises(InvalidParameterError, match="same shape"):
        check_pair(x, np.zeros((4, 5)), 1.0, func="f")
    with pytest.raises(InvalidParameterError, match="data_range.*positive finite"):
        check_pair(x, x, 0, func="f")
    with pytest.raises(InvalidParameterError, match="2-D single-channel"):
        check_pair(np.zeros((4, 4, 3)), np.zeros((4, 4, 3)), 1.0, func="f")
    y = x.copy()
    y[0, 0] = np.nan
    with pytest.raises(InvalidParameterError, match="must be finite"):
        check_pair(x, y, 1.0, func="f")


@pytest.mark.parametrize("shape", [(3, 3), (2, 2), (4, 4), (1, 5), (4, 3), (11, 11)])
def test_matlab_filters_match_scipy(shape):
    rng = np.random.default_rng(0)
    x = rng.random((13, 17))
    k = gaussian_kernel(11, 1.5) if shape == (11, 11) else rng.random(shape)
    np.testing.assert_allclose(conv2(x, k, "full"), signal.convolve2d(x, k, "full"), atol=1e-12)
    np.testing.assert_allclose(conv2(x, k, "valid"), signal.convolve2d(x, k, "valid"), atol=1e-12)
    np.testing.assert_allclose(filter2_valid(x, k), signal.correlate2d(x, k, "valid"), atol=1e-12)
    kh, kw = k.shape
    ch, cw = (kh - 1) // 2, (kw - 1) // 2  # MATLAB's centre floor((k+1)/2), 1-based
    p = np.pad(x, ((ch, kh - 1 - ch), (cw, kw - 1 - cw)), mode="symmetric")
    np.testing.assert_allclose(
        imfilter(x, k, mode="symmetric"), signal.correlate2d(p, k, "valid"), atol=1e-12
    )


def test_gaussian_kernel_and_auto_downsample():
    k = gaussian_kernel(11, 1.5)
    assert k.shape == (11, 11) and abs(k.sum() - 1) < 1e-15 and k[5, 5] == k.max()
    x = np.arange(512 * 512, dtype=float).reshape(512, 512)
    d = auto_downsample(x)  # f = round(512/256) = 2 -> 2x2 means
    assert d.shape == (256, 256)
    assert d[0, 0] == np.mean(x[:2, :2])
    assert auto_downsample(np.zeros((300, 300))).shape == (300, 300)  # round(1.17) = 1


@pytest.mark.parametrize("shape", [(12, 12), (13, 17), (30, 22), (1, 5), (2, 9), (5, 1)])
@pytest.mark.parametrize("f", [2, 3, 4, 7])
def test_box_downsample_conventions(shape, f):
    # tiny images and blocks larger than the image: every block overlaps the padding
    x = np.random.default_rng(f).uniform(0, 255, shape)
    # 'matlab': conv2(x, ones(f)/f^2, 'same') then x(1:f:end, 1:f:end)
    want = conv2(x, np.full((f, f), 1.0 / f**2), "same")[::f, ::f]
    np.testing.assert_allclose(box_downsample(x, f), want, rtol=1e-13)
    # 'pool': blocks from the origin, remainder dropped (torch's avg_pool2d)
    h, w = shape[0] // f * f, shape[1] // f * f
    want = x[:h, :w].reshape(h // f, f, w // f, f).mean(axis=(1, 3))
    got = box_downsample(x, f, convention="pool")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13)
    # 'replicate': f // 2 replicated rows/columns before, replicated after to whole blocks
    nh, nw = -(-shape[0] // f), -(-shape[1] // f)
    p = np.pad(x, ((f // 2, nh * f), (f // 2, nw * f)), mode="edge")[: nh * f, : nw * f]
    want = p.reshape(nh, f, nw, f).mean(axis=(1, 3))
    np.testing.assert_allclose(box_downsample(x, f, convention="replicate"), want, rtol=1e-13)
    assert box_downsample(x, 1) is x


def test_downsample_factor_rounds_half_away_from_zero():
    assert [downsample_factor((n, 2000)) for n in (100, 383, 384, 640, 1024)] == [1, 1, 2, 3, 4]


def test_rescaled_pair_keeps_16_bit_precision_and_copies():
    x = np.round(np.random.default_rng(0).uniform(0, 65535, (64, 64)))
    y = x + 1.0  # 1/65535: below the 8-bit step
    a, b = rescaled_pair(x, y, 65535, func="m")
    np.testing.assert_allclose(b - a, 255.0 / 65535, rtol=1e-9)
    a255, _ = rescaled_pair(x, x, 255.0, func="m")
    assert np.array_equal(a255, x) and a255 is not x
    a2, _ = rescaled_pair(x, y, 65535, func="m", factor=2)
    np.testing.assert_allclose(a2, box_downsample(x, 2) * 255.0 / 65535, rtol=1e-13)
    assert rescaled_pair(np.zeros((600, 600)), np.zeros((600, 600)), 1.0, func="m", factor="auto")[
        0
    ].shape == (300, 300)
    with pytest.raises(
        InvalidParameterError, match="m: 'image_true' and 'image_test' must have the same shape"
    ):
        rescaled_pair(x, x[:, :60], 65535, func="m")
