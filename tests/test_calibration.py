"""Calibration from rated pairs (metrics/calibration.py)."""

import numpy as np
import pandas as pd
import pytest

from themesim.errors import InputError
from themesim.metrics.calibration import (
    IntervalProcedure,
    calibrate,
    curve_stats,
    f1_threshold,
    isotonic_fit,
    read_rated_pairs,
    resample_thresholds,
    youden_threshold,
)
from themesim.metrics.isotonic import map_calibrated

# The scikit-learn ROC example: AUC 0.75.
SCORES = np.array([0.1, 0.4, 0.35, 0.8])
LABELS = np.array([0, 0, 1, 1])


def test_hand_computed_thresholds():
    # >= 0.35 keeps 0.8, 0.4, 0.35: precision 2/3, recall 1 -> F1 0.8 (the best).
    assert f1_threshold(SCORES, LABELS) == (0.35, pytest.approx(0.8))
    # J = 0.5 at 0.8 (TPR .5, FPR 0) and at 0.35 (TPR 1, FPR .5): the higher threshold.
    assert youden_threshold(SCORES, LABELS) == (0.8, pytest.approx(0.5))


def test_isotonic_fit_pools_the_violator():
    fit = isotonic_fit(SCORES, LABELS)
    # Sorted labels 0, 1, 0, 1: the middle two pool to 0.5.
    np.testing.assert_allclose(map_calibrated([0.0, 0.1, 0.375, 0.8, 2.0], fit), [0, 0, 0.5, 1, 1])


def test_calibrate_summary_and_intervals():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 40)
    s = np.where(y == 1, rng.normal(0.7, 0.1, 80), rng.normal(0.4, 0.1, 80))
    out = calibrate(s, y, n_boot=300, seed=1)
    assert out["n_pairs"] == 80 and out["n_positive"] == 40
    assert 0.9 < out["auc"] <= 1
    for k in ("auc", "f1_threshold", "youden_threshold"):
        assert out[f"{k}_ci_low"] <= out[k] <= out[f"{k}_ci_high"], k
    assert 0.45 < out["f1_threshold"] < 0.65  # between the two class means
    assert calibrate(s, y, n_boot=300, seed=1) == out  # seeded
    assert calibrate(SCORES, LABELS, n_boot=50)["auc"] == 0.75


def test_prevalence_and_interval_method_are_reported():
    out = calibrate(SCORES, LABELS, n_boot=50)
    assert out["prevalence"] == 0.5
    assert out["ci_method"] == (
        "auc: newcombe_score_theme_deff; thresholds: stratified_theme_bootstrap"
    )
    old = calibrate(
        SCORES, LABELS, n_boot=50, procedure=IntervalProcedure("pairs", auc_method="percentile")
    )
    assert old["ci_method"] == "pairs_bootstrap"
    with pytest.raises(ValueError, match="scheme"):
        calibrate(SCORES, LABELS, n_boot=5, procedure=IntervalProcedure(scheme="rows"))
    with pytest.raises(ValueError, match="auc_method"):
        calibrate(SCORES, LABELS, n_boot=5, procedure=IntervalProcedure(auc_method="bca"))


# SCORES/LABELS as matches 0.8, 0.35 and non-matches 0.4, 0.1. Placements: 0.8 beats both
# non-matches (1), 0.35 one (0.5); 0.4 is beaten by one match (0.5), 0.1 by both (1).
S4 = np.array([0.8, 0.35, 0.4, 0.1])
Y4 = np.array([1, 1, 0, 0])


def test_delong_and_hanley_mcneil_variances_by_hand():
    from themesim.metrics.calibration import delong_variance, hanley_mcneil_variance, placements

    v10, v01 = placements(S4, Y4)
    assert v10.tolist() == [1.0, 0.5] and v01.tolist() == [0.5, 1.0]
    # S10 = S01 = (0.25² + 0.25²) / 1 = 0.125; V = 0.125/2 + 0.125/2
    assert delong_variance(S4, Y4) == pytest.approx(0.125)
    # N* − 1 = 1: 0.75 · 0.25 · (1 + 0.25/1.25 + 0.75/1.75) / 4
    assert hanley_mcneil_variance(0.75, 2, 2) == pytest.approx(0.1875 * (1.2 + 3 / 7) / 4)
    assert hanley_mcneil_variance(1.0, 6, 6) == 0.0


