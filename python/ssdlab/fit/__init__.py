"""``ssdlab fit`` and ``ssdlab predict``: a simulated twin of a measured drive (docs/fit.md).

`measurements` reads result directories (only what a device run records), `figures` computes the
figures compared, `twin` turns knobs into a drive file, `engine` fits, `report` writes the fit
report, `predict` runs workloads on a twin.
"""

from ssdlab.fit.engine import FitResult, fit
from ssdlab.fit.measurements import Measurements, read_measurements
from ssdlab.fit.twin import Knobs, to_toml

__all__ = ["FitResult", "Knobs", "Measurements", "fit", "read_measurements", "to_toml"]
