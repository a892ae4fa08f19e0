"""The classroom benchmark's harness (harness/classroom.py) reports what it measured.

Fast: the report's section replaces only its own part of results/serve.md, and the
detector of injected elements finds what a rendered value makes.  Slow: the ``planted``
and ``inject`` cases at minimal size against ``scripts/serve.sh --replicas 2``, checked
against what the test reads itself (the planted file, the cache entry's tag).
"""

import hashlib
import json
import pickle
import shutil
import struct

import pytest

from harness import classroom, serve


def _figure(passed):
    return classroom.Figure("inject", "links rendered", "0", "0" if passed else "2", passed,
                            ["one detail"])


def test_the_section_replaces_only_itself(tmp_path):
    path = tmp_path / "serve.md"
    path.write_text("# Serving a class: 1 replica vs 2 behind nginx\n\nrates\n\n"
                    "# Serving a class through faults\n\nfaults\n")
    settings = classroom.Settings()
    classroom.write_section(path, classroom.report([_figure(False)], settings, when="t1"))
    first = path.read_text()
    # Before the fault section, whose writer keeps what comes before its heading.
    assert first.index("rates") < first.index(classroom.HEADING) < first.index("faults")
    assert "| inject | links rendered | 2 | 0 | **MISS** |" in first
    classroom.write_section(path, classroom.report([_figure(True)], settings, when="t2"))
    second = path.read_text()
    assert second.count(classroom.HEADING) == 1 and "**MISS**" not in second
    assert "| inject | links rendered | 0 | 0 | **PASS** |" in second
    assert second.startswith("# Serving a class: 1 replica vs 2") and second.endswith("faults\n")


def test_a_figure_that_could_not_be_measured_is_not_a_pass():
    assert classroom.Figure("x", "y", "0", "-", None).verdict == "not measured"
    assert classroom.Figure("x", "y", "-", "12 MiB", None).verdict == "information"


def test_the_planted_entry_follows_the_format(tmp_path):
    payload = pickle.dumps("value")
    key = {"a": 1}
    entry = classroom.planted_entry(key, payload)
    key_bytes = json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
    magic = b"SDWEC-CACHE\x03\n"  # sdwec/cache.py's format 3
    fields = struct.pack(">Q32sQ", len(key_bytes), hashlib.sha256(payload).digest(),
                         len(payload))
    assert entry == magic + fields + bytes(32) + key_bytes + payload


@pytest.mark.browser
def test_the_injection_detector_sees_rendered_markers():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = classroom._launch(playwright)
        try:
            page = browser.new_page()
            page.set_content("<p>plain INJTEXT</p><strong>INJBOLD</strong>"
                             "<a href='/?dataset=INJNAV%20evil.invalid'>a page's own link</a>")
            # Plain text, and the page's own link carrying the value in its query: nothing.
            assert page.evaluate(classroom.MADE_JS, ["INJTEXT"]) == []
            assert page.evaluate(classroom.MADE_JS, ["INJNAV"]) == []
            assert len(page.evaluate(classroom.MADE_JS, ["INJBOLD"])) == 1
            # A link to the injected host is found whatever its text.
            page.set_content("<a href='https://evil.invalid/x'>here</a>")
            assert len(page.evaluate(classroom.MADE_JS, ["INJNONE"])) == 1
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(300)
def test_planted_and_inject_at_minimal_size():
    if serve.NGINX is None:
        pytest.fail("Debian's nginx is not installed: run `apt-get install nginx`")
    if shutil.which("chromium") is None:
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium`")
    settings = classroom.Settings(inject_values=1, n_trees=10, warm=False)
    logged = []
    figures = classroom.run(["planted", "inject"], settings, log=logged.append)
    by = {f.case: f for f in figures}
    assert set(by) == {"planted", "inject"}, [classroom.line(f) for f in figures]
    # Planted: refused (the code in its pickle never ran), then rebuilt and signed.
    planted = by["planted"]
    assert planted.passed is True and planted.value == "refused", planted.detail
    assert any("now signed" in d for d in planted.detail)
    assert any("is not signed with this cache's key" in d for d in planted.detail)
    # Inject: one value in each of the four keys is four page loads.
    inject = by["inject"]
    assert f"{len(classroom.INJECT_KEYS)} links" in inject.what
    assert inject.passed is (inject.value == "0")
    assert any(f"of {len(classroom.INJECT_KEYS)} pages showed" in d for d in inject.detail)
    assert [line for line in logged if line.startswith("  serve.sh up")]