def test_clustered_auc_variance_by_hand():
    """ψ = (placement − 0.75) / 2: +0.125, −0.125 (matches), −0.125, +0.125 (non-matches).
    A themes {0.8, 0.1} and {0.35, 0.4}: sums ±0.25, V_A = 2/1 · 2 · 0.0625 = 0.25; B texts
    all distinct: V_B = V_AB = 4/3 · 4 · 0.015625, so V = V_A. A themes that pair each match
    with the non-match it beats by half: sums 0, V_A = 0, V = V_A + V_B − V_AB = 0, not
    positive: max(V_A, V_B) = 1/12."""
    from themesim.metrics.calibration import clustered_auc_variance

    assert clustered_auc_variance(S4, Y4, [0, 1, 1, 0], [0, 1, 2, 3]) == pytest.approx(0.25)
    # any labels name the themes
    assert clustered_auc_variance(S4, Y4, list("xyyx"), list("pqrs")) == pytest.approx(0.25)
    assert clustered_auc_variance(S4, Y4, [0, 1, 0, 1], None) == pytest.approx(1 / 12)
    # one A theme: that side adds nothing
    assert clustered_auc_variance(S4, Y4, [0, 0, 0, 0], None) == pytest.approx(1 / 12)


def test_auc_interval_solves_the_score_equation():
    """(θ̂ − θ)² = z² · deff · V_HM(θ) at both ends, deff = V_cl / min(V_DL, V_HM(0.75)).
    Every pair its own theme: V_cl = 4/3 · Σψ² = 1/12 against V_HM(0.75) = 0.0763 (V_DL
    0.125): deff 1.09. Clustered: 0.25 / 0.0763 = 3.27, a wider interval."""
    from scipy.stats import norm

    from themesim.metrics.calibration import auc_interval, hanley_mcneil_variance

    z2 = norm.ppf(0.975) ** 2
    lo, hi = auc_interval(S4, Y4)
    deff = (1 / 12) / hanley_mcneil_variance(0.75, 2, 2)
    for t in (lo, hi):
        assert (0.75 - t) ** 2 == pytest.approx(z2 * deff * hanley_mcneil_variance(t, 2, 2))
    assert lo < 0.75 < hi
    clo, chi = auc_interval(S4, Y4, [0, 1, 1, 0], [0, 1, 2, 3])
    deff = 0.25 / hanley_mcneil_variance(0.75, 2, 2)
    for t in (clo, chi):
        assert (0.75 - t) ** 2 == pytest.approx(z2 * deff * hanley_mcneil_variance(t, 2, 2))
    assert clo < lo and chi > hi


def test_a_perfect_separation_gets_an_interval_not_a_point():
    """Regression: a bootstrap of 6 matches all above 6 non-matches gives [1, 1]. Score
    interval, θ̂ = 1, m = n = 6, N* − 1 = 5: the low end solves 1 − θ = z² θ [1 + 5(1 − θ)/
    (2 − θ) + 5θ/(1 + θ)] / 36, a cubic once multiplied by (2 − θ)(1 + θ): 0.6892."""
    from themesim.metrics.calibration import auc_interval

    s = np.r_[np.linspace(0.6, 0.9, 6), np.linspace(0.1, 0.5, 6)]
    y = np.r_[np.ones(6, dtype=np.int64), np.zeros(6, dtype=np.int64)]
    assert auc_interval(s, y) == (pytest.approx(0.689230577, abs=1e-8), 1.0)
    out = calibrate(s, y, n_boot=50, procedure=IntervalProcedure(auc_method="percentile"))
    assert (out["auc_ci_low"], out["auc_ci_high"]) == (1.0, 1.0)  # the old interval
    assert calibrate(s, y, n_boot=50)["auc_ci_low"] == pytest.approx(0.689230577, abs=1e-8)


def test_resamples_keep_both_labels():
    """Regression: pairs drawn regardless of label left resamples with matches only or
    non-matches only, which were dropped. 2 matches of 40: a resample draws no match with
    probability (38/40)^40 = 0.13; within labels, never."""
    from themesim.metrics.calibration import resample_indices

    y = np.r_[np.ones(2, dtype=np.int64), np.zeros(38, dtype=np.int64)]
    rng = np.random.default_rng(0)
    one_label = [
        np.unique(y[resample_indices(rng, y, scheme="pairs")]).size == 1 for _ in range(400)
    ]
    assert 0.08 < np.mean(one_label) < 0.18
    for scheme in ("stratified", "stratified_theme"):
        for _ in range(400):
            yb = y[resample_indices(rng, y, scheme=scheme)]
            assert set(yb.tolist()) == {0, 1}
    # stratified: exactly as many matches and non-matches as rated
    yb = y[resample_indices(rng, y, scheme="stratified")]
    assert (yb.sum(), yb.size) == (2, 40)


