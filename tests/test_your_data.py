"""The *Your data* page through AppTest: preview, excluded columns, drop or impute, and the
sidebar and URL naming the upload while it is in use.

Same conventions as tests/test_app.py: l = 10 pools in a temporary disk cache, Streamlit's
caches cleared around every test. Expected row counts are derived by hand from the CSV
below, not read from the dashboard.
"""

import contextlib
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.config import USER_DATA
from harness.apptest_charts import chart_figures, headline
from tests.shown import as_read

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "pages/your_data.py"
TIMEOUT = 120
SMALL = {"dataset": "wine", "l": "10"}
N_ROWS = 300
#: Rows whose optional note is empty: i % 5 in {0, 1, 2}, 3 in 5 rows.
N_WITHOUT_NOTE = 180


pytestmark = pytest.mark.usefixtures("fresh_streamlit")


def _csv():
    """300 rows: a unique integer id, two continuous features (all values distinct), an
    optional text note missing in 180 rows, and a label that depends on x and y."""
    rng = np.random.default_rng(0)
    lines = ["id,x,y,note,label"]
    for i in range(N_ROWS):
        x, y = rng.normal(size=2)
        note = "" if i % 5 < 3 else ("short" if i % 2 else "long")
        lines.append(f"{5000 + i},{x:.6f},{y:.6f},{note},{'yes' if x + y > 0 else 'no'}")
    return "\n".join(lines).encode()


def _app(query=SMALL):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    return at


def _uploaded(query=SMALL):
    at = _app(query)
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("mine.csv", _csv(), "text/csv").run()
    _ok(at)
    return at


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _description(at):
    (shown,) = [s.value for s in at.success]
    return as_read(shown)


def _dataset(at):
    """The Dataset the page loaded (what the Explorer and the other pages use)."""
    return at.session_state["user_dataset"][1]


def test_upload_puts_your_data_in_the_sidebar_and_the_url():
    at = _uploaded()
    assert at.selectbox(key="cfg_dataset").value == USER_DATA
    assert at.query_params["dataset"] == USER_DATA
    rows = N_ROWS - N_WITHOUT_NOTE
    assert f"your data ({rows} rows): mine.csv" in at.selectbox(key="cfg_dataset").options
    assert headline(at)["Classifiers used"].endswith("/ 10")


def test_a_label_the_page_drew_before_the_upload_changed_still_means_your_data(monkeypatch):
    # The Dataset box shows the upload by its file name, so its label changes with each new
    # file. A browser holding the label of the file before sends that label back, and
    # Streamlit's selectbox gives the label itself as the box's value (no option has it:
    # tests/test_compat.py checks that on the pinned Streamlit).
    from types import SimpleNamespace

    from dashboard import config as cfg
    from dashboard import sidebar

    stale = "your data (250 rows): the-file-before.csv"
    key = cfg.WIDGET_KEYS["dataset"]
    for value, expected in [(stale, USER_DATA), ("wine", "wine"), ("no such dataset", "sonar")]:
        state = {"_cfg": cfg.Config(dataset="sonar"), key: value}
        monkeypatch.setattr(sidebar, "st", SimpleNamespace(session_state=state))
        sidebar._dataset_changed()  # the box's on_change
        assert state[key] == state["_cfg"].dataset == expected, value
        assert state["_cfg"].task in cfg.task_choices(expected)
        state[key] = value
        assert sidebar.current_config().dataset == expected, value


def test_a_target_the_page_chose_for_the_file_before_is_forgotten_not_an_error():
    # Uploads in quick succession: a rerun can still carry the target column chosen on the
    # previous file's page, one this file does not have.
    at = _uploaded()
    box = at.selectbox(key="upload_target")
    box.options = [*box.options, "passed"]  # as the page drew it for the previous file
    box.set_value("passed").run()  # what that page's browser sends
    _ok(at)
    assert at.selectbox(key="upload_target").value == "label"  # this file's default
    assert _dataset(at).feature_names == ["x", "y", "note"]


