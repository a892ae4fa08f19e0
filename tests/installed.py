"""The wheel built from this tree, and a fresh virtual environment it is installed in.

Shared by tests/test_install.py and tests/test_docs.py and built once per test run (a few
seconds).  Nothing is written into the checkout: the wheel is built from a copy of the source
tree (a build writes ``build/`` and ``*.egg-info`` next to the sources), offline (no build
isolation, no index).

The environment is a new ``venv`` (no pip of its own) into which the project's pip installs the
wheel as a user's ``pip install`` does: the package files, the ``sdwec`` console script, the
metadata.  Its third-party packages (numpy, ..., streamlit, plotly: the ``dashboard`` extra) are
not downloaded again: one ``.pth`` line puts this test environment's site-packages *after* the
venv's own, so ``sdwec`` itself can only come from the wheel (the tests check
``sdwec.__file__``).
"""

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Top-level entries of a checkout that are not sources (environments, caches, git).
_NOT_SOURCES = {".git", ".venv", ".venv-min", "venv", "build", "dist", "test-output",
                ".pytest_cache", ".hypothesis"}
_BUILT = {}


def _copy_sources(destination):
    def ignore(folder, names):
        skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
        if Path(folder) == ROOT:
            skip |= _NOT_SOURCES & set(names)
        return skip

    shutil.copytree(ROOT, destination, ignore=ignore)


def pip(*args, python=None):
    """Run the test environment's pip offline (on ``python``'s environment if given)."""
    target = [] if python is None else ["--python", str(python)]
    subprocess.run([sys.executable, "-m", "pip", *target, *args, "--no-index", "--quiet",
                    "--disable-pip-version-check"], check=True, timeout=300)


def wheel(tmp_path_factory):
    """Path of ``sdwec-*.whl`` built from this tree (once per test run)."""
    if "wheel" not in _BUILT:
        tmp = tmp_path_factory.mktemp("wheel")
        _copy_sources(tmp / "src")
        pip("wheel", str(tmp / "src"), "--no-deps", "--no-build-isolation", "-w",
            str(tmp / "dist"))
        (_BUILT["wheel"],) = (tmp / "dist").glob("sdwec-*.whl")
    return _BUILT["wheel"]


def venv(tmp_path_factory):
    """Folder of a fresh virtual environment holding the installed wheel (once per run)."""
    if "venv" not in _BUILT:
        folder = tmp_path_factory.mktemp("venv") / "env"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)],
                       check=True, timeout=120)
        python = folder / "bin" / "python"
        pip("install", "--no-deps", str(wheel(tmp_path_factory)), python=python)
        own = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_path('purelib'))"], check=True,
                             capture_output=True, text=True).stdout.strip()
        (Path(own) / "_test_dependencies.pth").write_text(
            "\n".join(site.getsitepackages()) + "\n")
        _BUILT["venv"] = folder
    return _BUILT["venv"]


def outside_env(**extra):
    """Environment variables for a process run outside the checkout: no PYTHONPATH, no
    ``SDWEC_DATA_DIR`` (the installed copy must find its own datasets)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "SDWEC_DATA_DIR")}
    env.update({k: str(v) for k, v in extra.items()})
    return env
