"""The λ scrubber's frame rate in Chromium, a former version's figure against this one's.

Both figures are built in this process on the same pools and drawn on one blank page (the
Plotly.js the app's charts load, dashboard.plotly_bundle; the dashboard's template and config;
the Explorer's chart width at 1280 px), one after the other and alternating, so that the machine's load falls
on both alike.  The former figure comes from ``git show REV:sdwec/plots.py`` imported as a
module from a temporary folder (it draws the first split's path); this one's from the working
tree (the mean over every split).  Two measures per figure, repeated:

* **drag**: :data:`benchmarks.browser.SCRUB_JS`, the Explorer benchmark's drag across the
  slider as a fast hand would (one mouse move per animation frame); frames per second are the
  headings that changed on screen per second.
* **step**: ``Plotly.animate`` to every frame in turn, the way the slider asks for it
  (``redraw: False``), each followed by two animation frames (it is then painted).  The
  page's main-thread busy time over the steps (Chromium's ``TaskDuration`` metric: script,
  style, layout, paint), per frame, is the measure that the display rate does not round: a
  drag shows at most one frame per display refresh (60/s headless), so two figures that
  both fit in one refresh have the same drag rate.  The wall time per step is given too
  (90th percentile; it moves in whole refreshes).

Also the server side: the seconds to compute the paths (cold, every λ solved) and to build
the figure.

    python -m benchmarks.archive.scrubber                      # sonar, l = 200, 10 splits, vs HEAD
    python -m benchmarks.archive.scrubber --rev HEAD~3 --datasets sonar vehicle --splits 10
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import plotly

from dashboard import plotly_bundle
from harness.browser import SCRUB_JS
from harness.common import machine, median, percentile, table
from harness.load import LAUNCH_ARGS
from sdwec import comparison, plots
from sdwec.pool import load_pool

ROOT = Path(__file__).resolve().parent.parent
PLOTLY_JS = plotly_bundle.chosen().path  # what the app's charts load
#: The Explorer's main column at a 1280 px window (wide layout, sidebar open).
WIDTH = 880
PASSES = 4

#: Draw a figure spec as the dashboard's chart component does (Plotly.react with frames).
DRAW_JS = """
async ([spec, config]) => {
  const old = document.getElementById('gd');
  if (old) { Plotly.purge(old); old.remove(); }
  const gd = document.createElement('div');
  gd.id = 'gd';
  document.getElementById('parent').appendChild(gd);
  const figure = JSON.parse(spec);
  delete figure.layout.width;
  figure.layout.autosize = true;
  await Plotly.react(gd, {data: figure.data, layout: figure.layout, frames: figure.frames,
                          config});
  return gd._transitionData._frames.length;
}
"""

#: Every frame in turn, as the slider asks for it; ms until the frame after it is painted.
STEP_JS = """
async () => {
  const gd = document.getElementById('gd');
  const names = gd._transitionData._frames.map(f => f.name);
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const out = [];
  for (const pass of [0, 1]) {
    const order = pass ? [...names].reverse() : names;
    for (const name of order) {
      const t0 = performance.now();
      await Plotly.animate(gd, [name], {mode: 'immediate', frame: {duration: 0, redraw: false},
                                       transition: {duration: 0}});
      await frame();
      await frame();
      out.push(performance.now() - t0);
    }
  }
  return out;
}
"""


def former_plots(rev):
    """``sdwec/plots.py`` as of ``rev``, imported as a module of its own (from /tmp)."""
    source = subprocess.run(["git", "show", f"{rev}:sdwec/plots.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="scrubber-bench-"))
    path = folder / "plots_former.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("plots_former", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shutil.rmtree(folder)
    return module


def figures(dataset, n_trees, splits, former, lam=None):
    """``{"before": fig, "after": fig}`` and the server-side seconds, on ``dataset``'s pools."""
    from dashboard.config import LAMBDA_GRID, Config

    config = Config()
    params = config.params
    lam = config.lam if lam is None else lam
    pools = [load_pool(dataset, "binary", n_trees=n_trees, seed=s) for s in range(splits)]
    t = time.perf_counter()
    one = comparison.lambda_path(pools[0], LAMBDA_GRID, **params)
    path_one = time.perf_counter() - t
    t = time.perf_counter()
    every = comparison.lambda_paths(pools, LAMBDA_GRID, **params)
    path_all = time.perf_counter() - t
    t = time.perf_counter()
    split = f"first split (seed 0), {len(pools[0].y_test):,} test rows"
    before = former.lambda_scrubber(one, lam, split=split)
    build_before = time.perf_counter() - t
    t = time.perf_counter()
    after = plots.lambda_scrubber(every, lam)
    build_after = time.perf_counter() - t
    return ({"before": before, "after": after},
            {"paths before": path_one, "paths after": path_all,
             "figure before": build_before, "figure after": build_after})