def test_preview_flags_the_id_and_excluding_it_changes_the_features():
    at = _uploaded()
    columns = at.dataframe[0].value.set_index("Column")
    assert columns["Likely ID"].to_dict() == {"id": True, "x": False, "y": False,
                                              "note": False, "label": False}
    assert columns["Missing"]["note"] == N_WITHOUT_NOTE
    assert columns["Kind"]["note"] == "categorical"
    # The likely ID is proposed for exclusion, so it is not a feature.
    assert at.multiselect(key="upload_exclude").value == ["id"]
    assert _dataset(at).feature_names == ["x", "y", "note"]
    assert "Excluded column(s), not used as features: 'id'" in _description(at)

    def roles():  # the table's Role column says what the exclusions under it do
        return at.dataframe[0].value.set_index("Column")["Role"].to_dict()

    assert roles() == {"id": "excluded", "x": "feature", "y": "feature", "note": "feature",
                       "label": "target"}
    at.multiselect(key="upload_exclude").set_value([]).run()
    _ok(at)
    assert _dataset(at).feature_names == ["id", "x", "y", "note"]
    assert roles()["id"] == "feature"
    at.multiselect(key="upload_exclude").set_value(["id", "note"]).run()
    _ok(at)
    assert _dataset(at).feature_names == ["x", "y"]
    assert roles()["note"] == "excluded"
    # Without the note no row has a gap.
    assert _dataset(at).n_samples == N_ROWS
    assert at.radio(key="upload_missing").options[0] == "drop rows: no row has a missing value"


def test_drop_or_impute_shows_the_rows_affected_before_and_after():
    at = _uploaded()
    assert at.radio(key="upload_missing").options == [
        f"drop rows: removes {N_WITHOUT_NOTE} of {N_ROWS} rows",
        f"impute: fills {N_WITHOUT_NOTE} cells in 1 column"]
    assert at.radio(key="upload_missing").value == "drop"
    assert _description(at).startswith(f"mine.csv: {N_ROWS - N_WITHOUT_NOTE} rows, 3 features")
    at.radio(key="upload_missing").set_value("impute").run()
    _ok(at)
    assert _description(at).startswith(f"mine.csv: {N_ROWS} rows, 3 features")
    assert f"{N_WITHOUT_NOTE} missing cell(s) imputed in 1 column(s): 'note'" \
        in _description(at)
    # The sidebar follows the new row count.
    assert f"your data ({N_ROWS} rows): mine.csv" in at.selectbox(key="cfg_dataset").options
    assert at.query_params["dataset"] == USER_DATA


@pytest.mark.parametrize("page", [None, PAGE, "pages/frontier.py"])
def test_after_a_reload_the_page_asks_for_the_file_again(page):
    at = _app({"dataset": USER_DATA, "l": "10"})
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception
    assert any("upload the file again" in e.value for e in at.error), [e.value for e in at.error]
    assert at.selectbox(key="cfg_dataset").value == USER_DATA
    assert "your data (no file in this session)" in at.selectbox(key="cfg_dataset").options
    assert not chart_figures(at)


def test_choosing_another_dataset_says_the_file_is_not_in_use():
    at = _uploaded()
    at.selectbox(key="cfg_dataset").set_value("wine").run()
    assert not at.exception
    assert at.query_params["dataset"] == "wine"
    assert any("not in use" in i.value for i in at.info)
    assert not chart_figures(at)
    at.button(key="upload_use_again").click().run()
    _ok(at)
    assert at.query_params["dataset"] == USER_DATA
    assert chart_figures(at)


def test_the_upload_is_kept_for_the_session_across_pages():
    at = _uploaded()
    at.switch_page("pages/explorer.py").run()
    _ok(at)
    assert at.query_params["dataset"] == USER_DATA
    assert headline(at)["Classifiers used"].endswith("/ 10")
    # Streamlit forgets the uploader's file on a page change; the page shows the kept one.
    at.switch_page(PAGE).run()
    _ok(at)
    assert any("uploaded earlier in this session" in i.value for i in at.info)
    assert _description(at).startswith("mine.csv: 120 rows")
    assert at.selectbox(key="cfg_dataset").value == USER_DATA
    assert chart_figures(at)
    # Another dataset in the sidebar: the kept file is offered again, not analysed.
    at.selectbox(key="cfg_dataset").set_value("wine").run()
    assert not at.exception and not chart_figures(at)
    assert any("`mine.csv` is not in use" in i.value for i in at.info)
    at.button(key="upload_use_again").click().run()
    _ok(at)
    assert at.query_params["dataset"] == USER_DATA and chart_figures(at)


