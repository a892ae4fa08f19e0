"""What a reader sees of the Markdown a page sends, for tests that compare it with the text
it carries (``dashboard.echo``): CommonMark's rules for backslash escapes and inline code
spans, written out here, not taken from the code under test."""

import re

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_WORD_JOINER = "\u2060"


def as_read(markdown):
    """``markdown`` with its backslash escapes resolved and its invisible word joiners
    dropped: ``a\\*b\\:\u2060 c`` reads ``a*b: c``. Nothing else is undone, so formatting
    left in the Markdown stays visible to the assertion."""
    return _ESCAPE.sub(r"\1", markdown).replace(_WORD_JOINER, "")


def code_spans(markdown):
    """``(contents, outside)``: what each inline code span of ``markdown`` shows, in order
    (CommonMark 6.1: a run of n backticks opens, the next run of exactly n closes; line
    endings read as spaces; one space is stripped from each end when both ends have one
    and the content is not all spaces), and the text outside the spans."""
    contents, outside, i = [], [], 0
    while i < len(markdown):
        opening = re.compile(r"`+").search(markdown, i)
        if opening is None:
            outside.append(markdown[i:])
            break
        if markdown[opening.start() - 1:opening.start()] == "\\":  # an escaped backtick
            outside.append(markdown[i:opening.end()])
            i = opening.end()
            continue
        n = len(opening.group())
        closing = re.compile(r"(?<!`)`{%d}(?!`)" % n).search(markdown, opening.end())
        if closing is None:  # no span: the backticks are text
            outside.append(markdown[i:opening.end()])
            i = opening.end()
            continue
        outside.append(markdown[i:opening.start()])
        content = markdown[opening.end():closing.start()].replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        contents.append(content)
        i = closing.end()
    return contents, "".join(outside)
