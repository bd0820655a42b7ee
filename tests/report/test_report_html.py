"""The HTML report: detection of sections, tables with CSV downloads, not-available listing, CLI."""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError
from cxreval.report._blocks import Unavailable
from cxreval.report._html import NoResultsError, find_result_folders, render_report
from cxreval.report._sections import KINDS, build_sections, detect_kinds
from cxreval.report.html_tables import csv_data_uri, html_table


def _downloads(page: str) -> dict[str, pd.DataFrame]:
    out = {}
    for name, payload in re.findall(
        r'download="([^"]+)" href="data:text/csv;charset=utf-8;base64,([^"]+)"', page
    ):
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
    assert (
        'id="fig-headline"' in page
    )  # the headline figure of the first screen, besides the sections' figures
    assert page.count('class="plotly-graph-div"') == n_fig + 1 and n_fig >= 10
    assert "cdn.plot.ly" not in page.split("</head>")[1]  # figures never reference the CDN
    # one figure per expected type
    assert {b.figure.data[0].type for s in sections for b in s.blocks if b.figure is not None} >= {
        "scatter",
        "heatmap",
        "bar",
        "sankey",
    }


def test_csv_downloads_round_trip(synthetic_results: Path) -> None:
    page, _, _ = render_report([synthetic_results])
    dl = _downloads(page)
    auc = pd.read_csv(synthetic_results / "classify" / "auc.csv")
    pd.testing.assert_frame_equal(dl["auc.csv"], auc)
    assert {
        "agreement.csv",
        "flows.csv",
        "prevalence.csv",
        "rank_correlation.csv",
        "rankings.csv",
        "fusion_agreement.csv",
        "localization.csv",
        "scores.csv",
        "metric_agreement.csv",
    } <= set(dl)
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
    page, sections, missing = render_report([only], unavailable=[extra], list_missing_kinds=True)
    assert [s.kind for s in sections] == ["agreement"]
    titles = [u.title for u in missing]
    assert titles[0] == "CheXpert test set"
    assert "Classification: ROC-AUC per model and reference" in titles and len(missing) == len(KINDS)
    assert "cxreval classify" in page and "data mirror not found" in page and 'id="not-available"' in page


def test_report_of_one_agree_folder_shows_only_that_analysis(
    synthetic_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(synthetic_results / "agree"), "--out", str(out)]) == 0
    assert "0 listed as not available" in capsys.readouterr().out
    main_text = out.read_text().split("<main>", 1)[1]  # the page without the inlined Plotly library
    assert "not available" not in main_text.lower() and 'id="not-available"' not in main_text
    assert "cxreval demo" not in main_text and "Agreement between label sources" in main_text


