"""`cxreval iqa` commands via main(argv)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from cxreval.cli.main import main


def test_degrade_score_agree(tmp_path):
    rng = np.random.default_rng(0)
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    for i in range(3):
        base = np.cumsum(rng.random((64, 64)), axis=1)
        Image.fromarray((base / base.max() * 60000).astype(np.uint16)).save(imgs / f"im{i}.png")
    (imgs / "notes.txt").write_text("x")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "seed: 1\ndegradations:\n  - {transform: gaussian_blur, params: {sigma: [0.5, 1.5]}}\n"
        "  - {transform: gaussian_noise, params: {sigma: 0.03}}\n"
    )
    assert (
        main(["iqa", "degrade", "--images", str(imgs), "--plan", str(plan), "--out", str(tmp_path / "d")])
        == 0
    )
    man = pd.read_csv(tmp_path / "d" / "manifest.csv")
    assert len(man) == 9 and {"source", "transform", "params", "seed", "sha256"} <= set(man.columns)
    assert "notes.txt" in (tmp_path / "d" / "summary.md").read_text()
    pairs = tmp_path / "d" / "pairs.csv"
    assert (
        main(
            [
                "iqa",
                "score",
                "--pairs",
                str(pairs),
                "--metrics",
                "psnr,ssim,rmse",
                "--out",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    scores = pd.read_csv(tmp_path / "s" / "scores.csv")
    # the pairs' image and degradation are carried; metric, value follow test
    assert (
        list(scores.columns) == ["image", "reference", "test", "metric", "value", "degradation"]
        and len(scores) == 27
    )
    tests = sorted(man["test"])
    ratings = pd.DataFrame(
        [
            {"image": t.rsplit("/", 1)[-1][:-4], "rater": r, "rating": 1 + (k * (j + 1) + j) % 4}
            for k, t in enumerate(tests)
            for j, r in enumerate(["A", "B", "C"])
        ]
    )
    ratings.to_csv(tmp_path / "r.csv", index=False)
    assert (
        main(
            [
                "iqa",
                "agree",
                "--scores",
                str(tmp_path / "s" / "scores.csv"),
                "--ratings",
                str(tmp_path / "r.csv"),
                "--out",
                str(tmp_path / "a"),
                "--n-resamples",
                "50",
            ]
        )
        == 0
    )
    t4 = pd.read_csv(tmp_path / "a" / "metric_agreement.csv")
    assert list(t4.columns)[:8] == [
        "metric",
        "srcc",
        "krcc",
        "srcc_ci_low",
        "srcc_ci_high",
        "krcc_ci_low",
        "krcc_ci_high",
        "n",
    ]
    assert set(t4.metric) == {"psnr", "ssim", "rmse"}
    for name in ("zmos.csv", "rater_agreement.csv", "summary.md"):
        assert (tmp_path / "a" / name).is_file()


def test_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "r.csv"
    pd.DataFrame({"image": ["a", "a"], "rater": ["x", "y"], "rating": [1, 7]}).to_csv(bad, index=False)
    s = tmp_path / "s.csv"
    pd.DataFrame({"reference": ["r"], "test": ["a"], "metric": ["psnr"], "value": [1.0]}).to_csv(
        s, index=False
    )
    assert (
        main(["iqa", "agree", "--scores", str(s), "--ratings", str(bad), "--out", str(tmp_path / "o")]) == 2
    )
    assert "outside the scale" in capsys.readouterr().err
    assert main(["iqa", "score", "--pairs", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")]) == 2


def test_list(capsys):
    assert main(["iqa", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"ms_ssim"' in out and '"higher_is_better"' in out


def test_score_errors_name_the_pairs_file(tmp_path, capsys):
    x = np.cumsum(np.random.default_rng(0).random((64, 64)), axis=1)
    Image.fromarray((x / x.max() * 60000).astype(np.uint16)).save(tmp_path / "ref.png")
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame({"reference": ["ref.png"], "test": ["gone.png"]}).to_csv(pairs, index=False)
    assert (
        main(["iqa", "score", "--pairs", str(pairs), "--metrics", "psnr", "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert str(pairs) in err and "pair 0, test image: Image file" in err and "gone.png does not exist" in err
    assert (
        main(["iqa", "score", "--pairs", str(pairs), "--metrics", "psnrr", "--out", str(tmp_path / "o")]) == 2
    )
    assert "Did you mean 'psnr'" in capsys.readouterr().err


def test_agree_unscored_option(tmp_path, capsys):
    """The rated reference image via the CLI: test_iqa_expert's hand-worked case (SRCC 1 kept, 0.5 excluded)."""
    ratings = pd.DataFrame(
        {
            "image": ["ref", "t1", "t2", "t3"] * 2,
            "rater": ["A"] * 4 + ["B"] * 4,
            "rating": [4, 1, 4, 2, 4, 3, 2, 3],
        }
    )
    scores = pd.DataFrame(
        {
            "reference": "ref",
            "test": ["d/t1.png", "d/t2.png", "d/t3.png"],
            "metric": "ssim",
            "value": [0.1, 0.9, 0.5],
        }
    )
    ratings.to_csv(tmp_path / "r.csv", index=False)
    scores.to_csv(tmp_path / "s.csv", index=False)
    base = [
        "iqa",
        "agree",
        "--scores",
        str(tmp_path / "s.csv"),
        "--ratings",
        str(tmp_path / "r.csv"),
        "--n-resamples",
        "5",
    ]
    got = {}
    for mode in ("keep", "exclude"):
        assert main(base + ["--unscored", mode, "--out", str(tmp_path / mode)]) == 0
        got[mode] = pd.read_csv(tmp_path / mode / "metric_agreement.csv").srcc.item()
    assert got == {"keep": pytest.approx(1.0), "exclude": pytest.approx(0.5)}
    assert main(base + ["--out", str(tmp_path / "default")]) == 0  # default: keep
    assert pd.read_csv(tmp_path / "default" / "metric_agreement.csv").srcc.item() == pytest.approx(1.0)
    assert "--unscored keep" in (tmp_path / "default" / "summary.md").read_text()
    capsys.readouterr()
    assert main(base + ["--unscored", "error", "--out", str(tmp_path / "e")]) == 2
    assert "have no metric score" in capsys.readouterr().err
    assert main(base + ["--unscored", "drop", "--out", str(tmp_path / "e2")]) == 2


