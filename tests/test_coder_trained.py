"""The trained coder (coder/argkp.py, kpa.py, head.py, trained.py, build.py): its data reader,
its figures, its learned "none", the shipped adapter, and its reproducibility."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from themesim.coder import argkp, kpa
from themesim.coder.argkp import NONE, Group
from themesim.coder.head import NOTHING, OTHER, RIGHT, Head, features, outcome
from themesim.coder.head_fit import fit_head
from themesim.errors import InputError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "argkp_train"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/argkp_train")


def group(truth, known=None, topic="t", stance=1) -> Group:
    truth = np.asarray(truth, dtype=bool)
    known = np.ones_like(truth) if known is None else np.asarray(known, dtype=bool)
    n, k = truth.shape
    return Group(
        topic, stance, [f"k{j}" for j in range(k)], [f"kp {j}" for j in range(k)],
        [f"a{i}" for i in range(n)], [f"arg {i}" for i in range(n)], truth, known,
    )  # fmt: skip


def write_argkp(folder: Path, labels: list[tuple[str, str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {"arg_id": ["a0", "a1", "a2"], "argument": ["x", "y", "z"], "topic": "T", "stance": 1}
    ).to_csv(folder / "arguments_train.csv", index=False)
    pd.DataFrame(
        {"key_point_id": ["k0", "k1"], "key_point": ["p", "q"], "topic": "T", "stance": 1}
    ).to_csv(folder / "key_points_train.csv", index=False)
    pd.DataFrame(labels, columns=["arg_id", "key_point_id", "label"]).to_csv(
        folder / "labels_train.csv", index=False
    )


def test_reader_keeps_unlabelled_pairs_unknown(tmp_path):
    write_argkp(tmp_path, [("a0", "k0", 1), ("a0", "k1", 0), ("a1", "k1", 0)])
    (g,) = argkp.load(tmp_path)
    assert g.truth.tolist() == [[True, False], [False, False], [False, False]]
    assert g.known.tolist() == [[True, True], [False, True], [False, False]]
    assert g.none.tolist() == [False, True, True]  # no label-1 pair: "none"


def test_reader_names_the_bad_row(tmp_path):
    write_argkp(tmp_path, [("a0", "k0", 1), ("a1", "k1", "yes")])
    with pytest.raises(InputError, match=r"labels_train.csv row 3: label 'yes' is not 0 or 1"):
        argkp.load(tmp_path)
    with pytest.raises(InputError, match="arguments_train.csv: not found"):
        argkp.load(tmp_path / "missing")


def test_figures_by_hand():
    """Four arguments, two key points: truth k0, k1, none, none; the coder says k0, k0,
    none, k1."""
    g = group([[1, 0], [0, 1], [0, 0], [0, 0]], known=[[1, 1], [1, 1], [1, 0], [1, 1]])
    ans = [np.array([0, 0, NONE, 1])]
    # k0: coder 1,1,0,0 vs truth 1,0,0,0: po 3/4, pe (2·1 + 2·3)/16 = 1/2, κ 1/2
    # k1: coder 0,0,0,1 vs truth 0,1,0,0: po 2/4, pe (1·1 + 3·3)/16 = 10/16, κ -1/3
    k = kpa.kp_kappas([g], ans)[0]
    assert k == pytest.approx([0.5, -1 / 3])
    best = [np.array([0, 0, 1, 1])]
    conf = [np.array([0.9, 0.8, 0.1, 0.7])]
    f = kpa.figures([g], ans, best, conf)
    assert f["accuracy"] == 0.5 and f["majority"] == 0.5  # none is the commonest answer
    assert f["none_precision"] == 1.0 and f["none_recall"] == 0.5
    # mAP: the top half by confidence: arguments 0 (k0: label 1) and 1 (k0: label 0)
    assert f["map_strict"] == pytest.approx(1.0) and f["map_relaxed"] == pytest.approx(1.0)
    # ranked the other way round the positive comes second: AP 1/2
    f2 = kpa.figures([g], ans, best, [np.array([0.8, 0.9, 0.1, 0.7])])
    assert f2["map_strict"] == pytest.approx(0.5)


def test_map_relaxed_counts_unlabelled_pairs_as_matches():
    g = group([[0, 0], [1, 0]], known=[[0, 1], [1, 1]])
    best, conf = [np.array([0, 0])], [np.array([0.9, 0.1])]
    # top half: argument 0 with k0, unlabelled: strict 0 (no positive), relaxed 1
    assert kpa.average_precision(g, best[0], conf[0], relaxed=False) == 0.0
    assert kpa.average_precision(g, best[0], conf[0], relaxed=True) == 1.0


def test_head_features_and_outcomes():
    S = np.array([[0.9, 0.1, 0.3], [0.2, 0.5, 0.3]])
    best, X = features(S)
    assert best.tolist() == [0, 1, 0]  # a tie goes to the theme listed first
    assert X[:, 0] == pytest.approx([0.9, 0.5, 0.3])
    assert X[:, 3] == pytest.approx([0.7, 0.4, 0.0])  # gap to the second
    truth = np.array([[1, 0], [1, 0], [0, 0]], dtype=bool)
    assert outcome(best, truth).tolist() == [RIGHT, OTHER, NOTHING]


def test_head_learns_none_from_labels():
    """Arguments whose best score is low have no key point: the fitted head says none for
    them and keeps the confident choices."""
    rng = np.random.default_rng(0)
    scores, truths = [], []
    for _ in range(20):
        n = 60
        has = rng.random(n) < 0.6
        S = rng.uniform(0.0, 0.3, (3, n))
        kp = rng.integers(0, 3, n)
        S[kp[has], np.flatnonzero(has)] = rng.uniform(0.5, 0.9, has.sum())
        T = np.zeros((n, 3), dtype=bool)
        T[np.flatnonzero(has), kp[has]] = True
        scores.append(S)
        truths.append(T)
    head = fit_head(scores, truths)
    answer, best, p_right = head.decide(scores[0])
    has = truths[0].any(axis=1)
    assert (answer[~has] == NONE).mean() > 0.9 and (answer[has] == best[has]).mean() > 0.9
    again = Head.from_dict(json.loads(json.dumps(head.to_dict())))
    assert (again.decide(scores[0])[0] == answer).all()


def test_shipped_adapter_is_small_and_carded():
    from themesim.coder.trained import ADAPTER_FILES, WEIGHTS, card_of

    size = sum((WEIGHTS / f).stat().st_size for f in ADAPTER_FILES)
    assert size <= 5 * 2**20
    card = card_of()
    assert card["base"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(card["base"]["weights_sha256"]) == 64
    assert set(card["data"]["files"]) == {
        "arguments_train.csv", "key_points_train.csv", "labels_train.csv"
    }  # fmt: skip
    o = card["validation"]["overall"]
    assert 0 <= o["kappa_ci"][0] <= o["kappa_median"] <= o["kappa_ci"][1] <= 1
    assert len(card["validation"]["per_topic"]) == card["data"]["topics"] == 24
    assert (WEIGHTS / "MODEL_CARD.md").read_text().count(card["base"]["weights_sha256"]) == 1


def test_trained_coder_codes_without_the_training_data():
    """The shipped adapter labels passages: a passage about a theme gets it, one about
    nothing in the codebook gets none; the same input gives the same labels."""
    from themesim.coder.trained import trained_labels

    themes = [
        "Money worries: paying rent and bills is hard",
        "Family support: relatives help with childcare",
        "Health: illness and hospital visits",
    ]
    segments = [
        "I could not pay the rent last month and the electricity bill is overdue.",
        "My mother looks after the kids when I work.",
        "I spent two weeks in hospital with pneumonia.",
        "What do you think about this?",
    ]
    eligible = np.array([True, True, True, False])
    L, S = trained_labels(themes, segments, eligible)
    assert S.shape == (3, 4) and L.shape == (4, 3)
    assert L[:3].argmax(axis=1).tolist() == [0, 1, 2] and L[:3].any(axis=1).all()
    assert not L[3].any()  # not eligible
    L2, S2 = trained_labels(themes, segments, eligible)
    assert (L2 == L).all() and (S2 == S).all()


@pytest.mark.skipif(not DATA.is_dir(), reason="the ArgKP training data is not here")
def test_retraining_is_byte_identical(tmp_path):
    """train-coder's recipe on two topics and a few steps, twice: the same bytes."""
    from themesim.coder import build, train

    s = train.TrainSettings(lora_r=4, lr=1e-3, epochs=0.05, batch=8, top_layers=1)
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        build.build(DATA, out, s, folds=2, topics=2, boot=10, log=lambda m: None)
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert set(outs[0]) >= {"adapter_model.safetensors", "adapter_config.json", "head.json"}
    assert outs[0] == outs[1]
    card = json.loads(outs[0]["head.json"])
    assert card["data"]["topics"] == 2 and math.isfinite(card["validation"]["overall"]["accuracy"])


