"""SDWEC on out-of-bag votes: the pool's bootstrap record and OOB votes, the solver on them,
the size-targeted bisection, stability selection, and the new methods in the registry."""

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.literal import literal_sdwec
from sdwec import combiners, datasets, experiments, frontier, methods, oob, pool, styles
from sdwec.solver import PRESETS, Solution, solve
from sdwec.votes import NO_VOTE, Votes, stack_votes

NEW = {"SDWEC-OOB", "SDWEC-OOB weighted", "SDWEC-val K", "SDWEC-stable", "SDWEC-OOB path",
       "reduce-error OOB"}


@pytest.fixture(scope="module")
def binary_pool():
    data = datasets.load("wine", "binary")
    return pool.build_pool(data.X, data.y, n_trees=25, seed=2)  # grown in chunks of 20 and 5


@pytest.fixture(scope="module")
def multiclass_pool():
    data = datasets.load("wine", "multiclass")
    return pool.build_pool(data.X, data.y, n_trees=12, seed=1)


def unique_rows(matrix):
    """Distinct rows of a matrix with their counts, in sorted order."""
    rows, counts = np.unique(np.asarray(matrix), axis=0, return_counts=True)
    return rows, counts


def tree_labels(p, j, X):
    """Labels tree ``j`` of the pool predicts (its own predict, encoded class indices)."""
    return p.ensemble.classes_[p.estimators[j].predict(X).astype(int)]


# --------------------------------------------------------------------------- the pool


@pytest.mark.parametrize("which", ["binary_pool", "multiclass_pool"])
def test_in_bag_rows_are_each_trees_own_training_rows(which, request):
    # Independent of how the mask was recorded: a tree fitted with bootstrap weights holds,
    # in each leaf, exactly the distinct training rows of its sample that fall there.
    p = request.getfixturevalue(which)
    in_bag = p.in_bag
    assert in_bag.shape == (len(p.y_train), p.n_trees) and in_bag.dtype == bool
    for j, tree in enumerate(p.estimators):
        structure = tree.tree_
        leaves = tree.apply(np.asarray(p.X_train[in_bag[:, j]], dtype=np.float32))
        is_leaf = structure.children_left == -1
        per_leaf = np.bincount(leaves, minlength=structure.node_count)
        np.testing.assert_array_equal(per_leaf[is_leaf], structure.n_node_samples[is_leaf])
    # a bootstrap sample of n rows holds about 1 - 1/e of them
    assert 0.55 < in_bag.mean() < 0.72


def test_binary_oob_votes_are_each_trees_predictions_outside_its_sample(binary_pool):
    p = binary_pool
    codes = np.column_stack([np.searchsorted(p.classes, tree_labels(p, j, p.X_train))
                             for j in range(p.n_trees)])
    codes[p.in_bag] = NO_VOTE
    expected = np.column_stack([codes, np.searchsorted(p.classes, p.y_train)])
    v = p.votes("oob")
    got = np.repeat(np.column_stack([v.codes, v.labels]), v.counts, axis=0)
    for a, b in zip(unique_rows(got), unique_rows(expected)):
        np.testing.assert_array_equal(a, b)
    assert v.m == len(p.y_train)


def test_multiclass_oob_correctness_is_zero_in_bag(multiclass_pool):
    p = multiclass_pool
    right = np.column_stack([tree_labels(p, j, p.X_train) == p.y_train
                             for j in range(p.n_trees)])
    expected = np.where(p.in_bag, 0, np.where(right, 1, -1))
    v = p.votes("oob")
    assert len(v.classes) == 3
    got = np.repeat(v.correctness, v.counts, axis=0)
    for a, b in zip(unique_rows(got), unique_rows(expected)):
        np.testing.assert_array_equal(a, b)
    # the same matrix from sdwec.oob.oob_votes on the trees' predictions
    P = np.column_stack([tree_labels(p, j, p.X_train) for j in range(p.n_trees)])
    again = oob.oob_votes(P, p.y_train, p.in_bag, p.classes)
    for a, b in zip(unique_rows(np.repeat(again.correctness, again.counts, axis=0)),
                    unique_rows(expected)):
        np.testing.assert_array_equal(a, b)