# --------------------------------------------------------------------------- before training
#: 3,000 rows of two features: 2,400 training rows. With a measured rate of 6e-5 s per unit
#: m log2(m) d and l = 10, the high end of a full pool is 2.5 x 11 x 6e-5 x 2400 log2(2400)
#: x 2 = 89 s (plus under 0.1 s of passes and predictions): over the minute; a budget of
#: 2,000 rows gives 72 s, still over, and 1,000 rows 33 s: the default.
BIG_ROWS = 3_000
SLOW_RATE = 6e-5


def _big_csv():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(BIG_ROWS, 2))
    lines = ["a,b,label"] + [f"{a:.5f},{b:.5f},{int(a + b > 0)}" for a, b in X]
    return "\n".join(lines).encode()


def _in_page(monkeypatch):
    """Training in the page, not in a worker process: the sidebar and the progress bar
    time an upload's pools with its measured rate too, and the stand-in slow rates put
    them past the off-page threshold (the worker's page is tested in tests/test_jobs.py)."""
    from dashboard import training
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", float("inf"))


def _slow_upload(monkeypatch):
    from dashboard import estimates
    monkeypatch.setattr(estimates, "upload_rate", lambda dataset: SLOW_RATE)
    _in_page(monkeypatch)
    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("big.csv", _big_csv(), "text/csv").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _markdown(at):
    return " ".join(m.value for m in at.markdown)


def test_a_slow_file_says_its_cost_and_trains_on_the_row_budget_by_default(monkeypatch):
    from sdwec import pool
    at = _slow_upload(monkeypatch)
    text = _markdown(at)
    assert "10 trees" in text and "2,400 training rows" in text
    assert "by default each tree learns from a row budget of 1,000 rows" in text
    assert at.radio(key="upload_plan").value == "budget"
    # The default fits the minute, so the Explorer runs on the budgeted pool at once.
    assert headline(at)["Classifiers used"].endswith("/ 10")
    dataset = _dataset(at)
    assert pool.is_cached(pool.PoolKey.for_dataset(dataset, n_trees=10, max_samples=1_000))
    assert not pool.is_cached(pool.PoolKey.for_dataset(dataset, n_trees=10))


def test_full_bootstraps_past_the_minute_wait_for_a_click(monkeypatch):
    from sdwec import pool
    at = _slow_upload(monkeypatch)
    at.radio(key="upload_plan").set_value("full").run()
    assert not at.exception
    assert not headline(at) and not chart_figures(at)
    (button,) = [b for b in at.button if b.key == "upload_train"]
    assert button.label.startswith("Train now (5 pools: roughly ")  # 3,000 rows: 5 splits
    button.click().run()
    _ok(at)
    assert headline(at)["Classifiers used"].endswith("/ 10")
    assert pool.is_cached(pool.PoolKey.for_dataset(_dataset(at), n_trees=10))


def test_a_pool_over_the_memory_budget_is_refused_with_what_to_do(monkeypatch, tmp_path):
    from sdwec import budget, pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))   # no pool of this file on disk yet
    monkeypatch.setattr(budget, "MEMORY_BUDGET_BYTES", 1_000)
    at = _slow_upload(monkeypatch)
    assert any("more than the" in e.value and "Lower the pool size l" in e.value
               for e in at.error), [e.value for e in at.error]
    assert not headline(at) and not chart_figures(at)


