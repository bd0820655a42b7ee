"""The executor seam: serial, process and Dask executors give results identical to serial code."""

from __future__ import annotations

import functools
import operator
import sys

import numpy as np
import pandas as pd
import pytest

from _factories import RecordedProgress
from cxreval.classification import evaluate_auc
from cxreval.cli.main import main
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.executor import Executor, get_executor, open_executor
from cxreval.executor._dask import DaskExecutor
from cxreval.executor._local import ProcessExecutor, SerialExecutor, chunk_items
from cxreval.findings import canonical_finding
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.localization import LocalizationProtocol, evaluate_heatmaps, heatmaps_to_boxes

FINDINGS = ["Atelectasis", "Effusion"]


def _auc_problem(n_studies=90, n_models=3, rng=0):
    g = np.random.default_rng(rng)
    studies = [f"s{i:03d}" for i in range(n_studies)]
    pat = [f"p{p}" for p in g.integers(0, n_studies // 3, n_studies)]
    truth = g.random((len(FINDINGS), n_studies)) < 0.4
    labs, preds = [], []
    for r in ("R0", "R1"):
        for j, f in enumerate(FINDINGS):
            st = np.where(truth[j] ^ (g.random(n_studies) < 0.15), "positive", "negative").astype(object)
            st[g.random(n_studies) < 0.1] = "uncertain"
            labs.append(
                pd.DataFrame({"study_id": studies, "patient_id": pat, "finding": f, "source": r, "state": st})
            )
    for m in range(n_models):
        for j, f in enumerate(FINDINGS):
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "model": f"M{m}",
                        "finding": f,
                        "score": np.round(truth[j] * g.random() + g.normal(size=n_studies), 1),
                    }
                )
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def _maps(n, size=12, rng=0):
    """Blobby maps of various kinds: smooth bumps, noise, a constant map, a map with an integer plateau."""
    g = np.random.default_rng(rng)
    yy, xx = np.mgrid[:size, :size]
    out = []
    for i in range(n):
        m = np.zeros((size, size))
        for _ in range(g.integers(1, 4)):
            cy, cx, s = g.uniform(0, size), g.uniform(0, size), g.uniform(0.8, 3)
            m += g.uniform(0.3, 1) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
        if i % 7 == 3:
            m += 0.2 * g.random((size, size))
        if i % 11 == 5:
            m[:] = 1.0
        if i % 13 == 6:
            m = np.round(4 * m) / 4
        out.append(m)
    return np.stack(out)


def _same_boxes(a, b):
    assert len(a) == len(b)
    for per_a, per_b in zip(a, b):
        assert len(per_a) == len(per_b)
        for x, y in zip(per_a, per_b):
            assert x.dtype == y.dtype == np.int64 and np.array_equal(x, y)


# ---------------------------------------------------------------- the executors themselves


def test_serial_and_process_map_in_order():
    items = list(range(-40, 61))
    want = [abs(x) for x in items]
    assert SerialExecutor().map(abs, items) == want
    assert ProcessExecutor(2).map(abs, items) == want
    assert ProcessExecutor(2, chunks_per_worker=1).map(abs, iter(items)) == want  # an iterator, 2 chunks
    assert ProcessExecutor(3).map(abs, [-1]) == [1]  # fewer items than workers
    assert ProcessExecutor(2).map(abs, []) == []
    bound = functools.partial(operator.mul, 3)
    assert ProcessExecutor(2).map(bound, range(5)) == [0, 3, 6, 9, 12]
    assert isinstance(ProcessExecutor(2), Executor) and isinstance(SerialExecutor(), Executor)


def test_in_process_and_on_item_on_every_executor():
    assert SerialExecutor().in_process and not ProcessExecutor(2).in_process
    items = list(range(-9, 12))
    for ex in (SerialExecutor(), ProcessExecutor(2), ProcessExecutor(3, chunks_per_worker=1)):
        seen = []
        assert ex.map(abs, items, on_item=seen.append) == [abs(x) for x in items]
        assert sorted(seen) == items  # every item once, in this process
    seen = []
    SerialExecutor().map(abs, items, on_item=seen.append)
    assert seen == items  # in process: in item order, after each result
    assert ProcessExecutor(2).map(abs, [], on_item=seen.append) == []