def test_stacked_votes_are_the_oob_and_validation_rows_together(binary_pool):
    p = binary_pool
    stacked = p.votes("oob+val")
    assert stacked is p.votes("oob+val")  # computed once per pool object
    assert stacked.m == len(p.y_train) + len(p.y_val)
    both = stack_votes(p.votes("oob"), p.votes("val"))
    np.testing.assert_array_equal(stacked.codes, both.codes)
    np.testing.assert_array_equal(stacked.counts, both.counts)
    # The cache entry does not carry it; a reloaded pool builds it again.
    reloaded = pickle.loads(pickle.dumps(p))
    assert "_stacked_votes" not in reloaded.__dict__
    np.testing.assert_array_equal(reloaded.votes("oob+val").counts, stacked.counts)
    with pytest.raises(ValueError, match="'oob' or 'oob\\+val'"):
        p.votes("train")


def test_a_pool_without_the_bootstrap_record_says_so(binary_pool):
    old = pool.Pool(**{name: getattr(binary_pool, name) for name in (
        "classes", "X_train", "y_train", "X_val", "y_val", "X_test", "y_test", "P_val",
        "P_test", "ensemble", "estimators", "single_tree", "single_val", "single_test",
        "prior", "meta")})
    with pytest.raises(ValueError, match="no out-of-bag votes"):
        old.votes("oob+val")
    with pytest.raises(ValueError, match="no record of its bootstrap samples"):
        old.in_bag


def test_cache_format_is_bumped_for_the_new_layout():
    assert pool._versions()["format"] == 3


# --------------------------------------------------------------------------- the solver


def expanded(votes):
    """The m x l correctness matrix behind compressed votes."""
    return np.repeat(votes.correctness, votes.counts, axis=0)


@pytest.mark.parametrize("preset", ["SDWEC-A", "SDWEC-B"])
def test_solve_on_stacked_oob_votes_agrees_with_the_literal_transcription(binary_pool, preset):
    stacked = binary_pool.votes("oob+val")
    C = expanded(stacked)
    assert (C == 0).mean() > 0.5  # most training-row votes are in-bag
    ones = np.ones(len(C))
    sol = solve(stacked, **PRESETS[preset], threshold="none")
    np.testing.assert_allclose(sol.raw_weights,
                               literal_sdwec(C, ones, **PRESETS[preset], dense=False),
                               rtol=0, atol=1e-10)


def correctness_votes(C):
    """Votes in correctness form of a ±1/0 matrix (every label +1)."""
    codes = np.where(C == 0, NO_VOTE, (C > 0).astype(np.int8)).astype(np.int8)
    n = len(C)
    return Votes(codes=codes, labels=np.ones(n, dtype=np.intp),
                 counts=np.ones(n, dtype=np.int64), classes=np.array([-1, 1]))


def test_repeated_all_zero_rows_and_silent_members_agree_with_literal():
    # OOB stacking can give many rows nobody voted on (every tree drew the row), merged into
    # one row with a count, and a member silent on most rows.
    rng = np.random.default_rng(3)
    C = rng.choice([-1, 0, 1], size=(60, 7), p=[0.25, 0.4, 0.35]).astype(float)
    C[:9] = 0.0
    C[9:, 2] = 0.0
    votes = stack_votes(correctness_votes(C[:30]), correctness_votes(C[30:]))
    assert votes.counts.max() >= 9  # the all-zero rows are one row now
    ones = np.ones(60)
    for params in (PRESETS["SDWEC-A"], PRESETS["SDWEC-B"], dict(lam=1e4, beta=15, gamma=15,
                                                                  eps=1)):
        expected = literal_sdwec(C, ones, **params)
        np.testing.assert_allclose(solve(votes, **params, threshold="none").raw_weights,
                                   expected, rtol=0, atol=1e-10)
        np.testing.assert_allclose(solve(C, ones, **params, threshold="none").raw_weights,
                                   expected, rtol=0, atol=1e-10)


# --------------------------------------------------------------------------- target size


def test_target_size_reads_ints_shares_and_the_default():
    assert oob.target_size(None, 200) == 40
    assert oob.target_size(0.2, 200) == 40 and oob.target_size(1.0, 7) == 7
    assert oob.target_size(0.01, 10) == 1  # at least one member
    assert oob.target_size(13, 200) == 13
    for bad, message in ((0, "between 1 and"), (201, "between 1 and"), (1.5, "in \\(0, 1\\]"),
                         (0.0, "in \\(0, 1\\]"), (True, "an int"), ("40", "an int")):
        with pytest.raises(ValueError, match=message):
            oob.target_size(bad, 200)


