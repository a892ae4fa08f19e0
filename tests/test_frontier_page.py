"""The Frontier page in a real browser: one screen at a projector's 1280 × 720.

Reuses tests/test_browser.py's server (``streamlit run`` on a free port, its own empty pool
cache) and Chromium; a small pool and three splits keep it quick.
"""

import pytest

from tests.test_browser import (  # noqa: F401
    CHARTS,
    LOAD_MS,
    _clean,
    _idle,
    _needs_chromium,
    _open,
    browser,
    server,
)

pytestmark = pytest.mark.browser

QUERY = "?dataset=sonar&l=50&r=3"
WIDTH, HEIGHT = 1280, 720

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


@pytest.fixture
def small_window(browser):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    tab = context.new_page()
    yield tab
    context.close()


def test_the_chart_and_its_legend_fit_one_projector_screen(small_window, server):
    page = small_window
    _open(page, f"{server}/frontier{QUERY}", CHARTS)
    _clean(page, 1)
    boxes = page.locator(CHARTS).first.evaluate(_BOXES)
    left, top, right, bottom = boxes["legend"]
    plot = boxes["plot"]
    # Without scrolling: the plot and every legend row inside the window.
    assert 0 <= plot[1] and plot[3] <= HEIGHT, boxes
    assert 0 <= left and right <= WIDTH and 0 <= top and bottom <= HEIGHT, boxes
    # Right under the page's title: one row of controls between them, nothing else.
    assert boxes["chart"][1] - boxes["title"][1] < 140, boxes




def test_a_second_sweep_and_back_draws_the_chart(small_window, server):
    # A second swept parameter adds a colour bar, whose CSS selector Plotly builds from the
    # traces' uids; then back to none. Each time the chart is drawn, never an error in its
    # place.
    page = small_window
    _open(page, f"{server}/frontier{QUERY}", CHARTS)
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
