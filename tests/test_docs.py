"""Every Python block of the README and the docs runs as written, for a user of the wheel.

Each page's ```python blocks run in one fresh Python process of the virtual environment the
wheel is installed in (tests/installed.py), top to bottom as a reader meets them (a block may
use names an earlier block on the same page defined), in an empty folder outside the checkout,
with a private pool cache and ``SDWEC_DATA_DIR`` unset.  A block that is not meant to run on its
own (a line to paste into a source file) is preceded by ``<!-- fragment -->`` and skipped; the
fragments are listed below, so that marking a block costs a visible change to this test.
"""

import json
import re
import subprocess

import pytest

from tests import installed as build

ROOT = build.ROOT
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix()
                              for p in (ROOT / "docs").glob("*.md")), "data/README.md"]
FRAGMENT = "<!-- fragment -->"
# The pages with a block skipped on purpose (one each), and why.
FRAGMENTS = {
    "docs/methods.md": "an entry of methods.BUILTIN: lines to paste into sdwec/methods.py",
}

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


def python_blocks(page):
    """``(first line, code, is_fragment)`` of every ```python block of ``page``."""
    lines = (ROOT / page).read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match or not match.group(2):
            i += 1
            continue
        indent, language, start = match.group(1), match.group(2), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if language == "python":
            before = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
            blocks.append((start + 1, "\n".join(body) + "\n", before == FRAGMENT))
    return blocks


# Runs in the installed environment: each block in turn, in one namespace, with the page and
# line in its traceback.
_RUNNER = """
import json, sys
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__"}
for name, code in blocks:
    print("running", name, flush=True)
    exec(compile(code, name, "exec"), namespace)
print("done", flush=True)
"""


def test_the_extractor_finds_every_block():
    # Independent count: the fences written ```python in the pages, as grep counts them.
    fences = sum(line.strip() == "```python" for page in PAGES
                 for line in (ROOT / page).read_text().splitlines())
    assert sum(len(python_blocks(page)) for page in PAGES) == fences >= 13
    blocks = python_blocks("README.md")
    assert blocks[0][1].startswith("import numpy as np\nfrom sdwec import solve")


def test_fragments_are_marked_and_listed():
    marked = {page for page in PAGES for _, _, fragment in python_blocks(page) if fragment}
    assert marked == set(FRAGMENTS)
    counts = [sum(fragment for _, _, fragment in python_blocks(page)) for page in marked]
    assert counts == [1] * len(marked)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    return build.venv(tmp_path_factory)


@pytest.mark.parametrize("page", [p for p in PAGES
                                  if any(not f for _, _, f in python_blocks(p))])
def test_page_runs_top_to_bottom_outside_the_checkout(page, venv, tmp_path):
    blocks = [(f"{page}:{line}", code) for line, code, fragment in python_blocks(page)
              if not fragment]
    (tmp_path / "blocks.json").write_text(json.dumps(blocks))
    cwd = tmp_path / "reader"
    cwd.mkdir()
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _RUNNER, str(tmp_path / "blocks.json")],
        cwd=cwd, env=build.outside_env(SDWEC_CACHE_DIR=tmp_path / "cache", MPLBACKEND="Agg"),
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert result.stdout.splitlines()[-1] == "done"
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("running")] \
        == [name for name, _ in blocks]