def test_coder_agreement_names_the_validation_and_the_trust():
    """coder_agreement.csv: a trained coder's rows carry its ArgKP validation; a checked
    overall row says whether the coder reaches pooled κ 0.4 on the study's own coding."""
    from themesim.coder.agreement import TRUSTED_KAPPA, agreement_table
    from themesim.coder.trained import card_of

    segments = pd.DataFrame(
        {"transcript": ["a"] * 4 + ["b"] * 4, "segment": [0, 1, 2, 3] * 2,
         "speaker": ["I", "P"] * 4, "text": "x"}
    )  # fmt: skip
    rows = [("a", 1, "H1", "coded", 1), ("b", 1, "H1", "coded", 1), ("a", 3, "H2", "coded", 1),
            ("a", 1, "H1", "assigned", 0.5), ("b", 3, "H1", "assigned", 0.5),
            ("a", 3, "H2", "assigned", 0.5)]  # fmt: skip
    labels = pd.DataFrame(rows, columns=["transcript", "segment", "theme_id", "source", "score"])
    themes = {"h": pd.DataFrame({"theme_id": ["H1", "H2"], "name": ["one", "two"]})}
    for coder in ("similarity (top1 centred ≥ 0.2)", "trained (MiniLM + ArgKP LoRA adapter)"):
        methods = {"m": {"sets": ["h"], "coded_sets": ["h"], "coders": {"h": coder}}}
        t = agreement_table(methods, {("m", "h"): labels}, themes, segments, ["I"])
        overall = t[t.level == "overall"].iloc[0]
        # pooled κ by hand (test_coder.py): (6/8 - 34/64) / (1 - 34/64) = 0.467
        assert overall.pooled_kappa == pytest.approx(0.4667, abs=1e-4)
        assert overall.pooled_kappa >= TRUSTED_KAPPA
        assert overall.coder_trusted is True or overall.coder_trusted == 1
        if coder.startswith("trained"):
            o = card_of()["validation"]["overall"]
            assert (t.coder_validation_kappa == o["kappa_median"]).all()
            assert t.coder_validation.str.startswith("ArgKP train, nested by topic").all()
        else:
            assert t.coder_validation_kappa.isna().all()


def test_train_coder_cli_names_a_missing_folder(tmp_path, capsys):
    from themesim.cli import main

    assert main(["train-coder", "--data", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "arguments_train.csv: not found" in err and "ArgKP layout" in err
