"""End to end in a real browser: `streamlit run app.py` driven by Playwright and Chromium.

One server on a free localhost port (with its own empty pool cache) serves every test; each
page is loaded, a slider is moved, and the test waits until the page has redrawn with
different numbers, checks the Plotly charts are there and that no traceback or exception box
appears, and takes a screenshot.  Screenshots are written only when ``SDWEC_SCREENSHOTS``
names a folder (``bash scripts/screenshots.sh`` refreshes ``docs/screenshots/`` for the README),
so a test run leaves the checkout clean.  Uses Debian's Chromium (``/usr/bin/chromium``);
nothing is downloaded.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from playwright import sync_api

from harness.common import CHART_CONTAINERS, CHARTS

ROOT = Path(__file__).resolve().parent.parent
#: Folder the screenshots go to (opt-in), or None to only check that the page renders one.
SHOTS = Path(os.environ["SDWEC_SCREENSHOTS"]).resolve() if os.environ.get("SDWEC_SCREENSHOTS") \
    else None
CHROMIUM = shutil.which("chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
LOAD_MS = 120_000  # first load trains a pool
QUERY = "?dataset=sonar&l=50"
#: The headline's four numbers (dashboard/live.js draws them).
HEADLINE = ".sdwec-headline .sdwec-metric"

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True, scope="module")
def _needs_chromium():
    # A missing browser is a failure, not a skip: scripts/test.sh (README's test command)
    # installs Debian's chromium, so its absence means the setup is broken.
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium` "
                    "(scripts/test.sh does this)")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    env = dict(os.environ, SDWEC_CACHE_DIR=str(tmp_path_factory.mktemp("pools")))
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard.launch", "run", "app.py", "--server.headless",
             "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false",
             # Others edit the tree meanwhile: a watched file's change would put a "Rerun?"
             # prompt in every open page's status area, which never goes idle then.
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  accept_downloads=True)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="module")
def loaded(browser, server):
    """``loaded(path, ready, width, height)``: a tab that loaded ``{server}/{path}`` in a
    window of that size and shows ``ready``.  Each (path, size) is loaded once per module,
    so the tests that only read a freshly loaded page share one load; ``last=True`` hands
    the tab to a test that changes the page (the next caller loads it again)."""
    tabs, contexts = {}, []

    def load(path, ready, width, height, last=False):
        key = (path, width, height)
        page = tabs.pop(key, None) if last else tabs.get(key)
        if page is None:
            context = browser.new_context(viewport={"width": width, "height": height})
            contexts.append(context)
            page = context.new_page()
            _open(page, f"{server}/{path}", ready)
            if not last:
                tabs[key] = page
        else:
            _shows(page, ready)
            _idle(page)
        return page

    yield load
    for context in contexts:
        context.close()


#: Every chart container holds a drawn chart that is not being redrawn, and every in-place
#: chart (dashboard/charts.py) has drawn the newest figure it was handed: its queue of draws
#: has settled.  Two animation frames first, for React's effects to hand the charts their
#: figures.
_DRAWN_JS = f"""async () => {{
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  await frame();
  await frame();
  const inPlace = [...document.querySelectorAll('.sdwec-chart')];
  await Promise.all(inPlace.map(gd => gd.__sdwecQueue));
  const drawn = [...document.querySelectorAll('{CHARTS}')];
  return drawn.length === document.querySelectorAll('{CHART_CONTAINERS}').length
    && drawn.every(gd => gd._fullLayout && !gd._fullLayout._replotting)
    && inPlace.every(gd => gd.__sdwecDrawn === gd.__sdwecLatest);
}}"""


def _idle(page, after_input=False):
    """Wait until the script run is over (the 'running' indicator is gone) and Plotly has
    finished drawing: up to 300 ms, less once the page shows every chart drawn.

    ``after_input``: a key press or a click just asked for a rerun, whose indicator may not
    be shown yet; the full 300 ms then also give the rerun time to start.
    """
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=LOAD_MS)
    if after_input:
        page.wait_for_timeout(300)
        return
    try:
        page.wait_for_function(_DRAWN_JS, timeout=300)
    except sync_api.TimeoutError:
        pass  # 300 ms is the most this waits for the drawing


def _shows(page, ready):
    try:
        page.wait_for_selector(ready, timeout=LOAD_MS)
    except sync_api.TimeoutError:
        raise AssertionError(f"{page.url} never showed {ready}; the page says:\n"
                             f"{page.locator('body').inner_text()[-2000:]}") from None


def _open(page, url, ready):
    page.goto(url)
    _shows(page, ready)
    _idle(page)


def _move(page, label, key="ArrowLeft", times=1, where="stSidebar"):
    """Move the first slider labelled exactly ``label`` in the sidebar or main area."""
    area = page.locator(f'[data-testid="{where}"]')
    thumb = area.get_by_role("group", name=label, exact=True).first.locator(
        'input[type="range"]').first
    thumb.focus()
    for _ in range(times):
        thumb.press(key)


def _metric(page, label):
    box = page.locator(f"{HEADLINE}").filter(has_text=label).first
    return box.locator(".sdwec-value").inner_text()


def _slide(page, label, key, url_has, limit=12):
    """Press ``key`` on a sidebar slider, one step per rerun, until the URL has ``url_has``.

    One key at a time: a key pressed while the app is rerunning can be dropped.
    """
    for _ in range(limit):
        if url_has in page.url:
            break
        _move(page, label, key)
        page.wait_for_timeout(200)
        _idle(page, after_input=True)
    page.wait_for_url(re.compile(re.escape(url_has)), timeout=LOAD_MS)
    _idle(page, after_input=True)


def _settle(page, pattern):
    """Wait until the URL (which follows the widgets) matches ``pattern`` and the run ends."""
    page.wait_for_url(re.compile(pattern), timeout=LOAD_MS, wait_until="commit")
    _idle(page, after_input=True)


def _wait_change(page, read, before):
    deadline = time.monotonic() + LOAD_MS / 1000
    while time.monotonic() < deadline:
        now = read()
        if now is not None and now != before:
            _idle(page)
            return read()
        page.wait_for_timeout(100)
    raise AssertionError(f"the page did not change from {before!r}")


def _clean(page, n_charts):
    """No traceback or error box, and ``n_charts`` drawn Plotly charts."""
    page.wait_for_function(
        f"() => document.querySelectorAll('{CHARTS}').length >= {n_charts}", timeout=LOAD_MS)
    body = page.locator("body").inner_text()
    assert "Traceback" not in body
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    charts = page.locator(CHARTS)
    assert charts.count() == n_charts
    # Every chart has drawn at least one trace.
    for i in range(n_charts):
        assert charts.nth(i).evaluate("el => el.data.length") > 0


def _shot(page, name, full_page=True):
    if SHOTS is None:
        assert page.screenshot(full_page=full_page).startswith(b"\x89PNG")
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


def _trace_y(page, index=0):
    """The chart's y data as text (Plotly may hold it base64-packed; any change shows)."""
    return page.locator(CHARTS).nth(index).evaluate(
        "el => el.data ? JSON.stringify(el.data.map(t => t.y)) : null")