def measure(figs, repeats=3):
    """Per figure: drag frame rates and step times (ms), alternating the figures."""
    from playwright import sync_api

    from dashboard.charts import CONFIG, figure_spec

    specs = {name: figure_spec(fig) for name, fig in figs.items()}
    out = {name: {"fps": [], "steps": [], "busy": [], "bytes": len(spec)}
           for name, spec in specs.items()}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")

        def busy():
            metrics = cdp.send("Performance.getMetrics")["metrics"]
            return next(m["value"] for m in metrics if m["name"] == "TaskDuration")
        page.set_content(f"<div id='parent' style='width: {WIDTH}px'></div>")
        page.add_script_tag(path=str(PLOTLY_JS))
        for i in range(repeats):
            order = list(specs) if i % 2 == 0 else list(specs)[::-1]
            for name in order:
                page.evaluate(DRAW_JS, [specs[name], CONFIG])
                page.wait_for_timeout(200)
                result = page.evaluate(SCRUB_JS, PASSES)
                if "error" in result:
                    raise RuntimeError(f"{name}: {result['error']}")
                passes = result["passes"]
                out[name]["fps"].append(1e3 * sum(q["redraws"] for q in passes)
                                        / sum(q["ms"] for q in passes))
                start = busy()
                steps = page.evaluate(STEP_JS)
                out[name]["busy"].append(1e3 * (busy() - start) / len(steps))
                out[name]["steps"] += steps
        browser.close()
    return out


def run(quick=False, rev="HEAD", datasets=("sonar",), n_trees=200, splits=10, log=print):
    """Run the benchmark; return its Markdown section."""
    former = former_plots(rev)
    rows, server = [], []
    for dataset in datasets:
        figs, seconds = figures(dataset, n_trees, splits, former)
        got = measure(figs, repeats=2 if quick else 3)
        b, a = got["before"], got["after"]
        fps_b, fps_a = median(b["fps"]), median(a["fps"])
        busy_b, busy_a = median(b["busy"]), median(a["busy"])
        rows.append([dataset, n_trees, splits, len(figs["after"].frames),
                     f"{fps_b:.0f}", f"{fps_a:.0f}", f"{fps_a / fps_b:.2f}",
                     f"{busy_b:.1f}", f"{busy_a:.1f}", f"{busy_a / busy_b:.2f}",
                     f"{percentile(b['steps'], 90):.1f}", f"{percentile(a['steps'], 90):.1f}",
                     f"{b['bytes'] / 1e3:.0f}", f"{a['bytes'] / 1e3:.0f}"])
        server.append([dataset, f"{seconds['paths before']:.2f}", f"{seconds['paths after']:.2f}",
                       f"{1e3 * seconds['figure before']:.0f}",
                       f"{1e3 * seconds['figure after']:.0f}"])
        log(json.dumps({"dataset": dataset, "fps": [b["fps"], a["fps"]],
                        "busy": [b["busy"], a["busy"]]}))
    return "\n".join([
        f"## λ scrubber frame rate (before: `{rev}`, after: the working tree)\n",
        (f"Chromium headless, blank page, Plotly.js {PLOTLY_JS.name} (plotly "
         f"{plotly.__version__}), chart {WIDTH} px "
         f"wide; drag: {PASSES} passes across the grid per repeat; step: every frame, both "
         "ways.\n"),
        table(["dataset", "l", "splits", "frames", "drag fps before", "drag fps after",
               "ratio", "busy ms/frame before", "busy ms/frame after", "ratio",
               "step ms before (p90)", "step ms after (p90)", "spec kB before",
               "spec kB after"], rows),
        "\nServer side (cold: every λ solved; before = one split, after = every split):\n",
        table(["dataset", "paths s before", "paths s after", "figure ms before",
               "figure ms after"], server)])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.archive.scrubber", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="HEAD", help="the former version (a git revision)")
    parser.add_argument("--datasets", nargs="+", default=["sonar"])
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(f"Machine: {machine()}\n")
    print(run(args.quick, args.rev, args.datasets, args.trees, args.splits,
              log=lambda s: print(s, file=sys.stderr)))


if __name__ == "__main__":
    main()
