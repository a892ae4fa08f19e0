"""The installed package: a wheel built from this tree is complete and works outside it.

Two installs of the same wheel (built offline from a copy of the tree: tests/installed.py):

* ``pip install --target`` into a temporary folder, used by fresh Python processes started in
  another folder whose path holds that folder and stand-ins for ``streamlit`` (and, for the
  base install, ``plotly``) that raise ImportError: the library without the dashboard extra;
* a fresh virtual environment (tests/installed.py says how its dependencies are provided):
  the datasets, the ``sdwec`` command and ``sdwec dashboard`` from a folder outside the
  checkout, with ``SDWEC_DATA_DIR`` unset.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer

import sdwec
from sdwec import export
from sdwec.pool import build_pool
from tests import installed as build

ROOT = build.ROOT

# Run in the installed copy: import sdwec and every module under it, then report as JSON.
_IMPORT_ALL = """
import importlib, json, pkgutil, sys
import sdwec
names = ["sdwec"] + sorted(m.name for m in pkgutil.walk_packages(sdwec.__path__, "sdwec."))
failures = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"file": sdwec.__file__, "version": sdwec.__version__, "modules": names,
                  "failures": failures, "streamlit": "streamlit" in sys.modules,
                  "plotly": "plotly" in sys.modules}))
"""

# Run in the installed copy: load a model file and save its predictions.
_PREDICT = """
import sys
import joblib, numpy as np
model = joblib.load(sys.argv[1])
X = np.load(sys.argv[2])
np.save(sys.argv[3], model.predict(X))
np.save(sys.argv[4], model.predict_proba(X))
assert "streamlit" not in sys.modules and "plotly" not in sys.modules
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, site folder) of the package built from this tree and installed by pip."""
    wheel = build.wheel(tmp_path_factory)
    site = tmp_path_factory.mktemp("install") / "site"
    build.pip("install", "--no-deps", "--target", str(site), str(wheel))
    return wheel, site


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtual environment with the wheel installed."""
    return build.venv(tmp_path_factory)


def _outside(site, tmp_path, argv, blocked=("streamlit",)):
    """Run ``argv`` in ``tmp_path/outside`` with only ``site`` (and the blockers) added to the
    path; the modules named in ``blocked`` raise ImportError there."""
    stand_ins = tmp_path / "blocked"
    stand_ins.mkdir(exist_ok=True)
    for name in blocked:
        (stand_ins / f"{name}.py").write_text(
            f"raise ImportError('{name} is not installed in this test environment')\n")
    cwd = tmp_path / "outside"
    cwd.mkdir(exist_ok=True)
    env = build.outside_env(PYTHONPATH=os.pathsep.join([str(stand_ins), str(site)]))
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _tracked(*paths):
    """Source files at or under ``paths`` (relative to the checkout; no caches)."""
    found = set()
    for path in map(ROOT.joinpath, paths):
        for file in [path] if path.is_file() else path.rglob("*"):
            if file.is_file() and "__pycache__" not in file.parts:
                found.add(file.relative_to(ROOT).as_posix())
    return found