def test_a_file_past_the_row_limit_is_read_as_a_sample_only_with_consent(monkeypatch):
    from sdwec import datasets
    monkeypatch.setattr(datasets, "MAX_ROWS", 100)
    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("mine.csv", _csv(), "text/csv").run()
    assert not at.exception and not at.error
    assert any(f"about {N_ROWS + 1:,} lines" in w.value and "at most 100 rows" in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert not at.success and not chart_figures(at)
    assert at.checkbox(key="upload_sample").value is False
    at.checkbox(key="upload_sample").check().run()
    _ok(at)
    assert f"A random sample (seed 0) of 100 of the file's {N_ROWS + 1:,} lines." \
        in _description(at)
    assert _dataset(at).n_samples <= 100
    assert chart_figures(at)


def test_fewer_trees_sets_the_sidebar_pool_size_and_trains_full_bootstraps(monkeypatch):
    """At 1e-5 s per unit, full bootstraps cost 2.5 x 0.54 s a tree at the high end: l = 50
    takes 69 s (over the minute), l = 20 takes 28 s, so "fewer trees" offers l = 20."""
    from dashboard import estimates
    monkeypatch.setattr(estimates, "upload_rate", lambda dataset: 1e-5)
    _in_page(monkeypatch)
    at = _app({"dataset": "wine", "l": "50"})
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("big.csv", _big_csv(), "text/csv").run()
    assert not at.exception
    (fewer,) = [b for b in at.button if b.key == "upload_fewer"]
    assert fewer.label.startswith("Fewer trees: l = 20 on full bootstraps")
    fewer.click().run()
    _ok(at)
    assert at.query_params["l"] == "20"
    assert headline(at)["Classifiers used"].endswith("/ 20")
    from sdwec import pool
    assert pool.is_cached(pool.PoolKey.for_dataset(_dataset(at), n_trees=20))


def test_a_row_budget_already_on_disk_is_used_and_named(monkeypatch, tmp_path):
    """The budget follows a rate measured per session; a revisit uses the pool on disk."""
    from sdwec import datasets, pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))
    data = datasets.from_csv(_big_csv())
    pool.load_pool(pool.PoolKey.for_dataset(data, n_trees=10, max_samples=2_000),
                   dataset=data)
    at = _slow_upload(monkeypatch)
    _ok(at)
    assert "by default each tree learns from a row budget of 2,000 rows" in _markdown(at)
    # Only the first of the 5 splits' pools is on disk: the other 4 are over the minute
    # each, so they wait for a click (they trained unasked while the page looked at the
    # first split alone).
    assert any("1 of them is on disk already, so 4 train now" in c.value
               for c in at.caption), [c.value for c in at.caption]
    assert not headline(at)
    (button,) = [b for b in at.button if b.key == "upload_train"]
    assert button.label.startswith("Train now (4 of 5 pools: roughly ")
    button.click().run()
    _ok(at)
    assert headline(at)["Classifiers used"].endswith("/ 10")
    assert not pool.is_cached(pool.PoolKey.for_dataset(data, n_trees=10, max_samples=1_000))


def test_full_bootstraps_over_the_memory_budget_are_not_offered(monkeypatch, tmp_path):
    from sdwec import budget, pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))
    at = _slow_upload(monkeypatch)
    dataset = _dataset(at)
    n, d = dataset.X.shape
    args = dict(rate=SLOW_RATE, n_classes=len(dataset.classes),
                label_bytes=pool.compact_labels(np.asarray(dataset.classes)).itemsize)
    full = budget.estimate_pool(n, d, 10, **args)
    budgeted = budget.estimate_pool(n, d, 10, 1_000, **args)
    assert budgeted.peak_bytes < full.peak_bytes
    # A limit between the two: the budget fits, full bootstraps do not.
    limit = (budgeted.peak_bytes + full.peak_bytes) // 2
    monkeypatch.setattr(budget, "MEMORY_BUDGET_BYTES", limit)
    at.run()
    assert at.radio(key="upload_plan").options == [at.radio(key="upload_plan").options[0]]
    assert at.radio(key="upload_plan").value == "budget"
    assert any("Full bootstraps are not offered" in c.value for c in at.caption)
    assert not at.error


