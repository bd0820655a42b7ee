"""``cxreval finetune`` is one library call: :func:`cxreval.predict.finetune` writes the command's output
folder (the model, its YAML, the training tables), so the command's folder equals the job's folder for the same
``out`` and ``rng`` = ``--seed``, byte for byte (``run.json`` aside), on a tiny model and images the test builds."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from _same_files import assert_same_files
from cxreval.cli.main import main


@pytest.fixture()
def task(tmp_path, one_torch_thread):
    """24 8-bit images (a bright square: Mass), their labels, and an untrained TinyCNN as the base model."""
    import importlib.util

    from predict.conftest import ARCH

    g = np.random.default_rng(1)
    (tmp_path / "imgs").mkdir()
    rows = []
    for i in range(24):
        a = g.normal(90, 25, (32, 32))
        if i % 2 == 0:
            r, c = g.integers(0, 24, 2)
            a[r : r + 8, c : c + 8] += 120
        Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(tmp_path / "imgs" / f"im{i:02d}.png")
        rows.append(
            {
                "study_id": f"im{i:02d}.png",
                "patient_id": f"p{i // 2}",
                "finding": "Mass",
                "source": "synthetic",
                "state": "positive" if i % 2 == 0 else "negative",
            }
        )
    pd.DataFrame(rows).to_csv(tmp_path / "labels.csv", index=False)
    (tmp_path / "arch.py").write_text(ARCH)
    spec = importlib.util.spec_from_file_location("finetune_job_arch", tmp_path / "arch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    one_torch_thread.manual_seed(0)
    one_torch_thread.save(mod.build(3).state_dict(), tmp_path / "base.pt")
    (tmp_path / "base.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "base",
                "checkpoint": "base.pt",
                "architecture": "arch.py:build",
                "architecture_kwargs": {"n_out": 3},
                "input": {"size": 32, "channels": 1, "normalization": "xrv"},
                "findings": ["Atelectasis", "Nodule", "Mass"],
                "target_layer": "features",
            }
        )
    )
    return tmp_path


@pytest.mark.parametrize("mode", ["last-layer", "linear-probe"])
def test_command_folder_is_the_job_folder(task, mode):
    from cxreval.predict import finetune

    out, model = task / "out", f"torch:{task / 'base.yaml'}"
    assert (
        main(
            [
                "finetune",
                "--images",
                str(task / "imgs"),
                "--labels",
                str(task / "labels.csv"),
                "--model",
                model,
                "--mode",
                mode,
                "--epochs",
                "2",
                "--val-fraction",
                "0.5",
                "--seed",
                "3",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    shutil.move(out, task / "cli")
    res = finetune(
        task / "imgs", task / "labels.csv", out=out, model=model, mode=mode, epochs=2, val_fraction=0.5, rng=3
    )
    assert_same_files(task / "cli", out)
    assert {"model.pt", "model.yaml", "training.csv", "split.csv", "summary.md"} <= {
        p.name for p in out.iterdir()
    }
    assert res.best_epoch >= 1
