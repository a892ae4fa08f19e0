"""The charts an AppTest run drew, whichever element drew them (read by the app's tests and
by the upload benchmark)."""

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