def test_missing_column_marks_part_not_available(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    pd.DataFrame({"model": ["a"], "finding": ["Effusion"], "reference": ["CR"]}).to_csv(
        d / "auc.csv", index=False
    )
    (sec,) = build_sections(d)
    (blk,) = sec.blocks
    assert blk.figure is None
    assert re.search(r"auc\.csv lacks column\(s\) \['auc'\]", blk.missing)


def test_optional_columns_may_be_absent(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    pd.DataFrame(
        {
            "model": ["a", "b", "a", "b"],
            "finding": ["Effusion"] * 4,
            "reference": ["CR", "CR", "R1", "R1"],
            "auc": [0.7, 0.8, 0.9, 0.6],
        }
    ).to_csv(d / "auc.csv", index=False)
    pd.DataFrame(
        {
            "finding": ["Effusion"] * 4,
            "reference": ["CR", "CR", "R1", "R1"],
            "model": ["a", "b", "a", "b"],
            "rank": [2, 1, 1, 2],
        }
    ).to_csv(d / "rankings.csv", index=False)
    pd.DataFrame(
        {"finding": ["Effusion"], "reference_a": ["CR"], "reference_b": ["R1"], "statistic": [-1.0]}
    ).to_csv(d / "rank_correlation.csv", index=False)
    secs = build_sections(d)
    figs = [b.figure for s in secs for b in s.blocks if b.figure is not None]
    assert len(figs) == 3 and all(not b.missing for s in secs for b in s.blocks)
    bump = figs[1]
    assert "top rank changes: CR: b | R1: a" in bump.layout.title.text


def test_parquet_twin_is_read(synthetic_results: Path, tmp_path: Path) -> None:
    d = tmp_path / "p"
    d.mkdir()
    pd.read_csv(synthetic_results / "fuse" / "fusion_agreement.csv").to_parquet(
        d / "fusion_agreement.parquet"
    )
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
    from cxreval._plots.analyses import localization_curves

    df = pd.DataFrame(
        {
            "finding": ["small"] * 4,
            "variant": ["noisy"] * 4,
            "localizer": ["heatmap"] * 2 + ["peak"] * 2,
            "rule": ["IoBB"] * 4,
            "T": ["1/10", "1/4", "1/10", "1/4"],
            "acc": [1.0, 0.5, 0.2, 0.1],
            "afp": [0.0, 0.5, 1.0, 1.0],
        }
    )
    fig = localization_curves(df)
    assert list(fig.data[0].x) == [0.1, 0.25]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == [
        "noisy, heatmap, rule IoBB",
        "noisy, peak, rule IoBB",
    ]


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
    assert (
        main(
            [
                "report",
                str(synthetic_results / "classify"),
                str(synthetic_results / "agree"),
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert out.stat().st_size == res["n_bytes"] and [s["kind"] for s in res["sections"]] == [
        "classification",
        "ranking",
        "agreement",
    ]
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r2.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # an existing report is replaced only with --overwrite, whole (written atomically)
    assert main(["report", str(synthetic_results / "fuse"), "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err and out.stat().st_size == res["n_bytes"]
    assert main(["report", str(synthetic_results / "fuse"), "--out", str(out), "--overwrite"]) == 0
    assert (
        "Label fusion" in out.read_text()
        and "Classification: ROC-AUC" not in out.read_text().split('id="not-available"')[0]
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r.html")]  # no temporary file left


def _run_folder(
    d: Path, files: dict[str, pd.DataFrame], inputs: list[Path], meta: dict | None = None
) -> None:
    from cxreval.outputs import output_folder

    with output_folder(
        d, inputs=inputs, argv=["cxreval", "classify", "--n-resamples", "50"], meta=meta
    ) as tmp:
        for name, df in files.items():
            df.to_csv(tmp / name, index=False)


def test_only_files_listed_in_run_json_are_read(synthetic_results: Path, tmp_path: Path) -> None:
    auc = pd.read_csv(synthetic_results / "classify" / "auc.csv")
    d = tmp_path / "run"
    _run_folder(
        d,
        {"auc.csv": auc},
        [synthetic_results / "classify" / "auc.csv"],
        meta={"n_resamples": 50, "confidence_level": 0.9, "label_policy": "uncertain excluded"},
    )
    # stale files of an earlier command in the reused folder
    shutil.copy(synthetic_results / "agree" / "agreement.csv", d / "agreement.csv")
    shutil.copy(synthetic_results / "classify" / "rank_correlation.csv", d / "rank_correlation.csv")
    (d / "summary.md").write_text("# stale title\n")
    page, sections, _ = render_report([d])
    assert [s.kind for s in sections] == ["classification"]
    assert "stale title" not in page and "agreement.csv" not in page.split('id="not-available"')[0]
    # the key finding's interval level and the provenance come from run.json
    assert "90% CI" in sections[0].key.text
    methods = page.split('id="methods"')[1]
    for text in (
        "cxreval classify --n-resamples 50",
        "bootstrap resamples",
        "label policy",
        "uncertain excluded",
        "Inputs and their SHA-256",
    ):
        assert text in methods, text
    from cxreval.outputs._run_record import sha256_file

    assert sha256_file(synthetic_results / "classify" / "auc.csv") in methods
    # a folder whose run.json lists no result file holds nothing to report
    e = tmp_path / "other"
    _run_folder(e, {"notes.csv": pd.DataFrame({"a": [1]})}, [])
    shutil.copy(synthetic_results / "agree" / "agreement.csv", e / "agreement.csv")
    with pytest.raises(NoResultsError, match="No cxreval results in"):
        render_report([e])


def test_parent_run_json_governs_sub_folders(synthetic_results: Path, tmp_path: Path) -> None:
    from cxreval.outputs import output_folder

    root = tmp_path / "demo"
    with output_folder(root) as tmp:
        shutil.copytree(synthetic_results / "fuse", tmp / "fuse")
    shutil.copytree(synthetic_results / "agree", root / "agree")  # not written by that run
    _, sections, _ = render_report([root])
    assert [s.kind for s in sections] == ["fusion"]


def test_no_results_is_refused_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("x")
    out = tmp_path / "r.html"
    assert main(["report", str(empty), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "No cxreval results in" in err and "auc.csv" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_pdf_without_chromium_is_a_clear_error(
    synthetic_results: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    out = tmp_path / "r.html"
    assert main(["report", str(synthetic_results / "fuse"), "--out", str(out), "--pdf"]) == 2
    err = capsys.readouterr().err
    assert "Printing a PDF needs headless Chromium" in err and "apt-get install chromium" in err
    assert not out.exists()  # checked before any work


def test_suggested_help_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command the report suggests is exact: the ``--help`` ones run here (the demo ones, which need
    data, in tests/demo/test_demo.py)."""
    import shlex

    page, _, missing = render_report([tmp_path], allow_empty=True, list_missing_kinds=True)
    listed = page.split('id="not-available"')[1]
    cmds = [html.unescape(c) for c in re.findall(r'<code class="command">([^<]+)</code>', listed)]
    assert len(cmds) == 2 * len(KINDS) == len({c for u in missing for c in u.all_commands})
    first = page.split('id="key-findings"')[1].split("</section>")[0]  # the first screen: some of them
    assert {html.unescape(c) for c in re.findall(r'<code class="command">([^<]+)</code>', first)} <= set(cmds)
    for cmd in cmds:
        argv = shlex.split(cmd)
        assert argv[0] == "cxreval"
        if argv[-1] == "--help":
            try:
                code = main(argv[1:])
            except SystemExit as exc:  # click's --help may exit instead of returning
                code = exc.code or 0
            assert code == 0, cmd
        else:
            assert argv[1:3] == ["demo", "--out"] and argv[4] == "--section"
            from cxreval.demo.sections import SECTIONS

            assert argv[5] in [s.key for s in SECTIONS]


def test_figures_have_no_empty_categories() -> None:
    """Each bump-chart panel shows only its own references (the XQA-RR panel no MIMIC columns) and each
    rank-correlation panel only its own rows and columns."""
    from cxreval._plots.analyses import bump_chart, rank_correlation_heatmap

    rows = [("XQA-RR", "Atelectasis", r, m, k) for r in ("CR", "Rep1") for m, k in (("a", 1), ("b", 2))]
    rows += [
        ("MIMIC", "Edema", r, m, k)
        for r in ("FUSE-OR", "Impression", "Findings")
        for m, k in (("a", 2), ("b", 1))
    ]
    rk = pd.DataFrame(rows, columns=["dataset", "finding", "reference", "model", "rank"])
    rk["finding"] = rk["dataset"] + ": " + rk["finding"]
    fig = bump_chart(rk)
    assert list(fig.layout.xaxis.ticktext) == ["CR", "Rep1"] and list(fig.layout.xaxis.range) == [-0.3, 1.3]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.args[1]["xaxis.ticktext"] for b in buttons] == [
        ["CR", "Rep1"],
        ["FUSE-OR", "Impression", "Findings"],
    ]
    assert all(
        max(t.x) < len(b.args[1]["xaxis.ticktext"])
        for b in buttons
        for t, v in zip(fig.data, b.args[0]["visible"])
        if v
    )
    assert list(fig.layout.yaxis.range) == [2.5, 0.5] and fig.layout.yaxis.title.text == "rank (1 = best)"
    rc = pd.DataFrame(
        {
            "finding": ["A", "B", "C"],
            "group": ["g1", "g1", "g2"],
            "reference_a": ["x", "x", "y"],
            "reference_b": ["z", "z", "w"],
            "method": "SRCC",
            "statistic": [0.1, 0.2, 0.3],
        }
    )
    fig = rank_correlation_heatmap(rc)
    assert [list(t.y) for t in fig.data] == [["A", "B"], ["C"]] and [list(t.x) for t in fig.data] == [
        ["g1"],
        ["g2"],
    ]
    assert fig.layout.updatemenus[0].buttons[1].args[1]["yaxis.categoryarray"] == ["C"]


def test_one_colour_per_reference_across_figures(synthetic_results: Path) -> None:
    from cxreval._plots.analyses import OKABE_ITO, PALETTE, reference_colors

    with reference_colors() as cmap:
        secs = build_sections(synthetic_results / "classify") + build_sections(synthetic_results / "agree")
    forest = secs[0].blocks[0].figure
    colours = {t.name: t.marker.color for t in forest.data}
    assert colours == {r: cmap[r] for r in ("CR", "Rep1", "Rep2")} and len(set(colours.values())) == 3
    # the agreement figure colours the pair 'CR vs Rep1' ... by its own name (pairs are not 'a:b' here)
    assert (
        set(cmap.values()) <= set(PALETTE) and PALETTE[:7] == OKABE_ITO[:7] and set(OKABE_ITO) <= set(PALETTE)
    )
    kappa = secs[2].blocks[0].figure
    assert all(
        t.marker.color == cmap[t.name] for t in kappa.data if t.showlegend is not False and t.name in cmap
    )


def test_axis_titles_present() -> None:
    from cxreval._plots import analyses as plots

    df = pd.DataFrame(
        {"model": ["a", "b"], "finding": ["E", "E"], "reference": ["R", "R"], "auc": [0.7, 0.8]}
    )
    fig = plots.auc_forest(df)
    assert fig.layout.xaxis.title.text.startswith("ROC-AUC") and fig.layout.yaxis.title.text == "model"
    # models named as given (no group nobody named), the mean over the models after them, whatever its AUC
    df = pd.DataFrame(
        {
            "model": ["a", "b", "Mean"],
            "group": ["default", "default", "summary"],
            "finding": ["E"] * 3,
            "reference": ["R"] * 3,
            "auc": [0.7, 0.8, 0.75],
        }
    )
    assert list(plots.auc_forest(df).layout.yaxis.ticktext) == ["b", "a", "Mean of the models"]
    two = df.assign(group=["XRV", "VLM", "summary"])
    assert list(plots.auc_forest(two).layout.yaxis.ticktext) == ["b (VLM)", "a (XRV)", "Mean of the models"]
    prev = pd.DataFrame({"source": ["s"], "finding": ["E"], "state": ["positive"], "percent": [10.0]})
    fig = plots.prevalence_bars(prev)
    assert fig.layout.yaxis.title.text == "studies (%)" and fig.layout.xaxis.title.text