def test_theme_resampling_moves_a_themes_pairs_together():
    """Pairs sharing both themes are drawn equally often; one A theme with 3 distinct B
    texts: the B draws decide, their counts sum to 3 (m_a = 1 always); a theme of one side
    drawn k times multiplies every pair it is in."""
    from themesim.metrics.calibration import resample_indices, theme_ids

    assert theme_ids(["a  b", "a b", " c"]).tolist() == [0, 0, 1]
    y = np.array([1, 1, 1, 0, 0, 0, 0])
    a = np.array([0, 0, 0, 1, 1, 2, 2])
    b = np.array([0, 1, 2, 3, 3, 4, 5])
    rng = np.random.default_rng(3)
    for _ in range(300):
        w = np.bincount(resample_indices(rng, y, a, b), minlength=7)
        assert w[:3].sum() == 3  # one A theme: its B texts drawn 3 times
        assert w[3] == w[4]  # same A theme, same B text
        assert w[3:].sum() > 0
    # the same draws by hand (non-matches first, then matches), pair count m_a · m_b
    ref = np.random.default_rng(5)
    while True:  # non-matches: A themes {1, 2}, B texts {3, 4, 5}
        ma = np.bincount(ref.integers(0, 2, 2), minlength=2)
        mb = np.bincount(ref.integers(0, 3, 3), minlength=3)
        w0 = ma[[0, 0, 1, 1]] * mb[[0, 0, 1, 2]]
        if w0.any():
            break
    ma = np.bincount(ref.integers(0, 1, 1), minlength=1)  # matches: A theme 0 alone
    w1 = ma[[0, 0, 0]] * np.bincount(ref.integers(0, 3, 3), minlength=3)
    got = np.bincount(resample_indices(np.random.default_rng(5), y, a, b), minlength=7)
    assert got.tolist() == np.r_[w1, w0].tolist()


def test_rebase_by_hand():
    """P = 0.5 at 57 % matches re-based to 10 %: odds 1 · (0.1/0.9) / (0.57/0.43) = 0.0838,
    P = 0.0773 ("about 0.08"); 0 and 1 stay, the same share changes nothing."""
    from themesim.metrics.calibration import with_prevalence
    from themesim.metrics.isotonic import rebase

    ratio = (0.1 / 0.9) / (0.57 / 0.43)
    got = rebase([0.0, 0.5, 1.0], 0.57, 0.10)
    assert got.tolist() == [0.0, pytest.approx(ratio / (1 + ratio)), 1.0]
    assert got[1] == pytest.approx(0.0773, abs=5e-5)
    p = np.array([0.1, 0.3, 0.9])
    assert np.array_equal(rebase(p, 0.4, 0.4), p)
    fit = isotonic_fit(SCORES, LABELS)  # P: 0, 0.5, 0.5, 1 at 50 % matches
    kept = with_prevalence(fit, 0.5, None)
    assert np.array_equal(map_calibrated([0.1, 0.375, 0.8], kept), [0, 0.5, 1])
    moved = with_prevalence(fit, 0.5, 0.2)
    assert (moved["target_prevalence"] == 0.2).all() and (moved["prevalence"] == 0.5).all()
    # odds 1 · (0.2/0.8) / 1 = 0.25: P = 0.2
    assert map_calibrated([0.375], moved)[0] == pytest.approx(0.2)
    assert moved["p_match_at_target"].tolist() == pytest.approx([0, 0.2, 0.2, 1])


def random_cases(kind: str, n: int = 300):
    """(scores, labels) with both labels: continuous scores, or tied ones (tenths,
    quarters), where collinear ROC points and pooled isotonic values arise."""
    rng = np.random.default_rng(["continuous", "tenths", "quarters"].index(kind))
    for _ in range(n):
        m = int(rng.integers(4, 100))
        s = {
            "continuous": rng.random(m),
            "tenths": np.round(rng.random(m), 1),
            "quarters": rng.integers(0, 5, m) / 4.0,
        }[kind]
        y = (rng.random(m) < rng.uniform(0.1, 0.9)).astype(np.int64)
        if y.min() != y.max():
            yield s, y


