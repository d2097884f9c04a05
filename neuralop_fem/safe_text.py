"""Text read from a file, made safe to print on a terminal or in a one-line message.

A file's attributes, keys and strings are the file author's: printed raw, an escape sequence
(``ESC [ ...``) recolours the terminal or sets its title, a carriage return overwrites the line
shown, a newline forges a line of a summary (``samples: 999``), and a multi-megabyte value
makes a multi-megabyte error line. :func:`printable` is the one conversion every such text
goes through: control characters (C0, DEL, C1), line and paragraph separators and the
bidirectional overrides are written as Python escapes (``\\x1b``, ``\\n``, ``\\u202e``), and
text longer than ``limit`` characters is cut with a note of its length.
"""

from __future__ import annotations

import re

__all__ = ["MESSAGE_LIMIT", "TEXT_LIMIT", "clipped_repr", "printable", "printable_lines"]

#: Characters of one file-sourced value shown in a summary line (``info``).
TEXT_LIMIT = 2000
#: Characters of one value quoted inside an error message.
MESSAGE_LIMIT = 200

#: C0 controls but tab, DEL, C1 controls, the line/paragraph separators, the bidirectional
#: embeddings, overrides and isolates, and the zero-width no-break space.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ufeff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    named = {"\n": "\\n", "\r": "\\r"}
    if char in named:
        return named[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object, *, limit: int = TEXT_LIMIT) -> str:
    """``str(value)`` with every control character escaped, cut to ``limit`` characters.

    Parameters
    ----------
    value : object
        Anything read from a file (a str, a number, an array); converted with ``str``.
    limit : int
        Longest result before the note ``... (N characters)`` that replaces the rest.

    Examples
    --------
    >>> printable("a\\x1b]0;title\\x07b\\nsamples: 999")
    'a\\\\x1b]0;title\\\\x07b\\\\nsamples: 999'
    >>> printable("x" * 50, limit=10)
    'xxxxxxxxxx... (50 characters)'
    """
    text = str(value)
    size = len(text)
    if size > limit:
        text = text[:limit]
    text = _UNSAFE.sub(_escape, text)
    return f"{text}... ({size} characters)" if size > limit else text


def printable_lines(text: str) -> str:
    """Text of several lines (a model card) with its line breaks kept and every other control
    character escaped, as :func:`printable` escapes it; no length limit.

    >>> printable_lines("# card\\nsee \\x1b[31mred\\r")
    '# card\\nsee \\\\x1b[31mred\\\\r'
    """
    return "\n".join(_UNSAFE.sub(_escape, line) for line in str(text).split("\n"))


def clipped_repr(value: object, *, limit: int = MESSAGE_LIMIT) -> str:
    """``repr(value)`` for an error message: escaped and at most about ``limit`` characters.

    ``repr`` of a large container is built only up to the limit's worth of items where
    possible (a YAML alias bomb expands to gigabytes when written out whole).
    """
    return printable(_short_repr(value, limit), limit=limit)


def _short_repr(value: object, limit: int) -> str:
    """``repr`` that stops early for lists, tuples and dicts longer than ``limit`` items or
    nested deeper than a few levels."""
    budget = [limit]

    def walk(obj: object, depth: int) -> str:
        if budget[0] <= 0:
            return "..."
        if isinstance(obj, list | tuple | dict):
            if depth > 4:
                return "[...]" if not isinstance(obj, dict) else "{...}"
            items = list(obj.items())[:limit] if isinstance(obj, dict) else list(obj)[:limit]
            parts = []
            for item in items:
                if budget[0] <= 0:
                    parts.append("...")
                    break
                part = (f"{walk(item[0], depth + 1)}: {walk(item[1], depth + 1)}"
                        if isinstance(obj, dict) else walk(item, depth + 1))
                parts.append(part)
            open_, close = ("{", "}") if isinstance(obj, dict) else \
                ("(", ")") if isinstance(obj, tuple) else ("[", "]")
            return open_ + ", ".join(parts) + close
        text = repr(obj)[: limit + 1]
        budget[0] -= len(text)
        return text

    return walk(value, 0)