def test_explorer(page, server):
    if SHOTS is not None:
        # The README's picture is what a first visit shows: every default (200 trees, the
        # dataset's default number of splits), not the small pool the checks below use.
        _open(page, f"{server}/?dataset=sonar", HEADLINE)
        _clean(page, 4)
        assert "/ 200" in _metric(page, "Classifiers used")
        _shot(page, "explorer")
    _open(page, f"{server}/{QUERY}", HEADLINE)
    _clean(page, 4)
    assert "l=50" in page.url and "lam=10" in page.url  # the configuration is in the URL
    before = _metric(page, "Classifiers used")
    # The Explorer's charts are redrawn in place: the same chart node gets the new figure.
    weights = page.locator(CHARTS).nth(2)
    weights.evaluate("el => { el.__beforeMove = true; }")
    # The trees' accuracies under the weights do not depend on λ: not drawn again.
    strip = page.locator(CHARTS).nth(3)
    strip.evaluate("el => { el.__draws = 0; el.on('plotly_afterplot', () => el.__draws++); }")
    # Tree i at the same pixel x in both charts: the same plot area left and right.
    area = ("el => [el.getBoundingClientRect().left + el._fullLayout._size.l, "
            "el._fullLayout._size.w]")
    assert weights.evaluate(area) == strip.evaluate(area)
    bars_before = _trace_y(page, 2)
    _slide(page, "λ (data fidelity, log scale)", "ArrowRight", "lam=100&")  # λ 10 -> 100
    after = _metric(page, "Classifiers used")
    assert after != before and after.endswith("/ 50")
    _clean(page, 4)
    page.wait_for_function(f"() => document.querySelectorAll('{CHARTS}')[2].__beforeMove === "
                           f"true && JSON.stringify(document.querySelectorAll('{CHARTS}')[2]"
                           f".data.map(t => t.y)) !== {json.dumps(bars_before)}",
                           timeout=LOAD_MS)
    assert strip.evaluate("el => el.__draws") == 0
    _shot(page, "explorer_lambda_moved")
    # Prediction time is measured on request and drawn with its spread.
    page.get_by_role("button", name="Measure prediction time").click()
    page.wait_for_selector("text=Measured here", timeout=LOAD_MS)
    _idle(page)
    _clean(page, 5)
    # The pruned model downloads, loads and predicts.
    with page.expect_download() as download:
        page.get_by_role("button", name="Pruned model (joblib)").click()
    target = Path(download.value.path())
    import joblib

    model = joblib.load(target)
    from sdwec import datasets

    data = datasets.load("sonar", "binary")
    assert set(np.unique(model.predict(data.X[:20]))) <= {-1, 1}


