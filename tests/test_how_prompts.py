"""How it works' "move this, watch that" prompts (:data:`sdwec.teaching.PROMPTS`).

Each prompt names one control of its section and one thing in that section's figure, and
says which way that thing goes. Here the control is found on the page (AppTest), its range
is read from the widget, and the claim is checked on the figure the page draws (built by
the same :mod:`sdwec.plots` call, checked equal to the page's), at every value of the
control and over the section's other controls at their ends and defaults.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.charts import figure_spec
from harness.apptest_charts import chart_figures
from harness.common import CHARTS
from sdwec import plots, teaching
from tests.test_browser import server as browser_server  # noqa: F401  (a fixture)

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "how_it_works.py")
SECTIONS = ("sign", "abs", "pen", "tay")  # in page order, one chart each


def _figure(section, s):
    """The section's figure at control values ``s``, as the page builds it."""
    if section == "sign":
        return plots.sign_relaxation(s["points"], s["eps"])
    if section == "abs":
        return plots.abs_approximation(s["gamma"], s["eps"],
                                       w_hat=None if s["follow"] else s["what"])
    if section == "pen":
        return plots.penalty_threshold(s["beta"], s["gamma"], s["eps"])
    return plots.taylor_model(s["what"], s["beta"], s["gamma"], s["eps"])


# --------------------------------------------------------------------------- readers
# Each reads one number per curve off a drawn figure, from its traces and shapes only.

def _lines(fig, dash):
    return [t for t in fig.data if t.mode == "lines" and t.line.dash == dash]


def _dot_height(fig):
    return [abs(t.y[0]) for t in fig.data if t.mode == "markers"]


def _beyond_dot(fig):
    """How far past its dot each dotted line reaches ±1 (a line through 0: at 1/slope)."""
    dots = [t.x[0] for t in fig.data if t.mode == "markers"]
    out = []
    for line, c in zip(_lines(fig, "dot"), dots):
        x, y = np.asarray(line.x, dtype=float), np.asarray(line.y, dtype=float)
        slope = (y[-1] - y[0]) / (x[-1] - x[0])
        out.append(1.0 / slope - abs(c))
    return out


def _gap_at_zero(fig):
    """Each dashed curve's height above |w| = 0 at w = 0."""
    return [float(np.interp(0.0, np.asarray(t.x, dtype=float), np.asarray(t.y, dtype=float)))
            for t in _lines(fig, "dash")]


def _threshold(fig):
    """The number printed on the dashed threshold line (its label, as the page shows it)."""
    (line,) = [s.x0 for s in fig.layout.shapes if s.x0 == s.x1 and s.line.dash == "dash"]
    (label,) = [a.text for a in fig.layout.annotations if a.text.startswith("threshold ")]
    number = float(label.split()[-1])
    assert number == pytest.approx(line, rel=5e-3, abs=1e-12)  # three figures of the line
    return [number]


def _curvature(fig):
    """The dashed model's C, from its second differences (exact for a parabola)."""
    (model,) = _lines(fig, "dash")
    x, y = np.asarray(model.x, dtype=float), np.asarray(model.y, dtype=float)
    h = x[1] - x[0]
    return [float(np.median(np.diff(y, 2))) / (2 * h * h)]


def _runs_below(fig):
    """Whether the dashed model runs visibly (by the caption's 2 % of the plot's height)
    below the solid cost somewhere."""
    cost, model = (np.asarray(t.y, dtype=float) for t in fig.data[:2])
    low, high = fig.layout.yaxis.range
    return [float(np.max(cost - model) > teaching.VISIBLE * (high - low))]


READERS = {"dot height": _dot_height, "meets ±1 beyond the dot": _beyond_dot,
           "gap at 0": _gap_at_zero, "threshold": _threshold, "curvature": _curvature,
           "runs below the cost": _runs_below}


# --------------------------------------------------------------------------- the page