def staircase(monkeypatch, l=30, step=2, cap=None, at=-3.0):
    """Replace the solver by a known staircase: the support at λ is
    ``step * floor(3 (log10 λ - at))`` members (clipped to [0, cap]), the first ones, with
    weights decreasing in the index. Returns the support function."""
    cap = l if cap is None else cap

    def support(lam):
        return int(np.clip(step * np.floor(3 * (np.log10(lam) - at)), 0, cap))

    def fake_solve(votes, y=None, lam=None, **params):
        s = support(lam)
        w = np.where(np.arange(l) < s, l - np.arange(l) + 0.5, 0.0)
        return Solution(weights=w, raw_weights=w, threshold=0.0, thresholds=np.zeros(l),
                        history=(), params={"lam": lam})

    monkeypatch.setattr(oob, "solve", fake_solve)
    return support


@pytest.fixture
def dummy_votes():
    return Votes(codes=np.ones((2, 30), dtype=np.int8), labels=np.array([1, 1]),
                 counts=np.array([1, 1]), classes=np.array([-1, 1]))


@pytest.mark.parametrize("k", [1, 7, 15, 29])
def test_bisection_finds_the_smallest_lambda_reaching_k(monkeypatch, dummy_votes, k):
    support = staircase(monkeypatch)  # even supports only: never exactly an odd k
    fit = oob.fit_to_size(dummy_votes, k)
    # the smallest λ with support >= k, from the staircase's formula
    smallest = 10 ** (np.ceil(k / 2) / 3 - 3)
    assert smallest <= fit.lam * (1 + 1e-12) and fit.lam <= smallest * oob.LAMBDA_RATIO
    assert support(fit.lam) >= k
    np.testing.assert_array_equal(np.flatnonzero(fit.kept), np.arange(k))  # the k largest
    assert fit.reached and fit.n_kept == k
    np.testing.assert_array_equal(fit.weights("uniform"), fit.kept.astype(float))
    np.testing.assert_array_equal(fit.weights("weighted"),
                                  np.where(fit.kept, fit.solution.weights, 0.0))
    assert fit.evaluations[0] == (oob.LAMBDA_RANGE[1], support(oob.LAMBDA_RANGE[1]))


def test_bisection_keeps_the_largest_lambdas_support_when_it_is_smaller(monkeypatch,
                                                                        dummy_votes):
    staircase(monkeypatch, cap=12)
    fit = oob.fit_to_size(dummy_votes, 20)
    assert fit.lam == oob.LAMBDA_RANGE[1] and len(fit.evaluations) == 1
    assert fit.n_kept == 12 and not fit.reached
    np.testing.assert_array_equal(np.flatnonzero(fit.kept), np.arange(12))


def test_bisection_stops_at_exactly_k_and_takes_the_lower_end_when_it_suffices(monkeypatch,
                                                                            dummy_votes):
    support = staircase(monkeypatch, step=1)
    fit = oob.fit_to_size(dummy_votes, 10)
    assert support(fit.lam) == 10 and fit.evaluations[-1][1] == 10
    staircase(monkeypatch, at=-9.0)  # even the smallest λ selects 18 members
    fit = oob.fit_to_size(dummy_votes, 5)
    assert fit.lam == oob.LAMBDA_RANGE[0] and fit.n_kept == 5


def test_fit_to_size_on_real_votes_keeps_the_k_largest_weights_of_its_lambda(binary_pool):
    stacked = binary_pool.votes("oob+val")
    fit = oob.fit_to_size(stacked, 5)
    assert fit.n_kept == 5
    again = solve(stacked, lam=fit.lam, **{k: v for k, v in PRESETS["SDWEC-B"].items()
                                           if k != "lam"})
    assert again.n_selected >= 5
    order = np.argsort(-again.weights, kind="stable")
    np.testing.assert_array_equal(np.flatnonzero(fit.kept), np.sort(order[:5]))