def test_frontier(page, server):
    if SHOTS is not None:
        # The README's picture at every default (10 splits with their bands, 200 trees): one
        # split of 21 test rows would show noise as a finding.
        _open(page, f"{server}/frontier?dataset=sonar", CHARTS)
        _clean(page, 1)
        _shot(page, "frontier")
    # One split (sonar opens on 10): the click must land on one λ's own point, and the
    # Explorer's trees used then equal the point's exactly.
    _open(page, f"{server}/frontier{QUERY}&r=1", CHARTS)
    _clean(page, 1)
    before = _trace_y(page)
    _slide(page, "β (non-negativity penalty)", "ArrowRight", "beta=18&")  # moves the sweep
    _wait_change(page, lambda: _trace_y(page), before)
    _clean(page, 1)
    _shot(page, "frontier_one_split")
    # Click an SDWEC point: it opens the Explorer at once; find its numbers there.
    chart = page.locator(CHARTS).first
    # The SDWEC point farthest from every other trace's points, so the click is its own.
    point = chart.evaluate("""el => {
        const fl = el._fullLayout;
        const px = (t, k) => [fl.xaxis.c2p(t.x[k]) + fl.xaxis._offset,
                              fl.yaxis.c2p(t.y[k]) + fl.yaxis._offset];
        const i = el._fullData.findIndex(t => t.name === 'SDWEC (λ sweep)');
        const t = el._fullData[i];
        const others = el._fullData.filter((o, j) => j !== i && o.x)
            .flatMap(o => [...o.x.keys()].map(k => px(o, k)));
        let best = null;
        for (let k = 0; k < t.x.length; k++) {
            const [x, y] = px(t, k);
            const gap = Math.min(...others.map(([a, b]) => Math.hypot(a - x, b - y)));
            if (best === null || gap > best.gap)
                best = {gap, x, y, lam: t.customdata[k][0], used: t.customdata[k][4]};
        }
        // SDWEC points drawn on the same pixel (same trees, same accuracy) are one click.
        best.lams = [...t.x.keys()].filter(k => {
            const [x, y] = px(t, k);
            return Math.hypot(x - best.x, y - best.y) < 1; }).map(k => t.customdata[k][0]);
        return best; }""")
    box = chart.bounding_box()
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])
    _settle(page, r"/(explorer)?\?.*beta=18&")
    assert float(re.search(r"lam=([^&]+)", page.url).group(1)) in point["lams"]
    page.wait_for_selector(HEADLINE, timeout=LOAD_MS)
    assert _metric(page, "Classifiers used") == f"{int(point['used'])} / 50"


#: A chart's drawn y range beside the lowest and highest value it shows: every visible trace's
#: points, its error bars (y ± error_y) and its bands (fill traces), as Plotly drew them.
_Y_EXTENT_JS = """el => {
  let low = Infinity, high = -Infinity, bands = 0, bars = 0;
  for (const t of el._fullData) {
    if (t.visible !== true || !t.y) continue;
    const bar = t.error_y && t.error_y.visible ? t.error_y : null;
    bands += t.fill === 'toself';
    bars += bar !== null;
    for (let i = 0; i < t.y.length; i++) {
      const y = Number(t.y[i]);
      const up = bar ? Number(bar.array[i]) : 0;
      const down = bar ? Number(bar.symmetric ? bar.array[i] : bar.arrayminus[i]) : 0;
      low = Math.min(low, y - down);
      high = Math.max(high, y + up);
    }
  }
  return {range: el._fullLayout.yaxis.range, low, high, bands, bars};
}"""


def _y_holds_everything(page):
    """The Frontier's drawn y range holds every visible point, band and error bar."""
    drawn = page.locator(CHARTS).first.evaluate(_Y_EXTENT_JS)
    low, high = drawn["range"]
    assert 0.0 <= low <= drawn["low"] and drawn["high"] <= high <= 1.0, drawn
    return drawn


def test_frontier_axis_holds_its_bands_after_in_place_updates(page, server):
    # A projector-sized window, where bands and bagging's error bar could be cut off at the top.
    page.set_viewport_size({"width": 1280, "height": 720})
    _open(page, f"{server}/frontier{QUERY}&r=3", CHARTS)
    _clean(page, 1)
    first = _y_holds_everything(page)
    assert first["bands"] > 0 and first["bars"] > 0  # three splits: a spread to draw
    # Redrawn by a widget, without reloading the page: test -> validation accuracy.
    before = _trace_y(page)
    page.locator("button[data-value=validation]").click()  # switched in the page
    _wait_change(page, lambda: _trace_y(page), before)
    _clean(page, 1)
    _y_holds_everything(page)
    # A legend click shows SDWEC-select (hidden when the page opens) and its interval, drawn
    # as dashed lines (one filled band at a time: SDWEC's).
    intervals = ("() => document.querySelector('" + CHARTS + "')._fullData.filter(t => "
                 "t.visible === true && (t.fill === 'toself' || t.line && "
                 "t.line.dash === 'dash')).length")
    hidden = page.evaluate(intervals)
    page.locator(".legend .traces").filter(has_text="SDWEC-select").first.locator(
        ".legendtoggle").click()
    page.wait_for_function(f"{intervals} > {hidden}", timeout=10_000)
    _y_holds_everything(page)
    assert page.locator(CHARTS).first.evaluate(
        "el => el._fullData.filter(t => t.visible === true && t.fill === 'toself')"
        ".length") == 1