def test_wheel_holds_the_library_datasets_and_dashboard_with_its_metadata(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    info = f"sdwec-{sdwec.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {"sdwec", info}  # nothing at the top level
    assert not [n for n in names if "tests/" in n or "benchmarks/" in n or "scripts/" in n]
    assert "sdwec/estimator.py" in names and "sdwec/__main__.py" in names
    # Every shipped data file (data/ -> sdwec/data/), the dashboard as laid out in the
    # checkout (-> sdwec/app/), and what the app reads at run time.
    data = _tracked("data")
    assert len(data) > 30 and {"sdwec/" + n for n in data} <= names
    app = _tracked("app.py", "dashboard", "pages", ".streamlit/config.toml")
    assert {"app.py", "pages/explorer.py", "dashboard/favicon.png",
            "dashboard/vendor/plotly-basic.min.js"} <= app
    assert {"sdwec/app/" + n for n in app} <= names
    assert {"sdwec/app/docs/algorithm.md", "sdwec/app/results/reproduction/results.csv",
            "sdwec/app/results/oob/results.csv"} <= names
    assert sum(info.file_size for info in zipfile.ZipFile(wheel).infolist()
               if info.filename.startswith("sdwec/data/")) > 3_000_000
    archive = zipfile.ZipFile(wheel)
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert re.search(r"^sdwec = sdwec\.__main__:main$", entry_points, re.M)
    metadata = archive.read(f"{info}/METADATA").decode()
    requires = re.findall(r"^Requires-Dist: (.+)$", metadata, re.M)
    base = {re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in requires if "extra ==" not in r}
    dashboard = {re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in requires
                 if re.search(r"extra == ['\"]dashboard['\"]", r)}
    assert base == {"numpy", "scipy", "scikit-learn", "pandas", "joblib", "threadpoolctl",
                    "tqdm"}
    assert dashboard == {"streamlit", "plotly"}
    assert re.search(r"^Requires-Python: >=3\.11$", metadata, re.M)


def test_every_module_imports_outside_the_checkout_without_streamlit(installed, tmp_path):
    _, site = installed
    report = json.loads(_outside(site, tmp_path, [sys.executable, "-c", _IMPORT_ALL]))
    assert Path(report["file"]).resolve().is_relative_to(site.resolve())  # not this checkout
    assert report["version"] == sdwec.__version__
    assert {"sdwec.estimator", "sdwec.export", "sdwec.plots", "sdwec.__main__"} <= set(
        report["modules"])
    assert report["failures"] == {}
    assert not report["streamlit"]


def test_base_install_without_plotly_needs_it_only_for_the_plots(installed, tmp_path):
    _, site = installed
    report = json.loads(_outside(site, tmp_path, [sys.executable, "-c", _IMPORT_ALL],
                                 blocked=("streamlit", "plotly")))
    assert report["failures"].keys() == {"sdwec.plots"}
    assert "pip install 'sdwec[dashboard]'" in report["failures"]["sdwec.plots"]
    assert not report["streamlit"] and not report["plotly"]


def test_star_import_works_without_plotly(installed, tmp_path):
    _, site = installed
    code = ("from sdwec import *\nimport sys\n"
            "print(SDWECClassifier.__name__, datasets.load('wine').X.shape, "
            "'plotly' in sys.modules)")
    text = _outside(site, tmp_path, [sys.executable, "-c", code],
                    blocked=("streamlit", "plotly"))
    assert text.split() == ["SDWECClassifier", "(178,", "13)", "False"]


def test_console_script_and_module_print_help(installed, tmp_path):
    _, site = installed
    script = site / "bin" / "sdwec"
    text = _outside(site, tmp_path, [str(script), "--help"])
    assert text.startswith("usage: sdwec ") and "reproduce" in text and "frontier" in text
    text = _outside(site, tmp_path, [sys.executable, "-m", "sdwec", "frontier", "--help"])
    assert text.startswith("usage: python -m sdwec frontier") and "--lam-min" in text


def test_downloaded_model_loads_and_predicts_in_the_installed_package(installed, tmp_path):
    _, site = installed
    X, y = load_breast_cancer(return_X_y=True)
    pool = build_pool(X, np.where(y == 1, 1, -1), n_trees=10, seed=0)
    weights = np.zeros(10)
    weights[[1, 4, 6]] = [0.5, 1.0, 0.5]  # 1 against 0.5 + 0.5: tied rows
    model = export.pruned_model(pool, weights)
    assert np.isclose(model.predict_proba(pool.X_test)[:, 1], 0.5, rtol=0, atol=1e-11).any()
    (tmp_path / "model.joblib").write_bytes(export.model_joblib(model))
    np.save(tmp_path / "X.npy", pool.X_test)
    paths = [str(tmp_path / name) for name in ("model.joblib", "X.npy", "labels.npy",
                                               "proba.npy")]
    _outside(site, tmp_path, [sys.executable, "-c", _PREDICT, *paths],
             blocked=("streamlit", "plotly"))
    np.testing.assert_array_equal(np.load(paths[2]), model.predict(pool.X_test))
    np.testing.assert_array_equal(np.load(paths[3]), model.predict_proba(pool.X_test))


_LOAD_WINE = """
import os, sys
from pathlib import Path
from sdwec import DataError, datasets
print("rows:", len(datasets.load("wine").y), Path(datasets.data_dir()).is_relative_to(sys.argv[1]))
os.environ[datasets.DATA_ENV] = sys.argv[2]
try:
    datasets.load("sonar")
except DataError as exc:
    print("refused:", exc)
os.environ[datasets.DATA_ENV] = sys.argv[3]
print("rows:", len(datasets.load("heart").y))
"""


def test_installed_package_reads_its_own_datasets_offline(venv, tmp_path):
    (tmp_path / "empty").mkdir()
    python = venv / "bin" / "python"
    text = _run_outside([str(python), "-c", _LOAD_WINE, str(venv), str(tmp_path / "empty"),
                         str(ROOT / "data")], tmp_path)
    own, refused, named = text.strip().splitlines()
    assert own == "rows: 178 True"  # wine's rows, read from the installed package
    assert refused.startswith("refused:") and "SDWEC_DATA_DIR" in refused
    assert str(tmp_path / "empty") in refused
    assert named == "rows: 297"  # heart from the folder SDWEC_DATA_DIR names


def _run_outside(argv, tmp_path, timeout=300, **env):
    """Run ``argv`` in ``tmp_path/outside`` (created), with :func:`build.outside_env`."""
    cwd = tmp_path / "outside"
    cwd.mkdir(exist_ok=True)
    result = subprocess.run(argv, cwd=cwd, env=build.outside_env(**env), capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_installed_command_line_runs_outside_the_checkout(venv, tmp_path):
    script = venv / "bin" / "sdwec"
    assert _run_outside([str(script), "--version"], tmp_path).strip() == \
        f"sdwec {sdwec.__version__}"
    text = _run_outside([str(script), "frontier", "--dataset", "wine", "--trees", "6",
                         "--points", "3", "--quiet"], tmp_path, SDWEC_CACHE_DIR=tmp_path / "c")
    assert "wrote frontier-wine-binary-s0.csv" in text
    df = pd.read_csv(tmp_path / "outside" / "frontier-wine-binary-s0.csv")
    assert (df["method"] == "SDWEC").sum() == 3 and df["pareto_val"].any()
    # Help names what an installed copy has: no checkout files (every command's help, in one
    # process: each start of the console script costs the imports again).
    text = _run_outside([str(venv / "bin" / "python"), "-c", _ALL_HELP], tmp_path)
    assert text.count("usage: python -m sdwec") == 5 and "'sdwec dashboard'" in text
    assert not re.search(r"scripts/|docs/|\.sh\b|checkout", text), text


_ALL_HELP = """
from sdwec.__main__ import main
for command in ([], ["reproduce"], ["frontier"], ["warm"], ["dashboard"]):
    try:
        main([*command, "--help"])
    except SystemExit as exc:
        assert exc.code == 0
"""


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None, b""


def test_dashboard_command_serves_the_installed_app(venv, tmp_path):
    port = _free_port()
    cwd = tmp_path / "outside"
    cwd.mkdir()
    log = (tmp_path / "dashboard.log").open("w")
    server = subprocess.Popen(
        [str(venv / "bin" / "sdwec"), "dashboard", "--port", str(port),
         "--server.headless", "true"],
        cwd=cwd, env=build.outside_env(SDWEC_CACHE_DIR=tmp_path / "cache", SDWEC_WARM=0),
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        status = None
        while status != 200 and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.5)
            status, body = _get(f"http://127.0.0.1:{port}/_stcore/health")
        assert status == 200 and body == b"ok", (tmp_path / "dashboard.log").read_text()
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and b"<noscript>" in page
    finally:
        server.send_signal(signal.SIGTERM)  # sdwec stops its streamlit child
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
    assert _get(f"http://127.0.0.1:{port}/_stcore/health")[0] is None  # the server stopped
    assert "Warming" not in (tmp_path / "dashboard.log").read_text()  # SDWEC_WARM=0


_APP_TEST = """
import sys
from pathlib import Path
import sdwec
from streamlit.testing.v1 import AppTest
app = Path(sdwec.__file__).parent / "app" / "app.py"
at = AppTest.from_file(str(app), default_timeout=240).run()
assert not at.exception, [e.message for e in at.exception]
def kinds(node):  # the headline and charts are components: count them by kind
    for child in getattr(node, "children", {}).values():
        if child.type == "bidi_component":
            yield child.proto.component_name
        yield from kinds(child)
print("explorer", list(kinds(at.main)).count("sdwec_live"))
at.switch_page("pages/paper.py").run()
assert not at.exception, [e.message for e in at.exception]
print("paper", any("No stored reproduction" in i.value for i in at.info))
"""


def test_installed_app_runs_its_pages(venv, tmp_path):
    # The app as installed (sdwec/app/): its imports, its pages and the stored results it reads.
    # Trained in the page, not by a worker process (AppTest does not rerun on a worker's
    # news), and without the link budget's confirmation (an empty cache here).
    text = _run_outside([str(venv / "bin" / "python"), "-c", _APP_TEST], tmp_path,
                        SDWEC_CACHE_DIR=tmp_path / "cache", SDWEC_OFF_PAGE_SECONDS="inf",
                        SDWEC_LINK_BUDGET_SECONDS="1e9")
    explorer, paper = text.strip().splitlines()[-2:]
    assert explorer.startswith("explorer ") and int(explorer.split()[1]) > 0
    assert paper == "paper False"  # the stored reproduction shipped with the app


def _bounds(lines, operator):
    """``{package: version}`` of the ``package<operator>version`` requirement lines."""
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?" + re.escape(operator)
                             + r"([0-9][0-9A-Za-z.]*)(?:,<[0-9][0-9.]*)?", line)
        if match:
            out[match.group(1).lower()] = match.group(2)
    return out


def test_lower_bounds_are_the_pinned_minimum_versions_the_tests_run_on():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = _bounds(project["dependencies"], ">=")
    extra = _bounds(project["optional-dependencies"]["dashboard"], ">=")
    assert len(base) == len(project["dependencies"]) and set(extra) == {"streamlit", "plotly"}
    pinned = _bounds((ROOT / "requirements-min.txt").read_text().splitlines(), "==")
    checkout = _bounds((ROOT / "requirements.txt").read_text().splitlines(), ">=")
    assert pinned == base  # the library's floors are exactly what the second run installs
    assert checkout == {**base, **extra}
    # Not the newest releases: the floors sdwec was measured passing with.
    assert base["scikit-learn"] == "1.7.2" and base["numpy"] == "2.2.6"
    assert base["pandas"] == "2.3.3" and base["scipy"] == "1.15.3"
    # CI runs scripts/test.sh without arguments, which runs the pinned environment too.
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^bash scripts/test\.sh$", ci, re.M)
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "-r requirements-min.txt" in script and ".venv-min/bin/python -m pytest" in script
