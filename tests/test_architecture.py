"""The layout's promises: the library never needs Streamlit, the pages stay thin."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import sdwec

ROOT = Path(__file__).resolve().parent.parent

# Importing streamlit anywhere in this process fails, as it does where it is not installed.
_BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "streamlit" or name.startswith("streamlit."):
            raise ImportError("streamlit is not installed here")
sys.meta_path.insert(0, Block())
"""


def _modules():
    return sorted(m.name for m in pkgutil.iter_modules(sdwec.__path__, "sdwec."))


def test_every_library_module_imports_without_streamlit():
    modules = _modules()
    assert {"sdwec.solver", "sdwec.pool", "sdwec.experiments", "sdwec.plots"} <= set(modules)
    code = _BLOCK + "\n".join(f"import {m}" for m in modules) + (
        "\nassert not any(n.split('.')[0] == 'streamlit' for n in sys.modules), 'streamlit'"
        "\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_no_library_file_mentions_streamlit_in_an_import():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "sdwec").rglob("*.py")
                 if any(name.split(".")[0] == "streamlit" for name in _imports(p))]
    assert offenders == []


def test_pages_are_thin():
    # Pages read widgets, call the library and the dashboard package, and draw: no numerical
    # code of their own, and no page imports another page.
    for page in sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]:
        roots = {name.split(".")[0] for name in _imports(page)}
        assert roots <= {"streamlit", "dashboard", "sdwec", "dataclasses"}, (page.name, roots)
