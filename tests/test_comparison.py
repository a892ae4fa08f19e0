"""SDWEC beside the baselines on one pool: the numbers the Explorer shows."""

import numpy as np
import pytest

from sdwec import combiners, comparison, datasets, solver
from sdwec.params import SolverParams
from sdwec.pool import build_pool

PARAMS = dict(lam=10.0, beta=15.0, gamma=15.0, eps=1.0, iterations=25, threshold="paper")


@pytest.fixture(scope="module")
def small_pool():
    data = datasets.load("wine", "binary")
    return build_pool(data.X, data.y, n_trees=12, seed=0)


def test_one_params_object_gives_what_its_keywords_give(small_pool):
    p = SolverParams(**dict(PARAMS, lam=0.5))
    a, b = comparison.compare(small_pool, params=p), comparison.compare(small_pool, **p)
    np.testing.assert_array_equal(a.solution.weights, b.solution.weights)
    assert a.solution.params is p
    lams = [0.01, 1.0]
    one = comparison.lambda_path(small_pool, lams, params=p)  # its λ is ignored
    many = comparison.lambda_path(small_pool, lams, **PARAMS)
    np.testing.assert_array_equal(one.weights, many.weights)
    with pytest.raises(ValueError, match="either params"):
        comparison.lambda_paths([small_pool], lams, params=p, beta=1.0)


def test_compare_scores_sdwec_and_the_baselines(small_pool):
    p = small_pool
    result = comparison.compare(p, **PARAMS)
    sol = solver.solve(p.votes("val"), None, **PARAMS)
    np.testing.assert_array_equal(result.solution.weights, sol.weights)
    rows = {r["method"]: r for r in result.methods}
    assert rows["SDWEC"]["test"] == combiners.accuracy(sol.weights, p.P_test, p.y_test,
                                                       p.classes, p.prior)
    assert rows["bagging"]["test"] == combiners.accuracy(np.ones(12), p.P_test, p.y_test,
                                                         p.classes, p.prior)
    assert rows["single"]["validation"] == np.mean(p.single_val == p.y_val)
    assert result.n_val == len(p.y_val) and result.abstain_label == p.prior[0]


def test_compare_sdwec_oob_votes_with_its_support(small_pool):
    p = small_pool
    result = comparison.compare(p, fit_on="oob+validation", **PARAMS)
    sol = solver.solve(p.votes("oob+val"), None, **PARAMS)
    support = (sol.weights > 0).astype(float)
    assert result.methods[0]["method"] == "SDWEC-OOB"
    assert result.methods[0]["test"] == combiners.accuracy(support, p.P_test, p.y_test,
                                                           p.classes, p.prior)
    with pytest.raises(ValueError, match="fit_on"):
        comparison.compare(p, fit_on="train", **PARAMS)


def _fake(test, validation, n_selected, l=10):
    weights = np.zeros(l)
    weights[:n_selected] = 1.0
    sol = solver.Solution(weights=weights, raw_weights=weights, threshold=0.0,
                          thresholds=np.zeros(l), history=())
    rows = [{"method": "SDWEC", "test": test, "validation": validation, "used": ""},
            {"method": "bagging", "test": 0.8, "validation": 0.8, "used": ""}]
    return comparison.Comparison(sol, np.zeros(l), rows, 1, [-1, 1], 20, 21)


def test_over_splits_by_hand():
    summary = comparison.over_splits([_fake(0.9, 1.0, 2), _fake(0.7, 0.9, 4)])
    sdwec = summary[0]
    assert sdwec["test"] == pytest.approx(0.8) and sdwec["test_sd"] == pytest.approx(
        np.sqrt(0.02))  # sample sd of 0.9 and 0.7
    assert sdwec["n_selected"] == 3 and sdwec["n_selected_sd"] == pytest.approx(np.sqrt(2))
    assert sdwec["sparsity"] == pytest.approx(0.7) and summary[1]["test_sd"] == 0
    one = comparison.over_splits([_fake(0.9, 1.0, 2)])
    assert one[0]["test_sd"] == 0 and one[0]["splits"] == 1
    with pytest.raises(ValueError, match="at least one split"):
        comparison.over_splits([])


