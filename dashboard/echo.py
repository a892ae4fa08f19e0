"""Text that came from a user (a link's values, a file's name, its columns and labels), put
into the Markdown that Streamlit renders (``st.markdown``, ``st.warning``, ``st.caption``,
``st.progress``'s text, ...): shown as the characters it is, never as formatting.

A link could otherwise carry bold text, a "Log in again" link or an image the browser
fetches (phishing, tracking) into a warning that echoes it. Streamlit's Markdown is more than
CommonMark, and each extension needs its own answer (checked in Chromium;
tests/test_echo.py):

* GitHub's autolinks (``https://...``, ``www.``, ``a@b.co``), the ``:streamlit:`` logo and
  the arrows (``->`` as →) are found in the text *after* backslash escapes are resolved, so
  escaping does not stop them; inline code does.
* ``:material/name:`` becomes an icon name before anything is parsed, inside inline code
  too, so :func:`literal` never lets those characters meet.

No Streamlit here: the functions return strings.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["literal", "plain", "LITERAL_LIMIT"]

#: Characters of a value shown; the rest is cut (a link may carry kilobytes).
LITERAL_LIMIT = 200
_WORD_JOINER = "\u2060"  # invisible, and it ends a word for the autolink finder
_ZWJ = "\u200d"  # joins emoji sequences: kept
# ASCII punctuation that can start Markdown (CommonMark lets a backslash escape any of it);
# left out: , ; ? ' " % / which start nothing anywhere in a line.
_ACTIVE = re.compile(r"""([!#$&()*+\-.:<=>@\[\\\]^_`{|}~])""")
# Where Streamlit's passes over the resolved text would still find something.
_FOUND_LATER = re.compile(r"(?<=:)|(?=@)|(?i:(?<=www)(?=\.))|(?<=[-<>=~])(?=[-<>=~])")


def _visible(ch):
    """A control or format character as its Python escape (``\\n``, ``\\u202e``): it would
    otherwise break the line, or reorder or hide what follows."""
    if ch == _ZWJ or not unicodedata.category(ch).startswith("C"):
        return ch
    if ch.isascii():
        return repr(ch)[1:-1]
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def literal(value, limit=LITERAL_LIMIT):
    """``value`` as inline code: shown exactly, in a monospace box that says where it ends.

    For a value inside a sentence: ``f"Unknown dataset {literal(name)}"``.

    Parameters
    ----------
    value : object
        Its ``str`` is shown.
    limit : int
        At most this many characters are shown, then "…".

    Returns
    -------
    str
        Markdown.
    """
    text = str(value)
    cut = len(text) > limit
    text = "".join(_visible(ch) for ch in text[:limit])
    # ":material/" is rewritten in the source, inside code too: two spans keep it apart.
    pieces = re.split(r"(?<=:material)(?=/)", text)
    return _WORD_JOINER.join(_code_span(piece) for piece in pieces) + ("…" if cut else "")


def _code_span(text):
    """``text`` in a code span whose fence is longer than any run of backticks inside it."""
    if not text:
        return "` `"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    # CommonMark strips one space from each end when both ends have one: pad so that
    # what it strips is the padding (also keeps a backtick at an end off the fence).
    pad = " " if (text[0] == "`" or text[-1] == "`" or
                  (text[0] == " " and text[-1] == " " and text.strip(" "))) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plain(text):
    """``text`` escaped so that Markdown shows it as it is: for whole sentences that carry a
    user's text (an error about a file's column, a dataset's description).

    Line breaks become spaces; other control characters show as escapes.

    Parameters
    ----------
    text : object
        Its ``str`` is shown.

    Returns
    -------
    str
        Markdown.
    """
    text = re.sub(r"[\r\n\t]+", " ", str(text))
    text = "".join(_visible(ch) for ch in text)
    text = _FOUND_LATER.sub(_WORD_JOINER, text)
    return _ACTIVE.sub(r"\\\1", text)