def sklearn_youden(s, y):
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    j = tpr - fpr
    ok = np.isfinite(thr)  # the first point (inf) predicts nothing
    best = int(np.flatnonzero(ok & (j == j[ok].max()))[0])
    return float(thr[best]), float(j[best])


@pytest.mark.parametrize("kind", ["continuous", "tenths", "quarters"])
def test_thresholds_from_the_counts_are_scikit_learns(kind):
    # The Youden threshold and J from the one-sort counts are roc_curve's bit for bit, with
    # and without tied scores; the bootstrap's path chooses as f1_threshold and
    # youden_threshold do.
    checked = 0
    for s, y in random_cases(kind):
        assert youden_threshold(s, y) == sklearn_youden(s, y), (s.tolist(), y.tolist())
        expected = (f1_threshold(s, y)[0], sklearn_youden(s, y)[0])
        assert resample_thresholds(s, y) == expected, (s.tolist(), y.tolist())
        checked += 1
    assert checked > 250


@pytest.mark.parametrize("kind", ["continuous", "tenths", "quarters"])
def test_the_bootstraps_auc_from_the_curve_is_roc_auc_scores(kind):
    # curve_stats (the bootstrap's inner loop) against resample_stats (roc_auc_score), with
    # and without tied scores: the thresholds equal, the AUC within 1e-12.
    from sklearn.metrics import roc_auc_score

    assert curve_stats(SCORES, LABELS)[0] == pytest.approx(0.75, abs=1e-15)
    checked = 0
    for s, y in random_cases(kind):
        area, t_f1, t_j = curve_stats(s, y)
        assert abs(area - roc_auc_score(y, s)) < 1e-12, (s.tolist(), y.tolist())
        assert (t_f1, t_j) == resample_thresholds(s, y)
        checked += 1
    assert checked > 250


def test_read_label_and_rating_files(tmp_path):
    p = tmp_path / "pairs.csv"
    p.write_text("text_a,text_b,label\na,b,1\nc,d,0\ne,f,1\ng,h,0\n")
    assert read_rated_pairs(p)["label"].tolist() == [1, 0, 1, 0]
    p.write_text("text_a,text_b,rating\na,b,5\nc,d,2\ne,f,4\ng,h,3\n")
    assert read_rated_pairs(p, positive_from=4)["label"].tolist() == [1, 0, 1, 0]
    with pytest.raises(InputError, match="positive_from"):
        read_rated_pairs(p)


@pytest.mark.parametrize(
    "text, message",
    [
        ("text_a,label\na,1\n", "lacks column"),
        ("text_a,text_b,label\na,b,yes\nc,d,0\n", r"row 2.*label 'yes'"),
        ("text_a,text_b,label\na,b,1\nc,d,1\ne,f,0\n", "fewer than 2 pairs labelled 0"),
        ("text_a,text_b,label\na,,1\n", "row 2.*empty text"),
    ],
)
def test_bad_pairs_files(tmp_path, text, message):
    p = tmp_path / "pairs.csv"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        read_rated_pairs(p)
    assert isinstance(pd.read_csv(p), pd.DataFrame)


def test_calibration_settings_merge_one_level_deep():
    from themesim.metrics.settings import calibration_settings

    # A partial bootstrap keeps the other default (one level deep).
    assert calibration_settings({"bootstrap": {"n": 5}})["bootstrap"] == {"n": 5, "seed": 0}


def test_kinds_that_score_rated_pairs():
    from themesim import kinds

    assert {n for n, k in kinds.KINDS.items() if k.calibrates} == {
        "sentence_transformer",
        "tfidf",
        "abtt",
        "llm_judge",
        "precomputed",
    }
    assert [n for n, k in kinds.KINDS.items() if k.pairs_read_study_embeddings] == ["abtt"]
    # Only a precomputed method that uses `calibrated` is calibrated (its matrices may not
    # hold the rated pairs).
    assert [n for n, k in kinds.KINDS.items() if k.calibrates_on_request] == ["precomputed"]
    with pytest.raises(NotImplementedError):
        kinds.Kind().pair_scores({}, ["a"], ["b"])


def test_tfidf_pair_scores_hand_computed():
    from themesim.steps.calibration import pair_scores

    # Same words in another order: cosine 1; no shared term: 0.
    s = pair_scores("tfidf", {}, (["staff trust", "cost"], ["trust staff", "waiting"]))
    assert s == pytest.approx([1.0, 0.0])
    # Character n-grams (the kind's analyzer setting) find the shared stem that words miss.
    words = pair_scores("tfidf", {}, (["waiting"], ["waited"]))
    chars = pair_scores("tfidf", {"analyzer": "char_wb"}, (["waiting"], ["waited"]))
    assert words == pytest.approx([0.0]) and chars[0] > 0.3


