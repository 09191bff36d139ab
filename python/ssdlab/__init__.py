"""ssdlab: a deterministic SSD simulator (the Python package over the Rust core ssdlab._core)."""

from ssdlab._core import __version__
from ssdlab.errors import SsdlabError

__all__ = ["SsdlabError", "__version__"]