def _visibility(page, name):
    return page.locator(CHARTS).first.evaluate(
        f"el => el._fullData.filter(t => t.name === {name!r}).map(t => t.visible)")


def test_frontier_keeps_the_legend_choices_across_reruns(page, server):
    # A teacher hides random subsets and shows WMV in the legend, then changes what the
    # chart shows: the new figure arrives from the server, and both choices stay.
    page.set_viewport_size({"width": 1280, "height": 720})
    _open(page, f"{server}/frontier{QUERY}&r=3", CHARTS)
    _clean(page, 1)
    assert _visibility(page, "random subsets")[0] is True
    assert _visibility(page, "WMV")[0] == "legendonly"
    for name, now in (("random subsets", "legendonly"), ("WMV", True)):
        # Each click once the legend has settled from the last (hiding a curve refits the
        # axis and redraws the legend under the pointer).
        _clean(page, 1)
        page.locator(".legend .traces").filter(has_text=name).first.locator(
            ".legendtoggle").click()
        page.wait_for_function(
            f"() => document.querySelector('{CHARTS}')._fullData.filter(t => t.name === "
            f"{name!r}).every(t => t.visible === {'true' if now is True else repr(now)})",
            timeout=10_000)
    before = _trace_y(page)
    page.locator("button[data-value=validation]").click()  # switched in the page
    _wait_change(page, lambda: _trace_y(page), before)
    _clean(page, 1)
    assert _visibility(page, "random subsets")[0] == "legendonly"
    assert _visibility(page, "WMV")[0] is True


# The Frontier page at a projector's 1280 × 720: one screen.  On this module's server, where
# the tests above have computed its three splits' sweep.

_PROJECTOR = 1280, 720

#: Where the chart, its plot area and its legend are drawn, in window pixels.
_BOXES = """el => {
  const r = el.getBoundingClientRect(), s = el._fullLayout._size;
  const legend = el.querySelector('.legend .bg').getBoundingClientRect();
  const title = document.querySelector('h1').getBoundingClientRect();
  return {chart: [r.left, r.top, r.right, r.bottom],
          plot: [r.left + s.l, r.top + s.t, r.left + s.l + s.w, r.top + s.t + s.h],
          legend: [legend.left, legend.top, legend.right, legend.bottom],
          title: [title.top, title.bottom]};
}"""


def test_the_chart_and_its_legend_fit_one_projector_screen(loaded):
    width, height = _PROJECTOR
    page = loaded(f"frontier{QUERY}&r=3", CHARTS, width, height)
    _clean(page, 1)
    boxes = page.locator(CHARTS).first.evaluate(_BOXES)
    left, top, right, bottom = boxes["legend"]
    plot = boxes["plot"]
    # Without scrolling: the plot and every legend row inside the window.
    assert 0 <= plot[1] and plot[3] <= height, boxes
    assert 0 <= left and right <= width and 0 <= top and bottom <= height, boxes
    # Right under the page's title: one row of controls between them, nothing else.
    assert boxes["chart"][1] - boxes["title"][1] < 140, boxes


def test_a_second_sweep_and_back_draws_the_chart(loaded):
    # A second swept parameter adds a colour bar, whose CSS selector Plotly builds from the
    # traces' uids; then back to none. Each time the chart is drawn, never an error in its
    # place.  (The test above only reads this load; this one changes it, so it is the last
    # to use it.)
    page = loaded(f"frontier{QUERY}&r=3", CHARTS, *_PROJECTOR, last=True)
    _clean(page, 1)
    for choice in ("β", "none"):
        before = page.locator(CHARTS).first.evaluate("el => JSON.stringify(el.data.length)")
        box = page.get_by_test_id("stSelectbox").filter(has_text="Second sweep").first
        box.locator("input").click()
        page.get_by_role("option", name=choice).first.click()
        page.wait_for_function(
            "([sel, n]) => { const el = document.querySelector(sel);"
            " return el && el.data && JSON.stringify(el.data.length) !== n; }",
            arg=[CHARTS, before], timeout=LOAD_MS)
        _clean(page, 1)
        assert "could not be drawn" not in page.locator("body").inner_text()
        assert page.locator(CHARTS).first.evaluate("el => el._fullData.length") > 5


def test_how_it_works(page, server):
    _open(page, f"{server}/how_it_works{QUERY}", CHARTS)
    _clean(page, 4)
    title = lambda: page.locator(".gtitle").first.text_content()  # noqa: E731
    before = title()
    _move(page, "ε", "ArrowLeft", 2, where="stMain")  # the first ε belongs to the sign plot
    _wait_change(page, title, before)
    _clean(page, 4)
    _shot(page, "how_it_works")