# ---------------------------------------------------------------- precomputed: matrix look-up

REF = "name,description\nAlpha,first idea\nBeta,second idea\nGamma,third idea\n"
OTHER = "name,description\nUno,one thing\nDos,two things\nTres,three things\n"
MATRIX = ",Uno,Dos,Tres\nAlpha,0.9,0.2,0.4\nBeta,0.3,0.8,0.1\nGamma,0.6,0.5,0.7\n"
# Texts as the default text_template "{name}: {description}" renders the themes.
RATED_PRE = """text_a,text_b,label
Alpha: first idea,Uno: one thing,1
Beta: second idea,Dos:  two things,1
Tres: three things,Gamma: third idea,1
Gamma: third idea,Uno: one thing,0
Alpha: first idea,Tres: three things,0
Beta: second idea,Uno: one thing,0
Gamma: third idea,Dos: two things,1
Delta: not a theme,Uno: one thing,0
"""


def precomputed_study(tmp_path, rated=RATED_PRE):
    """Two theme sets, their matrix and a rated pairs file: (spec, themes, matrices, pairs)."""
    from themesim.io.themes import read_theme_file, write_themes_parquet

    themes = {}
    for name, text in (("ref", REF), ("other", OTHER)):
        (tmp_path / f"{name}.csv").write_text(text)
        themes[name] = tmp_path / f"{name}.parquet"
        write_themes_parquet(read_theme_file(tmp_path / f"{name}.csv", name), themes[name])
    (tmp_path / "ref__vs__other.csv").write_text(MATRIX)
    (tmp_path / "rated.csv").write_text(rated)
    matrices = {("ref", "other"): tmp_path / "ref__vs__other.csv"}
    return {"kind": "precomputed"}, themes, matrices, tmp_path / "rated.csv"


def test_precomputed_pair_scores_are_its_matrix_entries(tmp_path):
    from themesim.steps.calibration import pair_scores

    spec, themes, matrices, rated = precomputed_study(tmp_path)
    pairs = pd.read_csv(rated)
    s = pair_scores(
        "precomputed", spec, (pairs["text_a"], pairs["text_b"]), themes=themes, matrices=matrices
    )
    # Row 3 is swapped (a column theme first); row 2's double space still matches; row 8's
    # text is no theme: NaN, left out by the step.
    np.testing.assert_array_equal(s[:7], [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.5])
    assert np.isnan(s[7])


def test_precomputed_calibration_hand_computed(tmp_path, caplog):
    from themesim.steps.calibration import calibration_tables

    spec, themes, matrices, rated = precomputed_study(tmp_path)
    out = tmp_path / "out"
    with caplog.at_level("INFO", logger="themesim"):
        calibration_tables(
            calibration_job(spec, rated, themes, matrices, {"n": 20, "seed": 0}, out / "pre")
        )
    assert "1 of 8 rated pairs have no score and are left out" in caplog.text
    row = pd.read_csv(out / "pre.csv").iloc[0]
    # Matches 0.9, 0.8, 0.7, 0.5; non-matches 0.6, 0.4, 0.3: 11 of 12 ordered pairs right.
    assert (row["n_pairs"], row["n_positive"]) == (7, 4)
    assert row["auc"] == pytest.approx(11 / 12)
    # score >= 0.5 keeps all 4 matches and 1 non-match: F1 = 8/9 (0.7: 6/7, 0.4: 8/10).
    assert (row["f1_threshold"], row["f1_max"]) == (0.5, pytest.approx(8 / 9))
    # Youden: 0.7 gives TPR 3/4, FPR 0 (J 0.75); 0.5 gives 1 - 1/3.
    assert (row["youden_threshold"], row["youden_j"]) == (0.7, pytest.approx(0.75))
    scores = pd.read_csv(out / "pre/scores.csv")
    assert list(scores.columns) == ["text_a", "text_b", "label", "score"] and len(scores) == 7