def test_split_spread_names_abstaining_splits_and_the_outlier():
    # The iris case by hand: nine splits near 0.93-1.0, one abstaining at 1/3 (15 test rows,
    # but _fake's splits have 21).
    tests = [14 / 15, 5 / 15, 1.0, 14 / 15, 1.0, 14 / 15, 14 / 15, 14 / 15, 14 / 15, 14 / 15]
    results = [_fake(t, t, 0 if i == 1 else 5) for i, t in enumerate(tests)]
    spread = comparison.split_spread(results)
    np.testing.assert_array_equal(spread.accuracies, tests)
    assert spread.abstaining == [1] and spread.outlier == 1
    others = [t for i, t in enumerate(tests) if i != 1]  # 7 × 14/15 and 2 × 1
    assert spread.others_mean == pytest.approx((7 * 14 / 15 + 2) / 9)
    assert spread.others_sd == pytest.approx(np.std(others, ddof=1))  # 0.0294, not floored
    # (0.948 - 0.333) / max(0.0294, 1/21) ≈ 12.9 sd: far past the 5-sd rule.
    assert (spread.others_mean - 5 / 15) * 21 > 12


def test_split_spread_without_an_outlier_or_with_few_splits():
    # 0.7 .. 0.9 evenly: the farthest split (0.9 or 0.7) is 0.125 from the others' mean
    # 0.775 / 0.825, with the others' sd 0.0645: under 2 sd, so no outlier.
    even = [_fake(t, t, 3) for t in (0.7, 0.75, 0.8, 0.85, 0.9)]
    spread = comparison.split_spread(even)
    assert spread.outlier is None and spread.abstaining == []
    assert spread.others_mean is None and spread.others_sd is None
    # Three splits are too few to call one an outlier, however far it lies.
    few = comparison.split_spread([_fake(t, t, 0) for t in (0.9, 0.9, 0.1)])
    assert few.outlier is None and few.abstaining == [0, 1, 2]
    # The others agree exactly: one row (1/21) off is 1 floored sd, not an outlier; six rows
    # off are 6.
    assert comparison.split_spread([_fake(t, t, 2) for t in (0.9, 0.9, 0.9, 0.9 - 1 / 21)]
                                   ).outlier is None
    six = comparison.split_spread([_fake(t, t, 2) for t in (0.9, 0.9, 0.9, 0.9 - 6 / 21)])
    assert six.outlier == 3 and six.others_sd == 0.0
    # Others 0.80..0.86: mean 0.83, sd 0.0258, floored to one row, 1/21 = 0.0476; so 1.0
    # lies 0.17 / 0.0476 = 3.6 sd away: an outlier at 3 sd, not at the default 5.
    mild = [_fake(t, t, 2) for t in (0.80, 0.82, 0.84, 0.86, 1.0)]
    assert comparison.split_spread(mild, outlier_sd=3).outlier == 4
    assert comparison.split_spread(mild).outlier is None
    with pytest.raises(ValueError, match="at least one split"):
        comparison.split_spread([])


def test_shared_members():
    assert comparison.shared_members([1, 0, 2, 0], [0, 0, 3, 1]) == {
        "both": 1, "only_first": 1, "only_second": 1}
    with pytest.raises(ValueError, match="differ in length"):
        comparison.shared_members([1, 0], [1])


def test_lambda_path_is_one_solve_per_lambda(small_pool):
    lams = [0.01, 1.0, 100.0]
    path = comparison.lambda_path(small_pool, lams, **PARAMS)  # lam= is ignored
    for j, lam in enumerate(lams):
        sol = solver.solve(small_pool.votes("val"), None, **dict(PARAMS, lam=lam))
        np.testing.assert_array_equal(path.weights[:, j], sol.weights)
        assert path.test_accuracy[j] == combiners.accuracy(
            sol.weights, small_pool.P_test, small_pool.y_test, small_pool.classes,
            small_pool.prior)



def test_default_splits_refuse_too_few_rows():
    with pytest.raises(ValueError, match="at least 10 rows"):
        comparison.default_splits(9)


def test_default_splits_of_the_shipped_datasets():
    shipped = {name: comparison.default_splits(datasets.load(name).X.shape[0])
               for name in datasets.names() if name != "nsl_kdd"}  # NSL-KDD: 1 (above)
    assert shipped.pop("waveform") == 3
    assert set(shipped.values()) == {10}


# --------------------------------------------------------------------------- paired differences


