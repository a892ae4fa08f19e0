"""The installed package: a wheel built from this tree works outside it, without Streamlit.

The wheel is built from a copy of the source tree (the build writes ``build/`` and
``*.egg-info`` next to the sources, which must not land in the checkout), installed with
``pip install --target`` into a temporary folder, and used by fresh Python processes started
in another folder whose path holds that folder and stand-ins for ``streamlit`` (and, for the
base install, ``plotly``) that raise ImportError.  Everything runs offline: no build isolation,
no index.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import sdwec
from sdwec import export
from sdwec.pool import build_pool

ROOT = Path(__file__).resolve().parent.parent
# Top-level entries of a checkout that are not sources (environments, caches, git).
_NOT_SOURCES = {".git", ".venv", "venv", "build", "dist", "test-output", ".pytest_cache",
                ".hypothesis"}

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


def _copy_sources(destination):
    def ignore(folder, names):
        skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
        if Path(folder) == ROOT:
            skip |= _NOT_SOURCES & set(names)
        return skip

    shutil.copytree(ROOT, destination, ignore=ignore)


def _pip(*args):
    subprocess.run([sys.executable, "-m", "pip", *args, "--no-index", "--quiet",
                    "--disable-pip-version-check"], check=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, site folder) of the package built from this tree and installed by pip."""
    tmp = tmp_path_factory.mktemp("install")
    _copy_sources(tmp / "src")
    _pip("wheel", str(tmp / "src"), "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"))
    (wheel,) = (tmp / "dist").glob("sdwec-*.whl")
    _pip("install", "--no-deps", "--target", str(tmp / "site"), str(wheel))
    return wheel, tmp / "site"


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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stand_ins), str(site)])}
    env.pop("PYTHONHOME", None)
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_wheel_holds_the_library_only_with_its_metadata(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    info = f"sdwec-{sdwec.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {"sdwec", info}  # no tests/, pages/, app.py
    assert not [n for n in names if n.startswith(("tests/", "pages/"))]
    assert "sdwec/estimator.py" in names and "sdwec/__main__.py" in names
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
from sdwec import DataError, datasets
try:
    datasets.load("wine")
except DataError as exc:
    print("refused:", exc)
os.environ[datasets.DATA_ENV] = sys.argv[1]
print("rows:", len(datasets.load("wine").y))
"""


def test_installed_package_reads_the_datasets_from_the_named_folder(installed, tmp_path):
    _, site = installed
    text = _outside(site, tmp_path, [sys.executable, "-c", _LOAD_WINE, str(ROOT / "data")])
    refused, rows = text.strip().splitlines()
    assert refused.startswith("refused:") and "SDWEC_DATA_DIR" in refused
    assert rows == "rows: 178"
