"""The Frontier page's words and tables: what was swept, and what each method was fitted on."""

from __future__ import annotations

import json
import re

from dashboard import charts
from dashboard.config import LAMBDA_GRID, SECOND_SWEEPS
from dashboard.explorer_answer import setting_key
from sdwec import methods, plots, tables

#: The table's words for :data:`sdwec.methods.WEIGHTS_FROM`.
FITTED_ON = {"validation": "yes", "oob+validation": "yes (with out-of-bag rows)", "none": "no"}


#: The page's top and its title take less room, so that at 1280 × 720 the chart with its
#: legend fits under the title and the row of controls (Streamlit's 6rem above the title
#: and the title's own padding left the plot a sliver).
FIT_CSS = """<style>
.stMainBlockContainer { padding-top: 3rem; }
.stMainBlockContainer h1 { padding-top: 0; padding-bottom: 0.25rem; }
</style>"""


#: What an upload's name may end in besides its stem (``wine.csv``, ``logs.csv.gz``).
_EXTENSIONS = re.compile(r"(\.(csv|tsv|txt|data|gz|bz2|xz|zip))+$", re.IGNORECASE)


def csv_name(label):
    """The Frontier's CSV file name for a dataset ``label``; an upload's label may be a file
    name (``wine.csv``), whose extension is dropped rather than doubled."""
    return f"sdwec_frontier_{_EXTENSIONS.sub('', str(label)) or 'data'}.csv"


def intro(second, splits):
    """The page's opening paragraph, naming the swept parameters (``second``: a key of
    :data:`SECOND_SWEEPS` or ``None``) apart from those taken from the sidebar, and saying
    what a point and its interval are over ``splits`` splits."""
    fixed = ["β", "γ", "ε", "k"]
    if second is None:
        circles = (f"Each filled circle is SDWEC at one λ of the sidebar's grid "
                   f"({', '.join(fixed)} as in the sidebar)")
        select = "every other method, **SDWEC-select** (SDWEC's trees voting with equal " \
                 "weights) among them, is"
    else:
        fixed.remove(second)
        values = ", ".join(f"{v:g}" for v in SECOND_SWEEPS[second][1])
        circles = (f"Each filled circle is SDWEC at one λ of the sidebar's grid and one "
                   f"{second} of {values} (swept: one colour per {second}, as in the legend; "
                   f"{', '.join(fixed)} as in the sidebar, the sidebar's {second} unused)")
        select = "every other method is"
    # A second sweep's intervals are dashed edges, like the other curves' (plots.frontier).
    sdwec = "a shaded band around SDWEC's points, dashed lines along the other curves" \
        if second is None else "dashed lines along every curve, SDWEC's too"
    if splits > 1:
        hollow = ("; a **hollow** circle is a setting where some splits keep no tree (its "
                  "mean mixes their constant guesses in; never on the front)")
        points = (f"Over the {splits} splits each point is a mean, with the 95 % interval of "
                  "that mean")
    else:
        hollow = ""
        points = ("With one split each point is one ensemble, with the exact binomial "
                  "interval of its accuracy over the split's rows")
    return (f"{circles}{hollow}. Its Pareto "
            "front is black (a staircase on the accuracy it was chosen on, black rings on "
            f"the other). {points}: {sdwec}, a bar on each single ensemble. Beside it, on "
            "the same pools and "
            "splits: bagging, **random subsets of each size** (the sanity baseline any pruning "
            f"method should beat) and reduce-error ordering; {select} one click on its "
            "legend entry away, in its own colour: single ensembles as symbols, methods "
            "with a size or a regularisation path as curves. Hover for the parameters; "
            "click an SDWEC point to open it in the Explorer.")