def test_precomputed_too_few_pairs_found_is_one_clear_line(tmp_path):
    from themesim.steps.calibration import calibration_tables

    # The first four rated pairs (3 matches, 1 non-match) and two non-matches of no theme.
    rated = "\n".join(RATED_PRE.splitlines()[:5] + ["Delta: x,Uno: one thing,0", "Eps: y,Z: z,0"])
    spec, themes, matrices, path = precomputed_study(tmp_path, rated + "\n")
    with pytest.raises(InputError) as e:
        calibration_tables(
            calibration_job(spec, path, themes, matrices, {"n": 0, "seed": 0}, tmp_path / "o")
        )
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "method pre" in msg
    assert "scores only 4 of its 6 rated pairs (3 matches, 1 non-matches" in msg
    assert "texts of themes in its matrices" in msg
    assert not (tmp_path / "o.csv").exists()


def calibration_job(spec, rated, themes, matrices, bootstrap, out):
    """The calibration step's job for method `pre` (precomputed): out.csv and out/*."""
    from themesim.steps.job import Job

    return Job(
        input={"pairs": rated, "themes": themes, "matrices": matrices},
        params={
            "method": "pre",
            "kind": "precomputed",
            "spec": spec,
            "settings": {"positive_from": None, "bootstrap": bootstrap, "prevalence": None},
        },
        output={
            "summary": out.with_suffix(".csv"),
            "fit": out / "isotonic.csv",
            "scores": out / "scores.csv",
            "png": out / "calibration.png",
        },
    )


# ---------------------------------------------------------------- llm_judge: same cache


def judge_spec(url, **kw):
    """A judge method's settings against the fake server of tests/helpers.py (no model)."""
    return {
        "kind": "llm_judge",
        "base_url": url,
        "model": "fake-model",
        "prompt": "judge_v1",
        "score_mode": "json",
        "concurrency": 1,
        "max_retries": 0,
        "timeout_s": 5,
    } | kw


def fake_score(a: str, b: str) -> float:
    """The fake judge's answer: depends on both texts and their order."""
    return (int(a[-1]) * 3 + int(b[-1])) / 10


def fake_judge(n, body, headers):
    import json

    from helpers import completion, themes_in

    return 200, completion(json.dumps({"score": fake_score(*themes_in(body))})), 0


def test_judge_pair_scores_share_the_matrix_cache(fake_llm, tmp_path):
    from themesim import kinds

    srv = fake_llm(fake_judge)
    cache = tmp_path / "judge.sqlite"
    judge = kinds.get("llm_judge")
    A, B = ["Tired 0", "Money 1", "Guilt 2"], ["Sleep 0", "Costs 1"]
    tables = {"a": pd.DataFrame({"text": A}), "b": pd.DataFrame({"text": B})}
    spec = judge_spec(srv.url)
    ((_, S, _),) = judge.similarity(spec, [("a", "b")], tables, cache=cache)
    assert srv.calls == 6 and S[2, 1] == pytest.approx(0.7)
    # Rated pairs among the matrix's pairs are answered from the cache, in their order.
    s = judge.pair_scores(spec, ["Guilt 2", "Tired 0"], ["Costs 1", "Sleep 0"], cache=cache)
    assert srv.calls == 6 and s == pytest.approx([0.7, 0.0])
    # A new pair is asked once (a repeat of it too), with Theme A = text_a.
    s = judge.pair_scores(spec, ["Sleep 0", "Sleep 0"], ["Guilt 2", "Guilt 2"], cache=cache)
    assert srv.calls == 7 and s == pytest.approx([0.2, 0.2])
    # both_orders: the mean of (a, b) and (b, a), as in its matrices; (b, a) is new.
    s = judge.pair_scores(
        judge_spec(srv.url, both_orders=True), ["Money 1"], ["Costs 1"], cache=cache
    )
    assert srv.calls == 8 and s == pytest.approx([(0.4 + 0.4) / 2])
    s = judge.pair_scores(
        judge_spec(srv.url, both_orders=True), ["Guilt 2"], ["Sleep 0"], cache=cache
    )
    # (Guilt, Sleep) was judged in the matrix, (Sleep, Guilt) as a rated pair: no call.
    assert srv.calls == 8 and s == pytest.approx([(0.6 + 0.2) / 2])


def test_judge_pair_failure_is_a_step_error_naming_the_pairs(fake_llm, tmp_path):
    from themesim import kinds
    from themesim.errors import StepError

    srv = fake_llm(lambda n, body, headers: (200, {"choices": []}, 0))
    with pytest.raises(StepError, match="judging the rated pairs"):
        kinds.get("llm_judge").pair_scores(
            judge_spec(srv.url), ["Tired 0"], ["Sleep 0"], cache=tmp_path / "j.sqlite"
        )


