"""The ChestX-ray14 article's synthetic study: `simulate_localization()` prints the article's Output block line for line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from cxreval.localization import simulate_localization, synthetic_cases
from cxreval.localization._synthetic import ErrorModel, coverage

DATA = Path(__file__).parent / "data"
SEED_FILE = "000_8ad6d59c5e7d4453.txt"


def _norm(lines: list[str]) -> list[str]:
    return [re.sub(r"\s+", " ", ln).strip() for ln in lines if ln.strip()]


def _seed_block(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("Output:") + 1
    out = []
    for ln in lines[start:]:
        out.append(ln)
        if "Pneumothorax" in ln and "trunc:" in ln:
            break
    return out


@pytest.fixture(scope="module")
def study():
    return simulate_localization(0)


def test_matches_committed_expected_output(study):
    expected = _norm((DATA / "synth_expected.txt").read_text().splitlines())
    got = _norm(list(study.lines))
    assert len(got) == len(expected) == 76
    for e, g in zip(expected, got):
        assert g == e


def test_matches_seed_file_output_block(study, shared_data):
    seed = shared_data.parent / "seeds" / SEED_FILE
    if not seed.exists():
        pytest.skip(f"seed file not found at {seed}")
    expected = _norm(_seed_block(seed.read_text()))
    assert expected == _norm((DATA / "synth_expected.txt").read_text().splitlines())
    assert _norm(list(study.lines)) == expected


@pytest.mark.slow
def test_identical_across_runs(study):
    again = simulate_localization(0)
    assert again.lines == study.lines
    assert again.scores.equals(study.scores)
    assert again.boxes.equals(study.boxes)


def test_checks_and_tables(study):
    c = study.checks
    assert c["n_scored_boxes"] == 1977 and c["containing"] == 1034 and c["inside"] == 638
    assert c["iobb_lt_iou"] == 0 and c["or_rule_differs"] == 0 and c["pixel_count_mismatches"] == 0
    s = study.scores
    row = s[
        (s.variant == "noisy")
        & (s.localizer == "tiny box")
        & (s["size"] == "small")
        & (s.rule == "IoBB")
        & (s["T"] == "9/10")
    ]
    assert row.acc.item() == pytest.approx(52 / 60)
    assert len(study.boxes) == 1977


def test_other_seed_and_size_runs():
    r = simulate_localization(3, per_size=4)
    assert any("data small : 4 images" in ln for ln in r.lines)
    assert r.lines == simulate_localization(3, per_size=4).lines
    assert r.lines != simulate_localization(4, per_size=4).lines


def test_coverage_exact_fractions():
    cov = coverage((16, 0, 48, 32), ErrorModel())
    assert cov[0, 0] == 0.5 and cov[0, 1] == 0.5 and cov[1].sum() == 0
    assert cov.sum() == pytest.approx(32 * 32 / 32**2)


def test_rng_draw_order_matches_reference_script():
    # the reference script's make_case, written out: the first medium box of seed 0 (from the study's data line)
    cases = synthetic_cases(0, per_size=60)
    hs = [c.box[3] - c.box[1] for c in cases["large"]]
    assert (min(hs), max(hs)) == (264, 358)
    assert sum(c.has_distractor for c in cases["medium"]) == 26
    assert all(np.isfinite(c.noisy).all() for c in cases["small"])


@pytest.mark.slow
def test_other_seed_matches_reference_script():
    """With another seed and N, the output equals the article's reference script run verbatim (reference_pipeline.py)."""
    import importlib.util

    path = Path(__file__).resolve().parent / "reference_pipeline.py"
    spec = importlib.util.spec_from_file_location("_localization_reference_pipeline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert _norm(mod.reference_study(5, 3)) == _norm(list(simulate_localization(5, per_size=3).lines))


def test_the_checks_reference_is_skimage_resize_bit_for_bit():
    """The printed checks compare with skimage's resize, computed without importing skimage.transform."""
    from skimage.transform import resize

    from cxreval.localization._synthetic import skimage_resize

    rng = np.random.default_rng(3)
    maps = [
        synthetic_cases(rng=0, per_size=1)["medium"][0].noisy,
        rng.random((32, 32)),
        rng.normal(size=(16, 16)),
    ]
    for m in maps:
        for order in (0, 1):
            ref = resize(m, (1024, 1024), order=order, mode="edge", anti_aliasing=False)
            got = skimage_resize(m, 1024, order=order)
            assert got.dtype == ref.dtype and np.array_equal(got, ref), order
    odd = rng.normal(size=(7, 13))
    for size in (91, 224, 5):
        for order in (0, 1):
            ref = resize(odd, (size, size), order=order, mode="edge", anti_aliasing=False)
            assert np.array_equal(skimage_resize(odd, size, order=order), ref), (size, order)


def test_gaussian_blur_is_scipy_gaussian_filter_bit_for_bit():
    """The error model's blur equals scipy.ndimage.gaussian_filter(mode='constant') to the last bit, so the printed
    output does not depend on which computes it."""
    from scipy import ndimage

    from cxreval.localization._synthetic import gaussian_blur

    rng = np.random.default_rng(11)
    for shape, sigma in (((32, 32), 0.8), ((32, 32), 1.7), ((9, 40), 0.8), ((5, 3), 2.5), ((32, 32), 0.3)):
        for _ in range(20):
            a = rng.random(shape) * 10.0 ** rng.uniform(-3, 3)
            a[rng.random(shape) < 0.5] = 0.0
            assert np.array_equal(
                gaussian_blur(a, sigma), ndimage.gaussian_filter(a, sigma, mode="constant")
            ), (shape, sigma)
    box = coverage((300, 420, 390, 530), ErrorModel())
    assert np.array_equal(gaussian_blur(box, 0.8), ndimage.gaussian_filter(box, 0.8, mode="constant"))


def test_printing_the_study_imports_no_table_or_scipy_module():
    """`cxreval synth` prints without pandas, pyarrow or SciPy; the tables load pandas when first asked for."""
    import subprocess
    import sys

    code = (
        "import sys, io, contextlib; from cxreval.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):\n"
        "    rc = main(['synth', '--per-size', '3'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'pyarrow', 'scipy', 'skimage')"
        " or m.startswith('numpy.f2py'))\n"
        "from cxreval.localization import simulate_localization\n"
        "res = simulate_localization(0, per_size=3)\n"
        "print(rc, heavy, 'pandas' in sys.modules, len(res.table), 'pandas' in sys.modules,"
        " 'Part C' in out.getvalue())"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == "0 [] False 225 True True", r.stdout + r.stderr
