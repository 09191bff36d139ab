"""The package's one error type.

Every mistake in user input (a drive file, a size, a parameter, an output directory) raises
`SsdlabError` with a one-line message that says what is wrong and how to fix it. It subclasses
`ValueError`, and it is the very class the Rust core raises, so one ``except`` catches both.
"""

import re

from ssdlab._core import SsdlabError

__all__ = ["SsdlabError", "shorten_numerals"]

_LONG_NUMERAL = re.compile(r"\d{41,}")


def _shorten(match: "re.Match[str]") -> str:
    digits = match.group(0)
    return f"{digits[:12]}...({len(digits)} digits)"


_LONG_WORD = re.compile(r"\S{401,}")


def _shorten_word(match: "re.Match[str]") -> str:
    word = match.group(0)
    return f"{word[:60]}...({len(word)} characters)"


def shorten_numerals(message: str) -> str:
    """`message` with every run of more than 40 digits shortened to its first twelve and its length,
    and then every word of more than 400 characters (a 5000-character value or path quoted back) to
    its first sixty and its length, so what a check quotes back stays a short, readable line. The
    CLI's error line and the sweep spec's messages go through it."""
    return _LONG_WORD.sub(_shorten_word, _LONG_NUMERAL.sub(_shorten, message))
