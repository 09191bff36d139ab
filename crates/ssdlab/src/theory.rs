//! Analytic write amplification under uniform random single-unit writes (page-level mapping), as
//! in shared/reference/model-notes.md, and the simulator's measurement to compare with it.

use crate::config::{DriveConfig, GcPolicy};
use crate::drive::Drive;
use crate::error::Result;
use crate::scenario::{run_steps, Step};
use crate::units::UNIT_BYTES;
use crate::workload::{Pattern, Workload};

/// FIFO (LRU) cleaning, Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012:
/// the victim's valid fraction x solves x = exp(−α (1 − x)) and WA = 1 / (1 − x), where α is
/// physical / user capacity (1 + spare factor). Independent of block size.
pub fn wa_fifo(alpha: f64) -> f64 {
    let mut x = 0.5;
    for _ in 0..200 {
        x = (-alpha * (1.0 - x)).exp();
    }
    1.0 / (1.0 - x)
}

/// Greedy cleaning with `b` units per block (Bux & Iliadis 2010, Van Houdt 2013), via Desnoyers'
/// approximation WA_fifo(k α) / k with k = 1 + 1/(2b).
pub fn wa_greedy(alpha: f64, b: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * b);
    wa_fifo(k * alpha) / k
}

/// Random cleaning (d-choices with d = 1): α / (α − 1).
pub fn wa_random(alpha: f64) -> f64 {
    alpha / (alpha - 1.0)
}

/// The drive the comparisons use: one die and plane, `blocks` blocks of `units_per_block`
/// one-unit pages, `op` over-provisioning, `policy`, and the smallest GC reserve (1 → 2 blocks),
/// so that α_eff stays close to 1 + `op` as the models assume.
pub fn reference_drive(
    blocks: u32,
    units_per_block: u32,
    op: f64,
    policy: GcPolicy,
) -> DriveConfig {
    let mut cfg = DriveConfig::default();
    cfg.geometry.channels = 1;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.planes_per_die = 1;
    cfg.geometry.blocks_per_plane = blocks;
    cfg.geometry.pages_per_block = units_per_block;
    cfg.geometry.page_bytes = 4096;
    // The models assume every block usable.
    cfg.geometry.bad_block_pct = 0.0;
    cfg.ftl.op = op;
    cfg.ftl.gc_policy = policy;
    cfg.ftl.gc_low_free_blocks = 1;
    cfg.ftl.gc_high_free_blocks = 2;
    cfg.host.write_buffer_kib = 64;
    cfg
}

/// A steady-state measurement: WA and the α it was measured at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub write_amplification: f64,
    /// (blocks − mean free blocks − 2 open blocks) × units per block / user units: the spare
    /// ratio the drive really had (model-notes.md).
    pub alpha_eff: f64,
    /// Mean free blocks per die seen by the measured host writes.
    pub mean_free_blocks_per_die: f64,
}

/// Fills `cfg`'s drive sequentially, writes four drive-fulls of uniform random 4 KiB writes to
/// reach steady state, then measures WA over three more.
pub fn measure_uniform_wa(cfg: &DriveConfig, seed: u64) -> Result<Measured> {
    let mut drive = Drive::new(cfg, seed)?;
    let user = drive.user_units();
    let random = |ios| Step::Run {
        workload: Workload {
            io_limit: Some(ios),
            ..Workload::default()
        },
    };
    let steps = [
        Step::Run {
            workload: Workload {
                pattern: Pattern::Sequential,
                block_bytes: 128 * 1024,
                span_bytes: user * UNIT_BYTES,
                ..Workload::default()
            },
        },
        random(4 * user),
        random(3 * user),
    ];
    let results = run_steps(&mut drive, &steps, seed, &mut |_, _| true)?;
    let c = results[2]
        .phase
        .as_ref()
        .expect("a run step has a phase")
        .counters;
    let layout = drive.layout();
    let blocks = f64::from(layout.total_blocks) - c.mean_free_blocks().unwrap_or(0.0) - 2.0;
    Ok(Measured {
        write_amplification: c.write_amplification().unwrap_or(0.0),
        alpha_eff: blocks * f64::from(layout.units_per_block) / user as f64,
        mean_free_blocks_per_die: c.mean_free_blocks().unwrap_or(0.0) / f64::from(layout.dies),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduce_the_reference_table() {
        // model-notes.md: sf 0.07 -> FIFO 7.82, greedy b=64 7.01; sf 0.25 -> 2.69, 2.60; sf 0.5 -> 1.72.
        assert!((wa_fifo(1.07) - 7.82).abs() < 0.01);
        assert!((wa_greedy(1.07, 64.0) - 7.01).abs() < 0.01);
        assert!((wa_greedy(1.07, 1024.0) - 7.76).abs() < 0.01);
        assert!((wa_fifo(1.25) - 2.69).abs() < 0.01);
        assert!((wa_greedy(1.25, 64.0) - 2.60).abs() < 0.01);
        assert!((wa_fifo(1.5) - 1.72).abs() < 0.01);
        assert!((wa_random(1.5) - 3.0).abs() < 1e-12);
    }
}
