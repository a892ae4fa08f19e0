"""Which Plotly.js the charts load (dashboard/plotly_bundle.py): the shipped basic bundle while
it is the plotly package's Plotly.js version, the full one otherwise, and a figure the basic
bundle cannot draw refused with a sentence."""

import hashlib
import logging
import re

import plotly.graph_objects as go
import pytest

from dashboard import _compat as compat
from dashboard import plotly_bundle


@pytest.fixture
def fresh(monkeypatch):
    """``chosen()`` computed again, with nothing logged yet."""
    monkeypatch.setattr(compat, "_logged", set())
    plotly_bundle.chosen.cache_clear()
    yield
    plotly_bundle.chosen.cache_clear()


def test_the_shipped_file_is_the_one_its_readme_names():
    readme = (plotly_bundle.BASIC.parent / "README.md").read_text()
    digest = re.search(r"sha256\s+`([0-9a-f]{64})`", readme)[1]
    assert hashlib.sha256(plotly_bundle.BASIC.read_bytes()).hexdigest() == digest
    version = re.search(r"plotly\.js-basic-dist-min`, version\s+(\S+),", readme)[1]
    assert plotly_bundle.banner_version(plotly_bundle.BASIC) == version
    assert (plotly_bundle.BASIC.parent / "plotly.js-LICENSE").read_text().startswith("MIT")


@pytest.mark.parametrize("head, version", [
    ("/**\n* plotly.js v4.1.1\n* Copyright", "4.1.1"),
    ("/**\n* plotly.js (basic - minified) v4.1.1\n* Copyright", "4.1.1"),
    ("/**\n* plotly.js (cartesian - minified) v5.0.0-rc.1\n*/", "5.0.0-rc.1"),
    ("window.Plotly = {};", None),
    ("", None),
])
def test_banner_version(tmp_path, head, version):
    path = tmp_path / "bundle.js"
    path.write_text(head + "\n(function(){})();")
    assert plotly_bundle.banner_version(path) == version


def test_a_missing_file_has_no_version(tmp_path):
    assert plotly_bundle.banner_version(tmp_path / "absent.js") is None


def test_the_basic_bundle_is_loaded_with_its_own_token(fresh):
    bundle = plotly_bundle.chosen()
    assert bundle.path == plotly_bundle.BASIC
    assert bundle.token.endswith("-basic") and bundle.traces == {"scatter", "bar", "pie"}


@pytest.mark.parametrize("basic", ["/**\n* plotly.js (basic - minified) v0.0.1\n*/", None])
def test_another_version_or_none_falls_back_to_the_full_bundle_and_says_so_once(
        fresh, monkeypatch, tmp_path, caplog, basic):
    shipped = tmp_path / "plotly-basic.min.js"
    if basic is not None:
        shipped.write_text(basic)
    monkeypatch.setattr(plotly_bundle, "BASIC", shipped)
    with caplog.at_level(logging.WARNING, logger="dashboard"):
        bundle = plotly_bundle.chosen()
        plotly_bundle.chosen.cache_clear()
        assert plotly_bundle.chosen() == bundle
    assert str(bundle.path) == compat.plotly_js_file() and bundle.traces is None
    assert "-basic" not in bundle.token
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and ("0.0.1" if basic else "missing") in said[0], said


def test_no_plotly_js_means_no_bundle(fresh, monkeypatch):
    monkeypatch.setattr(compat, "plotly_js_file", lambda: None)
    assert plotly_bundle.chosen() is None


def _bundle(traces):
    return plotly_bundle.Bundle(plotly_bundle.BASIC, "t", traces)


def test_a_figure_of_scatter_and_bar_traces_is_drawable():
    fig = go.Figure([go.Scatter(y=[1, 2]), go.Bar(y=[3])],
                    frames=[go.Frame(data=[go.Scatter(y=[2, 1])])])
    plotly_bundle.check_drawable(fig, _bundle(plotly_bundle.BASIC_TRACES))


@pytest.mark.parametrize("fig", [
    go.Figure([go.Scatter(y=[1]), go.Heatmap(z=[[1, 2]])]),
    go.Figure([go.Scatter(y=[1])], frames=[go.Frame(data=[go.Heatmap(z=[[1]])])]),
], ids=["in the data", "in a frame"])
def test_a_trace_the_basic_bundle_lacks_is_refused_by_name(fig):
    with pytest.raises(ValueError, match="draws heatmap, which Plotly.js's basic bundle"):
        plotly_bundle.check_drawable(fig, _bundle(plotly_bundle.BASIC_TRACES))
    plotly_bundle.check_drawable(fig, _bundle(None))  # the full bundle draws anything
    plotly_bundle.check_drawable(fig, None)