def test_the_page_and_the_sidebar_give_one_training_time(monkeypatch, tmp_path):
    """The sidebar's note (and the progress bar, from the same function) time an upload's
    pools with the rate measured on it, as this page does: the same range per pool, times
    the splits.  By hand for big.csv at 6e-5 s per unit, l = 10, full bootstraps: a tree
    grows on 2,400 rows x 2 features, 2400 log2(2400) x 2 = 53,898 units = 3.234 s, plus
    0.4 ms of passes and predictions; 10 trees and the probe tree 35.58 s; the range 0.8 to
    2.5 times that, 28.5 to 88.9 s ("28–89 s").  3,000 rows make test splits of 300, so the
    default is 5 splits (1,000 test rows): 142 to 445 s, "2–7 min"."""
    from sdwec import pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))   # no pool of this file on disk yet
    at = _slow_upload(monkeypatch)
    at.radio(key="upload_plan").set_value("full").run()   # waits for a click: nothing trains
    assert not at.exception
    assert at.selectbox(key="cfg_splits").value == 5
    page = _markdown(at) + " ".join(at.radio(key="upload_plan").options)
    assert "take roughly 28–89 s" in page
    assert any("Each of the sidebar's 5 splits has its own pool: roughly 2–7 min for all 5"
               in c.value for c in at.caption), [c.value for c in at.caption]
    (button,) = [b for b in at.button if b.key == "upload_train"]
    assert button.label == "Train now (5 pools: roughly 2–7 min for all)"
    (note,) = [i.value for i in at.sidebar.info if "not trained yet" in i.value]
    assert "5 × 10 trees in all on `big.csv` take roughly 2–7 min (28–89 s a pool)" in note, note
    assert "timed on one tree grown on a sample of this file" in note
    assert "longer when busy" not in note   # measured at this load: no second slowdown


def test_the_progress_bar_gives_the_page_s_training_time(monkeypatch, tmp_path):
    """The default (a row budget of 1,000 rows) trains at once, with a bar whose first text
    gives the range of the 5 pools.  By hand: 1000 log2(1000) x 2 = 19,932 units = 1.196 s a
    tree, 11 x that = 13.16 s, so 10.5 to 32.9 s a pool ("11–33 s", the page's), 52.6 to
    164.5 s for five ("53 s–3 min")."""
    from dashboard import progress
    from sdwec import pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))
    drawn, real = [], progress.Progress._draw

    def draw(self, fraction, text):
        drawn.append(text)
        real(self, fraction, text)

    monkeypatch.setattr(progress.Progress, "_draw", draw)
    at = _slow_upload(monkeypatch)
    _ok(at)
    assert "Row budget: 1,000 rows per tree (roughly 11–33 s" in \
        at.radio(key="upload_plan").options[0]
    training = [t for t in drawn if t.startswith("Training 5 pools of 10 trees on `big.csv`")]
    assert training and training[0].endswith("(roughly 53 s–3 min in all)"), drawn[:3]


# ------------------------------------------------------- after a seed, splits or l change
#: A rate at which big.csv's full pool fits the minute (no row budget: the page's one-line
#: estimate). By hand, l = 10: a tree grows on 2,400 rows x 2 features, 53,898 units =
#: 0.10780 s, plus 0.39 ms of passes and predictions; 10 trees and the probe tree 1.190 s;
#: the range 0.8 to 2.5 times that, 0.95 to 2.97 s ("1–3 s") a pool, 4.8 to 14.9 s
#: ("5–15 s") for five.  One pool is under the sidebar's old 10 s threshold.  Trained in a
#: worker, each pool also pays the worker's start-up and the read-back
#: (estimates.UPLOAD_START_SECONDS, 1 to 4 s): 1.95 to 6.97 s ("2–7 s") a pool, 9.8 to
#: 34.9 s ("10–35 s") for five.
FAST_RATE = 2e-6


#: Reads its input like the real worker, then sleeps: a worker whose pool never lands, so
#: the page stays as it is before the pools are trained.
SLEEPER = (sys.executable, "-c", "import sys, time; sys.stdin.buffer.read(); time.sleep(120)")


@contextlib.contextmanager
def _sleeping(monkeypatch):
    """Training off the page, in workers that never finish: the page as it is while the
    pools train (what it said before they started, and the progress line)."""
    from dashboard import jobs, training
    registry = jobs.JobRegistry(command=SLEEPER, reap_every=None)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(training, "_JOBS", registry)
            patch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
            yield registry
    finally:
        registry.stop_all()