def test_paper(page, server):
    # Ready when the stored Table 3's chart is drawn (counted before it was, the page's
    # charts could be counted as 0 and then found 1).
    _open(page, f"{server}/paper{QUERY}", CHARTS)
    _idle(page)
    _clean(page, page.locator('[data-testid="stPlotlyChart"]').count())
    charts_before = page.locator('[data-testid="stPlotlyChart"]').count()
    # The live-run expander starts collapsed once results/reproduction holds a stored run.
    live = page.locator('[data-testid="stExpander"]').filter(has_text="Run a subset live")
    if not live.get_by_role("group", name="Trees per pool", exact=True).first.is_visible():
        live.locator("summary").first.click()
    _move(page, "Trees per pool", "ArrowLeft", 1, where="stMain")
    page.get_by_role("button", name="Measure").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length > "
        f"{charts_before}", timeout=LOAD_MS)
    _idle(page)
    _clean(page, charts_before + 1)
    page.locator('[data-testid="stPlotlyChart"]').last.scroll_into_view_if_needed()
    _shot(page, "paper")


def test_your_data(page, server, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    rows = [",".join(f"{v:.4f}" for v in x) + ("," + ("yes" if x[0] + x[1] > 0 else "no"))
            for x in X]
    csv = tmp_path / "mine.csv"
    csv.write_text("a,b,c,d,label\n" + "\n".join(rows))
    _open(page, f"{server}/your_data{QUERY}", '[data-testid="stFileUploader"]')
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv))
    page.wait_for_selector(HEADLINE, timeout=LOAD_MS)
    _idle(page)
    _clean(page, 4)
    before = _metric(page, "Classifiers used")
    _slide(page, "λ (data fidelity, log scale)", "ArrowLeft", "lam=0.1&")  # λ 10 -> 0.1
    after = _metric(page, "Classifiers used")
    assert after != before and after.endswith("/ 50")
    _clean(page, 4)
    _shot(page, "your_data")
    # Another file, with other columns: once the page describes it, the target box shows
    # this file's column, not the previous file's (the run goes on to train its pools).
    # Likewise the exclusions box shows this file's likely ID, which the page excludes.
    other = tmp_path / "other.csv"
    other.write_text("id,p,q,r,s,kind\n" + "\n".join(f"{i},{row}" for i, row in
                                                      enumerate(rows)))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(other))
    page.locator('[data-testid="stAlertContentSuccess"]').filter(
        has_text="other.csv:").wait_for(timeout=LOAD_MS)
    page.wait_for_function("() => document.querySelector('.st-key-upload_target input')"
                           ".value === 'kind'", timeout=5_000)
    page.wait_for_function("() => document.querySelector('.st-key-upload_exclude').innerText"
                           ".split('\\n').map(s => s.trim()).includes('id')", timeout=5_000)
    # A bad file shows the loader's message, not a traceback.
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,2,x\n3,4\n")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(bad))
    page.wait_for_selector('[data-testid="stAlertContentError"]', timeout=LOAD_MS)
    assert "Traceback" not in page.locator("body").inner_text()


def test_broken_link_is_repaired(page, server):
    _open(page, f"{server}/?dataset=sonar&l=50&lam=oops", HEADLINE)
    assert page.locator('[data-testid="stAlertContentWarning"]').filter(
        has_text="lam=oops").count() == 1
    assert "lam=10" in page.url


def test_a_hostile_link_is_shown_as_text(page, server):
    # A backtick to leave the value's code box, then bold text, a "Log in again" link and an
    # image the browser would fetch, were the value read as Markdown.
    value = ("x` **bold** [Log in again](https://evil.example) "
             "![x](https://evil.example/t.png) <b>b</b> $y$ `z")
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    _open(page, f"{server}/?dataset={urllib.parse.quote(value)}&l=50",
          HEADLINE)
    (warning,) = page.locator('[data-testid="stAlertContentWarning"]').filter(
        has_text="could not be used").all()
    assert value in warning.inner_text()
    drawn = warning.evaluate("e => [...e.querySelectorAll('*')].map(n => n.tagName)")
    assert not {"A", "IMG", "STRONG", "EM", "B", "SPAN"} & set(drawn), drawn
    assert not [url for url in asked if urllib.parse.urlsplit(url).hostname == "evil.example"]


PAGES = {"explorer": ("", HEADLINE),
         "frontier": ("frontier", CHARTS),
         "paper": ("paper", "h1"),
         "how_it_works": ("how_it_works", CHARTS),
         "your_data": ("your_data", '[data-testid="stFileUploader"]')}


SIZES = [(1280, 720), (1920, 1080)]  # a classroom projector, a desktop


