"""Benchmark: the ChestX-ray8 recipe (``cxreval finetune --recipe chestxray8 --arch resnet50``) on the 39 shared
NIH radiographs, time per image.

The recipe is meant for a GPU (ResNet-50 at the paper's 1024 x 1024 input); on a machine without one this
script records the CPU time per image instead. One run of ``cxreval.predict.finetune.finetune``: random
initialisation (no ImageNet file is downloaded), W-CEL, the NIH text-mined labels of the eight ChestX-ray8
findings, a patient-level 80/20 split, ``--epochs`` epochs (default 1), batch ``--batch-size``. Then
``cxreval.predict.predict`` with the written model on the same images. Reported: wall time and process CPU
time (all threads) of each, per image (per training image per epoch for ``finetune``; the images are read and
preprocessed once, inside the timing), and the torch thread count.

Run: ``python bench/finetune.py [--n 39] [--input-size 1024] [--epochs 1] [--batch-size 4] [--device cpu]
[--threads N]`` (needs torch + torchvision, ``../shared/data`` and the metadata cache from ``cxreval data fetch``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

SHARED = Path(os.environ.get("CXREVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=39, help="images (the first N of the 39, by name)")
    ap.add_argument("--input-size", type=int, default=1024)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default torch's)")
    a = ap.parse_args()

    import torch

    from cxreval.datasets import nih
    from cxreval.findings import CHESTXRAY8
    from cxreval.labels import write_labels
    from cxreval.predict import predict
    from cxreval.predict.finetune import finetune

    if a.threads:
        torch.set_num_threads(a.threads)
    images = SHARED / "images" / "nih"
    ids = sorted(p.name for p in images.glob("*.png"))[: a.n]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "imgs").mkdir()
        for i in ids:
            (t / "imgs" / i).symlink_to(images / i)
        lab = nih.load_labels().table
        lab = lab[lab.study_id.isin(ids) & lab.finding.isin(CHESTXRAY8)]
        write_labels(lab, t / "labels.parquet")
        w0, c0 = time.perf_counter(), time.process_time()
        res = finetune(t / "imgs", t / "labels.parquet", out=t / "cx8", recipe="chestxray8", arch="resnet50",
                       input_size=a.input_size, epochs=a.epochs, batch_size=a.batch_size, device=a.device,
                       val_fraction=0.2, seed=0)
        w1, c1 = time.perf_counter(), time.process_time()
        predict(t / "imgs", [f"torch:{t / 'cx8' / 'model.yaml'}"], out=t / "pred", batch_size=a.batch_size,
                device=a.device)
        w2, c2 = time.perf_counter(), time.process_time()
        n_tr, n_va = res.settings["n_train"], res.settings["n_val"]
        epochs = int(res.table.epoch.max())
        out = {"images": len(ids), "n_train": n_tr, "n_val": n_va, "epochs": epochs, "input_size": a.input_size,
               "batch_size": a.batch_size, "device": a.device, "torch": torch.__version__,
               "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
               "finetune_wall_s": round(w1 - w0, 2), "finetune_cpu_s": round(c1 - c0, 2),
               "finetune_wall_s_per_train_image_epoch": round((w1 - w0) / (n_tr * epochs), 3),
               "finetune_cpu_s_per_train_image_epoch": round((c1 - c0) / (n_tr * epochs), 3),
               "predict_wall_s_per_image": round((w2 - w1) / len(ids), 3),
               "predict_cpu_s_per_image": round((c2 - c1) / len(ids), 3)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