def test_paired_difference_by_hand():
    # Per split, in points: +5, 0, -5, +5 (20 test rows each: +1, 0, -1, +1 rows).
    diff = comparison.paired_difference([0.80, 0.70, 0.90, 0.85], [0.75, 0.70, 0.95, 0.80],
                                        n_rows=20)
    assert diff.mean == pytest.approx(0.0125)
    # Sample sd of 5, 0, -5, 5 points: squared deviations 14.0625 + 1.5625 + 39.0625 +
    # 14.0625 = 68.75, / 3, square root.
    assert diff.sd == pytest.approx(np.sqrt(68.75 / 3) / 100)
    assert (diff.better, diff.tied, diff.worse, diff.splits) == (2, 1, 1, 4)
    # Sign test, 2 of 3 differing splits on one side: every outcome is as extreme, p = 1.
    assert diff.p_value == pytest.approx(1.0) and not diff.supported


def test_sign_test_p_values_by_hand():
    # 9 better, 1 worse: p = 2 * (C(10,0) + C(10,1)) / 2**10 = 22 / 1024.
    nine = comparison.paired_difference([0.9] * 9 + [0.7], [0.8] * 10, n_rows=10)
    assert nine.p_value == pytest.approx(22 / 1024) and nine.supported
    # 7 better, 3 tied: ties are left out, p = 2 / 2**7.
    seven = comparison.paired_difference([0.9] * 7 + [0.8] * 3, [0.8] * 10, n_rows=10)
    assert (seven.better, seven.tied) == (7, 3)
    assert seven.p_value == pytest.approx(2 / 128) and seven.supported
    # 8 of 10: p = 2 * (1 + 10 + 45) / 1024 = 0.109..., not supported at 0.05.
    eight = comparison.paired_difference([0.7] * 8 + [0.9] * 2, [0.8] * 10, n_rows=10)
    assert eight.p_value == pytest.approx(112 / 1024) and not eight.supported
    assert comparison.sign_test_needs(0.05) == 6 and comparison.sign_test_needs(0.01) == 8


def test_ties_are_counted_in_rows_not_float_noise():
    # 0.1 + 0.2 differs from 0.3 by 5.6e-17: the same 3 rows of 10.
    diff = comparison.paired_difference([0.1 + 0.2, 0.4], [0.3, 0.4], n_rows=[10, 10])
    assert (diff.better, diff.tied, diff.worse) == (0, 2, 0) and diff.p_value == 1.0
    bare = comparison.paired_difference([0.1 + 0.2], [0.3])  # no row counts: a tolerance
    assert bare.tied == 1 and bare.p_value is None and bare.rows is None
    with pytest.raises(ValueError, match="equally long"):
        comparison.paired_difference([0.1, 0.2], [0.3])


def _split(sdwec_rows, bagging_rows, n_test=21):
    """One split's comparison: SDWEC and bagging right on so many of ``n_test`` rows."""
    rows = [{"method": "SDWEC", "test": sdwec_rows / n_test, "validation": 1.0, "used": ""},
            {"method": "bagging", "test": bagging_rows / n_test, "validation": 1.0,
             "used": ""}]
    return comparison.Comparison(None, np.zeros(3), rows, 1, [-1, 1], 20, n_test)


def test_paired_reads_sdwec_and_bagging_from_the_splits():
    results = [_split(17, 16), _split(16, 16, 20), _split(15, 16)]  # +1, 0, -1 rows
    diff = comparison.paired(results)
    assert (diff.first, diff.second) == ("SDWEC", "bagging")
    np.testing.assert_allclose(diff.differences, [1 / 21, 0.0, -1 / 21])
    assert (diff.better, diff.tied, diff.worse) == (1, 1, 1)
    assert list(diff.n_rows) == [21, 20, 21]
    one = comparison.paired(results[:1])
    assert one.rows == 1 and one.p_value is None
    with pytest.raises(ValueError, match="no method 'WMV'"):
        comparison.paired(results, "WMV")


