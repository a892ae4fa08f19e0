"""In a real browser: the pages follow the sliders without the server (dashboard/live.py).

A drag of a solver slider redraws the headline, the sentences and the charts from the
answers computed ahead, with no message to the server; once released, the server's page is
the one the browser drew.  The Lesson fits one projector screen; the Frontier switches its
axes and moves its cross in the page.
"""

import re

import pytest

from harness.common import CHARTS
from tests.test_browser import HEADLINE, LOAD_MS, _idle, _open
from tests.test_browser import browser as chromium  # noqa: F401  (a fixture)
from tests.test_browser import server as live_server  # noqa: F401  (a fixture)

pytestmark = pytest.mark.browser
QUERY = "?dataset=sonar&l=20"

#: Every file of answers the page asked for is read, and the server has drawn the setting
#: the sliders show.
_AHEAD_READ = """() => { const rt = window.__sdwecLive;
  return !!rt && rt.loading.size > 0 && [...rt.loading.values()].every(v => v === 'done')
         && rt.key === rt.released; }"""
#: What the page shows that follows the sliders: the headline's text, the sentences, and
#: the data of each chart in the window as drawn (one out of sight is drawn once it comes
#: into view).
_SHOWN = """() => ({
  headline: document.querySelector('.sdwec-headline .sdwec-metrics').innerText,
  texts: [...document.querySelectorAll('.sdwec-text')].map(t => t.innerText),
  charts: [...document.querySelectorAll('.sdwec-chart')]
    .filter(g => g.data && g.getBoundingClientRect().top < innerHeight)
    .map(g => JSON.stringify(g.data.map(t => [t.uid, t.x, t.y, t.name, t.visible]))),
})"""


@pytest.fixture
def tab(chromium):  # noqa: F811
    context = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    page.sent = sent
    yield page
    context.close()


def _thumb(page, key):
    """The centre of slider ``key``'s thumb and one grid step in pixels (Streamlit 1.67's
    slider: the range input sits in a hidden box inside the thumb, on the track)."""
    page.locator(f".st-key-{key} input[type=range]").scroll_into_view_if_needed()
    return page.evaluate("""(key) => {
        const input = document.querySelector(`.st-key-${key} input[type=range]`);
        const thumb = input.parentElement.parentElement, track = thumb.parentElement;
        const t = thumb.getBoundingClientRect();
        return [t.x + t.width / 2, t.y + t.height / 2,
                track.getBoundingClientRect().width / (+input.max - +input.min)];
    }""", key)


def _drag(page, key, steps):
    """Press the thumb of slider ``key`` and move it ``steps`` grid steps (negative: left),
    one at a time, without releasing it; returns the mouse's position."""
    x, y, step = _thumb(page, key)
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(1, abs(steps) + 1):
        x_now = x + (i if steps > 0 else -i) * step
        page.mouse.move(x_now, y)
        page.wait_for_timeout(150)
    return x_now, y


def _valuetext(page, key):
    return page.evaluate(f"document.querySelector('.st-key-{key} input[type=range]')"
                         ".getAttribute('aria-valuetext')")


def test_a_drag_redraws_the_page_in_the_browser_as_the_server_would(tab, live_server):  # noqa: F811
    _open(tab, f"{live_server}/{QUERY}", HEADLINE)
    tab.wait_for_function(_AHEAD_READ, timeout=LOAD_MS)
    tab.wait_for_function(f"() => document.querySelectorAll('{CHARTS}').length >= 4",
                          timeout=LOAD_MS)
    _idle(tab)
    before = tab.evaluate(_SHOWN)
    sent = len(tab.sent)
    _drag(tab, "cfg_lam", -3)  # λ 10 -> 1
    assert _valuetext(tab, "cfg_lam") == "1"
    tab.wait_for_timeout(300)
    during = tab.evaluate(_SHOWN)
    assert len(tab.sent) == sent  # nothing reached the server while dragging
    assert during["headline"] != before["headline"]
    assert during["charts"][0] != before["charts"][0]  # the accuracy chart moved too
    # What the page shows not redrawn here (the pin, downloads, ...) is dimmed meanwhile.
    assert tab.evaluate("document.body.classList.contains('sdwec-ahead')")
    tab.mouse.up()
    tab.wait_for_url(re.compile(r"lam=1&"), timeout=LOAD_MS)
    tab.wait_for_function(_AHEAD_READ, timeout=LOAD_MS)
    _idle(tab)
    # The server's page at λ = 1 is what the browser drew there.
    assert tab.evaluate(_SHOWN) == during
    assert not tab.evaluate("document.body.classList.contains('sdwec-ahead')")
    # And so is a new visitor's page opened at that setting.
    fresh = tab.context.new_page()
    _open(fresh, f"{live_server}/{QUERY}&lam=1", HEADLINE)
    assert fresh.evaluate(_SHOWN) == during


