"""ssdlab: a deterministic SSD simulator (the Python package over the Rust core ssdlab._core)."""

from ssdlab._core import __version__
from ssdlab.config import DriveConfig, load_preset, preset_names
from ssdlab.errors import SsdlabError

__all__ = ["DriveConfig", "SsdlabError", "__version__", "load_preset", "preset_names"]