@pytest.fixture(scope="module")
def page():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _widgets(at, section):
    """``{control: widget}`` of the section's controls on the page."""
    prefix = f"how_{section}_"
    found = {}
    for kind in ("slider", "select_slider", "multiselect", "toggle"):
        for w in getattr(at, kind):
            if w.key and w.key.startswith(prefix) and not w.key.endswith("_chart"):
                found[w.key[len(prefix):]] = w
    return found


def _values(w):
    """Every value the widget offers, in increasing order (a multiselect: one at a time)."""
    if w.type == "toggle":
        return [False, True]
    if hasattr(w, "options") and w.type != "slider":
        return sorted(float(o) for o in w.options)
    return list(np.round(np.arange(w.min, w.max + w.step / 2, w.step), 10))


def _defaults(at, section):
    return {name: (list(w.value) if w.type == "multiselect" else w.value)
            for name, w in _widgets(at, section).items()}


def test_every_section_has_prompts_each_naming_one_control_of_its_own(page):
    assert set(teaching.PROMPTS) == set(SECTIONS)
    for section, prompts in teaching.PROMPTS.items():
        assert prompts
        widgets = _widgets(page, section)  # shown when the page opens
        for p in prompts:
            assert p.control in widgets, (section, p)
            assert widgets[p.control].label == p.name
            assert p.watch.strip() and p.does.strip() and p.measure in READERS


def test_each_section_shows_its_prompts_beside_its_figure_and_the_derivation_closed(page):
    columns = list(page.main.columns)
    for i, section in enumerate(SECTIONS):
        left, right = columns[2 * i], columns[2 * i + 1]
        assert [c.type for c in right.children.values()][0] == "bidi_component"  # the chart
        (shown,) = [m.value for m in left.markdown]  # under the controls, beside the chart
        lines = shown.splitlines()
        assert len(lines) == len(teaching.PROMPTS[section])
        for line, p in zip(lines, teaching.PROMPTS[section]):
            head, _, tail = line.partition("**: watch ")
            assert tail == f"{p.watch} {p.does}."
            words = head.removeprefix("- **").split()
            assert words[0] in ("Move", "Add") and p.name in words
            assert words[-1 if words[0] == "Move" else 2] == (
                {"Move": "up", "Add": "larger"} if p.up else
                {"Move": "down", "Add": "smaller"})[words[0]]
            assert (words[0] == "Add") == (_widgets(page, section)[p.control].type
                                           == "multiselect")
    derivations = [e for e in page.main.expander if e.label.startswith("The derivation")]
    assert len(derivations) == len(SECTIONS)
    assert not any(e.proto.expanded for e in derivations)  # closed until opened


