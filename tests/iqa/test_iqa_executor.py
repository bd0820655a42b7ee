"""`iqa score` on every executor: streamed in blocks, identical byte for byte; bad files fail first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.executor._local import ProcessExecutor
from cxreval.io._write import TableWriter
from cxreval.io.images import write_image
from cxreval.iqa import score_pairs
from cxreval.iqa._scoring import score_pair_batches

METRICS = "psnr,rmse,ssim,gmsd,haarpsi,piqe"


@pytest.fixture
def pairs_file(tmp_path):
    """7 pairs of 48x48 images (16-bit references, 16- and 8-bit tests) named relative to pairs.csv."""
    rng = np.random.default_rng(3)
    d = tmp_path / "img"
    d.mkdir()
    rows = []
    for i in range(4):
        x = np.cumsum(rng.random((48, 48)), axis=1)
        x = x / x.max()
        write_image(d / f"ref{i}.png", x, data_range=1.0, dtype="uint16")
        for k, sigma in enumerate((0.02, 0.08)[: 2 if i < 3 else 1]):
            y = np.clip(x + rng.normal(0, sigma, x.shape), 0, 1)
            write_image(d / f"t{i}_{k}.png", y, data_range=1.0, dtype="uint16" if k == 0 else "uint8")
            rows.append({"reference": f"img/ref{i}.png", "test": f"img/t{i}_{k}.png"})
    p = tmp_path / "pairs.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "run.json"}


def _score(pairs, out, *extra):
    return main(["iqa", "score", "--pairs", str(pairs), "--metrics", METRICS, "-o", str(out), *extra])


def test_blocks_equal_score_pairs_on_a_process_pool(pairs_file):
    table = pd.read_csv(pairs_file)
    whole = score_pairs(table, METRICS, base_dir=pairs_file.parent).table
    blocks = list(
        score_pair_batches(
            table, METRICS, base_dir=pairs_file.parent, batch_size=2, executor=ProcessExecutor(2)
        )
    )
    assert [len(b) for b in blocks] == [12, 12, 12, 6]  # 2 pairs x 6 metrics per block, input order kept
    pd.testing.assert_frame_equal(pd.concat(blocks, ignore_index=True), whole)
    assert whole["reference"].iloc[0] == "img/ref0.png"  # the paths as given


def test_table_writer_bytes_do_not_depend_on_the_blocks(tmp_path, pairs_file):
    df = score_pairs(pd.read_csv(pairs_file), METRICS, base_dir=pairs_file.parent).table
    for name, cuts in (("one", [len(df)]), ("many", [5, 6, 23, len(df)])):
        (tmp_path / name).mkdir()
        with TableWriter(tmp_path / name, "scores", row_group_size=10) as w:
            start = 0
            for stop in cuts:
                w.write(df.iloc[start:stop])
                start = stop
    assert _files(tmp_path / "one") == _files(tmp_path / "many")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "one" / "scores.parquet"), df)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "one" / "scores.csv"), df)


def test_process_and_dask_outputs_equal_serial_byte_for_byte(tmp_path, pairs_file, dask_cluster):
    assert _score(pairs_file, tmp_path / "serial") == 0
    serial = _files(tmp_path / "serial")
    assert set(serial) == {"scores.csv", "scores.parquet", "summary.md"}
    assert len(pd.read_csv(tmp_path / "serial" / "scores.csv")) == 7 * 6
    assert _score(pairs_file, tmp_path / "proc", "--executor", "process:2") == 0
    assert _files(tmp_path / "proc") == serial
    assert _score(pairs_file, tmp_path / "dask", "--executor", f"dask:{dask_cluster}") == 0
    assert _files(tmp_path / "dask") == serial
    assert (
        _score(pairs_file, tmp_path / "dask2", "--executor", "dask" + dask_cluster[len("tcp") :]) == 0
    )  # dask://
    assert _files(tmp_path / "dask2") == serial


def test_bad_spec_exit_2(tmp_path, pairs_file, capsys):
    for spec in ("threads", "process:0", "dask:"):
        assert _score(pairs_file, tmp_path / "o", "--executor", spec) == 2
        assert "executor spec" in capsys.readouterr().err.lower()
    assert not (tmp_path / "o").exists()


def test_a_bad_image_fails_before_any_pair_is_scored(tmp_path, pairs_file, capsys, monkeypatch):
    import cxreval.iqa._scoring as scoring

    def forbidden(*a, **k):
        raise AssertionError("a pair was scored before every image was checked")

    monkeypatch.setattr(scoring, "_score_pair", forbidden)
    table = pd.read_csv(pairs_file)
    (pairs_file.parent / "img" / "broken.png").write_text("not a png")
    table.loc[len(table) - 1, "test"] = "img/broken.png"  # the last pair
    table.to_csv(pairs_file, index=False)
    assert _score(pairs_file, tmp_path / "o", "--executor", "process:2") == 2
    err = capsys.readouterr().err
    assert (
        str(pairs_file) in err
        and "pair 6, test image: " in err
        and "cannot be read as an image" in err
        and "broken.png" in err
    )
    table.loc[len(table) - 1, "test"] = "img/t0_0.png"  # 48x48, against a 32x32 reference
    write_image(pairs_file.parent / "img" / "small.png", np.zeros((32, 32)), data_range=1.0)
    table.loc[len(table) - 1, "reference"] = "img/small.png"
    table.to_csv(pairs_file, index=False)
    assert _score(pairs_file, tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert (
        "pair 6: reference" in err
        and "small.png (32, 32) and test" in err
        and "(48, 48) differ in shape" in err
    )
    assert not (tmp_path / "o").exists()
