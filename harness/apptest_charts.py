"""What an AppTest run drew: the charts, whichever element drew them, and the headline and
sentences that follow the sliders (read by the app's tests and by the upload benchmark)."""

import json

from dashboard.charts import COMPONENT


def chart_nodes(at):
    """Every chart element in page order: ``st.plotly_chart`` elements and the in-place
    charts of ``dashboard/charts.py`` (component :data:`~dashboard.charts.COMPONENT`)."""
    nodes = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type == "plotly_chart" or (
                    child.type == "bidi_component"
                    and child.proto.component_name == COMPONENT):
                nodes.append(child)
            walk(child)

    walk(at.main)
    return nodes


def chart_figures(at):
    """Every chart's figure (a dict), in page order."""
    return [json.loads(node.proto.spec) if node.type == "plotly_chart"
            else json.loads(json.loads(node.proto.json)["spec"]) for node in chart_nodes(at)]


def _live_nodes(at, kind):
    """The elements of :mod:`dashboard.live` of ``kind`` in page order, with their data."""
    from dashboard.live import COMPONENT as LIVE

    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type == "bidi_component" and child.proto.component_name == LIVE:
                data = json.loads(child.proto.json)
                if data.get("kind") == kind:
                    found.append((child, data))
            walk(child)

    walk(at.main)
    return found


def headline(at):
    """The headline's numbers as a reader sees them: ``{label: value}`` (the Explorer's
    "Test accuracy (SDWEC)", "Classifiers used", ...); empty when the page drew none."""
    out = {}
    for _, data in _live_nodes(at, "headline"):
        out.update({label: data["values"][name] for name, label, _ in data["labels"]})
    return out


def headline_delta(at):
    """The headline's comparison with bagging: ``(text, colour, arrow)``."""
    ((_, data),) = _live_nodes(at, "headline")
    return tuple(data["values"]["delta"])


def live_texts(at):
    """The sentences that follow the sliders, ``{name: HTML}`` (an answer's ``text`` names:
    ``paired``, ``splits``, ``cost``, ``abstain``; a sentence with its own variants by its
    order on the page)."""
    return {data["live"].get("name") or i: data["html"]
            for i, (_, data) in enumerate(_live_nodes(at, "text"))}
