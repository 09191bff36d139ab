//! Shared helpers: small drive geometries.

use ssdlab::{DriveConfig, GcPolicy};

/// A one-die drive with `blocks` blocks of `units_per_block` 4 KiB units (one unit per page, one
/// plane), `op` over-provisioning and the given policy. GC keeps a minimal reserve.
pub fn small_drive(blocks: u32, units_per_block: u32, op: f64, policy: GcPolicy) -> DriveConfig {
    ssdlab::theory::reference_drive(blocks, units_per_block, op, policy)
}
