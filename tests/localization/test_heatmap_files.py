"""Streamed heatmaps: .npz / folder of .npy / predict's layout read map by map, identical to in memory,
on every executor; bad files refused naming the file before any box is computed."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.nih_boxes import read_nih_boxes
from cxreval.exceptions import SchemaError
from cxreval.localization import LocalizationProtocol, evaluate_heatmaps
from cxreval.localization import _evaluate as evaluate_mod
from cxreval.localization._heatmap_files import read_maps, scan_heatmaps
from cxreval.predict._store import NpzWriter

HEADER = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
FINDINGS = ("Atelectasis", "Mass", "Nodule")
OUTPUTS = ("localization.csv", "localization.parquet", "boxes.csv", "boxes.parquet", "summary.md")


@pytest.fixture()
def case(tmp_path):
    """11 maps (float32 / float64 / int, 16 x 16 and 32 x 32, one constant, two blobs) with boxes; one map of a
    box image without a box of its finding (AFP-only under 'box_images')."""
    rng = np.random.default_rng(7)
    maps, rows = {}, []
    for i in range(11):
        side = 16 if i % 3 == 0 else 32
        yy, xx = np.mgrid[0:side, 0:side]
        m = np.zeros((side, side))
        for _ in range(1 + i % 2):
            cy, cx = rng.uniform(2, side - 2, 2)
            m += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * rng.uniform(1, 3) ** 2))
        m += rng.uniform(0, 0.05, m.shape)
        m = m.astype(np.float32) if i % 2 else m
        if i == 4:
            m = np.full((32, 32), 3.0)
        if i == 5:
            m = (m * 100).astype(np.int16)
        key = f"{i:04d}.png/{FINDINGS[i % 3]}"
        maps[key] = m
        if i != 10:
            x, y = rng.uniform(0, 700, 2)
            rows.append(
                f"{i:04d}.png,{FINDINGS[i % 3]},{x:.1f},{y:.1f},{rng.uniform(50, 300):.1f},"
                f"{rng.uniform(50, 300):.1f}\n"
            )
    maps["0000.png/Nodule"] = maps.pop("0010.png/Mass")  # a box image, no box of Nodule: AFP only
    csv = tmp_path / "bbox.csv"
    csv.write_text(HEADER + "".join(rows))
    return maps, csv


def _write_all(tmp_path, maps):
    """The same maps in every accepted layout."""
    np.savez(tmp_path / "stored.npz", **maps)
    np.savez_compressed(tmp_path / "compressed.npz", **maps)
    with NpzWriter(tmp_path / "predict.npz") as w:  # cxreval predict --heatmaps' layout
        for k, v in maps.items():
            w.add(k, v)
    folder = tmp_path / "folder"
    for k, v in maps.items():
        (folder / k).parent.mkdir(parents=True, exist_ok=True)
        np.save(folder / f"{k}.npy", np.asfortranarray(v) if v.dtype == np.float32 else v)
    keys = list(maps)
    np.savez(tmp_path / "part1.npz", **{k: maps[k] for k in keys[:5]})
    np.savez_compressed(tmp_path / "part2.npz", **{k: maps[k] for k in keys[5:]})
    return {
        "stored": [tmp_path / "stored.npz"],
        "compressed": [tmp_path / "compressed.npz"],
        "predict": [tmp_path / "predict.npz"],
        "folder": [folder],
        "two files": [tmp_path / "part1.npz", tmp_path / "part2.npz"],
    }


def _localize(paths, csv, out, *extra):
    args = ["localize", "--boxes", str(csv), "-o", str(out), "--afp-denominator", "box_images", *extra]
    for p in paths:
        args += ["--heatmaps", str(p)]
    return main(args)


def test_index_and_reader_round_trip(tmp_path, case):
    maps, _ = case
    for name, paths in _write_all(tmp_path, maps).items():
        idx = scan_heatmaps(paths)
        assert sorted(idx.keys) == sorted(maps), name
        got = read_maps(idx)
        for k, a in zip(idx.keys, got):
            assert a.dtype == np.float64 and np.array_equal(a, np.asarray(maps[k], float)), (name, k)
        sub = idx.take([3, 0])
        assert [np.array_equal(a, maps[k]) for k, a in zip(sub.keys, read_maps(sub))] == [True, True]


def test_streamed_equals_in_memory(tmp_path, case, monkeypatch):
    maps, csv = case
    monkeypatch.setattr(evaluate_mod, "FILE_CHUNK", 3)  # several chunks, shapes mixed within a chunk
    refs = read_nih_boxes(csv).table
    proto = LocalizationProtocol(afp_denominator="box_images")
    mem = evaluate_heatmaps(maps, refs, protocol=proto)
    assert len(mem.detail) > 10 and mem.table.fp_without_box.max() > 0
    outs = {}
    for name, paths in _write_all(tmp_path, maps).items():
        res = evaluate_heatmaps(scan_heatmaps(paths), refs, protocol=proto)
        pd.testing.assert_frame_equal(res.table, mem.table, check_exact=True)
        pd.testing.assert_frame_equal(res.detail, mem.detail, check_exact=True)
        out = tmp_path / f"out-{name.replace(' ', '-')}"
        assert _localize(paths, csv, out) == 0
        assert (out / "boxes.csv").read_text() == mem.detail.to_csv(index=False)
        outs[name] = {f: (out / f).read_bytes() for f in OUTPUTS if f != "summary.md"}
    first = next(iter(outs.values()))
    assert all(o == first for o in outs.values())


def _same_outputs(a, b):
    for f in OUTPUTS:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_executors_equal_serial(tmp_path, case, monkeypatch):
    maps, csv = case
    monkeypatch.setattr(evaluate_mod, "FILE_CHUNK", 2)
    paths = [tmp_path / "m.npz"]
    np.savez_compressed(paths[0], **maps)
    assert _localize(paths, csv, tmp_path / "serial") == 0
    assert _localize(paths, csv, tmp_path / "proc", "--executor", "process:2") == 0
    _same_outputs(tmp_path / "serial", tmp_path / "proc")


def test_dask_cluster_equals_serial(tmp_path, case, monkeypatch, dask_cluster):
    maps, csv = case
    monkeypatch.setattr(evaluate_mod, "FILE_CHUNK", 2)
    folder = _write_all(tmp_path, maps)["folder"]
    assert _localize(folder, csv, tmp_path / "serial") == 0
    assert (
        _localize(folder, csv, tmp_path / "dask", "--executor", f"dask://{dask_cluster.split('://')[1]}") == 0
    )
    _same_outputs(tmp_path / "serial", tmp_path / "dask")


def _bad_inputs(tmp_path, maps):
    good = tmp_path / "good.npz"
    np.savez(good, **maps)
    notzip = tmp_path / "notzip.npz"
    notzip.write_text("hello")
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, **{"0001.png/Mass": np.array([{"a": 1}], dtype=object)})
    cube = tmp_path / "cube.npz"
    np.savez(cube, **{"0001.png/Mass": np.zeros((2, 4, 4))})
    text = tmp_path / "text.npz"
    np.savez(text, **{"0001.png/Mass": np.array([["a", "b"]])})
    truncated = tmp_path / "truncated"
    (truncated / "0001.png").mkdir(parents=True)
    np.save(truncated / "0001.png" / "Mass.npy", np.zeros((32, 32)))
    raw = (truncated / "0001.png" / "Mass.npy").read_bytes()
    (truncated / "0001.png" / "Mass.npy").write_bytes(raw[:-100])
    empty = tmp_path / "empty"
    empty.mkdir()
    extra = tmp_path / "extra.npz"
    with zipfile.ZipFile(extra, "w") as z:
        z.writestr("README.txt", "not a map")
    dup = tmp_path / "dup.npz"
    np.savez(dup, **{"0001.png/Mass": maps["0001.png/Mass"]})
    return {
        "notzip": ([notzip], "notzip.npz: cannot be read as a NumPy .npz of heatmaps"),
        "pickled": ([pickled], "pickled.npz (member 0001.png/Mass.npy): heatmap values must be numbers"),
        "cube": ([cube], "cube.npz (member 0001.png/Mass.npy): a heatmap must be a non-empty 2-D array"),
        "text": ([text], "text.npz (member 0001.png/Mass.npy): heatmap values must be numbers"),
        "truncated": ([truncated], "Mass.npy: the array is truncated"),
        "empty": ([empty], "a heatmap folder must hold '<image id>/<finding>.npy' files; found none"),
        "extra": ([extra], "extra.npz (member README.txt): a heatmap .npz holds only"),
        "dup": ([good, dup], "heatmap key '0001.png/Mass' appears twice: in "),
        "missing": ([tmp_path / "nope.npz"], "nope.npz does not exist"),
    }


def test_bad_heatmap_files_exit_2_before_work(tmp_path, case, monkeypatch, capsys):
    maps, csv = case

    def boom(*a, **k):
        raise AssertionError("boxes computed before the inputs were checked")

    monkeypatch.setattr(evaluate_mod, "file_chunk_boxes", boom)
    for name, (paths, msg) in _bad_inputs(tmp_path, maps).items():
        out = tmp_path / f"out-{name}"
        assert _localize(paths, csv, out) == 2, name
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and msg in err, (name, err)
        assert not out.exists()


def test_non_finite_map_names_file_and_key(tmp_path, case, capsys):
    maps, csv = case
    maps = dict(maps)
    maps["0002.png/Nodule"] = maps["0002.png/Nodule"].copy()
    maps["0002.png/Nodule"][3, 4] = np.nan
    p = tmp_path / "nan.npz"
    np.savez_compressed(p, **maps)
    out = tmp_path / "out"
    assert _localize([p], csv, out) == 2
    err = capsys.readouterr().err
    assert (
        "nan.npz (member 0002.png/Nodule.npy): heatmap '0002.png/Nodule' must be finite; found nan at index "
        "(3, 4)" in err
    )
    assert not out.exists()
    with pytest.raises(SchemaError, match="must be finite"):
        evaluate_heatmaps(scan_heatmaps([p]), read_nih_boxes(csv).table)


def test_aspect_ratio_names_the_file(tmp_path, case):
    maps, csv = case
    p = tmp_path / "wide.npz"
    np.savez(p, **{**maps, "0001.png/Mass": np.zeros((8, 16))})
    with pytest.raises(
        SchemaError,
        match=r"heatmap '0001.png/Mass' \(.*wide.npz \(member 0001.png/Mass.npy\)\) "
        "is 8 x 16",
    ):
        evaluate_heatmaps(scan_heatmaps([p]), read_nih_boxes(csv).table)