def test_on_item_never_reports_a_failed_item():
    seen = []
    with pytest.raises(ValueError, match="invalid literal for int"):
        ProcessExecutor(2, chunks_per_worker=1).map(int, ["1", "2", "x", "4"], on_item=seen.append)
    assert "x" not in seen
    seen = []
    with pytest.raises(ValueError, match="invalid literal for int"):
        SerialExecutor().map(int, ["1", "x", "3"], on_item=seen.append)
    assert seen == ["1"]


def test_an_object_with_only_map_becomes_an_executor():
    class Reversed:
        def map(self, func, items):
            return [func(x) for x in reversed(list(items))][::-1]

    class InProcess(SerialExecutor):  # in_process inherited, map without on_item
        def map(self, func, items):
            return [func(x) for x in items]

    ex = get_executor(Reversed())
    assert isinstance(ex, Executor) and ex.in_process is False
    seen = []
    assert ex.map(abs, [-1, 2, -3], on_item=seen.append) == [1, 2, 3] and seen == [-1, 2, -3]
    assert get_executor(InProcess()).in_process is True
    full = ProcessExecutor(2)
    assert get_executor(full) is full  # a whole Executor is returned as is
    with open_executor(Reversed()) as opened:
        assert opened.map(abs, [-4]) == [4]


def test_spill_arrays_round_trip(tmp_path):
    from cxreval.spill import load_spilled, spill_arrays

    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]  # not contiguous
    paths = spill_arrays({"a": a, "none": None, "given": "/some/file.npy"}, tmp_path / "sub", prefix="g1_")
    assert paths["none"] is None and paths["given"] == "/some/file.npy"
    assert paths["a"] == str((tmp_path / "sub" / "g1_a.npy").resolve())
    back = load_spilled(paths["a"])
    assert isinstance(back, np.memmap) and back.dtype == np.int32 and np.array_equal(back, a)
    assert load_spilled(a) is a and load_spilled(None) is None


def test_progress_protocol():
    from cxreval.progress import NoProgress, Progress, as_progress

    assert isinstance(as_progress(None, func="f"), NoProgress)
    rec = RecordedProgress()
    assert as_progress(rec, func="f") is rec and isinstance(rec, Progress)
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'progress' parameter of f must have add\(description, "
        r"total\), advance\(task, n\) and done\(task\) methods",
    ):
        as_progress(print, func="f")


def test_auc_and_heatmap_progress_counts_every_block_and_map_on_any_executor():
    preds, labels = _auc_problem(n_models=2)
    maps = {f"s{i}/Effusion": m for i, m in enumerate(_maps(9))}
    boxes = pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(9)],
            "finding": "Effusion",
            "x_min": 1.0,
            "y_min": 2.0,
            "x_max": 30.0,
            "y_max": 40.0,
        }
    )  # every map scored
    proto = LocalizationProtocol(image_shape=(64, 64))
    for ex in (None, SerialExecutor(), ProcessExecutor(2)):
        rec = RecordedProgress()
        evaluate_auc(preds, labels, n_resamples=5, rng=0, executor=ex, progress=rec)
        n_blocks = 2 * (len(FINDINGS) + 1)  # (model, finding) and (model, micro average)
        assert rec.tasks == [("AUC blocks (model x finding, every replicate)", n_blocks)]
        assert rec.events == [(0, 1)] * n_blocks
        rec = RecordedProgress()
        evaluate_heatmaps(maps, boxes, protocol=proto, missing_maps="miss", executor=ex, progress=rec)
        assert rec.tasks == [("heatmaps -> boxes", 9)] and sum(n for _, n in rec.events) == 9