def test_a_seed_or_splits_change_says_how_many_pools_train_and_how_long(monkeypatch,
                                                                         tmp_path):
    """After an upload, a move of the sidebar's Split seed or Splits that
    leaves the first split's pool on disk still trains new pools; the page and the sidebar
    say how many and how long before they start, the line says which
    split, and once they are trained the page no longer says they will be."""
    from dashboard import estimates
    from sdwec import pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(estimates, "upload_rate", lambda dataset: FAST_RATE)
    _in_page(monkeypatch)
    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("big.csv", _big_csv(), "text/csv").run()
    _ok(at)
    assert at.selectbox(key="cfg_splits").value == 5   # seeds 0-4 trained by the upload
    dataset = _dataset(at)

    def key(seed):
        return pool.PoolKey.for_dataset(dataset, n_trees=10, seed=seed)

    assert all(pool.is_cached(key(s)) for s in range(5))

    def said():
        return (" ".join(c.value for c in at.main.caption),
                " ".join(i.value for i in at.sidebar.info if "not trained yet" in i.value),
                " ".join(p.proto.text for p in at.get("progress")))

    with _sleeping(monkeypatch):
        # Seed 1: seeds 1-5, of which 1-4 are on disk; seed 5 trains.
        at.number_input(key="cfg_seed").set_value(1).run()
        assert not at.exception
        page, sidebar, line = said()
        # In a worker: its start-up and the read-back are counted (FAST_RATE's note).
        assert "4 of them are on disk already, so 1 trains now: roughly 2–7 s" in page, page
        assert sidebar.startswith("1 of the 5 pools (one per split) is not trained yet: "
                                  "10 trees on `big.csv` take roughly 2–7 s"), sidebar
        assert "split 5 of 5: " in line, line
        pool.load_pool(key(5), dataset=dataset)   # the pool lands
        # Splits 10: seeds 1-10, of which 1-5 are on disk; seeds 6-10 train.
        at.selectbox(key="cfg_splits").set_value(10).run()
        assert not at.exception
        page, sidebar, line = said()
        assert "5 of them are on disk already, so 5 train now: roughly 10–35 s" in page, page
        assert sidebar.startswith("5 of the 10 pools (one per split) are not trained yet: "
                                  "5 × 10 trees in all on `big.csv` take roughly 10–35 s "
                                  "(2–7 s a pool)"), sidebar
        assert "split 6 of 10: " in line, line
    # Trained in the page's run: once they land, neither the page nor the sidebar says
    # they will train.
    at.run()
    _ok(at)
    assert all(pool.is_cached(key(s)) for s in range(1, 11))
    page, sidebar, line = said()
    assert "train now" not in page and not sidebar and not line, (page, sidebar, line)


def test_a_worker_s_start_up_is_counted_only_when_a_worker_trains(monkeypatch):
    """An upload's estimate adds estimates.UPLOAD_START_SECONDS (measured: the worker's
    start to its first progress record, 1.1-2.4 s, and the read-back, 0.05-0.18 s) when the
    pool trains in a worker, and nothing when it trains in the page (no process starts)."""
    from dashboard import estimates, training
    from sdwec import budget, datasets, pool

    dataset = datasets.from_csv(_big_csv(), name="big.csv")
    monkeypatch.setattr(estimates, "upload_rate", lambda d: FAST_RATE)
    trees = budget.estimate_pool(*dataset.X.shape, 10, rate=FAST_RATE,
                                 n_classes=len(dataset.classes),
                                 label_bytes=pool.compact_labels(
                                     np.asarray(dataset.classes)).itemsize).seconds
    assert trees == pytest.approx((0.952, 2.975), abs=1e-3)   # FAST_RATE's note, by hand
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", float("inf"))
    assert estimates._upload_estimate(dataset, 10).seconds == pytest.approx(trees)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    low, high = estimates._upload_estimate(dataset, 10).seconds
    assert (low, high) == pytest.approx((trees[0] + 1.0, trees[1] + 4.0))
    # The measured start-up lies inside the term it is counted with.
    assert estimates.UPLOAD_START_SECONDS[0] <= 1.1 and 2.4 <= estimates.UPLOAD_START_SECONDS[1]


