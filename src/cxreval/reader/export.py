"""Export a reader study into cxreval's own formats.

* ``labels.csv``: the long label table (``study_id, patient_id, finding, source, state``) read by
  :func:`cxreval.labels.read_labels`; one source per reader and task: ``img_<reader>``,
  ``rep_<section>_<reader>``, and ``conflict_resolved`` (the adjudicated readers' label where they agree,
  the resolver's where they conflict; conflicts not yet resolved are left out and counted);
* ``boxes.csv`` (the box schema with sources, :data:`cxreval.localization.schema.SOURCED_BOX_COLUMNS`:
  ``study_id, finding, source, x_min, y_min, x_max, y_max``), read by ``cxreval localize --boxes``, and, per
  image reader, ``boxes/img_<reader>.csv`` in the ChestX-ray14 ``BBox_List_2017.csv`` layout;
* ``iqa_ratings.csv`` (``image, reference, rater, criterion, rating`` + the pairs file's hidden columns) and,
  per criterion, ``iqa_ratings_<criterion>.csv`` (``image, rater, rating``) for ``cxreval iqa agree``
  (``image`` is the pairs file's ``test`` path, as ``cxreval iqa score`` names it);
* ``audit.csv``: every submission (append-only, in commit order) with server and client times, and
  ``events.csv`` (study created, readers added, tokens replaced).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..labels import LABEL_COLUMNS
from ..localization.schema import SOURCED_BOX_COLUMNS
from .store import ReaderStore

__all__ = ["ExportResult", "export_tables", "write_export"]


@dataclass(frozen=True)
class ExportResult:
    """The exported tables.

    Attributes
    ----------
    labels, boxes, iqa, audit, events : pandas.DataFrame
    n_unresolved : int
        Conflicting (study, finding) pairs without a resolver's label (left out of ``conflict_resolved``).
    """

    labels: pd.DataFrame
    boxes: pd.DataFrame
    iqa: pd.DataFrame
    audit: pd.DataFrame
    events: pd.DataFrame
    n_unresolved: int

    def to_dict(self) -> dict[str, object]:
        return {"n_labels": len(self.labels), "sources": sorted(self.labels["source"].unique().tolist()),
                "n_boxes": len(self.boxes), "n_ratings": len(self.iqa), "n_submissions": len(self.audit),
                "n_unresolved": self.n_unresolved}


def _resolved(store: ReaderStore, latest: dict, rows: list[dict]) -> int:
    spec = store.spec
    a, b = spec.adjudication_readers
    task = "image" if spec.adjudication_task == "image" else "report"
    src_a = f"img_{a}" if task == "image" else f"rep_{spec.adjudication_task[7:]}_{a}"
    src_b = src_a[: -len(a)] + b
    by = {(r["source"], r["study_id"], r["finding"]): r for r in rows}
    final: dict[tuple[str, str], str] = {}
    for (_reader, t, item), payload in latest.items():  # in commit order: the latest resolver wins
        if t == "adjudication":
            for f, s in payload["labels"].items():
                final[(item, f)] = s
    unresolved = 0
    for (src, sid, f), ra in by.items():
        if src != src_a or (src_b, sid, f) not in by:
            continue
        sb = by[(src_b, sid, f)]["state"]
        state = final.get((sid, f), ra["state"] if ra["state"] == sb else None)
        if state is None:
            unresolved += 1
            continue
        rows.append({"study_id": sid, "patient_id": ra["patient_id"], "finding": f, "source": "conflict_resolved",
                     "state": state})
    return unresolved


def export_tables(store: ReaderStore) -> ExportResult:
    """Build every export table from the latest submission per reader, task and item."""
    spec = store.spec
    items = store.items
    sub = store.submissions()
    latest = {(r, t, i): json.loads(p) for r, t, i, p in zip(sub["reader"], sub["task"], sub["item"], sub["payload"])}
    rows: list[dict] = []
    boxes: list[dict] = []
    ratings: list[dict] = []
    for (reader, task, item), payload in latest.items():
        if task == "image":
            meta = items["image"][item]
            src = f"img_{reader}"
            rows += [{"study_id": meta["study_id"], "patient_id": meta["patient_id"], "finding": f, "source": src,
                      "state": s} for f, s in payload["labels"].items()]
            boxes += [{"study_id": meta["study_id"], "finding": b["finding"], "source": src,
                       **{k: b[k] for k in ("x_min", "y_min", "x_max", "y_max")}} for b in payload["boxes"]]
        elif task == "report":
            meta = items["report"][item]
            src = f"rep_{meta['section']}_{reader}"
            rows += [{"study_id": meta["study_id"], "patient_id": meta["patient_id"], "finding": f, "source": src,
                      "state": s} for f, s in payload["labels"].items()]
        elif task == "iqa":
            meta = items["iqa"][item]
            ratings += [{"image": meta["test"], "reference": meta["reference"], "rater": reader, "criterion": c,
                         "rating": v, **meta["hidden"]} for c, v in payload["ratings"].items()]
    n_unresolved = _resolved(store, latest, rows) if "adjudication" in spec.tasks else 0
    labels = pd.DataFrame(rows, columns=list(LABEL_COLUMNS))
    order = {f: k for k, f in enumerate(spec.findings)}
    labels = labels.sort_values(["source", "study_id", "finding"], key=lambda c: c.map(order) if c.name == "finding"
                                else c, kind="stable").reset_index(drop=True)
    box_df = pd.DataFrame(boxes, columns=list(SOURCED_BOX_COLUMNS))
    iqa = pd.DataFrame(ratings)
    if iqa.empty:
        iqa = pd.DataFrame(columns=["image", "reference", "rater", "criterion", "rating"])
    else:
        iqa = iqa.sort_values(["criterion", "image", "rater"], kind="stable").reset_index(drop=True)
    audit = sub.rename(columns={"id": "submission_id"})
    ev = store.t["events"]
    with store.engine.connect() as conn:
        erows = conn.execute(store.sa.select(ev.c.seq, ev.c.time, ev.c.kind, ev.c.reader, ev.c.detail)
                             .order_by(ev.c.seq)).all()
    events = pd.DataFrame(erows, columns=["seq", "time", "kind", "reader", "detail"])
    return ExportResult(labels, box_df, iqa, audit, events, n_unresolved)


def write_export(res: ExportResult, folder: str | Path, *, criteria: tuple[str, ...] = ()) -> list[Path]:
    """Write the export tables into ``folder`` (which must exist); return the files written."""
    d = Path(folder)
    written = []
    res.labels.to_csv(d / "labels.csv", index=False)
    res.boxes.to_csv(d / "boxes.csv", index=False)
    written += [d / "labels.csv", d / "boxes.csv"]
    if len(res.boxes):
        (d / "boxes").mkdir()
        for src, g in res.boxes.groupby("source", sort=True):
            lines = ["Image Index,Finding Label,Bbox [x,y,w,h],,,"]
            for r in g.itertuples():
                lines.append(f"{r.study_id},{r.finding},{r.x_min:g},{r.y_min:g},{r.x_max - r.x_min:g},"
                             f"{r.y_max - r.y_min:g}")
            p = d / "boxes" / f"{src}.csv"
            p.write_text("\n".join(lines) + "\n")
            written.append(p)
    res.iqa.to_csv(d / "iqa_ratings.csv", index=False)
    written.append(d / "iqa_ratings.csv")
    for c in criteria:
        g = res.iqa[res.iqa["criterion"] == c][["image", "rater", "rating"]]
        if len(g):
            p = d / f"iqa_ratings_{c}.csv"
            g.to_csv(p, index=False)
            written.append(p)
    res.audit.to_csv(d / "audit.csv", index=False)
    res.events.to_csv(d / "events.csv", index=False)
    written += [d / "audit.csv", d / "events.csv"]
    return written
