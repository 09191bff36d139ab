"""Drive configs: parity with the Rust defaults, presets, TOML files, variants, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
from pydantic import BaseModel

import ssdlab
from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.config import (
    GC_MODES,
    GC_POLICIES,
    STRIPINGS,
    DriveConfig,
    FtlConfig,
    Geometry,
    HostInterface,
    IdleGc,
    Timing,
    load_preset,
)

ROOT = Path(__file__).resolve().parents[1]
RUST_DEFAULTS: Dict[str, Any] = json.loads(_core.default_config())
SECTIONS = {"geometry": Geometry, "timing": Timing, "host": HostInterface, "ftl": FtlConfig}


def _assert_one_line(err: BaseException) -> None:
    text = str(err)
    assert text and "\n" not in text


# -- parity ----------------------------------------------------------------------------------------


def test_top_level_keys_match_rust_exactly() -> None:
    assert set(DriveConfig.model_fields) == set(RUST_DEFAULTS)


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_section_keys_and_defaults_match_rust_exactly(section: str) -> None:
    model = SECTIONS[section]
    rust = RUST_DEFAULTS[section]
    # Left out of both sides' JSON while absent, so a drive with DRAM serialises as before it existed.
    omitted = {"ftl": {"map_cache"}}.get(section, set())
    assert set(model.model_fields) - omitted == set(rust), "a Rust field has no Python mirror (or the reverse)"
    assert all(model.model_fields[k].default is None for k in omitted)
    python = model()

    def plain(v: Any) -> Any:
        return v.model_dump() if isinstance(v, BaseModel) else v

    for key, value in rust.items():
        assert plain(getattr(python, key)) == value, f"{section}.{key}"
        field = model.model_fields[key]
        default = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
        assert plain(default) == value, f"{section}.{key}"


def test_every_top_level_default_matches_rust() -> None:
    cfg = DriveConfig()
    assert cfg.to_dict() == RUST_DEFAULTS
    for key, value in RUST_DEFAULTS.items():
        if not isinstance(value, dict):
            assert getattr(cfg, key) == value
        else:
            assert isinstance(getattr(cfg, key), BaseModel)


def test_gc_policies_are_the_cores() -> None:
    for policy in GC_POLICIES:
        cfg = DriveConfig().with_gc_policy(policy)
        assert json.loads(_core.describe_config(cfg.to_json())) == DriveConfig().describe()
    bad = dict(RUST_DEFAULTS, ftl=dict(RUST_DEFAULTS["ftl"], gc_policy="lru"))
    with pytest.raises(_core.SsdlabError):
        _core.describe_config(json.dumps(bad))


@pytest.mark.parametrize(("key", "names"), [("gc_mode", GC_MODES), ("striping", STRIPINGS)])
def test_ftl_enums_are_the_cores(key: str, names: tuple) -> None:
    assert RUST_DEFAULTS["ftl"][key] in names
    for name in names:
        data = dict(RUST_DEFAULTS, ftl=dict(RUST_DEFAULTS["ftl"], **{key: name}))
        if name == "active":  # active GC needs its own watermark above the foreground one
            data["ftl"]["active_gc_free_blocks"] = data["ftl"]["gc_high_free_blocks"] + 1
        assert getattr(DriveConfig.from_dict(data).ftl, key) == name
        _core.describe_config(json.dumps(data))
    with pytest.raises(ssdlab.SsdlabError, match=f"ftl.{key}"):
        DriveConfig.from_dict({"ftl": {key: "sometimes"}})


def test_idle_gc_fields_are_exactly_the_cores() -> None:
    """The core has no default IdleGc to compare with; it refuses unknown and missing keys."""
    assert FtlConfig().idle_gc is None and RUST_DEFAULTS["ftl"]["idle_gc"] is None
    idle = {name: 0.5 for name in IdleGc.model_fields}
    data = dict(RUST_DEFAULTS, ftl=dict(RUST_DEFAULTS["ftl"], idle_gc=idle))
    _core.describe_config(json.dumps(data))
    assert DriveConfig.from_dict(data).ftl.idle_gc == IdleGc(**idle)
    for name in IdleGc.model_fields:
        partial = dict(data, ftl=dict(data["ftl"], idle_gc={k: v for k, v in idle.items() if k != name}))
        with pytest.raises(_core.SsdlabError):
            _core.describe_config(json.dumps(partial))
        with pytest.raises(ssdlab.SsdlabError, match=f"ftl.idle_gc.{name}: Field required"):
            DriveConfig.from_dict(partial)
    extra = dict(data, ftl=dict(data["ftl"], idle_gc=dict(idle, later=1)))
    with pytest.raises(_core.SsdlabError):
        _core.describe_config(json.dumps(extra))


# -- presets and files -----------------------------------------------------------------------------


def test_presets_round_trip_through_the_core() -> None:
    names = ssdlab.preset_names()
    assert names and names[0] == "mlc-256"
    for name in names:
        cfg = load_preset(name)
        assert cfg.name == name
        assert cfg.to_dict() == json.loads(_core.preset(name))


def test_unknown_preset() -> None:
    with pytest.raises(ssdlab.SsdlabError, match="unknown drive 'nope'") as err:
        load_preset("nope")
    _assert_one_line(err.value)


def test_preset_files_load_like_the_presets() -> None:
    for name in ssdlab.preset_names():
        assert DriveConfig.from_toml_file(ROOT / "configs" / "drives" / f"{name}.toml") == load_preset(name)


def test_a_partial_toml_file_takes_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "d.toml"
    path.write_text('name = "mine"\n[ftl]\nop = 0.28\ngc_policy = "fifo"\n')
    cfg = DriveConfig.from_toml_file(path)
    assert (cfg.name, cfg.ftl.op, cfg.ftl.gc_policy) == ("mine", 0.28, "fifo")
    assert cfg.geometry == Geometry()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[ftl]\nopp = 0.1\n", "ftl.opp: unknown setting"),
        ("[geometri]\n", "geometri: unknown setting"),
        ('[geometry]\nchannels = "8"\n', "geometry.channels"),
        ("[geometry]\nchannels = -1\n", "geometry.channels"),
        ("[geometry]\nchannels = 1.5\n", "geometry.channels"),
        ("[timing]\nread_us = true\n", "timing.read_us"),
        ('[ftl]\ngc_policy = "lru"\n', "ftl.gc_policy"),
        ("[ftl]\nop = 0\n", "over-provisioning"),
        ("[geometry]\npage_bytes = 1000\n", "page_bytes must be a positive multiple of 4096"),
        ("[ftl\n", "not valid TOML"),
        ("[ftl.idle_gc]\nduty = 0.5\n", "ftl.idle_gc.delay_s: Field required"),
        ("[ftl.idle_gc]\ndelay_s = 1\nduty = 0.5\nwhen = 2\n", "known settings here: delay_s, duty"),
        ("[ftl.idle_gc]\ndelay_s = 1\nduty = 2\n", "ftl.idle_gc.duty must be in (0, 1]"),
        ('[ftl]\ngc_mode = "lazy"\n', "ftl.gc_mode"),
    ],
)
def test_bad_drive_files_give_one_line_naming_the_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ssdlab.SsdlabError) as err:
        DriveConfig.from_toml_file(path)
    assert expected in str(err.value)
    assert "bad.toml" in str(err.value)
    _assert_one_line(err.value)


def test_missing_and_binary_drive_files(tmp_path: Path) -> None:
    with pytest.raises(ssdlab.SsdlabError, match="drive file .*none.toml.*: no such file"):
        DriveConfig.from_toml_file(tmp_path / "none.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ssdlab.SsdlabError, match="not UTF-8"):
        DriveConfig.from_toml_file(tmp_path / "bin.toml")


def test_direct_construction_errors_are_ssdlab_errors() -> None:
    with pytest.raises(ssdlab.SsdlabError, match="channels") as err:
        Geometry(channels=True)
    _assert_one_line(err.value)
    with pytest.raises(ssdlab.SsdlabError, match=r"geometry\.channels"):
        DriveConfig(geometry={"channels": "x"})
    with pytest.raises(ssdlab.SsdlabError, match="finite"):
        DriveConfig.from_dict({"ftl": {"op": float("nan")}})
    with pytest.raises(ssdlab.SsdlabError, match="expected a table"):
        DriveConfig.from_dict([1, 2])  # type: ignore[arg-type]


def test_configs_are_frozen() -> None:
    cfg = DriveConfig()
    with pytest.raises(Exception):
        cfg.name = "x"  # type: ignore[misc]


# -- variants and description ----------------------------------------------------------------------


def test_describe() -> None:
    d = DriveConfig().describe()
    assert d["user_capacity_bytes"] == 256_000_000_000
    assert d["physical_capacity_bytes"] == 256 * 2**30
    assert d["dies"] == 32
    assert d["clean_write_iops_bound"] > 0
    assert d["op"] == pytest.approx(RUST_DEFAULTS["ftl"]["op"])


def test_with_user_capacity(small_drive: DriveConfig) -> None:
    d = small_drive.describe()
    assert d["user_capacity_bytes"] == 2 * 2**30
    # The capacity rule keeps the dies and makes them smaller.
    assert d["dies"] == DriveConfig().describe()["dies"] == 32
    assert small_drive.geometry.pages_per_block < DriveConfig().geometry.pages_per_block
    assert small_drive.ftl.op == pytest.approx(DriveConfig().ftl.op, abs=0.01)


@pytest.mark.parametrize("size", [0, -1, 2**64, 2**28, 4096, True, 0.25e9, "-2GiB", "lots"])
def test_with_user_capacity_refuses_bad_sizes(size: Any) -> None:
    with pytest.raises(ssdlab.SsdlabError) as err:
        DriveConfig().with_user_capacity(size)
    _assert_one_line(err.value)


def test_with_user_capacity_takes_size_strings(small_drive: DriveConfig) -> None:
    assert load_preset("mlc-256").with_user_capacity("2GiB") == small_drive


def test_too_small_capacity_names_the_minimum() -> None:
    with pytest.raises(ssdlab.SsdlabError, match="smallest user capacity"):
        DriveConfig().with_user_capacity(2**28)


def test_with_op_keeps_the_physical_nand(small_drive: DriveConfig) -> None:
    before = small_drive.describe()
    after = small_drive.with_op(0.28).describe()
    assert after["physical_capacity_bytes"] == before["physical_capacity_bytes"]
    assert after["user_capacity_bytes"] == pytest.approx(before["physical_capacity_bytes"] / 1.28, rel=1e-5)
    assert after["op"] == pytest.approx(0.28, rel=1e-4)


@pytest.mark.parametrize("op", [0, -0.1, 0.0001, float("nan"), float("inf"), "x"])
def test_with_op_refuses_no_spare_blocks(op: Any) -> None:
    with pytest.raises(ssdlab.SsdlabError) as err:
        DriveConfig().with_op(op)
    _assert_one_line(err.value)


def test_with_gc_policy() -> None:
    assert DriveConfig().with_gc_policy("d-choices").ftl.gc_policy == "d-choices"
    with pytest.raises(ssdlab.SsdlabError, match="choose one of greedy"):
        DriveConfig().with_gc_policy("lru")


def test_json_round_trip() -> None:
    cfg = DriveConfig().with_gc_policy("fifo")
    assert DriveConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ssdlab.SsdlabError, match="not valid JSON"):
        DriveConfig.from_json("{")


def test_adjusted_applies_policy_then_op_then_capacity() -> None:
    base = ssdlab.load_preset("mlc-256")
    cfg = base.adjusted(gc_policy="fifo", op=0.28, capacity="16GB")
    assert cfg.ftl.gc_policy == "fifo"
    assert cfg.describe()["user_capacity_bytes"] == 16_000_000_000
    assert cfg.ftl.op == pytest.approx(0.28, abs=0.01)
    assert cfg == base.with_gc_policy("fifo").with_op(0.28).with_user_capacity("16GB")
    assert base.adjusted() == base


def test_the_map_cache_mirror_round_trips_through_the_core_and_is_absent_when_off() -> None:
    from ssdlab import load_preset

    hmb = load_preset("dramless-hmb")
    assert hmb.ftl.map_cache is not None
    assert hmb.ftl.map_cache.model_dump() == {"sram_kib": 1024, "hmb_mib": 48, "hmb_latency_us": 1.0}
    assert DriveConfig.from_dict(hmb.to_dict()) == hmb
    assert "map_cache" not in load_preset("mlc-256").to_dict()["ftl"]
    assert "map_cache" not in json.loads(load_preset("mlc-256").to_json())["ftl"]
    data = hmb.to_dict()
    data["ftl"]["map_cache"]["sram_kib"] = 4  # less than one 16 KiB translation page
    with pytest.raises(SsdlabError, match="sram_kib") as err:
        DriveConfig.from_dict(data)
    _assert_one_line(err.value)
