"""Image delivery: the display rendition is the block mean of the full image (checked against a NumPy
reference), sized to the asked longest side, gzip-compressed, with the bit depth detected from the pixels
(12-bit data in a 16-bit PNG: 0..4095); the full resolution is the stored pixels; ETag revalidation
answers 304; the server renders a reader's next studies ahead."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest

from cxreval.reader.images import RenditionCache, bit_depth, decode, render, rendition_scale
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS, write_dicom

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def _png16(path: Path, a: np.ndarray) -> Path:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(a.astype(np.uint16)).save(path)
    return path


@pytest.mark.parametrize(
    "top, bits", [(0, 8), (255, 8), (256, 10), (1023, 10), (4095, 12), (4096, 14), (16383, 14), (65535, 16)]
)
def test_bit_depth_is_the_smallest_that_holds_the_data(top: int, bits: int) -> None:
    assert bit_depth(np.array([[0, top]], dtype=np.uint16)) == bits


@pytest.mark.parametrize("bits", [12, 16])  # 16-bit block sums need 32 bits; 12-bit ones fit in 16
def test_a_rendition_is_the_block_mean_with_edges_replicated(bits: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**bits, size=(25, 19)).astype(np.uint16)
    a[0, :3] = 2**bits - 1  # a block of the largest values
    r = render(a, 3, bits=bits, etag='"x"')
    got = np.frombuffer(gzip.decompress(r.body), "<u2").reshape(r.height, r.width)
    padded = np.pad(a.astype(float), ((0, 2), (0, 2)), mode="edge")
    want = np.floor(padded.reshape(9, 3, 7, 3).mean(axis=(1, 3)) + 0.5)
    np.testing.assert_array_equal(got, want)
    assert (r.width, r.height, r.full_width, r.full_height, r.scale, r.data_range) == (
        7,
        9,
        19,
        25,
        3,
        2**bits - 1,
    )
    # the standard sizes: never fewer pixels than the screen asks; 4K or DPR 2 gets the native image
    assert [rendition_scale(2048, 2500, fit) for fit in (300, 900, 1024, 1500, 2048, 2049, 4320)] == [
        4,
        2,
        2,
        1,
        1,
        1,
        1,
    ]
    assert rendition_scale(100, 50, 1280) == 1


def test_display_and_full_renditions_over_http(study_factory, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    study = study_factory(tmp_path / "s")
    rng = np.random.default_rng(1)
    big = rng.integers(100, 4096, size=(520, 410)).astype(np.uint16)  # 12-bit data in a 16-bit PNG
    big[0, 0] = 4095
    _png16(tmp_path / "s" / "images" / "a1.png", big)
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    h = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(store)) as c:
        r = c.get("/api/pixels?task=image&key=a1&level=display&fit=256", headers=h)
        assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
        assert int(r.headers["content-length"]) < big.nbytes / 2  # compressed and reduced
        assert (r.headers["X-Scale"], r.headers["X-Width"], r.headers["X-Height"]) == ("2", "205", "260")
        assert (r.headers["X-Full-Width"], r.headers["X-Full-Height"]) == ("410", "520")
        assert (r.headers["X-Bits"], r.headers["X-Data-Range"]) == ("12", "4095")
        assert "private" in r.headers["cache-control"] and "no-store" not in r.headers["cache-control"]
        got = np.frombuffer(r.content, "<u2").reshape(260, 205)
        want = np.floor(big.astype(float).reshape(260, 2, 205, 2).mean(axis=(1, 3)) + 0.5)
        np.testing.assert_array_equal(got, want)
        again = c.get(
            "/api/pixels?task=image&key=a1&level=display&fit=256",
            headers=h | {"If-None-Match": r.headers["etag"]},
        )
        assert again.status_code == 304 and again.content == b""
        full = c.get("/api/pixels?task=image&key=a1&level=full", headers=h)
        assert full.headers["X-Scale"] == "1" and full.headers["etag"] != r.headers["etag"]
        np.testing.assert_array_equal(np.frombuffer(full.content, "<u2").reshape(520, 410), big)
        eight = c.get("/api/pixels?task=image&key=b1&level=display", headers=h)  # b1: 8-bit PNG of 48 x 64
        assert (eight.headers["X-Bits"], eight.headers["X-Data-Range"], eight.headers["X-Scale"]) == (
            "8",
            "255",
            "1",
        )
        for bad in ("level=tiles", "fit=0", "fit=99999", "fit=x"):
            assert c.get(f"/api/pixels?task=image&key=a1&{bad}", headers=h).status_code == 422, bad
    store.close()


def test_the_server_renders_the_next_studies_ahead(study_factory, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    study = study_factory(tmp_path / "s", n_images=6)
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    alice = store.authenticate(tokens["alice"])
    order = [q["key"] for q in store.queue(alice, "image")]
    store.submit(alice, "alice-0001", "image", order[2], {"labels": {f: "negative" for f in FINDINGS}})
    app = create_app(store, read_ahead=2)
    with TestClient(app) as c:
        c.get(
            f"/api/pixels?task=image&key={order[0]}&level=display",
            headers={"Authorization": f"Bearer {tokens['alice']}"},
        )
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and len(app.cache.data) < 3:
            time.sleep(0.02)
        made = {Path(k[0]).stem for k in app.cache.data}
    assert made == {order[0], order[1], order[3]}  # the next two not yet labelled (order[2] is)
    store.close()


def test_one_rendition_is_made_once_for_concurrent_requests(tmp_path: Path, monkeypatch) -> None:
    import threading

    import cxreval.reader.images as images

    path = _png16(tmp_path / "x.png", np.arange(64 * 64, dtype=np.uint16).reshape(64, 64))
    calls = []
    real = images.decode

    def slow(p):
        calls.append(p)
        time.sleep(0.2)
        return real(p)

    monkeypatch.setattr(images, "decode", slow)
    cache = RenditionCache()
    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.get(path, 2))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in out}) == 1 and out[0].bits == 12
    assert decode(path)[1] == 12
    cache.close()


def _block_mean(a: np.ndarray, s: int) -> np.ndarray:
    h, w = a.shape
    return np.floor(a.astype(float).reshape(h // s, s, w // s, s).mean(axis=(1, 3)) + 0.5)


def test_renditions_made_at_init_are_served_without_decoding(
    study_factory, tmp_path: Path, monkeypatch
) -> None:
    from fastapi.testclient import TestClient

    import cxreval.reader.images as images
    from cxreval.reader import create_study
    from cxreval.reader.app import create_app

    study = study_factory(tmp_path / "s")
    big = np.random.default_rng(2).integers(0, 4096, size=(520, 410)).astype(np.uint16)
    _png16(tmp_path / "s" / "images" / "a1.png", big)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    made = create_study(study, url, fit=256)
    # 4 study images + 2 IQA references + 3 IQA tests, each rendered once
    assert (made.renditions.n_made, made.renditions.n_reused) == (9, 0)
    assert len(list((tmp_path / "s" / images.RENDITIONS).glob("*.rendition"))) == 9

    def refuse(path):
        raise AssertionError(f"decoded {path} on request")

    monkeypatch.setattr(images, "decode", refuse)
    h = {"Authorization": f"Bearer {made.tokens['alice']}"}
    with TestClient(create_app(url)) as c:
        r = c.get("/api/pixels?task=image&key=a1&level=display&fit=256", headers=h)
        assert r.status_code == 200 and (r.headers["X-Scale"], r.headers["X-Bits"]) == ("2", "12")
        np.testing.assert_array_equal(np.frombuffer(r.content, "<u2").reshape(260, 205), _block_mean(big, 2))
        coarser = c.get("/api/pixels?task=image&key=a1&level=display&fit=128", headers=h)  # a smaller pane
        assert coarser.status_code == 200 and coarser.headers["X-Scale"] == "2"  # the rendition made ahead
        assert (
            c.get(
                "/api/pixels?task=image&key=a1&level=display&fit=256",
                headers=h | {"If-None-Match": r.headers["etag"]},
            ).status_code
            == 304
        )


def test_rendition_files_are_reused_until_the_image_changes(study_factory, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.images import RENDITIONS, make_renditions

    study = study_factory(tmp_path / "s")
    root = tmp_path / "s"
    a = np.random.default_rng(3).integers(0, 4096, size=(300, 520)).astype(np.uint16)
    _png16(root / "images" / "a1.png", a)
    names = ["images/a1.png", "images/b1.png", "images/c1.png", "images/a1.png"]  # a repeat is rendered once
    assert make_renditions(root, names, fit=64).n_made == 3
    got = make_renditions(root, names, fit=64, executor="process:2")
    assert (got.n_made, got.n_reused, got.folder) == (0, 3, root.resolve() / RENDITIONS)
    b = a[::-1].copy()
    _png16(root / "images" / "a1.png", b)  # the image changed since: its rendition is stale
    assert (make_renditions(root, names, fit=64).n_made, make_renditions(root, names, fit=64).n_made) == (
        1,
        0,
    )
    for f in (root / RENDITIONS).glob("*.rendition"):  # torn files (a crash mid-write on another system)
        f.write_bytes(f.read_bytes()[:-5])
    assert make_renditions(root, names, fit=64).n_made == 3
    _png16(root / "images" / "a1.png", a)  # changed after the renditions were made: the server renders it
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    with TestClient(create_app(store)) as c:
        r = c.get(
            "/api/pixels?task=image&key=a1&level=display&fit=64",
            headers={"Authorization": f"Bearer {tokens['alice']}"},
        )
        assert r.status_code == 200 and r.headers["X-Scale"] == "2"
        np.testing.assert_array_equal(np.frombuffer(r.content, "<u2").reshape(150, 260), _block_mean(a, 2))
    store.close()


def test_one_rendition_file_per_image_and_size_not_per_view(study_factory, tmp_path: Path) -> None:
    """Screens of every size, each viewing a 2048 x 2500 radiograph many times, and a server restart: the
    study folder holds one file per standard rendition asked for (1080p: scale 2; 4K or DPR 2: the native
    image), written once; the native image is never sent for a 1080p screen."""
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.images import RENDITIONS

    study = study_factory(tmp_path / "s")
    a = np.random.default_rng(5).integers(0, 4096, size=(2500, 2048)).astype(np.uint16)
    _png16(tmp_path / "s" / "images" / "a1.png", a)
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    h = {"Authorization": f"Bearer {tokens['alice']}"}
    folder = tmp_path / "s" / RENDITIONS
    mtimes: dict[str, int] = {}
    for _restart in range(2):
        with TestClient(create_app(store, read_ahead=0)) as c:
            for fit in (950, 1000, 1024, 1900, 2040, 3840, 4320, 950, 2040):  # 1080p, 4K, DPR 2, again
                r = c.get(f"/api/pixels?task=image&key=a1&level=display&fit={fit}", headers=h)
                assert r.status_code == 200
                assert r.headers["X-Scale"] == ("2" if fit <= 1024 else "1"), fit
            files = {f.name: f.stat().st_mtime_ns for f in folder.glob("*.rendition")}
        assert len(files) == 2  # scale 2 and native: one file each, not one per view
        assert all(mtimes.get(k, v) == v for k, v in files.items())  # never written again
        mtimes = files
    store.close()


def test_the_dicom_window_and_pixel_spacing_reach_the_page(tmp_path: Path) -> None:
    """A 16-bit MONOCHROME1 DICOM with a rescale, a window and PixelSpacing: the window in the rendition's
    values (rescale undone, inverted as the pixels are), the spacing in mm; a PNG study's declared spacing."""
    pytest.importorskip("pydicom", reason="DICOM needs the optional pydicom (cxreval[dicom])")
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    arr = np.random.default_rng(0).integers(0, 65536, size=(40, 50)).astype(np.uint16)
    root = tmp_path / "s"
    write_dicom(
        root / "images" / "d1.dcm",
        arr,
        PhotometricInterpretation="MONOCHROME1",
        RescaleSlope=2,
        RescaleIntercept=-1000,
        WindowCenter=[9000, 500],  # the first window is the file's default
        WindowWidth=[4000, 100],
        PixelSpacing=[0.143, 0.139],
    )
    _png16(root / "images" / "p1.png", arr)
    (root / "study.yaml").write_text(
        "findings: [Effusion]\nimages: images\nreaders: [alice]\npixel_spacing_mm: 0.2\n"
    )
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'd.db'}", load_study(root / "study.yaml"))
    h = {"Authorization": f"Bearer {tokens['alice']}"}
    with TestClient(create_app(store)) as c:
        for level in ("display", "full", "display"):  # the second display: from the rendition file
            r = c.get(f"/api/pixels?task=image&key=d1&level={level}", headers=h)
            assert r.status_code == 200
            # stored = (modality - intercept) / slope = 5000, inverted (MONOCHROME1): 65535 - 5000
            assert r.headers["X-Window"] == "60535,2000", level
            assert (r.headers["X-Pixel-Spacing"], r.headers["X-Pixel-Spacing-Source"]) == (
                "0.143,0.139",
                "dicom",
            )
        png = c.get("/api/pixels?task=image&key=p1&level=display", headers=h)
        assert "X-Window" not in png.headers
        assert (png.headers["X-Pixel-Spacing"], png.headers["X-Pixel-Spacing-Source"]) == ("0.2,0.2", "study")
    store.close()


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "true", "12"])
def test_a_declared_pixel_spacing_must_be_millimetres(study_factory, tmp_path: Path, bad: str) -> None:
    from cxreval.exceptions import CxrevalError

    study = study_factory(tmp_path / "s", extra=f"pixel_spacing_mm: {bad}\n")
    with pytest.raises(CxrevalError, match="pixel_spacing_mm"):
        load_study(study)
