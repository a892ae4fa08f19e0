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


def _tree_modules():
    """Every module of the library, the app and the shared harness, as paths from the root."""
    return sorted(str(path.relative_to(ROOT)) for top in ("sdwec", "dashboard", "pages", "harness")
                  for path in (ROOT / top).rglob("*.py") if "__pycache__" not in path.parts)


def test_architecture_doc_names_every_module():
    modules = _tree_modules()
    assert {"sdwec/solver.py", "dashboard/pools.py", "pages/frontier.py",
            "harness/literal.py"} <= set(modules)
    doc = (ROOT / "docs" / "architecture.md").read_text()
    missing = [m for m in modules if f"`{m}`" not in doc]
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


def _cached_functions(path):
    """Names of the functions of ``path`` decorated with ``st.cache_data`` or
    ``st.cache_resource`` (called with options or not)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target) in ("st.cache_data", "st.cache_resource"):
                    yield node.name


def test_clear_caches_names_every_streamlit_cache_of_the_app():
    from dashboard import caches

    found = {(f"dashboard.{path.stem}", name) for path in sorted((ROOT / "dashboard").glob("*.py"))
             for name in _cached_functions(path)}
    assert len(found) >= 10  # the pools, the pages' computations, the figures
    listed = {(cached.__module__, cached.__name__) for cached in caches.CACHED}
    assert not found - listed, f"dashboard.caches.CACHED misses {sorted(found - listed)}"
    assert listed == found
    pages = [(str(path.relative_to(ROOT)), name)
             for path in sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
             for name in _cached_functions(path)]
    assert pages == [], "a page caches on its own; move it to dashboard/ and list it in caches"


#: The app's modules that compute and keep state; everything else in dashboard/ is a view, a
#: server hook or pure.  What they may use of Streamlit: the session's state and the caches.
COMPUTING = ("pools", "pool_memory", "page_pools", "estimates", "training", "upload_plans",
             "explorer_cache", "frontier_cache", "paper_cache", "caches")
NOT_DRAWING = {"st.session_state", "st.cache_data", "st.cache_resource"}


def test_modules_that_compute_draw_nothing():
    drawn = {}
    for name in COMPUTING:
        path = ROOT / "dashboard" / f"{name}.py"
        uses = {ast.unparse(node) for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "st"}
        if uses - NOT_DRAWING:
            drawn[name] = sorted(uses - NOT_DRAWING)
    assert drawn == {}, f"draws outside a view: {drawn}"


def test_tests_benchmarks_and_the_harness_do_not_import_each_other():
    # What both run lives in harness/; the harness is the tests' and the benchmarks' own.
    rules = {"tests": ("benchmarks",), "benchmarks": ("tests",), "harness": ("tests", "benchmarks")}
    offenders = [f"{p.relative_to(ROOT)} imports {name}"
                 for folder, banned in rules.items() for p in (ROOT / folder).rglob("*.py")
                 for name in _imports(p) if name.split(".")[0] in banned]
    assert offenders == []


def test_no_tracked_text_names_an_issue_number():
    # Comments, docstrings and docs say what and why; which issue asked for it is the git
    # log's to keep.  results/ holds dated records, a changelog is history by design.
    import re

    listed = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.sh", "*.toml"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    pattern = re.compile(r"[Ii]ssues? #?[0-9]+")
    offenders = [name for name in listed
                 if not name.startswith("results/") and name != "CHANGELOG.md"
                 and (ROOT / name).is_file()
                 and pattern.search((ROOT / name).read_text(encoding="utf-8", errors="replace"))]
    assert offenders == [], f"issue numbers in {offenders}; say what or why instead"