def test_chunk_items():
    assert chunk_items(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert chunk_items([1, 2], 5) == [[1], [2]]
    assert chunk_items([], 4) == []
    chunks = chunk_items(list(range(100)), 8)
    assert [x for c in chunks for x in c] == list(range(100)) and len(chunks) == 8


def test_process_executor_reraises_worker_errors_with_type_and_message():
    with pytest.raises(ValueError, match="invalid literal for int"):
        ProcessExecutor(2).map(int, ["1", "2", "x", "4"])
    # a CxrevalError raised in a worker comes back as the same class and message as in process
    with pytest.raises(Exception) as serial:
        SerialExecutor().map(canonical_finding, ["Effusion", "Nodul"])
    with pytest.raises(type(serial.value), match="Nodul") as proc:
        ProcessExecutor(2).map(canonical_finding, ["Effusion", "Nodul"])
    assert str(proc.value) == str(serial.value)


def test_get_executor_specs():
    assert get_executor(None) == SerialExecutor() and get_executor("serial") == SerialExecutor()
    ex = get_executor(" Process:3 ")
    assert isinstance(ex, ProcessExecutor) and ex.max_workers == 3
    assert get_executor("process").max_workers is None
    custom = type("Mine", (), {"map": lambda self, f, xs: [f(x) for x in xs]})()
    assert get_executor(custom).map(abs, [-1]) == [1]  # adapted to the protocol (test below)
    whole = type(
        "Whole", (), {"in_process": True, "map": lambda self, f, xs, on_item=None: [f(x) for x in xs]}
    )()
    assert get_executor(whole) is whole
    ser = SerialExecutor()
    assert get_executor(ser) is ser


@pytest.mark.parametrize(
    "spec, msg",
    [
        (
            "process:0",
            r"Executor spec 'process:0': the number of workers after 'process:' must be a positive int",
        ),
        ("process:two", r"must be a positive int \(e.g. 'process:4'\). Got 'two' instead"),
        ("process:2.5", r"Got '2.5' instead"),
        ("process:", r"Got '' instead"),
        (
            "threads",
            r"Unknown executor spec 'threads'; expected serial, process:N, dask:local:N or dask://HOST:PORT",
        ),
        ("dask:local:0", r"the number of workers after 'dask:local:' must be a positive int"),
        ("dask:localhost", r"expected 'dask:local:N'"),
        ("dask://", r"give HOST:PORT after 'dask://'"),
        ("serial:2", r"Unknown executor spec 'serial:2'"),
        ("dask:", r"Executor spec 'dask:': give a scheduler address after 'dask:'"),
    ],
)
def test_get_executor_bad_specs(spec, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        get_executor(spec)


def test_get_executor_bad_objects_and_workers():
    with pytest.raises(
        InvalidParameterError,
        match=r"The executor must be None, a spec string or an object with a "
        r"map\(func, items\) method. Got 4 of type int instead",
    ):
        get_executor(4)
    with pytest.raises(
        InvalidParameterError, match="'max_workers' parameter of ProcessExecutor must be a positive int"
    ):
        ProcessExecutor(0)
    with pytest.raises(InvalidParameterError, match="'chunks_per_worker' parameter of ProcessExecutor"):
        ProcessExecutor(2, chunks_per_worker=-1)
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'mp_context' parameter of ProcessExecutor must be one of "
        r"\[.*'spawn'.*\] or a multiprocessing context. Got 'thread'",
    ):
        ProcessExecutor(2, mp_context="thread")


def test_dask_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails as when dask is not installed
    msg = r"The Dask executor needs dask.distributed, which is not installed; install the optional extra"
    with pytest.raises(DataUnavailableError, match=msg):
        DaskExecutor()
    with pytest.raises(DataUnavailableError, match=msg):
        get_executor("dask:tcp://127.0.0.1:8786")
    preds, labels = _auc_problem(n_studies=30, n_models=1)
    with pytest.raises(DataUnavailableError, match=msg):  # checked before any work
        evaluate_auc(preds, labels, n_resamples=5, rng=0, executor="dask")


# ---------------------------------------------------------------- identical results, serial vs processes


def test_evaluate_auc_identical_serial_vs_process():
    preds, labels = _auc_problem()
    a = evaluate_auc(preds, labels, n_resamples=60, rng=11, shard_size=7)
    b = evaluate_auc(preds, labels, n_resamples=60, rng=11, shard_size=7, executor=ProcessExecutor(2))
    c = evaluate_auc(
        preds, labels, n_resamples=60, rng=11, executor="process:2"
    )  # default shard size: one shard
    assert np.isfinite(a.distribution).any()
    for other in (b, c):
        assert np.array_equal(a.distribution, other.distribution, equal_nan=True)
        pd.testing.assert_frame_equal(a.table, other.table)
        assert np.array_equal(a.plan.counts, other.plan.counts)
    # the shard function pickles its sort indices with their cached matrices (re-keyed in the worker)
    d = evaluate_auc(preds, labels, n_resamples=0, rng=11, executor="process:2")
    pd.testing.assert_frame_equal(d.table[["auc"]], a.table[["auc"]])


@pytest.mark.parametrize("upsampling", ["bilinear", "nearest"])
def test_heatmaps_to_boxes_identical_serial_vs_process(upsampling):
    maps = _maps(150)  # three executor chunks of 64 maps
    kw = dict(image_shape=(96, 96), upsampling=upsampling, thresholds=(60.0, 180.0))
    want = heatmaps_to_boxes(maps, **kw).boxes
    assert sum(len(b) for b in want[0]) > 150  # the maps do have boxes
    _same_boxes(want, heatmaps_to_boxes(maps, **kw, executor="serial").boxes)
    _same_boxes(want, heatmaps_to_boxes(maps, **kw, executor=ProcessExecutor(2)).boxes)
    _same_boxes(want, heatmaps_to_boxes(maps, **kw, connectivity=8, executor=SerialExecutor()).boxes)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("upsampling", ["bilinear", "nearest"])
def test_heatmap_error_names_the_map_position_under_any_executor(upsampling):
    maps = _maps(80)
    maps[70, :6], maps[70, 6:] = 1.7e308, -1.7e308  # max - min overflows
    for ex in (None, "serial", ProcessExecutor(2)):
        with pytest.raises(SchemaError, match=r"^heatmap 70: its value range .*overflows float64"):
            heatmaps_to_boxes(maps, image_shape=(48, 48), upsampling=upsampling, executor=ex)


@pytest.mark.slow
def test_spawned_workers_give_the_same_boxes():
    # a fresh interpreter per worker: the shard function must be importable and its data picklable
    maps = _maps(70, size=8)
    kw = dict(image_shape=(40, 40), thresholds=(60.0, 180.0))
    _same_boxes(
        heatmaps_to_boxes(maps, **kw).boxes,
        heatmaps_to_boxes(maps, **kw, executor=ProcessExecutor(2, mp_context="spawn")).boxes,
    )


def test_evaluate_heatmaps_identical_serial_vs_process():
    maps = _maps(90, size=16, rng=3)
    g = np.random.default_rng(4)
    heat, rows = {}, []
    for i, m in enumerate(maps):
        f = FINDINGS[i % 2]
        heat[f"img{i:03d}.png/{f}"] = m
        for _ in range(g.integers(1, 3)):
            x, y = g.integers(0, 180, 2)
            w, h = g.integers(10, 76, 2)
            rows.append(
                {
                    "study_id": f"img{i:03d}.png",
                    "finding": f,
                    "x_min": x,
                    "y_min": y,
                    "x_max": x + w,
                    "y_max": y + h,
                }
            )
    boxes = pd.DataFrame(rows)
    proto = LocalizationProtocol(image_shape=(256, 256))
    a = evaluate_heatmaps(heat, boxes, protocol=proto)
    b = evaluate_heatmaps(heat, boxes, protocol=proto, executor=ProcessExecutor(2))
    assert len(a.detail) > 90 and a.table.hits.sum() > 0
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.detail, b.detail)
    assert a.notes == b.notes
    with pytest.raises(InvalidParameterError, match="Unknown executor spec 'gpu'"):
        evaluate_heatmaps(heat, boxes, protocol=proto, executor="gpu")


