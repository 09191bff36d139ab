//! Shared helpers: small drive geometries and short phases.

use ssdlab::scenario::{run_steps, Step, StepResult};
use ssdlab::{Drive, DriveConfig, GcPolicy, Pattern, Rw, Workload};

/// A one-die drive with `blocks` blocks of `units_per_block` 4 KiB units (one unit per page, one
/// plane), `op` over-provisioning and the given policy. GC keeps a minimal reserve.
pub fn small_drive(blocks: u32, units_per_block: u32, op: f64, policy: GcPolicy) -> DriveConfig {
    let mut cfg = DriveConfig::default();
    cfg.geometry.channels = 1;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.planes_per_die = 1;
    cfg.geometry.blocks_per_plane = blocks;
    cfg.geometry.pages_per_block = units_per_block;
    cfg.geometry.page_bytes = 4096;
    cfg.ftl.op = op;
    cfg.ftl.gc_policy = policy;
    cfg.ftl.gc_low_free_blocks = 1;
    cfg.ftl.gc_high_free_blocks = 2;
    cfg.host.write_buffer_kib = 64;
    cfg
}

pub fn fill(span_bytes: u64) -> Step {
    Step::Run {
        workload: Workload {
            label: "fill".into(),
            rw: Rw::Write,
            pattern: Pattern::Sequential,
            block_bytes: 128 * 1024,
            span_bytes,
            ..Workload::default()
        },
    }
}

pub fn random_writes(label: &str, ios: u64) -> Step {
    Step::Run {
        workload: Workload {
            label: label.into(),
            io_limit: Some(ios),
            ..Workload::default()
        },
    }
}

pub fn run(drive: &mut Drive, steps: &[Step], seed: u64) -> Vec<StepResult> {
    run_steps(drive, steps, seed, &mut |_, _| true).expect("steps run")
}
