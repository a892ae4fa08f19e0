"""The figures an AppTest run drew, whichever element drew them."""

import json


def chart_figures(at):
    """Every chart's figure (a dict) in page order: ``st.plotly_chart`` elements and the
    in-place charts of ``dashboard/charts.py`` (component ``sdwec_plotly``)."""
    figures = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type == "plotly_chart":
                figures.append(json.loads(child.proto.spec))
            elif (child.type == "bidi_component"
                  and child.proto.component_name == "sdwec_plotly"):
                figures.append(json.loads(json.loads(child.proto.json)["spec"]))
            walk(child)

    walk(at.main)
    return figures
