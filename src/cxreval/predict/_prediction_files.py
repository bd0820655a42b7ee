"""The output files of ``cxreval predict`` (see :mod:`cxreval.predict._runner`'s docstring): :func:`write_outputs`
assembles the stored batches into ``predictions.csv``/``.parquet``, ``findings_map.csv``, ``read_report.csv``,
``models.json``, ``heatmaps/<model>.npz`` and ``summary.md``; :class:`PredictResult` holds them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..labels import validate_predictions
from ..results import ReadReport
from ._batches import model_groups
from ._images import ImageItem, ImageList
from ._models import LoadedModel
from ._store import NpzWriter, PartialStore

__all__ = ["PredictResult", "write_outputs", "model_file_name"]


@dataclass(frozen=True)
class PredictResult:
    """The assembled outputs of a prediction run (see :func:`write_outputs`)."""

    predictions: pd.DataFrame
    mapping: pd.DataFrame
    read_report: ReadReport
    image_status: pd.DataFrame
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "n_predictions": int(len(self.predictions)),
            "models": sorted(self.predictions.model.unique()),
            "read_report": self.read_report.to_dict(),
            "files": dict(self.files),
        }


def model_file_name(name: str) -> str:
    """A file-name-safe form of a model name."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("_") or "model"


def _read_report_table(
    items: Sequence[ImageItem],
    listing: ImageList | None,
    ok_ids: set[str],
    errors: dict[str, tuple[str, str]],
) -> pd.DataFrame:
    rows = []
    for it in items:
        if it.study_id in errors:
            rows.append((it.study_id, str(it.path), "error", errors[it.study_id][1]))
        elif it.study_id in ok_ids:
            rows.append((it.study_id, str(it.path), "ok", ""))
        else:
            rows.append((it.study_id, str(it.path), "missing", "not predicted (internal error)"))
    for path, why in listing.skipped if listing is not None else ():
        rows.append(("", path, "skipped", why))
    return pd.DataFrame(rows, columns=["study_id", "path", "status", "error"])


