"""The HTML report: detection of sections, tables with CSV downloads, not-available listing, CLI."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError
from cxreval.report import (
    KINDS,
    Unavailable,
    build_sections,
    detect_kinds,
    find_result_folders,
    render_report,
)
from cxreval.report.tables import csv_data_uri, html_table


def _downloads(page: str) -> dict[str, pd.DataFrame]:
    out = {}
    for name, payload in re.findall(r'download="([^"]+)" href="data:text/csv;charset=utf-8;base64,([^"]+)"', page):
        out.setdefault(name, pd.read_csv(io.StringIO(base64.b64decode(payload).decode("utf-8"))))
    return out


def test_every_kind_detected(synthetic_results: Path) -> None:
    kinds = {k.name for d in find_result_folders([synthetic_results]) for k in detect_kinds(d)}
    assert kinds == {k.name for k in KINDS}


def test_report_self_contained_and_complete(synthetic_results: Path) -> None:
    page, sections, missing = render_report([synthetic_results], title="t")
    assert missing == []
    assert page.count("<script src=") == 0 and 'rel="stylesheet"' not in page
    assert page.count("Plotly v") <= 2  # the library is inlined once (its banner), not per figure
    n_fig = sum(s.n_figures for s in sections)
    assert page.count('class="plotly-graph-div"') == n_fig >= 10
    assert "cdn.plot.ly" not in page.split("</head>")[1]  # figures never reference the CDN
    # one figure per expected type
    assert {b.figure.data[0].type for s in sections for b in s.blocks if b.figure is not None} >= {
        "scatter", "heatmap", "bar", "sankey"}


def test_csv_downloads_round_trip(synthetic_results: Path) -> None:
    page, _, _ = render_report([synthetic_results])
    dl = _downloads(page)
    auc = pd.read_csv(synthetic_results / "classify" / "auc.csv")
    pd.testing.assert_frame_equal(dl["auc.csv"], auc)
    assert {"agreement.csv", "flows.csv", "prevalence.csv", "rank_correlation.csv", "rankings.csv",
            "fusion_agreement.csv", "localization.csv", "scores.csv", "metric_agreement.csv"} <= set(dl)
    # the top-model table flags that the top rank changes between references where it does
    top = dl["top_model_per_reference.csv"]
    rk = pd.read_csv(synthetic_results / "classify" / "rankings.csv")
    first = rk[rk["rank"] == 1].groupby(["finding", "group"])["model"].nunique()
    expected = first.gt(1).rename("top rank changes").reset_index()
    got = top[["finding", "group", "top rank changes"]].merge(expected, on=["finding", "group"])
    assert (got["top rank changes_x"] == got["top rank changes_y"]).all() and len(got) == len(expected)


def test_report_is_deterministic(synthetic_results: Path) -> None:
    a, _, _ = render_report([synthetic_results])
    b, _, _ = render_report([synthetic_results])
    assert a == b


def test_absent_kinds_listed_with_reason_and_command(synthetic_results: Path, tmp_path: Path) -> None:
    only = tmp_path / "agree"
    shutil.copytree(synthetic_results / "agree", only)
    extra = Unavailable("CheXpert test set", "data mirror not found", "cxreval demo --data-mirror DIR")
    page, sections, missing = render_report([only], unavailable=[extra])
    assert [s.kind for s in sections] == ["agreement"]
    titles = [u.title for u in missing]
    assert titles[0] == "CheXpert test set"
    assert "Classification: ROC-AUC per model and reference" in titles and len(missing) == len(KINDS)
    assert "cxreval classify" in page and "data mirror not found" in page and 'id="not-available"' in page


def test_missing_column_marks_part_not_available(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    pd.DataFrame({"model": ["a"], "finding": ["Effusion"], "reference": ["CR"]}).to_csv(d / "auc.csv", index=False)
    (sec,) = build_sections(d)
    (blk,) = sec.blocks
    assert blk.figure is None
    assert re.search(r"auc\.csv lacks column\(s\) \['auc'\]", blk.missing)


def test_optional_columns_may_be_absent(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    pd.DataFrame({"model": ["a", "b", "a", "b"], "finding": ["Effusion"] * 4, "reference": ["CR", "CR", "R1", "R1"],
                  "auc": [0.7, 0.8, 0.9, 0.6]}).to_csv(d / "auc.csv", index=False)
    pd.DataFrame({"finding": ["Effusion"] * 4, "reference": ["CR", "CR", "R1", "R1"], "model": ["a", "b", "a", "b"],
                  "rank": [2, 1, 1, 2]}).to_csv(d / "rankings.csv", index=False)
    pd.DataFrame({"finding": ["Effusion"], "reference_a": ["CR"], "reference_b": ["R1"], "statistic": [-1.0]}
                 ).to_csv(d / "rank_correlation.csv", index=False)
    secs = build_sections(d)
    figs = [b.figure for s in secs for b in s.blocks if b.figure is not None]
    assert len(figs) == 3 and all(not b.missing for s in secs for b in s.blocks)
    bump = figs[1]
    assert "top rank changes: CR: b | R1: a" in bump.layout.title.text


def test_parquet_twin_is_read(synthetic_results: Path, tmp_path: Path) -> None:
    d = tmp_path / "p"
    d.mkdir()
    pd.read_csv(synthetic_results / "fuse" / "fusion_agreement.csv").to_parquet(d / "fusion_agreement.parquet")
    (sec,) = build_sections(d)
    assert sec.kind == "fusion" and sec.n_figures == 1


def test_iqa_without_ratings_is_metric_vs_metric(synthetic_results: Path) -> None:
    (sec,) = build_sections(synthetic_results / "iqa_no_ratings")
    heads = {b.heading: b for b in sec.blocks}
    scores = heads["Metric scores per degradation"]
    assert scores.figure is not None and scores.figure.data[0].type == "box"
    assert "cxreval iqa agree --scores S --ratings R" in scores.missing
    rk = heads["How each metric ranks the degradations (metric vs metric)"].figure
    assert rk.data[0].type == "heatmap" and list(rk.data[0].x) == ["psnr", "ssim", "gmsd"]
    mvm = heads["Agreement between metrics: SRCC / KRCC (metric vs metric, not vs experts)"].figure
    assert len(mvm.data) == 4  # SRCC and KRCC over degradations and over test images
    z = mvm.data[0].z
    assert z[0][1] == z[1][0] == 0.5 and z[0][0] == 1.0


def test_box_overlays_embed_images_and_boxes(synthetic_results: Path) -> None:
    (sec,) = build_sections(synthetic_results / "overlays")
    assert sec.kind == "localization"
    (blk,) = sec.blocks
    fig = blk.figure
    assert not blk.missing and fig is not None
    images = [t for t in fig.data if t.type == "image"]
    assert len(images) == 2 and all(t.source.startswith("data:image/png;base64,") for t in images)
    assert images[0].dx == 2.0  # a 32-pixel PNG shown in 64-pixel box coordinates
    ref = next(t for t in fig.data if t.name == "reference (1)")
    assert list(ref.x[:5]) == [10, 30, 30, 10, 10] and list(ref.y[:5]) == [12, 12, 40, 40, 12]
    assert len(fig.layout.updatemenus[0].buttons) == 2  # one panel per image


def test_audit_boxes_table_is_not_a_localization_section(tmp_path: Path) -> None:
    d = tmp_path / "audit"
    d.mkdir()
    (d / "audit.json").write_text('{"n_images": 3}')
    pd.DataFrame({"finding": ["Mass"], "n_boxes": [2]}).to_csv(d / "boxes.csv", index=False)
    (sec,) = build_sections(d)
    assert sec.kind == "audit" and [b.heading for b in sec.blocks] == ["Dataset audit", "Boxes"]


def test_localization_curves_exact_fractions_and_cases() -> None:
    from cxreval.report.plots import localization_curves

    df = pd.DataFrame({"finding": ["small"] * 4, "variant": ["noisy"] * 4, "localizer": ["heatmap"] * 2 + ["peak"] * 2,
                       "rule": ["IoBB"] * 4, "T": ["1/10", "1/4", "1/10", "1/4"], "acc": [1.0, 0.5, 0.2, 0.1],
                       "afp": [0.0, 0.5, 1.0, 1.0]})
    fig = localization_curves(df)
    assert list(fig.data[0].x) == [0.1, 0.25]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["noisy, heatmap, rule IoBB", "noisy, peak, rule IoBB"]


def test_bad_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"Result folder '.*nope' does not exist"):
        find_result_folders([tmp_path / "nope"])


def test_long_table_truncated_on_page_but_downloadable() -> None:
    df = pd.DataFrame({"i": range(500), "x": [0.5] * 500})
    h = html_table(df, name="big", max_rows=10)
    assert h.count("<tr>") == 11 and "first 10 of 500 rows" in h
    assert csv_data_uri(df) in h
    small = html_table(df, name="big", max_embed_bytes=100, source="/x/big.csv")
    assert "data:text/csv" not in small and "too large to embed" in small and "/x/big.csv" in small


def test_cli_report(synthetic_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(synthetic_results / "classify"), str(synthetic_results / "agree"), "--out", str(out),
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert out.stat().st_size == res["n_bytes"] and [s["kind"] for s in res["sections"]] == [
        "classification", "ranking", "agreement"]
    assert main(["report", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