def _check_page(name, page, width, height):
    assert "Traceback" not in page.locator("body").inner_text()
    if name == "explorer":
        # Without scrolling: the headline numbers, the first chart's top and λ.
        for box in page.locator(HEADLINE).all():
            assert box.bounding_box()["y"] + box.bounding_box()["height"] <= height
        chart = page.locator(CHARTS).first.bounding_box()
        assert chart["y"] < height - 150, chart
        lam = page.locator('[data-testid="stSidebar"]').get_by_role(
            "group", name="λ (data fidelity, log scale)", exact=True).first
        box = lam.bounding_box()
        assert box["y"] + box["height"] <= height, box
    if name == "how_it_works":
        # Every formula is whole: KaTeX's box fits its container.
        overflow = page.evaluate("""() => [...document.querySelectorAll('.katex-display')]
            .map(el => el.scrollWidth - el.clientWidth).filter(d => d > 1)""")
        assert overflow == [], overflow
    _shot(page, f"{name}-{width}x{height}", full_page=False)


def test_every_page_at_projector_and_desktop_sizes(browser, server, loaded):
    # The Explorer is loaded at each size: its checks are of what a page opened at that size
    # shows first.  Every other page is loaded once and its window resized: their checks
    # (no traceback, formulas that fit) are of the layout, which a resize lays out anew.
    path, ready = PAGES["explorer"]
    for width, height in SIZES:
        _check_page("explorer", loaded(f"{path}{QUERY}", ready, width, height), width, height)
    width, height = SIZES[0]
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    try:
        for name, (path, ready) in PAGES.items():
            if name == "explorer":
                continue
            _open(tab, f"{server}/{path}{QUERY}", ready)
            for width, height in SIZES:
                tab.set_viewport_size({"width": width, "height": height})
                _idle(tab)
                # Plotly redraws a chart for the new width after a short debounce: wait for
                # it, so that the screenshot shows the page as it settles.
                tab.wait_for_function(f"""() => [...document.querySelectorAll('{CHARTS}')]
                    .every(gd => !gd._fullLayout
                                 || Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1)""",
                                      timeout=10_000)
                _check_page(name, tab, width, height)
    finally:
        context.close()


def test_headline_metrics_are_whole_at_1280(loaded):
    # One split: the comparison is in rows ("+1 of 21 test rows (+4.8 points)"), longer
    # than a quarter of the page's width at 1280 px; it wraps instead of ending in "…", and
    # "vs bagging" after it is drawn, not squeezed to nothing.
    page = loaded(f"{QUERY}&r=1", ".sdwec-delta", 1280, 720)
    clipped = page.evaluate("""() => [...document.querySelectorAll('.sdwec-metric *')]
        .filter(el => el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0
                      || el.children.length === 0 && el.textContent.trim()
                         && el.getBoundingClientRect().width < 1)
        .map(el => el.textContent)""")
    assert clipped == []
    delta = page.locator(".sdwec-delta").first
    assert "test rows" in delta.inner_text(), delta.inner_text()
    # On one line at 1280 px (it wrapped onto two).
    box = delta.bounding_box()
    line = delta.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert box["height"] < 1.8 * line, (box, line)


@pytest.mark.parametrize("splits", ["", "&r=1"])
def test_explorer_headline_and_first_chart_fit_one_projector_screen(loaded, splits):
    # At 1280×720, before any scrolling: the four headline numbers and the whole accuracy
    # chart (its title to its axis labels), over the default splits and over one.
    page = loaded(f"{QUERY}{splits}", CHARTS, 1280, 720)
    _idle(page)
    boxes = page.evaluate(f"""() => ({{
        metrics: [...document.querySelectorAll('{HEADLINE}')]
            .map(e => e.getBoundingClientRect().bottom),
        chart: (() => {{ const r = document.querySelector('{CHARTS}')
                                   .getBoundingClientRect();
                         return [r.top, r.bottom]; }})(),
        title: document.querySelector('{CHARTS}').querySelector('.gtitle').textContent,
        scrolled: window.scrollY }})""")
    assert boxes["scrolled"] == 0
    assert len(boxes["metrics"]) == 4 and max(boxes["metrics"]) <= 720
    top, bottom = boxes["chart"]
    assert boxes["title"].startswith("Accuracy"), boxes["title"]
    assert 0 <= top and bottom <= 720, boxes


#: The text drawn on a chart as its heading: the SVG's title and text traces (what is on
#: screen, not the figure's state, since a frame may change one without the other).
_HEADING_JS = ("el => [...el.querySelectorAll('.gtitle, .scatterlayer text')]"
               ".map(t => t.textContent).join(' | ')")