def test_fit_to_size_says_what_to_fix(dummy_votes):
    with pytest.raises(ValueError, match="lam_range"):
        oob.fit_to_size(dummy_votes, 3, lam_range=(1.0, 0.5))
    with pytest.raises(ValueError, match="lam_ratio"):
        oob.fit_to_size(dummy_votes, 3, lam_ratio=1.0)
    with pytest.raises(TypeError, match="sdwec.votes.Votes"):
        oob.fit_to_size(np.ones((3, 3)), 1)


# --------------------------------------------------------------------------- stability


def test_resample_is_a_bootstrap_of_the_rows_behind_the_counts():
    votes = Votes(codes=np.array([[0, 1], [1, 1], [1, 0]], dtype=np.int8),
                  labels=np.array([0, 1, 1]), counts=np.array([6, 3, 1]),
                  classes=np.array([-1, 1]))
    rng = np.random.default_rng(0)
    draws = [oob.resample(votes, rng) for _ in range(4000)]
    assert all(d.m == 10 for d in draws)
    mean = np.zeros(3)
    for d in draws:
        for code, count in zip(d.codes, d.counts):
            mean[np.flatnonzero((votes.codes == code).all(axis=1))[0]] += count
    # each of the 10 rows is drawn 10 times on average over 10 draws: expected counts 6, 3, 1
    np.testing.assert_allclose(mean / len(draws), [6, 3, 1], rtol=0.05)