def single_ensembles(summary):
    """The single ensembles' table (``summary``: their rows of the peers' frame) with a
    column saying which were fitted on the validation rows, and the caption naming them.

    Returns
    -------
    (pandas.DataFrame, str)
    """
    shown = tables.for_people(summary, ["method", "n_selected", "sparsity", "val_accuracy",
                                        "test_accuracy"])
    fitted = [methods.get(name) for name in summary["method"]]
    shown.insert(shown.columns.get_loc("validation accuracy") + 1, "fitted on validation",
                 [FITTED_ON[m.weights_from] for m in fitted])
    flattered = [m.label for m in fitted if m.fits_validation]
    honest = [m.label for m in fitted if not m.fits_validation]
    caption = ((f"Validation accuracy flatters {', '.join(flattered)}: their weights were "
                "fitted on those rows (column *fitted on validation*). " if flattered else "")
               + (f"Not fitted there, so held out for them: {', '.join(honest)}. "
                  if honest else "")
               + "Compare the methods on test.")
    return shown, caption


#: The buttons above the chart (no server run): what each view shows.
SWITCHES = [{"name": "x", "label": "x axis", "options": [["trees", "trees used (log)"],
                                                        ["sparsity", "sparsity"]]},
            {"name": "y", "label": "accuracy on", "options": [["test", "test"],
                                                              ["validation", "validation"]]}]


def views(sweep, front, peers, config, second=None, front_on="val_accuracy"):
    """The Frontier's figure and its views, for :func:`dashboard.charts.plotly_chart`: the
    figure on trees used and test accuracy, what turns it to validation accuracy, both x
    axes (sparsity is 1 − trees / l of every x: ``plots.sparsity_x``), and where the cross
    at the sidebar's setting goes for each λ of the grid (β, γ, ε the sidebar's).

    Returns
    -------
    (plotly.graph_objects.Figure, dict)
    """
    name = None if second is None else SECOND_SWEEPS[second][0]
    current = dict(lam=config.lam, beta=config.beta, gamma=config.gamma, eps=config.eps)

    def figure(accuracy, x="trees"):
        return plots.frontier(sweep, front, peers, accuracy, second=name, x=x,
                              front_on=front_on, current=current)

    base = figure("test_accuracy")
    spec = json.loads(charts.figure_spec(base))
    validation = json.loads(charts.figure_spec(figure("val_accuracy")))
    l = plots.pool_size(sweep, peers)
    sparse = [{"x": plots.sparsity_x(charts.numbers(t["x"]), l)}
              for t in spec["data"] if "x" in t and not t.get("uid", "").startswith("band")]
    crosses = {}
    for lam in LAMBDA_GRID:
        row = plots.current_row(sweep, dict(current, lam=lam))
        if row is not None:
            crosses[setting_key(lam, config.beta, config.gamma, config.eps)] = {
                "x": float(row["n_selected"]), "test": float(row["test_accuracy"]),
                "validation": float(row["val_accuracy"])}
    axes = {"trees": spec["layout"]["xaxis"],
            "sparsity": {"title": {"text": plots.X_AXES["sparsity"]},
                         **plots.fitted_range(sparse)}}
    return base, {"released": setting_key(config.lam, config.beta, config.gamma, config.eps),
                  "family": None, "l": l, "axes": axes, "cross": plots.CROSS,
                  "validation": charts.attribute_diff(spec, validation), "crosses": crosses}


def view_of(spec, shown, x, y, key):
    """The figure the page draws for view ``x``, ``y`` with the cross at setting ``key``
    (what ``dashboard/live.js`` does: ``frontierFigure``)."""
    out = charts.with_attributes(spec, shown["validation"]) if y == "validation" else spec
    cross = shown["crosses"].get(key)
    data = [t if t.get("uid") != shown["cross"] else
            dict(t, x=[cross["x"]] if cross else [], y=[cross[y]] if cross else [])
            for t in out["data"]]
    if x == "sparsity":
        data = [t if "x" not in t else dict(t, x=list(1 - charts.numbers(t["x"]) / shown["l"]))
                for t in data]
    return {**out, "data": data, "layout": {**out["layout"], "xaxis": shown["axes"][x]}}