def _scrub_without_the_server(page, server, toggle, first, after):
    """Turn on the chart behind ``toggle``, click its Plotly slider rail, and check that the
    heading drawn on the chart (its title, or a text trace) leaves ``first`` for one
    containing ``after``, with no message sent to the server."""
    sent = []  # websocket frames from the browser to the server: a rerun would send one
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    _open(page, f"{server}/{QUERY}", HEADLINE)
    page.get_by_text(toggle).click()
    page.wait_for_function(f"() => [...document.querySelectorAll('{CHARTS}')]"
                           ".some(el => el.querySelector('.slider-container'))",
                           timeout=LOAD_MS)
    _idle(page)
    chart = page.locator(CHARTS).filter(has=page.locator(".slider-container")).first
    assert first in chart.evaluate(_HEADING_JS)
    before = len(sent)
    chart.locator(".slider-rail-rect").first.scroll_into_view_if_needed()
    rail = chart.locator(".slider-rail-rect").first.bounding_box()
    for share in (0.15, 0.85):
        page.mouse.click(rail["x"] + rail["width"] * share, rail["y"] + rail["height"] / 2)
        page.wait_for_timeout(300)
    heading = chart.evaluate(_HEADING_JS)
    assert first not in heading and after in heading, heading
    page.wait_for_timeout(500)
    assert len(sent) == before  # the frames are in the page: no rerun, no round trip


def test_weights_across_iterations_play_in_the_browser(page, server):
    _scrub_without_the_server(page, server, "Show the weights across iterations",
                              "Iteration 1:", "trees above the threshold")


def _run_messages(page):
    """Collect the ForwardMsgs the page receives from now on: ``(kind, detail)`` pairs, where
    a finished run gives ``("script_finished", status)`` and a new element its type and the
    label it carries, if any."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    seen = []

    def frame(payload):
        if isinstance(payload, str):
            return
        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            seen.append((kind, msg.script_finished))
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            inner = getattr(element, element.WhichOneof("type"))
            seen.append((element.WhichOneof("type"), getattr(inner, "label", "")
                         or getattr(inner, "body", "")))

    page.on("websocket", lambda ws: ws.on("framereceived", frame))
    return seen


_WEIGHTS = ".st-key-explorer_weights .sdwec-chart"


def _weights_y(page):
    return page.locator(_WEIGHTS).evaluate("el => el.layout.yaxis.range.map(Number)")


def _zoom_in(page):
    """Drag a zoom box over the middle of the weights chart; return the zoomed y range."""
    before = _weights_y(page)
    area = page.locator(f"{_WEIGHTS} .nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    x, y, w, h = box["x"], box["y"], box["width"], box["height"]
    page.mouse.move(x + 0.3 * w, y + 0.4 * h)
    page.mouse.down()
    page.mouse.move(x + 0.6 * w, y + 0.9 * h, steps=8)
    page.mouse.up()
    page.wait_for_function(f"() => document.querySelector({_WEIGHTS!r}).layout.yaxis"
                           f".range[1] != {before[1]!r}", timeout=10_000)
    return _weights_y(page)


def test_a_reset_brings_back_the_axes_of_the_chart_on_screen(page, server):
    """After a λ move the weights chart's y axis is the new figure's; a double-click or the
    reset button after a zoom goes back to it, not to the first figure's axis (which would
    cut off the new figure's taller bars)."""
    _open(page, f"{server}/{QUERY}", HEADLINE)
    first = _weights_y(page)
    _slide(page, "λ (data fidelity, log scale)", "ArrowRight", "lam=100&")
    drawn = _weights_y(page)
    assert drawn[1] > first[1]  # the bars grew with λ, and the axis with them
    zoomed = _zoom_in(page)
    assert zoomed[1] < drawn[1]
    page.locator(f"{_WEIGHTS} .nsewdrag").first.dblclick()
    page.wait_for_function(f"() => document.querySelector({_WEIGHTS!r}).layout.yaxis"
                           f".range[1] == {drawn[1]!r}", timeout=10_000)
    assert _weights_y(page) == drawn
    _zoom_in(page)
    page.locator(_WEIGHTS).hover()
    page.locator(f'{_WEIGHTS} .modebar-btn[data-title="Reset axes"]').click()
    page.wait_for_function(f"() => document.querySelector({_WEIGHTS!r}).layout.yaxis"
                           f".range[1] == {drawn[1]!r}", timeout=10_000)
    assert _weights_y(page) == drawn
    # Plotly's own reset (to the first figure drawn in the div), autoscale (which ignores
    # the figure's ranges) and its upload to Plotly's cloud are not on offer; zoom and pan
    # are.
    buttons = page.locator(f"{_WEIGHTS} .modebar-btn")
    titles = [buttons.nth(i).get_attribute("data-title") for i in range(buttons.count())]
    assert "Reset axes" in titles and "Zoom" in titles and "Pan" in titles, titles
    assert "Autoscale" not in titles and "Share chart..." not in titles, titles
    assert page.locator(f'{_WEIGHTS} .modebar-btn[data-val="reset"]').count() == 0


_STRIP = ".st-key-explorer_tree_accuracy .sdwec-chart"


def _x_range(page, chart):
    return page.locator(chart).evaluate("el => el.layout.xaxis.range.map(Number)")


