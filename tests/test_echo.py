"""A user's text in the page's Markdown is shown as the characters it is (dashboard.echo).

The expectations are CommonMark's rules (tests/shown.py), and the passes Streamlit 1.67's
Markdown makes over the text after escapes are resolved (its autolinks, logo shortcode and
arrows, read in its bundle). That the browser draws these cases as text, with no link,
image or emphasis, was checked in Chromium; tests/test_browser.py does it for a link.
"""

import re

import pytest

from dashboard.echo import LITERAL_LIMIT, literal, plain
from tests.shown import as_read, code_spans

HOSTILE = "**bold** [Log in again](https://evil.example) ![x](https://evil.example/t.png)"

#: (value, what the reader sees): control characters as their escapes.
CASES = [
    (HOSTILE, HOSTILE),
    ("`a` ``b`` ```", "`a` ``b`` ```"),
    ("`", "`"),
    ("``", "``"),
    (" `x` ", " `x` "),
    ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
    ('<img src=x onerror="alert(1)"> <b>b</b>', '<img src=x onerror="alert(1)"> <b>b</b>'),
    ("&lt; &amp; &#65;", "&lt; &amp; &#65;"),
    ("$x^2$ and $$y$$", "$x^2$ and $$y$$"),
    ("x\n# H\n\n- item", "x\\n# H\\n\\n- item"),
    ("tab\there\r", "tab\\there\\r"),
    ("nul\x00 bell\x07", "nul\\x00 bell\\x07"),
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
    (":smile: :red[red] :streamlit:", ":smile: :red[red] :streamlit:"),
    (":material/home: a:material/b", ":material/home: a:material/b"),
    ("https://evil.example www.evil.example", "https://evil.example www.evil.example"),
    ("WWW.Evil.example a@b.co x.y@c.org", "WWW.Evil.example a@b.co x.y@c.org"),
    ("a -> b <- c -- d", "a -> b <- c -- d"),
    ("a\\*b\\", "a\\*b\\"),
    ("| a | b |", "| a | b |"),
    ("  two spaces  ", "  two spaces  "),
    ("mine.csv", "mine.csv"),
    ("👨\u200d👩\u200d👧 family", "👨\u200d👩\u200d👧 family"),
]


@pytest.mark.parametrize("value, seen", CASES)
def test_a_literal_is_inline_code_showing_the_value(value, seen):
    markdown = literal(value)
    contents, outside = code_spans(markdown)
    assert "".join(contents) == seen
    # Nothing outside the code but the invisible joiners between spans.
    assert set(outside) <= {"\u2060"}, outside
    assert "\n" not in markdown and "\r" not in markdown  # one line: no block can start
    # Streamlit turns this into an icon name before parsing, inside code too.
    assert ":material/" not in markdown


def test_a_long_literal_is_cut():
    contents, outside = code_spans(literal("x" * 1000))
    assert contents == ["x" * LITERAL_LIMIT] and outside == "…"
    assert literal("y" * 5, limit=3) == "`yyy`…"


def test_an_empty_literal_is_still_a_box():
    assert code_spans(literal("")) == ([" "], "")


#: Markdown characters that start nothing anywhere in a line: left as they are.
_INERT = set(",;?'\"%/")


@pytest.mark.parametrize("value, seen", CASES)
def test_plain_text_is_escaped_and_reads_as_itself(value, seen):
    markdown = plain(value)
    # Line breaks read as spaces; the rest as the literal shows it.
    expected = re.sub(r"(\\n|\\r|\\t)+", " ", seen) if re.search(r"[\n\r\t]", value) else seen
    assert as_read(markdown) == expected
    # Every ASCII punctuation character that could start Markdown is backslash-escaped
    # (CommonMark: then it is a literal character).
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", markdown)
    assert not [c for c in unescaped if c.isascii() and not c.isalnum() and not c.isspace()
                and c not in _INERT], markdown
    assert "\n" not in markdown


@pytest.mark.parametrize("value, seen", CASES)
def test_plain_text_escapes_what_streamlit_finds_after_the_escapes(value, seen):
    # The text Streamlit's later passes see: escapes resolved, word joiners kept.
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", plain(value))
    assert not re.search(r"(https?://|(^|[\s\W])www(?=\.))", text, re.IGNORECASE), text
    assert not re.search(r"[-.\w+]@", text), text  # an e-mail autolink's local part
    assert ":streamlit:" not in text and ":material/" not in text
    assert not re.search(r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)", text), text


def test_a_sentence_keeps_its_words():
    assert plain("There is no column named 'x'.") == "There is no column named 'x'\\."
    assert plain(ValueError("bad value, 3")) == "bad value, 3"