# ---------------------------------------------------------------- CLI --executor


def test_cli_classify_executor(tmp_path, capsys):
    preds, labels = _auc_problem(n_studies=60, n_models=2)
    lp, pp = tmp_path / "labels.csv", tmp_path / "preds.csv"
    write_labels(labels, lp)
    write_predictions(preds, pp)
    outs = {}
    for w in ("serial", "process:2"):
        outs[w] = tmp_path / f"out{w[0]}"
        assert (
            main(
                [
                    "classify",
                    "-p",
                    str(pp),
                    "-l",
                    str(lp),
                    "--n-resamples",
                    "40",
                    "--seed",
                    "5",
                    "--executor",
                    w,
                    "--out",
                    str(outs[w]),
                ]
            )
            == 0
        )
    assert (outs["serial"] / "auc.csv").read_bytes() == (outs["process:2"] / "auc.csv").read_bytes()
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--executor",
                "process:-1",
                "--out",
                str(tmp_path / "bad"),
            ]
        )
        == 2
    )
    assert "Got '-1' instead" in capsys.readouterr().err


def test_cli_localize_workers(tmp_path, capsys):
    maps = _maps(20, size=8, rng=5)
    heat = {f"im{i}.png/Atelectasis": m for i, m in enumerate(maps)}
    npz = tmp_path / "maps.npz"
    np.savez(npz, **heat)
    bbox = tmp_path / "bbox.csv"
    bbox.write_text(
        "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
        + "".join(f"im{i}.png,Atelectasis,{100 + 10 * i},{200 + 5 * i},300,250\n" for i in range(20))
    )
    for w in ("serial", "process:2"):
        assert (
            main(
                [
                    "localize",
                    "--heatmaps",
                    str(npz),
                    "--boxes",
                    str(bbox),
                    "--executor",
                    w,
                    "--out",
                    str(tmp_path / f"out{w[-1]}"),
                ]
            )
            == 0
        )
    for name in ("localization.csv", "boxes.csv"):
        assert (tmp_path / "outl" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(npz),
                "--boxes",
                str(bbox),
                "--executor",
                "process:-3",
                "--out",
                str(tmp_path / "bad"),
            ]
        )
        == 2
    )
    assert "process:-3" in capsys.readouterr().err and not (tmp_path / "bad").exists()