def test_paired_sentences():
    noisy = comparison.paired_difference(
        [0.70, 0.80, 0.75, 0.70, 0.90, 0.85, 0.80, 0.75, 0.70, 0.80],
        [0.75, 0.80, 0.80, 0.75, 0.85, 0.80, 0.80, 0.80, 0.75, 0.85], n_rows=20)
    # Differences in rows: -1, 0, -1, -1, +1, +1, 0, -1, -1, -1 -> better 2, tied 2, worse 6;
    # mean -2 points; sd of (-5, 0, -5, -5, 5, 5, 0, -5, -5, -5) = sqrt(160 / 9) = 4.2;
    # p = 2 * (1 + 8 + 28) / 256 = 0.289.  Interval of the mean: -2 ± t(0.975, 9) · 4.216
    # / √10 = -2 ± 2.262 · 1.333 = [-5.02, +1.02] points.
    assert comparison.paired_sentence(noisy) == (
        "vs bagging: −2 points [−5, +1] over 10 splits (SDWEC better on 2, tied 2, worse 6): "
        "no clear difference (sign test over the splits, p = 0.29).")
    worse = comparison.paired_difference([0.7] * 9 + [0.8], [0.8] * 10, n_rows=10,
                                         names=("SDWEC-OOB", "bagging"))
    assert comparison.paired_sentence(worse) == (
        # -9 ± t(0.975, 9) · 3.162 / √10 = -9 ± 2.262: [-11.3, -6.74]
        "vs bagging: −9 points [−11, −6.7] over 10 splits (SDWEC-OOB better on 0, tied 1, "
        "worse 9): "
        "SDWEC-OOB is worse (sign test over the splits, p = 0.0039; the splits share rows, "
        "so they are not independent and the real p is larger).")
    few = comparison.paired_difference([0.9, 0.9, 0.9], [0.8, 0.8, 0.8], n_rows=10)
    # Three equal differences: an interval of no width excludes 0, and the sentence says
    # why the verdict still waits for more splits.
    assert comparison.paired_sentence(few).endswith(
        "(SDWEC better on 3, tied 0, worse 0): no clear difference (a sign test needs at "
        "least 6 splits that differ to show one at p < 0.05; 3 differ here). The interval of "
        "the mean excludes 0, but it takes the differences for smooth and roughly normal, "
        "which a few splits moving in whole rows are not: choose more splits to test it.")
    # At the most splits the page offers, it does not ask for more.
    ten = comparison.paired_difference([0.9] * 5 + [0.8] * 5, [0.8] * 10, n_rows=10)
    assert ten.lo > 0 and ten.better + ten.worse < comparison.sign_test_needs(ten.alpha)
    assert "choose more splits" not in comparison.paired_sentence(ten)
    assert "10 splits, the most the page offers" in comparison.paired_sentence(ten)
    same = comparison.paired_difference([0.8, 0.8], [0.8, 0.8], n_rows=10)
    assert comparison.paired_sentence(same) == (
        "vs bagging: 0 points [0, 0] over 2 splits (SDWEC better on 0, tied 2, worse 0): no "
        "difference on any split.")


def test_one_split_is_said_in_rows():
    up = comparison.paired_difference([19 / 21], [18 / 21], n_rows=21)
    assert comparison.paired_sentence(up) == (
        "vs bagging: +1 of 21 test rows (+4.8 points) (one split: no test over splits).")
    down = comparison.paired_difference([0.99], [0.99 + 13 / 12597], n_rows=12597,
                                        names=("live", "pinned"))
    assert comparison.paired_sentence(down) == (
        "vs pinned: −13 of 12,597 test rows (−0.1 points) (one split: no test over splits).")
    # Thousands separated, and the size in points (11,122 / 30,000 = 37.07 %).
    many = comparison.paired_difference([0.5], [0.5 + 11122 / 30000], n_rows=30000)
    assert comparison.paired_sentence(many) == (
        "vs bagging: −11,122 of 30,000 test rows (−37 points) (one split: no test over "
        "splits).")


# --------------------------------------------------------------------------- splits solved together


@pytest.fixture(scope="module", params=[12, 40], ids=["l=12 (l x l systems)",
                                                     "l=40 (Woodbury: fewer rows than trees)"])
def split_pools(request):
    # sonar's validation splits have about 20 unique rows: l = 12 solves the l x l system,
    # l = 40 the smaller rows x rows one (what l = 200 does in the dashboard).
    data = datasets.load("sonar", "binary")
    pools = [build_pool(data.X, data.y, n_trees=request.param, seed=s) for s in range(4)]
    rows = max(len(p.votes("val").correctness_form.counts) for p in pools)
    assert (rows < request.param) == (request.param == 40)
    return pools


@pytest.mark.parametrize("fit_on", ["validation", "oob+validation"])
@pytest.mark.parametrize("params", [PARAMS, dict(PARAMS, lam=0.1, beta=35.0, gamma=5.0,
                                                 eps=0.1),
                                    dict(PARAMS, lam=1000.0, threshold="adaptive"),
                                    dict(PARAMS, lam=0.001, eps=0.001, beta=0.0, gamma=100.0,
                                         iterations=3)])
