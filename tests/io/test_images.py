"""cxreval.io.images: the one image reader, against the files' own decoders (Pillow, tifffile, pydicom, NumPy).

Every format IQA and the model commands both read keeps the values either reader gave before: the stored
values as ``pixels`` (what predict scales), the same as float64 in ``image`` with ``data_range`` = ``max_value``
(what the IQA metrics take).
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from cxreval.exceptions import DataUnavailableError, SchemaError
from cxreval.io.images import (
    IMAGE_SUFFIXES,
    ImageNotFoundError,
    ImageReadError,
    image_size,
    is_dicom,
    read_image,
    write_image,
)


def _ramp(shape, dtype, rng=0):
    top = np.iinfo(dtype).max
    v = np.random.default_rng(rng).integers(0, top + 1, size=shape)
    v.flat[0], v.flat[-1] = 0, top
    return v.astype(dtype)


def _check(img, stored, top, depth):
    assert np.array_equal(img.pixels, stored) and img.max_value == top and img.bit_depth == depth
    assert img.data_range == float(top)
    grey = stored if stored.ndim == 2 else stored[..., 0]
    np.testing.assert_array_equal(img.image, grey.astype(np.float64))
    assert img.image.dtype == np.float64


def test_png_jpeg_tiff_npy_values_unchanged(tmp_path):
    import tifffile

    a8, a16 = _ramp((13, 17), np.uint8), _ramp((11, 7), np.uint16, 1)
    Image.fromarray(a8).save(tmp_path / "a8.png")
    Image.fromarray(a16).save(tmp_path / "a16.png")
    _check(read_image(tmp_path / "a8.png"), a8, 255, 8)
    _check(read_image(tmp_path / "a16.png"), a16, 65535, 16)
    assert read_image(tmp_path / "a16.png").dtype == "uint16"
    grey_rgb = np.repeat(a8[..., None], 3, axis=2)
    Image.fromarray(grey_rgb).save(tmp_path / "g.png")
    Image.fromarray(np.dstack([grey_rgb, np.full(a8.shape, 255, np.uint8)])).save(tmp_path / "ga.png")
    _check(read_image(tmp_path / "g.png"), grey_rgb, 255, 8)
    _check(read_image(tmp_path / "ga.png"), grey_rgb, 255, 8)  # alpha dropped
    Image.fromarray(a8).convert("LA").save(tmp_path / "la.png")
    _check(read_image(tmp_path / "la.png"), a8, 255, 8)
    Image.fromarray(a8).save(tmp_path / "j.jpg", quality=90)
    with Image.open(tmp_path / "j.jpg") as im:
        _check(read_image(tmp_path / "j.jpg"), np.asarray(im), 255, 8)
    for dtype, top in ((np.uint8, 255), (np.uint16, 65535)):
        t = _ramp((9, 5), dtype, 2)
        tifffile.imwrite(tmp_path / "t.tif", t)
        _check(read_image(tmp_path / "t.tif"), t, top, 8 * np.dtype(dtype).itemsize)
        np.save(tmp_path / "n.npy", t)
        _check(read_image(tmp_path / "n.npy"), t, top, 8 * np.dtype(dtype).itemsize)
    f = np.linspace(0, 1, 12).reshape(3, 4).astype(np.float32)
    tifffile.imwrite(tmp_path / "f.tif", f)
    got = read_image(tmp_path / "f.tif")
    assert (
        got.data_range == 1.0 and got.dtype == "float32" and np.array_equal(got.image, f.astype(np.float64))
    )
    assert set(IMAGE_SUFFIXES) == {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".dcm", ".dicom", ".npy"}


def test_header_size_and_errors(tmp_path):
    Image.fromarray(_ramp((6, 9), np.uint16)).save(tmp_path / "a.png")
    np.save(tmp_path / "b.npy", np.zeros((4, 3)))
    assert image_size(tmp_path / "a.png") == (6, 9) and image_size(tmp_path / "b.npy") == (4, 3)
    with pytest.raises(ImageNotFoundError, match="nope.png does not exist") as info:
        read_image(tmp_path / "nope.png")
    assert isinstance(info.value, DataUnavailableError) and isinstance(info.value, ImageReadError)
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(ImageReadError, match="bad.png: cannot be read as an image"):
        read_image(tmp_path / "bad.png")
    rgb = np.zeros((4, 4, 3), np.uint8)
    rgb[..., 0] = 9
    Image.fromarray(rgb).save(tmp_path / "c.png")
    colour = read_image(tmp_path / "c.png")
    assert colour.channels == 3 and np.array_equal(colour.pixels, rgb)  # the model commands take colour
    with pytest.raises(SchemaError, match="colour image .* channels differ"):
        assert colour.image is None  # the metrics need one grey plane
    np.save(tmp_path / "nan.npy", np.array([[0.0, np.nan]]))
    with pytest.raises(ImageReadError, match="non-finite"):
        read_image(tmp_path / "nan.npy")
    assert write_image(tmp_path / "w.png", np.array([[0.0, 0.5]]), data_range=1.0, dtype="uint8").is_file()
    assert read_image(tmp_path / "w.png").pixels.tolist() == [[0, 128]]


def _dicom(path, pixels, *, photometric="MONOCHROME2", bits=12, signed=False):
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
    ds.PixelData = pixels.astype(np.int16 if signed else np.uint16).tobytes()
    ds.save_as(str(path), enforce_file_format=True)
    return path


def test_dicom_monochrome_signed_and_preamble(tmp_path):
    pytest.importorskip("pydicom")
    v = _ramp((5, 6), np.uint16) >> 4  # 12-bit values
    m2 = read_image(_dicom(tmp_path / "m2.dcm", v))
    assert m2.max_value == 4095 and m2.bit_depth == 12 and m2.dtype == "uint16"
    np.testing.assert_array_equal(m2.pixels, v)
    m1 = read_image(_dicom(tmp_path / "m1.dcm", v, photometric="MONOCHROME1"))
    np.testing.assert_array_equal(m1.image, 4095.0 - v)  # inverted to MONOCHROME2
    s = read_image(_dicom(tmp_path / "s.dcm", np.array([[-2048, 0], [2047, 5]]), signed=True))
    np.testing.assert_array_equal(s.image, [[0, 2048], [4095, 2053]])  # shifted into [0, 4095]
    _dicom(tmp_path / "noext", v)  # no suffix: found by its DICM marker
    assert is_dicom(tmp_path / "noext") and np.array_equal(read_image(tmp_path / "noext").pixels, v)
    assert image_size(tmp_path / "m2.dcm") == (5, 6)