def test_agree_variants_and_ddof_from_the_cli(tmp_path, capsys):
    """--spearman/--kendall/--ddof reach the tables (scipy and the XQA-Chest paper's formulas, hand-computed z-scores) and are
    recorded in run.json, summary.md and --json; the defaults are pearson, tau-b and ddof 0."""
    import json

    from scipy import stats

    ratings = pd.DataFrame(
        {
            "image": list("abcdef") * 2,
            "rater": ["A"] * 6 + ["B"] * 6,
            "rating": [1, 2, 2, 3, 4, 4, 1, 1, 3, 2, 4, 3],
        }
    )
    scores = pd.DataFrame(
        {
            "reference": ["R1"] * 3 + ["R2"] * 3,
            "test": [f"d/{i}.png" for i in "abcdef"],
            "metric": "ssim",
            "value": [0.1, 0.3, 0.3, 0.5, 0.9, 0.7],
        }
    )
    ratings.to_csv(tmp_path / "r.csv", index=False)
    scores.to_csv(tmp_path / "s.csv", index=False)
    base = [
        "iqa",
        "agree",
        "--scores",
        str(tmp_path / "s.csv"),
        "--ratings",
        str(tmp_path / "r.csv"),
        "--n-resamples",
        "5",
    ]
    assert main(base + ["--out", str(tmp_path / "default")]) == 0
    capsys.readouterr()
    assert (
        main(
            base
            + [
                "--spearman",
                "formula",
                "--kendall",
                "tau-a",
                "--ddof",
                "1",
                "--json",
                "--out",
                str(tmp_path / "seed"),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert (printed["spearman"], printed["kendall"], printed["ddof"]) == ("formula", "tau-a", 1)
    a, b = ratings.rating[:6].to_numpy(float), ratings.rating[6:].to_numpy(float)
    # z-scores with the sample SD, by hand
    z = pd.read_csv(tmp_path / "seed" / "zscores.csv").sort_values(["rater", "image"])
    np.testing.assert_allclose(
        z["z"], np.concatenate([(a - a.mean()) / a.std(ddof=1), (b - b.mean()) / b.std(ddof=1)]), atol=1e-12
    )
    z0 = pd.read_csv(tmp_path / "default" / "zscores.csv").sort_values(["rater", "image"])
    np.testing.assert_allclose(z0["z"], np.concatenate([stats.zscore(a), stats.zscore(b)]), atol=1e-12)
    pair = {
        k: pd.read_csv(tmp_path / k / "rater_agreement.csv").query("rater_b == 'B'").iloc[0]
        for k in ("default", "seed")
    }
    assert pair["default"].srcc == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
    assert pair["default"].krcc == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    assert pair["seed"].srcc == pytest.approx(
        1 - 6 * 7.5 / (6 * 35), abs=1e-12
    )  # the XQA-Chest paper's d^2 formula
    assert pair["seed"].krcc == pytest.approx(9 / 15, abs=1e-12)  # tau-a: C - D = 9 of 15 pairs
    meta = {k: json.loads((tmp_path / k / "run.json").read_text()) for k in ("default", "seed")}
    flat = {k: json.dumps(v) for k, v in meta.items()}
    for key, want in (("spearman", "pearson"), ("kendall", "tau-b"), ("ddof", 0)):
        assert f'"{key}": {json.dumps(want)}' in flat["default"], key
    for key, want in (("spearman", "formula"), ("kendall", "tau-a"), ("ddof", 1)):
        assert f'"{key}": {json.dumps(want)}' in flat["seed"], key
    assert "ddof=1" in (tmp_path / "seed" / "summary.md").read_text()
    assert "ddof=0" in (tmp_path / "default" / "summary.md").read_text()
    capsys.readouterr()
    assert main(base + ["--kendall", "tau-c", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "--kendall must be one of ['tau-a', 'tau-b']" in err and not (tmp_path / "bad").exists()
    assert main(base + ["--ddof", "2", "--out", str(tmp_path / "bad")]) == 2
    assert "--ddof must be one of [0, 1]" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def _nr_pairs(tmp_path):
    rng = np.random.default_rng(3)
    d = tmp_path / "imgs"
    d.mkdir()
    yy, xx = np.mgrid[0:200, 0:200]
    base = 100 + 60 * np.sin(xx / 9.0) * np.cos(yy / 13.0)
    for name, noise in (("ref", 0.0), ("t1", 8.0), ("t2", 25.0)):
        img = np.clip(base + rng.normal(0, noise if noise else 1e-9, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(d / f"{name}.png")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("reference,test\nimgs/ref.png,imgs/t1.png\nimgs/ref.png,imgs/t2.png\n")
    return pairs, d


def test_score_niqe_model_file_round_trip(tmp_path, capsys, niqe_test_model, niqe_model_file):
    """--niqe-model: the .npz and the .mat form of one model give the library's NIQE values; the file is in
    run.json (SHA-256) and summary.md; with it 'no' includes niqe, without it niqe is skipped."""
    import json

    from scipy.io import savemat

    from cxreval.io.images import read_image
    from cxreval.iqa._no_reference import NIQEModel, niqe
    from cxreval.outputs._run_record import sha256_file

    pairs, imgs = _nr_pairs(tmp_path)
    mu, cov = niqe_test_model
    mat = tmp_path / "modelparameters.mat"
    savemat(mat, {"mu_prisparam": mu[None], "cov_prisparam": cov})
    model = NIQEModel(mu, cov)
    want = [niqe(read_image(imgs / f"{t}.png").image, data_range=255, model=model) for t in ("t1", "t2")]
    got = {}
    for name, path in (("npz", niqe_model_file), ("mat", mat)):
        assert (
            main(
                [
                    "iqa",
                    "score",
                    "--pairs",
                    str(pairs),
                    "--metrics",
                    "niqe,psnr",
                    "--niqe-model",
                    str(path),
                    "--out",
                    str(tmp_path / name),
                ]
            )
            == 0
        )
        sc = pd.read_csv(tmp_path / name / "scores.csv")
        got[name] = sc.loc[sc.metric == "niqe", "value"].to_numpy()
        run = json.loads((tmp_path / name / "run.json").read_text())
        assert (
            sha256_file(path) in json.dumps(run) and str(path) in (tmp_path / name / "summary.md").read_text()
        )
    np.testing.assert_allclose(got["npz"], want, rtol=1e-12)
    np.testing.assert_array_equal(got["npz"], got["mat"])
    assert want[1] != pytest.approx(want[0])  # the noisier image scores differently
    capsys.readouterr()
    assert (
        main(
            [
                "iqa",
                "score",
                "--pairs",
                str(pairs),
                "--metrics",
                "no",
                "--niqe-model",
                str(niqe_model_file),
                "--json",
                "--out",
                str(tmp_path / "no"),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert "niqe" in printed["metrics"] and "niqe" not in printed["skipped"]
    assert (
        main(
            [
                "iqa",
                "score",
                "--pairs",
                str(pairs),
                "--metrics",
                "no",
                "--json",
                "--out",
                str(tmp_path / "no-model"),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert "niqe" not in printed["metrics"] and "niqe" in printed["skipped"]


def test_score_bad_niqe_model_file(tmp_path, capsys, niqe_test_model, niqe_model_file):
    """A bad model file: one line naming it, exit 2, no output folder, before any image is scored."""
    pairs, _ = _nr_pairs(tmp_path)
    mu, cov = niqe_test_model
    wrong_keys, short, asym, text = (tmp_path / n for n in ("keys.npz", "short.npz", "asym.npz", "text.npz"))
    np.savez(wrong_keys, means=mu, covariance=cov)
    np.savez(short, mu=mu[:30], cov=cov[:30, :30])
    bad_cov = np.array(cov)
    bad_cov[0, 1] += 1.0
    np.savez(asym, mu=mu, cov=bad_cov)
    text.write_text("not a model\n")
    cases = {
        wrong_keys: "must hold 'mu_prisparam' and 'cov_prisparam'",
        short: "expected finite mu of 36 values",
        asym: "cov must be a symmetric",
        text: "Cannot read NIQE model file",
        tmp_path / "missing.mat": "does not exist",
    }
    for path, msg in cases.items():
        out = tmp_path / f"o-{path.stem}"
        assert (
            main(
                [
                    "iqa",
                    "score",
                    "--pairs",
                    str(pairs),
                    "--metrics",
                    "niqe",
                    "--niqe-model",
                    str(path),
                    "--out",
                    str(out),
                ]
            )
            == 2
        ), path
        err = capsys.readouterr().err
        assert msg in err and str(path) in err and len(err.strip().splitlines()) == 1, err
        assert not out.exists()
    assert (
        main(
            [
                "iqa",
                "score",
                "--pairs",
                str(pairs),
                "--metrics",
                "psnr",
                "--niqe-model",
                str(niqe_model_file),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "does not include niqe" in capsys.readouterr().err and not (tmp_path / "o").exists()
