"""SNIA IOTTA's SYSTOR '17 traces (Lee et al., SYSTOR '17): ``Timestamp,Response,IOType,LUN,Offset,Size``
with that header; Unix seconds, response in seconds, offsets and sizes in bytes, IOType R, W or blank
(no response was captured: not a request). The fixture is written here in that format (the name
follows the distribution's ``<YYYYMMDDHH>-LUN<n>.csv.gz``)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import List, Tuple

import pytest

import ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.replay.formats import FORMATS, SystorParser, sniff

from fixtures.blktrace import TRACES

FIXTURE = TRACES / "2016022219-LUN3.csv"


def drive() -> ssdlab.DriveConfig:
    return ssdlab.load_preset("mlc-256").with_user_capacity(16 * 2**30)


def rows() -> List[Tuple[str, ...]]:
    """The fixture's data rows, split as csv would, nothing of ssdlab's parser used."""
    return [tuple(line.split(",")) for line in FIXTURE.read_text().splitlines()[1:]]


def test_a_line_reads_in_seconds_and_bytes() -> None:
    p = SystorParser()
    assert p("1456135200.004127000,0.000412000,W,3,1208156160,4096") == (1, 1208156160, 4096, 1456135200004127000,
                                                                          "3")
    assert p.token == 412_000, "the response time, in ns"
    assert p("1456135200.019822000,0.001906000,R,3,37748736,65536")[:3] == (0, 37748736, 65536)
    assert p("1456135200.140550000,0.000000000,,3,0,0") is None, "a blank IOType: no response, not a request"
    with pytest.raises(ValueError, match="IOType 'X' is neither R, W nor blank"):
        p("1456135200.140550000,0.1,X,3,0,4096")
    assert FORMATS["systor"].header and FORMATS["systor"].device == "LUN"


def test_its_header_names_the_format() -> None:
    name, why = sniff(FIXTURE.read_text().splitlines(keepends=True)[:20])
    assert name == "systor" and "Timestamp,Response,IOType,LUN,Offset,Size" in why
    headerless = FIXTURE.read_text().splitlines(keepends=True)[1:]
    assert sniff(headerless)[0] == "systor", "the data rows alone look like it too"


@pytest.mark.parametrize("compressed", [False, True])
def test_a_systor_trace_replays_with_exact_bytes(tmp_path: Path, compressed: bool) -> None:
    path = FIXTURE
    if compressed:
        path = tmp_path / (FIXTURE.name + ".gz")
        path.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    s = ssdlab.replay(path, drive()).summary
    data = rows()
    assert s["format"] == "systor" and s["devices"] == 1
    assert s["host_read_bytes"] == sum(int(r[5]) for r in data if r[2] == "R") == 524288
    assert s["host_write_bytes"] == sum(int(r[5]) for r in data if r[2] == "W") == 32768
    assert s["requests"] == sum(1 for r in data if r[2]) == 10
    assert s["lines"]["header"] == 1 and s["lines"]["no_data"] == 1
    # Arrivals follow the timestamps: the last request arrives 2.252184 s after the first.
    assert s["duration_s"] >= 2.252184
    # The Response column is the traced system's latency of each request.
    t = s["trace_latency_us"]
    reads = [float(r[1]) * 1e6 for r in data if r[2] == "R"]
    assert t["read"]["count"] == 4 and t["read"]["mean"] == pytest.approx(sum(reads) / 4)
    assert (t["read"]["min"], t["read"]["max"]) == (288.0, 3125.0)


def test_a_lun_is_a_trace_device(tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines()
    other = [line.replace(",W,3,", ",W,6,") for line in lines[1:] if ",W,3," in line]
    path = tmp_path / "two-luns.csv"
    path.write_text("\n".join(lines + other) + "\n")
    s = ssdlab.replay(path, drive(), trace_device="6").summary
    assert s["requests"] == 6 and s["host_write_bytes"] == 32768 and s["host_read_bytes"] == 0


def test_a_bad_systor_line_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(FIXTURE.read_text() + "1456135203.000000000,0.0001,W,3,-4096,4096\n")
    with pytest.raises(SsdlabError, match=r"line 13: offset -4096 is negative .*--format systor"):
        ssdlab.replay(path, drive())
