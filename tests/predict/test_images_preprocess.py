"""Reading images at full bit depth and preprocessing them exactly as TorchXRayVision does."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.io.images import ImageReadError, LoadedImage, read_image
from cxreval.predict._images import list_images
from cxreval.predict._preprocess import Preprocessing, preprocess_image


def _ramp(h, w, dtype, rng=0):
    g = np.random.default_rng(rng)
    top = np.iinfo(dtype).max
    v = g.integers(0, top + 1, size=(h, w))
    v[0, 0], v[-1, -1] = 0, top
    return v.astype(dtype)


def test_png_8_and_16_bit_read_unchanged(tmp_path):
    a8, a16 = _ramp(37, 53, np.uint8), _ramp(41, 29, np.uint16, 1)
    Image.fromarray(a8).save(tmp_path / "a8.png")
    Image.fromarray(a16).save(tmp_path / "a16.png")
    r8, r16 = read_image(tmp_path / "a8.png"), read_image(tmp_path / "a16.png")
    assert (r8.pixels == a8).all() and r8.max_value == 255 and r8.bit_depth == 8 and r8.format == "png"
    assert (r16.pixels == a16).all() and r16.max_value == 65535 and r16.bit_depth == 16
    # a 16-bit image whose values all lie below 256 is still a 16-bit image (not rescaled to 8 bits)
    small = np.full((4, 4), 200, dtype=np.uint16)
    Image.fromarray(small).save(tmp_path / "s16.png")
    assert read_image(tmp_path / "s16.png").max_value == 65535


def test_colour_jpeg_tiff_and_errors(tmp_path):
    rgb = np.stack([_ramp(10, 12, np.uint8, k) for k in range(3)], axis=2)
    Image.fromarray(rgb).save(tmp_path / "c.png")
    r = read_image(tmp_path / "c.png")
    assert r.pixels.shape == (10, 12, 3) and r.channels == 3 and (r.pixels == rgb).all()
    Image.fromarray(rgb[..., 0]).save(tmp_path / "g.jpg", quality=95)
    assert read_image(tmp_path / "g.jpg").max_value == 255
    import tifffile

    t16 = _ramp(9, 7, np.uint16, 4)
    tifffile.imwrite(tmp_path / "t.tif", t16)
    rt = read_image(tmp_path / "t.tif")
    assert (rt.pixels == t16).all() and rt.max_value == 65535
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(ImageReadError, match="bad.png: cannot be read as an image"):
        read_image(tmp_path / "bad.png")
    with pytest.raises(ImageReadError, match="does not exist"):
        read_image(tmp_path / "none.png")
    # 16-bit colour PNG: Pillow would squash it to 8 bits, so it is refused
    import struct
    import zlib

    raw = b"".join(b"\x00" + np.zeros((2, 6), ">u2").tobytes() for _ in range(2))
    ihdr = struct.pack(">IIBBBBB", 2, 2, 16, 2, 0, 0, 0)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    (tmp_path / "rgb16.png").write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )
    with pytest.raises(ImageReadError, match="16-bit colour PNG"):
        read_image(tmp_path / "rgb16.png")


def test_listing(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("b.png", "sub/a.png"):
        Image.fromarray(np.zeros((3, 3), np.uint8)).save(tmp_path / name)
    (tmp_path / "notes.txt").write_text("x")
    li = list_images(tmp_path)
    assert [it.study_id for it in li.items] == ["b.png", "sub/a.png"]
    assert len(li.skipped) == 1 and "notes.txt" in li.skipped[0][0]
    lst = tmp_path / "list.txt"
    lst.write_text("# header\nb.png\n\nsub/a.png\n")
    assert [it.path for it in list_images(lst).items] == [tmp_path / "b.png", tmp_path / "sub/a.png"]
    csv = tmp_path / "l.csv"
    csv.write_text("path,study_id\nb.png,s1\nsub/a.png,s2\n")
    assert [it.study_id for it in list_images(csv).items] == ["s1", "s2"]
    csv.write_text("path,study_id\nb.png,s1\nsub/a.png,s1\n")
    with pytest.raises(SchemaError, match=r"ids must be unique; \['s1'\]"):
        list_images(csv)
    with pytest.raises(SchemaError, match="does not exist"):
        list_images(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SchemaError, match="no image found"):
        list_images(tmp_path / "empty")


def test_hand_worked_preprocessing():
    # 2 x 4 8-bit image: the centre crop keeps columns 1..2; values 0 and 255 -> -1024 and 1024
    raw = LoadedImage(np.array([[9, 0, 255, 9], [9, 255, 0, 9]], dtype=np.uint8), 255, 8, 1, "png")
    x = preprocess_image(raw, Preprocessing(size=2))
    assert x.shape == (1, 2, 2) and x.dtype == np.float32
    np.testing.assert_array_equal(
        x[0], [[-1024, 1024], [1024, -1024]]
    )  # same size: resize is the identity here
    u = preprocess_image(raw, Preprocessing(size=2, normalization="unit", crop="none", channels=3))
    assert u.shape == (3, 2, 2) and 0 <= u.min() and u.max() <= 1
    c = preprocess_image(raw, Preprocessing(size=2, normalization="custom", mean=(0.5,), std=(0.25,)))
    np.testing.assert_allclose(c[0], [[-2, 2], [2, -2]])
    im = preprocess_image(raw, Preprocessing(size=2, channels=3, normalization="imagenet"))
    np.testing.assert_allclose(
        im[:, 0, 1], (1 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225]), rtol=1e-6
    )
    with pytest.raises(InvalidParameterError, match="needs channels=3"):
        Preprocessing(size=2, normalization="imagenet")
    with pytest.raises(InvalidParameterError, match="'crop' parameter"):
        Preprocessing(size=2, crop="left")
    bad = LoadedImage(np.array([[300]], dtype=np.uint16), 255, 8, 1, "png")
    with pytest.raises(ImageReadError, match=r"outside \[0, 255\]"):
        preprocess_image(bad, Preprocessing(size=2))


@pytest.mark.parametrize(
    "dtype,shape,size",
    [
        (np.uint8, (300, 260), 224),
        (np.uint16, (250, 333), 224),
        (np.uint16, (64, 64), 512),
        (np.uint8, (97, 41, 3), 64),
    ],
)
def test_preprocessing_equals_torchxrayvision(tmp_path, xrv, dtype, shape, size):
    """Our pipeline vs xrv.datasets.normalize + mean over colour + XRayCenterCrop + XRayResizer, to 1e-6."""
    a = (
        _ramp(shape[0], shape[1], dtype)
        if len(shape) == 2
        else np.stack([_ramp(shape[0], shape[1], dtype, k) for k in range(3)], axis=2)
    )
    Image.fromarray(a).save(tmp_path / "x.png")
    ours = preprocess_image(read_image(tmp_path / "x.png"), Preprocessing(size=size))
    maxval = np.iinfo(dtype).max
    ref = xrv.datasets.normalize(a, maxval)
    if ref.ndim == 3:
        ref = ref.mean(2)
    ref = ref[None, ...]
    import torchvision

    ref = torchvision.transforms.Compose([xrv.datasets.XRayCenterCrop(), xrv.datasets.XRayResizer(size)])(ref)
    assert ours.shape == ref.shape == (1, size, size) and ours.dtype == ref.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6)


def _dicom(path, pixels, *, photometric="MONOCHROME2", bits=12, window=None, signed=False):
    pytest.importorskip("pydicom")
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.1.1"
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
    ds.SOPClassUID, ds.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    ds.Modality = "DX"
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, photometric
    ds.BitsAllocated, ds.BitsStored, ds.HighBit = 16, bits, bits - 1
    ds.PixelRepresentation = int(signed)
    if window is not None:
        ds.WindowCenter, ds.WindowWidth = window
    ds.PixelData = pixels.astype(np.int16 if signed else np.uint16).tobytes()
    ds.save_as(str(path), enforce_file_format=True)
    return path


def test_dicom_monochrome_and_window(tmp_path, xrv):
    pytest.importorskip("pydicom")
    v = _ramp(20, 30, np.uint16) >> 4  # 12-bit values
    p1 = _dicom(tmp_path / "m1.dcm", v, photometric="MONOCHROME1")
    r1 = read_image(p1)
    assert r1.max_value == 4095 and r1.photometric == "MONOCHROME1"
    np.testing.assert_array_equal(r1.pixels, 4095 - v)  # inverted to MONOCHROME2
    with pytest.warns(UserWarning):
        ref1 = xrv.utils.read_xray_dcm(p1)  # xrv: normalised, MONOCHROME1 fixed
    from cxreval.predict._preprocess import scale_pixels

    np.testing.assert_allclose(scale_pixels(r1, "xrv"), ref1, atol=1e-6)
    p2 = _dicom(tmp_path / "w.dcm", v, window=(1000, 800))
    r2 = read_image(p2, dicom_window="voi")
    ref2 = xrv.utils.read_xray_dcm(p2, voi_lut=True)
    np.testing.assert_allclose(scale_pixels(r2, "xrv"), ref2, atol=1e-6)
    assert r2.pixels.min() == 0 and r2.pixels.max() == 4095  # the window spans the output range
    np.testing.assert_array_equal(read_image(p2).pixels, v)  # 'none': stored values
    s = _dicom(tmp_path / "s.dcm", np.array([[-2048, 0], [2047, 5]]), signed=True)
    np.testing.assert_array_equal(read_image(s).pixels, [[0, 2048], [4095, 2053]])
    with pytest.raises(InvalidParameterError, match="dicom_window"):
        read_image(p2, dicom_window="auto")


def test_cmyk_jpeg_is_read_as_its_picture_not_its_ink_channels(tmp_path):
    g = np.random.default_rng(0)
    a = (g.random((20, 30)) * 200 + 30).astype(np.uint8)
    Image.fromarray(a).convert("CMYK").save(tmp_path / "c.jpg", quality=100)
    Image.fromarray(a).convert("RGB").save(tmp_path / "r.jpg", quality=100)
    c, r = read_image(tmp_path / "c.jpg"), read_image(tmp_path / "r.jpg")
    assert c.pixels.shape == (20, 30, 3) and c.max_value == 255
    assert np.abs(c.pixels.astype(int) - a[..., None]).mean() < 3  # not the (all-zero) C, M, Y planes
    assert np.abs(c.pixels.astype(int) - r.pixels.astype(int)).max() <= 8