# ---------------------------------------------------------------- Dask (optional extra)


@pytest.mark.slow
def test_dask_executor_identical_results():
    distributed = pytest.importorskip("dask.distributed", reason="the optional 'dask' extra is not installed")
    preds, labels = _auc_problem()
    maps = _maps(70)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cl,
        distributed.Client(cl) as client,
    ):
        ex = DaskExecutor(client)
        assert ex.map(abs, range(-5, 5)) == [abs(x) for x in range(-5, 5)]
        seen = []
        assert ex.map(abs, range(-5, 5), on_item=seen.append) == [abs(x) for x in range(-5, 5)]
        assert sorted(seen) == list(range(-5, 5)) and not ex.in_process
        a = evaluate_auc(preds, labels, n_resamples=40, rng=2, shard_size=6)
        b = evaluate_auc(preds, labels, n_resamples=40, rng=2, shard_size=6, executor=ex)
        assert np.array_equal(a.distribution, b.distribution, equal_nan=True)
        pd.testing.assert_frame_equal(a.table, b.table)
        _same_boxes(
            heatmaps_to_boxes(maps, image_shape=(64, 64)).boxes,
            heatmaps_to_boxes(maps, image_shape=(64, 64), executor=ex).boxes,
        )
        with pytest.raises(ValueError, match="invalid literal for int"):
            ex.map(int, ["1", "x"])
        # 'dask' uses the current default client
        assert get_executor("dask").client is client


def test_dask_specs_parse_without_starting_anything():
    pytest.importorskip("dask.distributed", reason="the optional 'dask' extra is not installed")
    ex = get_executor("dask:local:3")
    assert ex.n_workers == 3 and ex._client is None  # started on first map only
    assert get_executor("dask://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    assert get_executor("dask:tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    with pytest.raises(InvalidParameterError, match="cannot be combined"):
        DaskExecutor(address="tcp://x:1", n_workers=2)


def _children() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.slow
def test_open_executor_closes_its_local_cluster():
    pytest.importorskip("dask.distributed", reason="the optional 'dask' extra is not installed")
    before = _children()
    with open_executor("dask:local:2") as ex:
        assert ex.map(abs, [-3, 2, -1]) == [3, 2, 1]
        assert len(_children() - before) >= 2  # two worker processes (and their nannies)
        # Dask's default MALLOC_TRIM_THRESHOLD_=65536 made the numpy kernels 1.4-1.75x slower per task
        envs = ex.client.run(
            lambda: (
                __import__("os").environ.get("MALLOC_TRIM_THRESHOLD_"),
                __import__("os").environ.get("OMP_NUM_THREADS"),
            )
        )
        assert sorted(set(envs.values())) == [(None, "1")]
    import time

    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _children() - before, "worker processes left behind"
    # closed on an error as well
    with pytest.raises(ValueError), open_executor("dask:local:1") as ex:
        ex.map(int, ["x"])
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _children() - before


def test_dask_cluster_fixture_runs_tasks(dask_cluster):
    with open_executor(f"dask:{dask_cluster}") as ex:
        assert ex.map(abs, range(-4, 4)) == [abs(x) for x in range(-4, 4)]
        assert sum(ex.client.nthreads().values()) == 2


def test_cli_bad_executor_spec_is_exit_2():
    from cxreval.cli._common import cli_executor

    with pytest.raises(InvalidParameterError, match="Unknown executor spec 'gpu'"), cli_executor("gpu"):
        pass
