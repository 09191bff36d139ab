"""The re-probe of issue 22 in CI: `scripts/probe-hardening.py` reproduces every example of the
issue as its own case against the real CLI (a subprocess in a temporary directory). Running all of
it takes a few minutes on two cores, so CI runs a representative subset: at least one case of every
class of the issue, chosen among the fast ones, two at a time (about 25 s of CPU; 30-60 s of wall
time on a two-core machine, depending on what else runs). The slow cases (signals at many
moments, device runs through fio, Dask clusters, the silent scheduler) are kept closed by their own
tests (tests/test_sweep_hardening.py, tests/test_fio_hardening2.py, tests/test_hardening_values.py,
tests/test_signal_leaves.py; the start-up signals deterministically, at chosen statements, in
test_hardening_values). The whole probe:
``python scripts/probe-hardening.py``."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX nodes, FIFOs and signals")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "probe-hardening.py"


def _probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("probe_hardening", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the file runs
    spec.loader.exec_module(module)
    return module


probe = _probe()

# one or more per class of the issue (1 output sinks ... 8 the Python API); see the module doc
REPRESENTATIVES = [
    # 1. output sinks
    "sink-report-o-mknod-null", "sink-fio-output-mknod-full", "sink-fio-output-dev-null", "sink-fio-output-fifo",
    "sink-fio-output-full-fs",
    # 2. paths leaving the result directory
    "path-fio-log-dotdot", "path-sweep-section-dotdot", "path-hdtach-into-consistency-dir",
    # 3. tracebacks
    "tb-report-summary-nested-json", "tb-report-iops-inf", "tb-api-sweep-none",
    # 4. silent acceptance
    "acc-consistency-block-size-1GiB", "acc-fio-rwmixread-101", "acc-drive-idle-delay-1e300",
    # 5. unbounded work
    "unb-sweep-1000x1000", "unb-fio-loops-100000",
    # 6. long names
    "long-out-255",
    # 7. messages that point nowhere
    "tb-fio-number_ios-400-digits",
    # 8. the Python API
    "api-from-dict-non-string-key", "api-run-steps-idle-nan",
]


def test_every_class_of_the_issue_has_cases_and_a_representative_here() -> None:
    by_name = {c.name: c for c in probe.CASES}
    assert len(by_name) == len(probe.CASES), "case names are unique"
    assert set(REPRESENTATIVES) <= set(by_name), set(REPRESENTATIVES) - set(by_name)
    classes = {c.klass for c in probe.CASES}
    assert classes == {str(k) for k in range(1, 9)}
    assert {by_name[n].klass for n in REPRESENTATIVES} == classes
    assert len(probe.CASES) >= 100


def test_the_representative_cases_of_the_re_probe_pass() -> None:
    cases = [c for c in probe.CASES if c.name in REPRESENTATIVES]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(probe.run_case, cases))
    for d in probe._SHARED.values():  # the result directories the cases copied
        import shutil

        shutil.rmtree(d.parent, ignore_errors=True)
    failed = [f"{c.name}: expected {c.expected}; got {text}" for c, verdict, text, _ in rows if verdict == "FAIL"]
    assert failed == []
    skipped = [c.name for c, verdict, _, _ in rows if verdict == "SKIP"]
    if skipped:  # not root: the mknod and tmpfs cases
        assert all(name.startswith("sink-") for name in skipped), skipped