@pytest.mark.parametrize("section", SECTIONS)
def test_the_page_draws_the_figure_built_here(page, section):
    """The sweeps below build the figures as the page does: at the defaults and after a
    move of each control, the page's chart is that figure."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    index = SECTIONS.index(section)
    moves = [(name, w) for name, w in _widgets(at, section).items() if w.type != "toggle"]
    for name, _ in [(None, None)] + moves:
        if name is not None:
            w = _widgets(at, section)[name]
            values = _values(w)
            if w.type == "multiselect":
                w.set_value([values[-1]]).run()
            else:
                w.set_value(values[-1] if w.value != values[-1] else values[0]).run()
        drawn = chart_figures(at)[index]
        built = json.loads(figure_spec(_figure(section, _defaults(at, section))))
        assert drawn["data"] == built["data"]
        assert drawn["layout"]["title"] == built["layout"]["title"]


def _settings(at, section, control):
    """The section's other controls (the swept one left out): all at their defaults, each
    alone at its ends, then all at their lowest and all at their highest together.  (The
    whole grid of ends held too when this was written, at ten times the test's time.)"""
    defaults = {k: v for k, v in _defaults(at, section).items() if k != control}
    ends = {}
    for name, w in _widgets(at, section).items():
        if name != control:
            values = _values(w)
            ends[name] = ([[values[0]], [values[-1]]] if w.type == "multiselect"
                          else [values[0], values[-1]])
    if section == "abs":  # ŵ's slider, shown when ŵ stops following w
        defaults["what"] = 1.0
        ends["what"] = [-2.0, 2.0]
    yield defaults
    for name, pair in ends.items():
        for value in pair:
            yield dict(defaults, **{name: value}, **({"follow": False} if name == "what" and
                                                     section == "abs" else {}))
    for i in (0, 1):
        yield dict(defaults, **{name: pair[i] for name, pair in ends.items()})


@pytest.mark.parametrize("section,prompt", [
    (section, p) for section, prompts in teaching.PROMPTS.items() for p in prompts],
    ids=lambda v: v if isinstance(v, str) else f"{v.control}-{v.measure}")
def test_each_prompt_s_direction_holds_over_the_control_s_range(page, section, prompt):
    """Moving the control the stated way, the watched number never goes the other way, in
    any setting of the other controls; from the page's defaults it does change."""
    w = _widgets(page, section)[prompt.control]
    values = _values(w)
    if not prompt.up:
        values = values[::-1]
    read = READERS[prompt.measure]
    sign = 1.0 if prompt.rises else -1.0
    defaults = _defaults(page, section)

    def sweep(setting):
        rows = []
        for v in values:
            s = dict(setting, **{prompt.control: [v] if w.type == "multiselect" else v})
            rows.append(read(_figure(section, s)))
        return sign * np.asarray(rows, dtype=float)  # one column per curve

    settings = list(_settings(page, section, prompt.control))
    assert len(settings) > 1
    for setting in settings:
        rows = sweep(setting)
        steps = np.diff(rows, axis=0)
        assert np.all(steps >= -1e-12 * np.maximum(1.0, np.abs(rows[:-1]))), (prompt, setting)
    at_default = sweep({k: v for k, v in defaults.items() if k != prompt.control})
    assert np.ptp(at_default, axis=0).min() > 0, prompt


def test_the_taylor_model_lies_above_the_cost_at_w_hat_zero(page):
    """The second Taylor prompt's aside: at ŵ = 0 the dashed model is nowhere below the
    solid cost, in every setting of β, γ, ε."""
    for setting in _settings(page, "tay", "what"):
        fig = _figure("tay", dict(setting, what=0.0))
        cost, model = (np.asarray(t.y, dtype=float) for t in fig.data[:2])
        assert np.max(cost - model) <= 1e-12 * np.max(np.abs(cost)), setting


# --------------------------------------------------------------------------- in a browser

@pytest.mark.browser
def test_each_figure_and_its_prompts_share_one_projector_screen(browser_server):  # noqa: F811
    """At 1280×720, with a section's heading scrolled to the top, its figure and its prompts
    are both wholly on screen."""
    from playwright import sync_api

    from tests.test_browser import LAUNCH_ARGS, LOAD_MS

    assert shutil.which("chromium"), "scripts/test.sh installs Debian's chromium"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=LAUNCH_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 720})
            tab.goto(f"{browser_server}/how_it_works")
            tab.wait_for_function(f"() => document.querySelectorAll('{CHARTS}').length == "
                                  f"{len(SECTIONS)}", timeout=LOAD_MS)
            main = tab.locator('[data-testid="stMain"]')
            for i, section in enumerate(SECTIONS):
                main.locator("h3").nth(i).evaluate("h => h.scrollIntoView({block: 'start'})")
                tab.wait_for_timeout(300)
                block = main.locator('[data-testid="stHorizontalBlock"]').nth(i)
                chart = block.locator(CHARTS).first.bounding_box()
                prompts = block.locator("li")
                assert prompts.count() == len(teaching.PROMPTS[section])
                boxes = [chart] + [prompts.nth(k).bounding_box() for k in
                                   range(prompts.count())]
                for box in boxes:
                    assert box["y"] >= 0 and box["y"] + box["height"] <= 720, (section, box)
        finally:
            browser.close()
