import numpy as np
import pytest

from themesim.embed.isotropy import abtt, default_d, remove_top_directions


def unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def anisotropic(n, dim=64, seed=0):
    """Every vector = one big shared direction + small noise: a narrow cone."""
    rng = np.random.default_rng(seed)
    c = unit(rng.normal(size=(1, dim)))
    X = 5.0 * c + 0.1 * rng.normal(size=(n, dim))
    return unit(X).astype(np.float32), c[0]


def mean_offdiag_cos(X):
    X = unit(np.asarray(X, dtype=np.float64))
    C = X @ X.T
    n = len(X)
    return (C.sum() - np.trace(C)) / (n * (n - 1))


def test_output_unit_norm_split_and_dtype():
    X, _ = anisotropic(30)
    A, B = abtt([X[:12], X[12:]], d=2)
    assert A.shape == (12, 64) and B.shape == (18, 64)
    assert A.dtype == np.float32 and B.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(np.vstack([A, B]), axis=1), 1.0, atol=1e-6)


def test_float64_in_float64_out():
    X, _ = anisotropic(10)
    (out,) = abtt([X.astype(np.float64)], d=1)
    assert out.dtype == np.float64


def test_pooled_mean_zero_before_renormalisation():
    X, _ = anisotropic(40)
    Y, U = remove_top_directions(X, 3)
    assert U.shape == (3, 64)
    np.testing.assert_allclose(Y.mean(axis=0), 0.0, atol=1e-12)


def test_anisotropic_cone_opens_up():
    X, _ = anisotropic(50)
    before = mean_offdiag_cos(X)
    after = mean_offdiag_cos(np.vstack(abtt([X[:20], X[20:]], d=1)))
    assert before > 0.9
    assert abs(after) < 0.1


def test_top_direction_removed():
    # variance dominated by one direction t: the top principal direction ≈ t, and after ABTT
    # nothing of t (nor of the removed directions) is left.
    rng = np.random.default_rng(1)
    t = unit(rng.normal(size=(1, 32)))[0]
    X = unit(rng.normal(size=(60, 1)) * 4.0 * t + 0.2 * rng.normal(size=(60, 32)))
    _, U = remove_top_directions(X, 1)
    assert abs(U[0] @ t) > 0.99
    (out,) = abtt([X], d=1)
    np.testing.assert_allclose(out.astype(np.float64) @ U[0], 0.0, atol=1e-6)
    assert np.abs(out @ t).max() < 0.2
    # top principal direction of the centred input, computed independently
    Xc = X - X.mean(axis=0)
    v = np.linalg.svd(Xc)[2][0]
    np.testing.assert_allclose(out.astype(np.float64) @ v, 0.0, atol=1e-6)


def test_deterministic():
    X, _ = anisotropic(25)
    for a, b in zip(abtt([X[:10], X[10:]]), abtt([X[:10], X[10:]]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_pooling_is_split_invariant():
    # the split only decides how rows are returned, not the geometry
    X, _ = anisotropic(25)
    whole = abtt([X], d=2)[0]
    np.testing.assert_allclose(np.vstack(abtt([X[:7], X[7:20], X[20:]], d=2)), whole, atol=1e-6)


def test_default_d():
    assert default_d(384) == 4
    assert default_d(768) == 8
    assert default_d(1024) == 10
    assert default_d(50) == 1
    X = unit(np.random.default_rng(2).normal(size=(20, 384))).astype(np.float32)
    _, U = remove_top_directions(X, default_d(384))
    assert U.shape == (4, 384)
    assert abtt([X])[0].shape == (20, 384)


def test_too_few_rows_raises():
    X, _ = anisotropic(3)
    with pytest.raises(ValueError, match="at least 4 rows"):
        abtt([X[:1], X[1:]], d=3)


def test_bad_inputs():
    X, _ = anisotropic(10)
    with pytest.raises(ValueError):
        abtt([])
    with pytest.raises(ValueError):
        abtt([X, X[:, :10]])
    with pytest.raises(ValueError):
        abtt([X], d=64)


def test_degenerate_rows_raise():
    # identical rows are all equal to the mean: nothing is left after centring
    X = np.tile(unit(np.ones((1, 8))), (5, 1))
    with pytest.raises(ValueError, match="zero after removing"):
        abtt([X], d=1)