def test_compare_many_equals_one_solve_per_split(split_pools, fit_on, params):
    together = comparison.compare_many(split_pools, fit_on, **params)
    for p, got in zip(split_pools, together):
        one = comparison.compare(p, fit_on, **params)
        alone = solver.solve(p.votes("oob+val" if fit_on != "validation" else "val"), None,
                             **params)
        # Equal up to rounding (a batched LU against one Cholesky per split; the extreme
        # setting's systems are ill-conditioned, hence a tolerance relative to the largest
        # weight).
        np.testing.assert_allclose(got.solution.raw_weights, alone.raw_weights, rtol=1e-8,
                                   atol=1e-8 * np.abs(alone.raw_weights).max())
        np.testing.assert_array_equal(got.solution.weights > 0, alone.weights > 0)
        assert [m["test"] for m in got.methods] == [m["test"] for m in one.methods]
        assert [r.n_selected for r in got.solution.history] == [
            r.n_selected for r in alone.history]
        np.testing.assert_allclose([r.nonconvex_cost for r in got.solution.history],
                                   [r.nonconvex_cost for r in alone.history], rtol=1e-8)
        np.testing.assert_allclose([r.relaxed_cost for r in got.solution.history],
                                   [r.relaxed_cost for r in alone.history], rtol=1e-8)
        for mine, its in zip(got.solution.history, alone.history):
            assert not mine.weights.flags.writeable
            np.testing.assert_allclose(mine.weights, its.weights, rtol=1e-8,
                                       atol=1e-8 * np.abs(its.weights).max())


def test_solve_many_needs_the_same_classifiers(split_pools):
    data = datasets.load("wine", "binary")
    five = build_pool(data.X, data.y, n_trees=5, seed=0)
    with pytest.raises(ValueError, match="same classifiers"):
        solver.solve_many([split_pools[0].votes("val"), five.votes("val")], **PARAMS)
    (one,) = solver.solve_many([split_pools[0].votes("val")], **PARAMS)
    np.testing.assert_array_equal(one.weights,
                                  solver.solve(split_pools[0].votes("val"), None,
                                               **PARAMS).weights)
    assert solver.solve_many([], **PARAMS) == []


@pytest.mark.parametrize("fit_on", ["validation", "oob+validation"])
@pytest.mark.parametrize("params", [PARAMS, dict(PARAMS, lam=0.1, beta=35.0, eps=0.1),
                                    dict(PARAMS, lam=1000.0, threshold="none")])
def test_scores_with_cached_baselines_equal_scoring_from_scratch(split_pools, fit_on, params):
    """Bagging's, WMV's, the single tree's and the members' scores are computed once per pool
    and reused at every slider move: the page's numbers are those of scoring every method
    from the votes, each time, as the paper defines the vote."""
    comparison.compare_many(split_pools, fit_on, **dict(params, lam=3.0))  # fills the cache
    results = comparison.compare_many(split_pools, fit_on, **params)
    for p, got in zip(split_pools, results):
        l = p.n_trees
        w = got.solution.weights
        voting = (w > 0).astype(float) if fit_on != "validation" else w
        Pval, yval = p.P_val, p.y_val
        # WMV's weights from the members' validation accuracies, by its formula (clip: half
        # a row each way).
        acc = (Pval == yval[:, None]).mean(axis=0)
        clipped = np.clip(acc, 0.5 / len(yval), 1 - 0.5 / len(yval))
        wmv = np.log(clipped / (1 - clipped))
        for name, weights in (("SDWEC-OOB" if fit_on != "validation" else "SDWEC", voting),
                              ("bagging", np.ones(l)), ("WMV", wmv)):
            row = next(m for m in got.methods if m["method"] == name)
            for split, P, y in (("test", p.P_test, p.y_test), ("validation", Pval, yval)):
                assert row[split] == combiners.accuracy(weights, P, y, p.classes, p.prior), \
                    (name, split)
        single = next(m for m in got.methods if m["method"] == "single")
        assert single["test"] == np.mean(p.single_test == p.y_test)
        np.testing.assert_array_equal(got.member_accuracy, acc)


