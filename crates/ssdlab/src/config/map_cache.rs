//! The mapping cache's knobs (`[ftl.map_cache]`): a DRAM-less drive keeps only part of its L2P
//! table in controller SRAM, plus an optional NVMe Host Memory Buffer; its checks are in
//! `validate.rs`, its behaviour in `ftl/map_cache.rs`.

use serde::{Deserialize, Serialize};

/// A DFTL-style cached mapping table (Gupta, Kim, Urgaonkar, ASPLOS'09): the L2P table lives in
/// translation pages on NAND (one flash page each, `page_bytes / 4` entries of 4 bytes); the
/// controller caches whole translation pages in SRAM and, when the host grants one, in a Host
/// Memory Buffer. Absent (every preset of a drive with DRAM): the whole table is in DRAM and a
/// lookup costs nothing. See `docs/parameters.md`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MapCache {
    /// Controller SRAM given to the mapping cache, KiB: `sram_kib × 1024 / 4` entries, each
    /// covering one 4 KiB unit (1024 KiB covers 1 GiB of LBAs).
    pub sram_kib: u32,
    /// Host Memory Buffer the host grants for mapping, MiB (NVMe sizes it in 4 KiB pages; 64 MiB
    /// is the usual maximum request); 0: no HMB (a SATA drive, or HMB switched off).
    #[serde(default)]
    pub hmb_mib: u32,
    /// Extra time a lookup served from the HMB takes, µs: the controller's DMA read of host
    /// memory over PCIe, a round trip of the link.
    #[serde(default = "default_hmb_latency_us")]
    pub hmb_latency_us: f64,
}

/// A PCIe round trip for a small read of host memory: about 1 µs (see docs/parameters.md).
pub fn default_hmb_latency_us() -> f64 {
    1.0
}
