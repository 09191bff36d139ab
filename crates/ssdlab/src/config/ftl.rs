//! Flash translation layer and garbage-collection knobs: over-provisioning, the GC policy, mode
//! and watermarks, striping and idle-time GC. (Their defaults live with `DriveConfig` in
//! `config/mod.rs`.)

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{MapCache, SlcCache};
use crate::error::{Error, Result};

/// Flash translation layer settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Over-provisioning: physical / user − 1. The user capacity is physical / (1 + op).
    pub op: f64,
    /// Which closed block GC cleans next.
    pub gc_policy: GcPolicy,
    /// Blocks sampled by the d-choices policy.
    pub d_choices: u32,
    /// Foreground GC starts when a die has this many free blocks or fewer.
    pub gc_low_free_blocks: u32,
    /// Foreground GC reclaims until the die has this many free blocks.
    pub gc_high_free_blocks: u32,
    /// When GC runs: on demand (foreground, at the low watermark), actively in the background,
    /// or "clean up later" (nothing until a die runs dry, then a drive-wide batch that stalls
    /// the host).
    pub gc_mode: GcMode,
    /// `active` mode: background GC keeps each die's free pool at this many blocks.
    pub active_gc_free_blocks: u32,
    /// `on-demand` mode: once a die's free pool falls to the low watermark, each host page written
    /// to it is followed by this multiple of the copies that would keep the pool level (its
    /// victim's valid / invalid data), until the pool is back at the high watermark.
    pub gc_catch_up: f64,
    /// `clean-up-later` mode: once a die's pool is at or below `gc_high_free_blocks` (what a
    /// batch leaves: the dirty drive between stalls), the units of data it copies per unit the
    /// host writes, whatever its victim holds (a fixed GC budget per write); absent: the share
    /// `gc_catch_up` of the break-even copies there too.
    pub gc_copies_between_stalls: Option<f64>,
    /// How host pages are spread over dies: to the die that frees first (`dynamic`), or in a
    /// fixed rotation (`round-robin`, where one busy die holds up the write buffer).
    pub striping: Striping,
    /// Idle-time GC; absent: the firmware does nothing while the host is idle.
    pub idle_gc: Option<IdleGc>,
    /// Inline compression (SandForce DuraWrite-like): writes take `compressibility` of their
    /// size in NAND, in 512-byte sectors.
    pub compression: bool,
    /// SLC write cache (host writes go to blocks programmed in pSLC mode first, and are folded
    /// into native blocks later); absent: every host write goes to native blocks.
    pub slc_cache: Option<SlcCache>,
    /// Mapping cache of a DRAM-less drive (part of the L2P table in SRAM and HMB, the rest read
    /// from translation pages on NAND); absent: the whole table is in DRAM. Left out of the
    /// serialised config when absent, so the configs of drives with DRAM read as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<MapCache>,
}

impl FtlConfig {
    /// Free blocks per die the GC keeps: the active-GC target in active mode, else the high
    /// watermark. `validate` requires this many spare blocks (plus 3); the capacity rule keeps
    /// dies large enough for it.
    pub fn free_block_reserve(&self) -> u32 {
        if self.gc_mode == GcMode::Active {
            self.active_gc_free_blocks
        } else {
            self.gc_high_free_blocks
        }
    }
}

/// When garbage collection runs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    OnDemand,
    Active,
    CleanUpLater,
}

/// How host pages are assigned to dies.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Striping {
    Dynamic,
    RoundRobin,
}

/// Idle-time GC: once the host has been idle for `delay_s`, the firmware rewrites fragmented
/// logical ranges in LBA order (defragmenting, so later sequential writes free whole blocks),
/// using at most `duty` of each die's time, until the host returns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdleGc {
    pub delay_s: f64,
    pub duty: f64,
}

/// GC victim selection policies. Each lives in its own module under `gc/` and cites its source.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    Greedy,
    Fifo,
    CostBenefit,
    DChoices,
}

impl GcPolicy {
    pub const ALL: [GcPolicy; 4] = [
        GcPolicy::Greedy,
        GcPolicy::Fifo,
        GcPolicy::CostBenefit,
        GcPolicy::DChoices,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::Fifo => "fifo",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::DChoices => "d-choices",
        }
    }
}

impl fmt::Display for GcPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GcPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        GcPolicy::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown GC policy '{s}'; choose one of greedy, fifo, cost-benefit, d-choices"
                ))
            })
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse() {
        for p in GcPolicy::ALL {
            assert_eq!(p.as_str().parse::<GcPolicy>().unwrap(), p);
        }
        assert!("lru".parse::<GcPolicy>().is_err());
    }
}