def test_stability_is_seeded_and_ranks_by_frequency(binary_pool):
    stacked = binary_pool.votes("oob+val")
    a = oob.stability_ranking(stacked, n_resamples=4, seed=11)
    b = oob.stability_ranking(stacked, n_resamples=4, seed=11)
    c = oob.stability_ranking(stacked, n_resamples=4, seed=12)
    np.testing.assert_array_equal(a.order, b.order)
    np.testing.assert_array_equal(a.frequency, b.frequency)
    assert not np.array_equal(a.mean_weight, c.mean_weight)
    assert set(np.unique(a.frequency)) <= {0, 0.25, 0.5, 0.75, 1.0}
    f = a.frequency[a.order]
    assert np.all(np.diff(f) <= 0)  # decreasing frequency along the order
    top = a.top(6)
    assert top.sum() == 6 and set(np.flatnonzero(top)) == set(a.order[:6])
    # one resample: the frequency is the selection of SDWEC-B on that resample
    one = oob.stability_ranking(stacked, n_resamples=1, seed=5)
    resampled = oob.resample(stacked.correctness_form, np.random.default_rng(5))
    np.testing.assert_array_equal(one.frequency,
                                  (solve(resampled, **PRESETS["SDWEC-B"]).weights > 0) * 1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        oob.stability_ranking(stacked, n_resamples=0)


# --------------------------------------------------------------------------- the registry


def test_new_methods_are_ours_with_their_own_colours():
    for name in NEW:
        method = methods.get(name)
        assert method.source == ("peer" if name == "reduce-error OOB" else "ours")
    colours = [styles.style(m.name).color.lower() for m in methods.registered()]
    assert len(set(colours)) == len(colours)
    assert styles.style("reduce-error OOB @K") == styles.style("reduce-error OOB")
    assert styles.style("random @OOB") == styles.style("random")


def test_the_paper_suite_is_unchanged_and_the_oob_suite_has_the_new_rows():
    assert not NEW & {row.split(" @")[0] for row in experiments.METHODS}
    assert experiments.method_rows(suite="oob") == [
        "SDWEC-B", "bagging", "SDWEC-B select", "reduce-error @K", "random @K", "random @OOB",
        "SDWEC-OOB", "SDWEC-OOB weighted", "SDWEC-val K", "SDWEC-stable",
        "reduce-error OOB @K"]
    with pytest.raises(ValueError, match="suites must be among"):
        methods.Method(name="x", label="x", kind="point", fit=lambda p: None, description="",
                       reference="", source="ours", suites=("nope",))


def test_new_methods_appear_on_the_frontier(binary_pool):
    df = frontier.peers(binary_pool, random_draws=2, lasso_alphas=5)
    k = oob.target_size(None, binary_pool.n_trees)
    point = df[df["method"] == "SDWEC-OOB"]
    assert len(point) == 1 and point["n_selected"].item() == k
    path = df[df["method"] == "SDWEC-OOB path"]
    assert len(path) == len(oob.OOB_LAMS)
    support = (combiners.sdwec_grid(binary_pool.votes("oob+val"), [
        dict(PRESETS["SDWEC-B"], lam=float(lam)) for lam in oob.OOB_LAMS]) != 0).sum(axis=0)
    np.testing.assert_array_equal(path["n_selected"], support)
    curve = df[df["method"] == "reduce-error OOB"]
    assert list(curve["n_selected"]) == list(range(1, binary_pool.n_trees + 1))
    assert not {"SDWEC-stable", "SDWEC-OOB weighted", "SDWEC-val K"} & set(df["method"])


def test_the_oob_suite_job_sizes_each_comparison(cache):
    rows = pd.DataFrame(experiments.run_job("wine", 0, n_trees=15, suite="oob", size=4))
    assert list(rows["method"]) == experiments.method_rows(suite="oob")
    got = rows.set_index("method")
    for row in ("reduce-error @K", "random @K", "SDWEC-stable", "reduce-error OOB @K"):
        assert got.loc[row, "n_selected"] == 4
    assert got.loc["random @OOB", "n_selected"] == got.loc["SDWEC-OOB", "n_selected"] <= 4
    assert got.loc["bagging", "n_selected"] == 15
    # reduce-error on the stacked votes, recomputed from the combiners
    p = pool.load_pool("wine", n_trees=15, seed=0)
    order = combiners.reduce_error_order(p.votes("oob+val"), prior=p.prior)
    assert got.loc["reduce-error OOB @K", "accuracy"] == pytest.approx(
        combiners.ordered_curve(order, p.votes("test"), p.prior, [4])[0])
    # SDWEC-stable is seeded by the repeat: the same job gives the same rows
    again = pd.DataFrame(experiments.run_job("wine", 0, n_trees=15, suite="oob", size=4))
    pd.testing.assert_frame_equal(rows, again)
    with pytest.raises(ValueError, match="suite must be one of"):
        experiments.run_job("wine", 0, n_trees=15, suite="nope")


def test_oob_report_separates_exploration_and_confirmation():
    rng = np.random.default_rng(0)
    rows = []
    for dataset in ("a", "b"):
        for repeat in range(12):
            for method in experiments.method_rows(suite="oob"):
                rows.append({"dataset": dataset, "task": "binary", "repeat": repeat,
                             "method": method, "accuracy": rng.uniform(0.8, 0.9),
                             "n_selected": 4, "n_trees": 20})
    df = pd.DataFrame(rows)
    comparison = experiments.paired_comparison(df[df["repeat"] >= 10], "SDWEC-OOB", "bagging")
    assert list(comparison["dataset"]) == ["a", "b", "over datasets"]
    assert (comparison[["wins", "ties", "losses"]].iloc[:2].sum(axis=1) == 2).all()
    # hand check of one dataset's difference
    part = df[(df["repeat"] >= 10) & (df["dataset"] == "a")].pivot(
        index="repeat", columns="method", values="accuracy")
    assert comparison["difference (points)"].iloc[0] == pytest.approx(
        100 * (part["SDWEC-OOB"] - part["bagging"]).mean())
    assert [title for title, _ in experiments._blocks(df)] == [
        "exploration: splits 0–9", "confirmation: splits 10–11"]
    assert [title for title, _ in experiments._blocks(df[df["repeat"] < 3])] == [
        "all splits (0–2)"]


def test_paired_comparison_counts_equal_accuracies_as_ties_whatever_their_last_bit():
    rows = [{"dataset": "a", "repeat": r, "method": m, "accuracy": acc}
            for r, (x, y) in enumerate([(0.1 + 0.2, 0.3), (0.5, 0.4), (0.7, 0.6), (0.9, 0.85),
                                        (0.6, 0.7)])
            for m, acc in (("new", x), ("old", y))]
    table = experiments.paired_comparison(pd.DataFrame(rows), "new", "old")
    first = table.iloc[0]
    assert (first["wins"], first["ties"], first["losses"]) == (3, 1, 1)
    # the tie is dropped: the test sees the four differences 0.1, 0.1, 0.05, -0.1
    assert first["Wilcoxon p"] == pytest.approx(
        stats.wilcoxon([0.1, 0.1, 0.05, -0.1]).pvalue)
