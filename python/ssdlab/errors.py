"""The package's one error type.

Every mistake in user input (a drive file, a size, a parameter, an output directory) raises
`SsdlabError` with a one-line message that says what is wrong and how to fix it. It subclasses
`ValueError`, and it is the very class the Rust core raises, so one ``except`` catches both.
"""

from ssdlab._core import SsdlabError

__all__ = ["SsdlabError"]
