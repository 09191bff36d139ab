//! The performance-consistency test (seed articles 001 and 003): secure erase, sequential fill,
//! then 4 KiB random writes at QD32 for 2000 s, IOPS every second.

use serde::{Deserialize, Serialize};

use super::Step;
use crate::error::{Error, Result};
use crate::ftl::write_amplification;
use crate::limits;
use crate::units::UNIT_BYTES;
use crate::workload::{Pattern, PhaseResult, Rw, Workload};

/// Parameters of the performance-consistency test (seed articles 001 and 003).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Consistency {
    /// Percent of user LBAs left unused (never written after the secure erase).
    pub spare_area_pct: f64,
    pub duration_s: f64,
    pub queue_depth: u32,
    pub block_bytes: u64,
    /// Request size of the sequential fill.
    pub fill_block_bytes: u64,
}

impl Default for Consistency {
    fn default() -> Self {
        Consistency {
            spare_area_pct: 0.0,
            duration_s: 2000.0,
            queue_depth: 32,
            block_bytes: 4096,
            fill_block_bytes: 128 * 1024,
        }
    }
}

impl Consistency {
    /// Bytes of the tested span: the first (100 − spare)% of the user space, whole blocks only.
    pub fn span_bytes(&self, user_bytes: u64) -> Result<u64> {
        if !(self.spare_area_pct.is_finite() && (0.0..100.0).contains(&self.spare_area_pct)) {
            return Err(Error::Workload(format!(
                "spare area must be at least 0 and below 100 percent, got {}",
                self.spare_area_pct
            )));
        }
        for (what, bytes) in [
            ("block size", self.block_bytes),
            ("fill block size", self.fill_block_bytes),
        ] {
            if bytes > limits::MAX_BLOCK_BYTES {
                return Err(Error::Workload(format!(
                    "{what} of {bytes} bytes is larger than the {} bytes (32 MiB) a drive takes in one command; \
                     use a smaller block size",
                    limits::MAX_BLOCK_BYTES
                )));
            }
        }
        let raw = (user_bytes as f64 * (1.0 - self.spare_area_pct / 100.0)) as u64;
        let unit = self.fill_block_bytes.max(self.block_bytes).max(UNIT_BYTES);
        let span = raw / unit * unit;
        if span == 0 {
            return Err(Error::Workload(format!(
                "spare area of {}% leaves nothing to test on a drive of {user_bytes} bytes",
                self.spare_area_pct
            )));
        }
        Ok(span)
    }

    /// Secure erase, sequential fill of the span, then 4 KiB random writes at QD32 over it.
    pub fn steps(&self, user_bytes: u64) -> Result<Vec<Step>> {
        let span = self.span_bytes(user_bytes)?;
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(Error::Workload(format!(
                "duration must be a positive number of seconds, got {}",
                self.duration_s
            )));
        }
        Ok(vec![
            Step::SecureErase,
            Step::Run {
                workload: Workload {
                    span_bytes: span,
                    ..Workload::sequential_fill(self.fill_block_bytes)
                },
            },
            Step::Run {
                workload: Workload {
                    label: "random-write".into(),
                    rw: Rw::Write,
                    pattern: Pattern::Random,
                    block_bytes: self.block_bytes,
                    queue_depth: self.queue_depth,
                    span_bytes: span,
                    duration_s: Some(self.duration_s),
                    ..Workload::default()
                },
            },
        ])
    }

    /// First second of the steady-state zoom: t = 1400 s for the reviews' 2000 s runs, 70% of
    /// the duration for shorter runs.
    pub fn zoom_start_s(&self) -> f64 {
        if self.duration_s >= 2000.0 {
            1400.0
        } else {
            (0.7 * self.duration_s).floor()
        }
    }

    /// The figures of `summary.json`, from the random-write phase.
    pub fn summarize(&self, random: &PhaseResult) -> ConsistencySummary {
        let secs = self.duration_s.ceil() as usize;
        let iops: Vec<u64> = {
            let mut v = random.series.total_ios();
            v.resize(secs, 0);
            v
        };
        let mean = |s: &[u64]| {
            if s.is_empty() {
                0.0
            } else {
                s.iter().sum::<u64>() as f64 / s.len() as f64
            }
        };
        let zoom = (self.zoom_start_s() as usize).min(secs.saturating_sub(1));
        let window = |v: &[u64]| v.iter().skip(zoom).take(secs - zoom).sum::<u64>();
        let steady_host = window(&random.series.host_bytes);
        let steady_nand = window(&random.series.nand_units);
        let lat = random.latency[1].as_ref();
        let us = |p: f64| {
            lat.and_then(|l| l.at(p))
                .map_or(0.0, |ns| ns as f64 / 1000.0)
        };
        let burst = burst_seconds(&iops);
        ConsistencySummary {
            iops_clean: mean(&iops[..iops.len().min(10).min(burst.max(1))]),
            burst_s: burst as f64,
            iops_steady_mean: mean(&iops[zoom..]),
            iops_steady_min: iops[zoom..].iter().copied().min().unwrap_or(0),
            zoom_start_s: zoom as f64,
            host_write_bytes: random.counters.host_write_bytes,
            nand_write_bytes: random.counters.nand_write_units * UNIT_BYTES,
            write_amplification: random.counters.write_amplification().unwrap_or(0.0),
            steady_write_amplification: write_amplification(steady_nand, steady_host)
                .unwrap_or(0.0),
            latency_us: LatencySummary {
                p50: us(50.0),
                p99: us(99.0),
                p999: us(99.9),
                max: lat.map_or(0.0, |l| l.max_ns as f64 / 1000.0),
                mean: lat.map_or(0.0, |l| l.mean_ns / 1000.0),
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// Seconds of the fresh drive's burst: until the first second below half the best of the first
/// three (the cliff), or the whole run if there is none.
pub fn burst_seconds(iops: &[u64]) -> usize {
    let best = iops.iter().take(3).copied().max().unwrap_or(0);
    iops.iter()
        .position(|&n| 2 * n < best)
        .unwrap_or(iops.len())
}

/// The consistency test's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConsistencySummary {
    /// Mean IOPS of the fresh drive: over the burst's seconds, at most the first 10.
    pub iops_clean: f64,
    /// Seconds from the start of the random writes to the cliff (see [`burst_seconds`]).
    pub burst_s: f64,
    /// Mean and minimum per-second IOPS in the steady-state zoom window.
    pub iops_steady_mean: f64,
    pub iops_steady_min: u64,
    pub zoom_start_s: f64,
    pub host_write_bytes: u64,
    pub nand_write_bytes: u64,
    /// NAND / host writes over the whole random-write phase.
    pub write_amplification: f64,
    /// NAND / host writes within the zoom window.
    pub steady_write_amplification: f64,
    pub latency_us: LatencySummary,
}