def _drag(page, chart, start, end):
    """Drag a zoom box across ``chart`` between fractions ``start`` and ``end`` of its plot."""
    area = page.locator(f"{chart} .nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    page.mouse.move(box["x"] + start[0] * box["width"], box["y"] + start[1] * box["height"])
    page.mouse.down()
    page.mouse.move(box["x"] + end[0] * box["width"], box["y"] + end[1] * box["height"],
                    steps=8)
    page.mouse.up()


def _same_x(page, expected=None):
    """Wait until the weights chart and the strip under it show the same x range (and it is
    ``expected`` where given); return it."""
    want = "null" if expected is None else repr([float(v) for v in expected])
    page.wait_for_function(f"""() => {{
        const [a, b] = [{_WEIGHTS!r}, {_STRIP!r}].map(
            (s) => document.querySelector(s).layout.xaxis.range.map(Number));
        const want = {want};
        return a[0] === b[0] && a[1] === b[1] && (!want || (a[0] === want[0] && a[1] === want[1]));
    }}""", timeout=10_000)
    return _x_range(page, _WEIGHTS)


def test_the_weights_chart_and_the_strip_under_it_zoom_together(page, server):
    """The weights chart has no tree labels of its own: the strip under it carries them, so
    a zoom, pan or reset of either is the other's too, and a λ move resets both."""
    _open(page, f"{server}/{QUERY}", HEADLINE)
    full = _same_x(page)
    assert full == [-0.5, 49.5]  # l = 50
    _drag(page, _WEIGHTS, (0.3, 0.2), (0.6, 0.9))
    zoomed = _same_x(page)
    assert full[0] < zoomed[0] < zoomed[1] < full[1]
    _slide(page, "λ (data fidelity, log scale)", "ArrowRight", "lam=100&")
    assert _same_x(page, full) == full  # a new figure's axis, on both
    _drag(page, _STRIP, (0.1, 0.1), (0.4, 0.9))
    zoomed = _same_x(page)
    assert full[0] < zoomed[0] < zoomed[1] < full[1]
    page.locator(f"{_WEIGHTS} .nsewdrag").first.dblclick()
    assert _same_x(page, full) == full


def test_a_slider_move_reruns_only_the_live_view(page, server):
    """λ, β, γ, ε and k rerun the Explorer's fragment (the solver's widgets and what they
    change): the sidebar's pool widgets and notes are neither run nor sent again, yet stay
    on the page; a pool setting (the seed) still reruns the whole page."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    seen = _run_messages(page)
    _open(page, f"{server}/{QUERY}", HEADLINE)
    full = list(seen)
    assert ("script_finished", ForwardMsg.FINISHED_SUCCESSFULLY) in full
    assert ("selectbox", "Dataset") in full
    seen.clear()
    before = _metric(page, "Classifiers used")
    _slide(page, "λ (data fidelity, log scale)", "ArrowRight", "lam=100&")
    assert _metric(page, "Classifiers used") != before
    finished = [status for kind, status in seen if kind == "script_finished"]
    assert finished and set(finished) == {ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
    sent = {label for _, label in seen}
    assert "λ (data fidelity, log scale)" in sent  # the slider's own element, redrawn
    assert not sent & {"Dataset", "Split seed", "Splits", "Pool size l"}
    assert not any(str(label).startswith("Pools on disk") for label in sent)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Pools on disk" in sidebar.inner_text()
    _clean(page, 4)
    seen.clear()
    box = sidebar.get_by_role("spinbutton", name="Split seed")
    box.fill("1")
    box.press("Enter")
    _settle(page, "seed=1&")
    deadline = time.monotonic() + LOAD_MS / 1000  # the new seed's last pool trains first
    # The whole page's run, however many runs end before it (on a busy machine a run the
    # key press started can end early for the rerun the Enter asks for).
    while ("script_finished", ForwardMsg.FINISHED_SUCCESSFULLY) not in seen:
        assert time.monotonic() < deadline, (
            "no whole run after the seed change: "
            f"{[status for kind, status in seen if kind == 'script_finished']}")
        page.wait_for_timeout(200)
    _idle(page)
    assert "lam=100&" in page.url  # the fragment's value survives the full run
    _clean(page, 4)


def test_a_dataset_switch_goes_back_to_the_top(loaded):
    # Scrolled down to the downloads, a reader picks another dataset: the page starts again
    # at its headline, not far down a page of the new dataset's numbers.  (The headline
    # tests above only read this load; this test changes it, so it is the last to use it.)
    page = loaded(f"{QUERY}&r=1", HEADLINE, 1280, 720, last=True)
    _idle(page)
    page.get_by_text("Downloads").first.scroll_into_view_if_needed()
    scrolled = ("() => [document.scrollingElement, ...document.querySelectorAll('*')]"
                ".some(el => el && el.scrollTop > 100)")
    assert page.evaluate(scrolled)
    box = page.get_by_test_id("stSelectbox").filter(has_text="Dataset").first
    box.locator("input").click()
    page.keyboard.type("wine")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"dataset=wine"), timeout=LOAD_MS)
    page.wait_for_function(f"() => !({scrolled[6:]})", timeout=LOAD_MS)