def test_a_setting_not_computed_yet_is_said_and_its_parts_dimmed(tab, live_server):  # noqa: F811
    # The browser never gets the answers (their files do not arrive): the page says so while
    # the slider points past its own setting, and redraws nothing it cannot.
    tab.route(re.compile(r"/app/static/ahead/"), lambda route: route.abort())
    _open(tab, f"{live_server}/{QUERY}", HEADLINE)
    tab.wait_for_function(f"() => document.querySelectorAll('{CHARTS}').length >= 4",
                          timeout=LOAD_MS)
    _idle(tab)
    before = tab.evaluate(_SHOWN)
    _drag(tab, "cfg_beta", 4)  # β 15 -> 19
    note = tab.locator(".sdwec-missing-note")
    assert note.is_visible() and "β = 19" in note.inner_text() and "β = 15" in note.inner_text()
    assert tab.evaluate(_SHOWN)["charts"] == before["charts"]
    waiting = tab.evaluate("[...document.querySelectorAll('.sdwec-chart.sdwec-waiting')]"
                           ".length")
    assert waiting >= 3
    tab.mouse.up()  # released: the server computes it, as before the page computed ahead
    tab.wait_for_url(re.compile(r"beta=19&"), timeout=LOAD_MS)
    tab.wait_for_function("() => !document.querySelector('.sdwec-missing-note')",
                          timeout=LOAD_MS)
    _idle(tab)
    assert tab.evaluate("document.querySelectorAll('.sdwec-waiting').length") == 0


def _bottoms(page):
    return page.evaluate("""() => {
        const parts = ['.st-key-cfg_lam', '.st-key-cfg_beta', '.st-key-cfg_gamma',
                       '.st-key-cfg_eps', '.sdwec-headline', '.st-key-lesson_abstain',
                       '.st-key-lesson_beta', '.st-key-lesson_gamma', '.st-key-lesson_eps',
                       '.st-key-lesson_says_beta', '.st-key-lesson_says_gamma',
                       '.st-key-lesson_says_eps'];
        const out = {};
        for (const p of parts) {
            const el = document.querySelector(p);
            out[p] = el ? [el.getBoundingClientRect().top, el.getBoundingClientRect().bottom]
                        : null;
        }
        out.scrolled = Math.max(document.scrollingElement.scrollTop,
            ...[...document.querySelectorAll('*')].map(e => e.scrollTop));
        return out;
    }""")


def test_the_lesson_fits_one_projector_screen_warnings_included(tab, live_server):  # noqa: F811
    # Every split abstains at λ = 0.001, and the link carries a value it cannot use.
    _open(tab, f"{live_server}/lesson{QUERY}&lam=0.001&beta=oops", ".st-key-lesson_eps .sdwec-chart")
    tab.wait_for_function(f"() => document.querySelectorAll('{CHARTS}').length >= 3",
                          timeout=LOAD_MS)
    _idle(tab)
    assert "abstain" in tab.locator(".st-key-lesson_abstain").inner_text()
    boxes = _bottoms(tab)
    assert boxes.pop("scrolled") == 0
    for part, box in boxes.items():
        assert box is not None, part
        top, bottom = box
        assert 0 <= top and bottom <= 720, (part, box)
    # λ dragged: the line at λ moves in every panel and the sentences follow, in the page.
    sent = len(tab.sent)
    _drag(tab, "cfg_lam", 6)  # λ 0.001 -> 0.1
    tab.wait_for_timeout(300)
    lines = tab.evaluate("[...document.querySelectorAll('.sdwec-chart')]"
                         ".map(g => g.layout.shapes[0].x0)")
    assert lines == [0.1] * 3
    says = tab.locator(".st-key-lesson_says_beta").inner_text()
    assert says.startswith("At λ = 0.1 ")
    assert len(tab.sent) == sent
    tab.mouse.up()


def test_the_frontier_switches_its_axes_and_moves_its_cross_in_the_page(tab, live_server):  # noqa: F811
    _open(tab, f"{live_server}/frontier{QUERY}&r=1", ".sdwec-switches")
    chart = ".st-key-frontier_chart .sdwec-chart"
    read = f"""() => {{ const gd = document.querySelector('{chart}');
        const full = (test) => gd._fullData.find(test);
        const sweep = full(t => t.name === 'SDWEC (λ sweep)');
        const cross = full(t => t.uid === 'sidebar-setting');
        return {{x: Array.from(sweep.x), y: Array.from(sweep.y),
                 cross: [Array.from(cross.x), Array.from(cross.y)],
                 axis: gd.layout.xaxis.title.text, yaxis: gd.layout.yaxis.title.text}}; }}"""
    trees = tab.evaluate(read)
    sent = len(tab.sent)
    tab.locator("button[data-value=sparsity]").click()
    tab.locator("button[data-value=validation]").click()
    tab.wait_for_timeout(300)
    shown = tab.evaluate(read)
    assert len(tab.sent) == sent  # switched in the page
    assert shown["axis"].startswith("sparsity") and shown["yaxis"] == "validation accuracy"
    l = 20
    assert shown["x"] == pytest.approx([1 - x / l for x in trees["x"]])
    assert shown["y"] != trees["y"]
    # λ moved by a key: the cross goes to that λ's point before the server answers.
    tab.locator(".st-key-cfg_lam input[type=range]").focus()
    tab.keyboard.press("ArrowRight")  # λ 10 -> 20
    tab.wait_for_timeout(100)
    moved = tab.evaluate(read)
    at = tab.evaluate(f"""() => {{ const gd = document.querySelector('{chart}');
        const sweep = gd._fullData.find(t => t.name === 'SDWEC (λ sweep)');
        const i = Array.from(sweep.customdata).findIndex(c => c[0] === 20);
        return i < 0 ? [[], []] : [[sweep.x[i]], [sweep.y[i]]]; }}""")
    assert moved["cross"] == at  # λ = 20's point of the sweep
    tab.wait_for_url(re.compile(r"lam=20&"), timeout=LOAD_MS)
    _idle(tab)
    assert tab.evaluate(read)["cross"] == moved["cross"]  # the server's cross is there too