@pytest.mark.slow
def test_judge_pairs_with_the_packaged_model(tmp_path, monkeypatch):
    """Qwen2.5-Coder-1.5B on a local llama.cpp server (started because the cache lacks the
    pairs): a paraphrase scores above unrelated pairs; a rerun starts no server."""
    import importlib.util

    from themesim import kinds

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed: run `make install`")
    a = [
        "Sleep loss: carers lose sleep and are exhausted by caring at night",
        "Sleep loss: carers lose sleep and are exhausted by caring at night",
        "Money worries: the costs of care strain the household budget",
        "Money worries: the costs of care strain the household budget",
    ]
    b = [
        "Worn out: caregivers are tired because night-time caring stops them sleeping",
        "Football results: the scores of the weekend's football matches",
        "Financial strain: paying for care puts pressure on family finances",
        "Gardening: tending plants in the afternoon",
    ]
    judge, cache = kinds.get("llm_judge"), tmp_path / "judge.sqlite"
    spec = {"kind": "llm_judge"}  # the defaults: logprob scores from the packaged model
    s = judge.pair_scores(spec, a, b, cache=cache, threads=2)
    print("scores", np.round(s, 3))
    assert ((s >= 0) & (s <= 1)).all()
    assert s[0] >= s[1] + 0.3 and s[2] >= s[3] + 0.3

    def no_server(*args, **kwargs):
        raise AssertionError("a cached rerun must not start a server")

    monkeypatch.setattr("themesim.llm.client.LlamaServer", no_server)  # where it is looked up
    np.testing.assert_array_equal(judge.pair_scores(spec, a, b, cache=cache), s)


# ---------------------------------------------------------------- config acceptance


@pytest.mark.parametrize(
    "method",
    [
        {"kind": "llm_judge", "thresholds": ["calibrated", 0.5]},
        {"kind": "llm_judge", "scale": "calibrated", "thresholds": [0.5]},
        {"kind": "precomputed", "dir": "m", "thresholds": ["calibrated"]},
        {"kind": "precomputed", "dir": "m", "scale": "calibrated", "thresholds": [0.5]},
        {"kind": "abtt", "base": "minilm", "thresholds": ["calibrated", 0.3]},
    ],
)
def test_config_accepts_calibrated_on_every_kind(tmp_path, monkeypatch, method):
    from themesim.config import prepare

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    (tmp_path / "a.csv").write_text(REF)
    (tmp_path / "b.csv").write_text(OTHER)
    (tmp_path / "m" / "a__vs__b.csv").write_text(MATRIX.replace("Uno", "x"))
    cfg = {
        "theme_sets": ["a.csv", "b.csv"],
        "calibration": {"pairs": "rated.csv"},
        "methods": {"minilm": {"kind": "sentence_transformer"}, "m": method},
    }
    study = prepare(cfg)
    assert study.thresholds["m"] == method["thresholds"]
    cfg["calibration"] = {"pairs": None}
    with pytest.raises(InputError, match="calibration.pairs is not set"):
        prepare(cfg)


# ---------------------------------------------------------------- abtt: the study's correction


def test_abtt_pair_scores_equal_its_matrix_cells(tmp_path):
    """A rated pair of two study themes scores what the abtt matrix holds for them: the
    correction is fitted on the study's pooled theme vectors (every set), not on the pairs."""
    from themesim import kinds
    from themesim.embed.encode import encode_with
    from themesim.embed.models import MINILM
    from themesim.embed.vectors import write_embeddings

    texts = {
        "a": ["Caring while working: shifts around a parent", "Money worries: care costs"],
        "b": ["Employment and caregiving", "Financial strain of care", "Gardening as escape"],
    }
    spec = {"kind": "abtt", "model": MINILM, "batch_size": 8, "device": "cpu", "d": 1}
    tables, files = {}, {}
    for s, t in texts.items():
        tables[s] = pd.DataFrame(
            {"theme_id": [f"{s}{i}" for i in range(len(t))], "name": t, "text": t}
        )
        emb, source = encode_with(spec, t, 2, cache=False)
        files[s] = tmp_path / f"{s}.parquet"
        write_embeddings(files[s], tables[s], emb, source, "minilm")
    abtt = kinds.get("abtt")
    ((_, S, _),) = abtt.similarity(spec, [("a", "b")], tables, embeddings=files)
    a = [texts["a"][0], texts["a"][1], texts["b"][2]]
    b = [texts["b"][0], texts["b"][1], texts["a"][0]]
    got = abtt.pair_scores(spec, a, b, cache=False, study_embeddings=list(files.values()))
    np.testing.assert_allclose(got, [S[0, 0], S[1, 1], S[0, 2]], atol=1e-5)
    # The base model's plain cosine differs: the correction is applied.
    plain = kinds.get("sentence_transformer").pair_scores(spec, a, b, cache=False)
    assert np.abs(plain - got).max() > 0.05