def test_baselines_are_kept_per_pool_and_dropped_with_it():
    data = datasets.load("wine", "binary")
    p = build_pool(data.X, data.y, n_trees=6, seed=1)
    first = comparison.compare(p, **PARAMS)
    assert comparison.compare(p, **dict(PARAMS, lam=1.0)).member_accuracy is \
        first.member_accuracy  # one computation per pool
    assert not first.member_accuracy.flags.writeable  # shared: nobody may change it
    key = id(p)
    assert key in comparison._BASELINES
    del p, first
    import gc
    gc.collect()
    assert key not in comparison._BASELINES


def test_one_split_is_judged_by_mcnemar_on_its_paired_rows(small_pool):
    p = small_pool
    result = comparison.compare(p, **PARAMS)
    diff = comparison.paired([result])
    # The discordant rows counted directly from the uncompressed predictions.
    ours = combiners.vote(result.solution.weights, p.P_test, p.classes, p.prior) == p.y_test
    bag = combiners.vote(np.ones(p.n_trees), p.P_test, p.classes, p.prior) == p.y_test
    assert diff.mcnemar.better == int(np.sum(ours & ~bag))
    assert diff.mcnemar.worse == int(np.sum(~ours & bag))
    assert diff.test == "McNemar" and diff.p_value == diff.mcnemar.p_value
    sentence = comparison.paired_sentence(diff)
    assert "McNemar" in sentence or "agree on every row" in sentence


def test_mcnemar_decides_a_large_one_split_difference():
    # -7,178 of 30,000 rows: a difference no test could call chance.
    rows = 30_000
    mc = comparison.intervals.McNemar(better=12, worse=7_190, p_value=1e-300)
    diff = comparison.paired_difference([0.5], [0.5 + 7178 / rows], rows, mcnemar=mc)
    assert diff.supported and diff.better == 0 and diff.worse == 1
    assert comparison.paired_sentence(diff) == (
        "vs bagging: −7,178 of 30,000 test rows (−24 points) on one split (SDWEC alone right "
        "on 12 rows, bagging alone on 7,190): SDWEC is worse on these rows (exact McNemar "
        "test on the paired rows, p < 0.0001).")
    mc = comparison.intervals.mcnemar([True] * 7 + [False] * 2, [False] * 7 + [True] * 2)
    small = comparison.paired_difference([0.5], [0.5 - 5 / 12_597], 12_597, mcnemar=mc)
    assert not small.supported  # 7 against 2 rows: p = 0.18


def test_right_matches_the_accuracy(small_pool):
    p = small_pool
    votes = p.votes("test")
    W = np.column_stack([np.ones(p.n_trees), np.eye(p.n_trees)[0]])
    right = combiners.right(W, votes, p.prior)
    np.testing.assert_allclose(votes.counts @ right / votes.m,
                               combiners.accuracies(W, votes, p.prior))


def test_over_splits_intervals_stay_possible():
    results = [_fake(1.0, 1.0, 10), _fake(1.0, 1.0, 10), _fake(0.6, 0.9, 2)]
    sdwec = comparison.over_splits(results)[0]
    assert sdwec["test_hi"] == 1.0 and sdwec["n_selected_hi"] == 10
    assert 0 <= sdwec["sparsity_lo"] <= sdwec["sparsity"]
    assert sdwec["test_values"] == [1.0, 1.0, 0.6]
    one = comparison.over_splits([_fake(0.9, 1.0, 2)])[0]
    lo, hi = comparison.intervals.binomial_interval(round(0.9 * 21), 21)
    assert (one["test_lo"], one["test_hi"]) == (lo, hi)
    assert np.isnan(one["n_selected_lo"])


def test_the_sentence_says_which_test_the_verdict_follows_when_they_disagree():
    # Vehicle's case: 0 better, 6 tied, 4 worse by one row of 85: the t interval of the mean
    # excludes 0 (every difference is ≤ 0), the sign test over 4 differing splits cannot
    # reach p < 0.05 (it needs 6).
    diff = comparison.paired_difference([0.8] * 6 + [0.8 - 1 / 85] * 4, [0.8] * 10, n_rows=85)
    assert diff.hi < 0 and not diff.supported
    sentence = comparison.paired_sentence(diff)
    assert "no clear difference" in sentence
    assert "The interval of the mean excludes 0" in sentence and "too few to test it" in sentence
    # Where the interval holds 0, nothing is added.
    mixed = comparison.paired_difference([0.8, 0.9, 0.7], [0.8, 0.8, 0.8], n_rows=10)
    assert "excludes 0" not in comparison.paired_sentence(mixed)