def test_a_row_budget_is_said_where_its_numbers_are_shown():
    from types import SimpleNamespace

    from dashboard import upload_plans

    budgeted = SimpleNamespace(key=SimpleNamespace(max_samples=1_000))
    note = upload_plans.budget_note(budgeted)
    assert "at most 1,000 rows" in note and "full bootstraps" in note
    assert upload_plans.budget_note(SimpleNamespace(key=SimpleNamespace(max_samples=None))) == ""


def test_a_gzip_compressed_csv_is_read_like_the_plain_file():
    """A .csv.gz went to Streamlit's own extension check and its generic error page; it is
    read as the CSV inside, so the page shows the same data under the file's name."""
    import gzip

    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("mine.csv.gz", gzip.compress(_csv()),
                                               "application/gzip").run()
    _ok(at)
    rows = N_ROWS - N_WITHOUT_NOTE
    assert _description(at).startswith(f"mine.csv.gz: {rows} rows,"), _description(at)
    plain = _uploaded()
    packed, expected = _dataset(at), _dataset(plain)
    assert np.array_equal(packed.X, expected.X) and np.array_equal(packed.y, expected.y)
    assert _description(at).replace("mine.csv.gz", "mine.csv") == _description(plain)
    assert chart_figures(at)


def test_a_damaged_gzip_upload_says_to_upload_the_plain_csv():
    import gzip

    at = _app()
    at.switch_page(PAGE).run()
    packed = gzip.compress(_csv())
    at.file_uploader(key="upload_file").upload("mine.csv.gz", packed[: len(packed) // 2],
                                               "application/gzip").run()
    assert not at.exception
    (error,) = [as_read(e.value) for e in at.error]
    assert "cannot be decompressed" in error and "upload the plain CSV" in error, error
    assert not chart_figures(at)
    # The sidebar does not say that there is no file: there is one, which cannot be used.
    options = at.selectbox(key="cfg_dataset").options
    assert "your data (cannot be used): mine.csv.gz" in options, options
    assert "your data (no file in this session)" not in options


def test_a_refused_file_is_told_once_where_a_page_shows_the_sidebars_dataset():
    at = _app()
    at.switch_page(PAGE).run()
    noise = np.random.default_rng(2).bytes(3000)
    at.file_uploader(key="upload_file").upload("data.csv.gz", noise, "application/gzip").run()
    dataset = at.selectbox(key="cfg_dataset").value
    assert dataset != USER_DATA  # a refused file does not become the sidebar's dataset
    at.switch_page("pages/explorer.py").run()
    _ok(at)
    (told,) = [i.value for i in at.info if "could not be read" in i.value]
    assert "data.csv.gz" in told and f"**{dataset}**" in told
    at.run()
    assert not [i.value for i in at.info if "could not be read" in i.value]  # once


def test_a_refused_file_is_named_on_the_other_pages_with_what_to_fix():
    """Random bytes named .gz: Your data says the .gz is not gzip; the Explorer, where the
    uploader's own state is gone, names the file and the reason, not a reload."""
    at = _app()
    at.switch_page(PAGE).run()
    noise = np.random.default_rng(1).bytes(3000)
    at.file_uploader(key="upload_file").upload("data.csv.gz", noise, "application/gzip").run()
    assert not at.exception
    (error,) = [as_read(e.value) for e in at.error]
    assert "not gzip-compressed" in error, error
    at.selectbox(key="cfg_dataset").set_value(USER_DATA).run()
    at.switch_page("pages/explorer.py").run()
    assert not at.exception
    (error,) = [as_read(e.value) for e in at.error]
    assert "data.csv.gz" in error and "could not be read" in error and "not gzip" in error
    assert "reload" not in error, error
    assert "your data (cannot be used): data.csv.gz" in at.selectbox(key="cfg_dataset").options
    assert not chart_figures(at)
    # Back on Your data (its uploader emptied by the page change): the refusal, not a reload.
    at.switch_page(PAGE).run()
    (error,) = [as_read(e.value) for e in at.error]
    assert "data.csv.gz" in error and "could not be read" in error and "reload" not in error
    # A file that reads replaces the refusal everywhere.
    at.file_uploader(key="upload_file").upload("mine.csv", _csv(), "text/csv").run()
    _ok(at)
    options = at.selectbox(key="cfg_dataset").options
    assert [o for o in options if o.endswith(" rows): mine.csv")], options
    assert not [o for o in options if "cannot be used" in o], options
    at.switch_page("pages/explorer.py").run()
    _ok(at)


# ------------------------------------------------------------ the replica's memory budget


def _other_csv():
    """Another file: the same columns, features moved by one where they start "0."."""
    return _csv().replace(b",0.", b",1.")


def _budget(monkeypatch, cap):
    """The replica's budget with ``cap`` bytes and nothing held or reserved besides what
    the page asks for (a fake RSS of 0)."""
    from dashboard import memory_budget
    monkeypatch.setattr(memory_budget, "REPLICA",
                        memory_budget.MemoryBudget(cap=cap, rss=lambda: 0, trim=lambda: None))


REFUSAL = ("This server is short of memory right now", "Your file is still in the uploader: "
                                                        "try again in a minute")


def _refused(at):
    shown = [as_read(w.value) for w in at.warning]
    return [text for text in shown if all(part in text for part in REFUSAL)]


def test_reading_a_file_past_the_replicas_budget_is_refused_with_a_sentence_then_admitted(
        monkeypatch):
    from dashboard import memory_budget
    _budget(monkeypatch, 1_000)  # less than reading the 12 KB file takes
    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("mine.csv", _csv(), "text/csv").run()
    _ok(at)  # no exception, no error box: a warning that says what to do
    (refusal,) = _refused(at)
    assert "reading this file" in refusal
    assert not at.success and "user_dataset" not in at.session_state
    # Memory is back: the same upload is read at the next run, nothing else lost.
    _budget(monkeypatch, memory_budget.DEFAULT_REPLICA_MEMORY_BYTES)
    at.run()
    _ok(at)
    assert not _refused(at)
    # The id excluded (x, y, note); rows without a note dropped (the default).
    assert _dataset(at).X.shape == (N_ROWS - N_WITHOUT_NOTE, 3)
    assert chart_figures(at)


def test_bringing_the_pools_past_the_budget_is_refused_and_the_file_stays_read(monkeypatch,
                                                                              tmp_path):
    from dashboard import memory_budget
    from sdwec import pool
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))  # to train: its estimate is the need
    # Reading fits (6 bytes per byte of a 12 KB file); a pool's estimate alone is > 32 MiB.
    _budget(monkeypatch, 1_000_000)
    _in_page(monkeypatch)
    at = _app()
    at.switch_page(PAGE).run()
    at.file_uploader(key="upload_file").upload("mine.csv", _csv(), "text/csv").run()
    _ok(at)
    (refusal,) = _refused(at)
    assert "bringing this file's pools into memory" in refusal
    assert _dataset(at).X.shape[0] == N_ROWS - N_WITHOUT_NOTE and not chart_figures(at)
    assert memory_budget.REPLICA.reserved() == 0
    _budget(monkeypatch, memory_budget.DEFAULT_REPLICA_MEMORY_BYTES)
    at.run()
    _ok(at)
    assert chart_figures(at) and not _refused(at)


def _upload_sources():
    from dashboard import pool_memory
    return {key.source for key in pool_memory.POOL_MEMORY.held()
            if key.source.startswith("sha256:")}


def test_a_replaced_upload_lets_go_of_its_pools_and_the_sessions_end_of_the_rest(monkeypatch):
    from dashboard import upload_plans
    from sdwec import pool
    _in_page(monkeypatch)
    at = _uploaded()
    first = pool.PoolKey.for_dataset(_dataset(at)).source
    assert first in _upload_sources() and chart_figures(at)
    at.file_uploader(key="upload_file").upload("other.csv", _other_csv(), "text/csv").run()
    _ok(at)
    second = pool.PoolKey.for_dataset(_dataset(at)).source
    assert second != first
    assert first not in _upload_sources() and second in _upload_sources()
    (session,) = [s for s, held in upload_plans.SESSIONS._held.items()
                  if held.source == second]
    upload_plans.SESSIONS.end(session)   # what the upload policy says when it has closed
    assert second not in _upload_sources()