def write_outputs(
    folder: str | Path,
    store: PartialStore,
    items: Sequence[ImageItem],
    models: Sequence[LoadedModel],
    *,
    heatmaps: bool = False,
    listing: ImageList | None = None,
    options: dict[str, object] | None = None,
) -> PredictResult:
    """Assemble the stored batches into the output files in ``folder`` (see the module docstring)."""
    from ..localization._heatmap_keys import heatmap_dict

    folder = Path(folder)
    groups = model_groups(models)
    order = {it.study_id: k for k, it in enumerate(items)}
    frames: list[pd.DataFrame] = []
    errors: dict[str, tuple[str, str]] = {}
    ok_ids: dict[int, set[str]] = {g: set() for g in range(len(groups))}
    writers: dict[int, NpzWriter] = {}
    files: dict[str, str] = {}
    if heatmaps:
        (folder / "heatmaps").mkdir()
        for i, m in enumerate(models):
            rel = f"heatmaps/{model_file_name(m.name)}.npz"
            writers[i] = NpzWriter(folder / rel)
            files[f"heatmaps:{m.name}"] = rel
    try:
        for s in store.shards(with_maps=heatmaps):
            ids = s.ids.tolist()
            ids_keep = [k for k, sid in enumerate(ids) if sid in order]
            if not ids_keep and not len(s.err_ids):
                continue
            for sid, path, msg in zip(s.err_ids.tolist(), s.err_paths.tolist(), s.err_msgs.tolist()):
                errors[sid] = (path, msg)
            ok_ids[s.group].update(ids[k] for k in ids_keep)
            keep_ids = [ids[k] for k in ids_keep]
            for mi, sc in s.scores.items():
                m = models[mi]
                fnames = [f for f in m.findings if f is not None]
                sc = sc[ids_keep]
                frames.append(
                    pd.DataFrame(
                        {
                            "study_id": np.repeat(np.asarray(keep_ids, dtype=object), len(fnames)),
                            "model": m.name,
                            "finding": np.tile(np.asarray(fnames, dtype=object), len(keep_ids)),
                            "score": sc.ravel(),
                        }
                    )
                )
                if heatmaps and mi in s.maps and keep_ids:
                    for key, arr in heatmap_dict(
                        s.maps[mi][ids_keep], image_ids=keep_ids, findings=fnames
                    ).items():
                        writers[mi].add(key, arr)
    finally:
        for w in writers.values():
            w.close()
    all_ok = set().union(*ok_ids.values()) if ok_ids else set()
    errors = {k: v for k, v in errors.items() if k not in all_ok}
    preds = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame({"study_id": [], "model": [], "finding": [], "score": []})
    )
    bad = ~np.isfinite(preds["score"].to_numpy(dtype=float))
    for sid, mname in preds.loc[bad, ["study_id", "model"]].drop_duplicates().itertuples(index=False):
        errors[sid] = (errors.get(sid, ("", ""))[0], f"model {mname} returned a non-finite score")
    preds = preds[~bad]
    mindex = {m.name: i for i, m in enumerate(models)}
    fpos = {(m.name, f): j for m in models for j, f in enumerate(m.findings) if f is not None}
    preds = preds.assign(
        _m=preds.model.map(mindex),
        _i=preds.study_id.map(order),
        _f=[fpos[(a, b)] for a, b in zip(preds.model, preds.finding)],
    )
    preds = (
        preds.sort_values(["_m", "_i", "_f"], kind="stable")
        .drop(columns=["_m", "_i", "_f"])
        .reset_index(drop=True)
    )
    preds = validate_predictions(preds, where="cxreval predict")
    preds.to_csv(folder / "predictions.csv", index=False)
    preds.to_parquet(folder / "predictions.parquet", index=False)
    mapping = pd.concat([m.mapping_table() for m in models], ignore_index=True)
    mapping.to_csv(folder / "findings_map.csv", index=False)
    status = _read_report_table(items, listing, all_ok, errors)
    status.to_csv(folder / "read_report.csv", index=False)
    (folder / "models.json").write_text(
        json.dumps(
            {"models": [m.describe() for m in models], "options": options or {}}, indent=2, default=str
        )
        + "\n"
    )
    err = status[status.status != "ok"].reset_index(drop=True)
    dropped = pd.DataFrame(
        {
            "row": err.index.to_numpy() * 0 - 1,
            "reason": err.status.to_numpy(),
            "value": (err.path + ": " + err.error).to_numpy(),
        }
    )
    report = ReadReport(
        listing.source if listing is not None else "images",
        len(items),
        len(all_ok),
        dropped,
        notes=tuple(f"{m.name}: {m.spec}" for m in models),
    )
    files.update(
        {
            "predictions": "predictions.csv",
            "findings_map": "findings_map.csv",
            "read_report": "read_report.csv",
            "models": "models.json",
        }
    )
    n_err = int((status.status == "error").sum())
    lines = [
        f"# cxreval predict: {len(items)} image(s) x {len(models)} model(s)",
        "",
        f"Images predicted: {len(all_ok)}; unreadable: {n_err}; other files skipped: "
        f"{int((status.status == 'skipped').sum())} (see read_report.csv).",
        "",
    ]
    for m in models:
        lines += [f"## {m.name} (`{m.spec}`)", "", f"Weights: {m.weights_file}", "", "Preprocessing:", ""]
        lines += [f"{k}. {s}" for k, s in enumerate(m.preprocessing.steps(), 1)]
        lines += [
            "",
            "Outputs -> findings: "
            + ", ".join(f"{o or '(empty)'} -> {f or 'left out'}" for o, f in zip(m.outputs, m.findings)),
            "",
        ]
    if n_err:
        lines += ["## Unreadable images", ""] + [
            f"- {r.path}: {r.error}" for r in status[status.status == "error"].head(50).itertuples()
        ]
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
    return PredictResult(preds, mapping, report, status, files)