def test_the_judge_similarity_job_reads_the_rated_pairs_as_calibration_does(tmp_path):
    """The texts as the calibration step reads them; a pair with an empty text, or a file
    without the text columns, is left to the calibration step to reject."""
    from themesim.steps.similarity import rated_texts

    good = tmp_path / "rated.csv"
    good.write_text("text_a,text_b,label\nA one , B one,1\n ,B two,0\nA three,B three,0\n")
    assert rated_texts(good) == (["A one ", "A three"], [" B one", "B three"])
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert rated_texts(bad) == ([], [])


def test_rated_cells_and_crossfit_by_hand():
    """Rated pairs that are cells of a comparison (either order) and the calibration of
    each comparison without its own cells."""
    from themesim.steps.calibration import crossfit_table, rated_cells

    rows = [
        ("A", "X", 1, 0.9),  # h vs l
        ("B", "Y", 0, 0.2),  # h vs l
        ("Z", "A  ", 1, 0.8),  # h vs m, m's text first; white space does not count
        ("A", "Q", 0, 0.1),  # Q is no theme
        ("B", "X", 0, 0.4),  # h vs l
        ("A", "Y", 1, 0.7),  # h vs l
        ("B", "Q", 1, 0.6),
        ("A", "Q2", 0, 0.3),
    ]
    pairs = pd.DataFrame(rows, columns=["text_a", "text_b", "label", "score"])
    texts = {"h": ["A", "B"], "l": ["X", "Y"], "m": ["Z"]}
    cells = rated_cells(pairs, [("h", "l"), ("h", "m")], texts)
    assert np.flatnonzero(cells[("h", "l")]).tolist() == [0, 1, 4, 5]
    assert np.flatnonzero(cells[("h", "m")]).tolist() == [2]
    table = crossfit_table("m1", pairs, cells, {"f1_threshold": 0.4})
    hl, hm = table.iloc[0], table.iloc[1]
    # h vs l without its cells: matches 0.8, 0.6 over non-matches 0.1, 0.3
    assert (hl["n_rated_cells"], hl["n_pairs_fit"], hl["n_positive_fit"]) == (4, 4, 2)
    assert (hl["auc"], hl["f1_threshold"], hl["youden_threshold"]) == (1.0, 0.6, 0.6)
    assert hl["in_sample"] and hl["f1_threshold_all"] == 0.4
    # h vs m without row 2: matches 0.9, 0.7, 0.6 over 0.4, 0.3, 0.2, 0.1
    assert (hm["n_rated_cells"], hm["n_pairs_fit"], hm["f1_threshold"]) == (1, 7, 0.6)
    # too few left of a label: no calibration without the cells
    few = crossfit_table(
        "m1",
        pairs.iloc[[0, 1, 3, 5]],
        rated_cells(pairs.iloc[[0, 1, 3, 5]], [("h", "l")], texts),
        {"f1_threshold": 0.4},
    )
    assert few["n_pairs_fit"].tolist() == [1] and np.isnan(few["auc"].iloc[0])


def test_threshold_interval_holds_its_estimate():
    """Regression: the smoothed bootstrap's percentiles can miss the threshold itself. In
    the suite's sparse_unequal design (draw 9, seed 0) Youden's threshold 0.5902 got
    [0.4856, 0.5880]; the interval now reaches the estimate."""
    from themesim.validate import calibration as vc

    rng = vc.rng_for(0, "calibration", "sparse_unequal")
    for _ in range(10):
        d = vc.simulate(rng, "sparse_unequal")
    out = calibrate(d["s"], d["y"], n_boot=300, seed=9, themes_a=d["a"], themes_b=d["b"])
    assert out["youden_threshold"] == pytest.approx(0.590157, abs=1e-6)
    assert out["youden_threshold_ci_low"] == pytest.approx(0.485599, abs=1e-6)
    assert out["youden_threshold_ci_high"] == out["youden_threshold"]
