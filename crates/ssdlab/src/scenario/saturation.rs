//! Write saturation (the reviewers' whole-drive fill, shared/reference/modern-drives.md): a
//! secure-erased drive written once over, sequentially (AnandTech: 128 KiB at QD32; TechPowerUp:
//! sequential) or at random (every block once), recording MB/s against GB written. On a drive with
//! an SLC cache the curve falls off a cliff where the cache runs out. Then, optionally, idle time
//! and a second, shorter write over the start of the drive show how much of the cache came back.
//!
//! With `prefill_pct`, the drive is first filled that far (sequentially, unmeasured) and left idle
//! for a day, as a drive holding old data is; the measured write then covers the rest: a dynamic
//! cache is smaller on a fuller drive.

use serde::{Deserialize, Serialize};

use super::{Procedure, Step, StepResult};
use crate::error::{Error, Result};
use crate::units::{SECTOR_BYTES, UNIT_BYTES};
use crate::workload::{Pattern, PhaseResult, Rw, Workload};

/// Label of the whole-drive write and of the write after idle.
pub const WRITE_LABEL: &str = "saturation:write";
pub const AFTER_IDLE_LABEL: &str = "saturation:after idle";
pub const PREFILL_LABEL: &str = "saturation:prefill";

/// Idle time after the prefill: a day, so every drive that folds while idle has folded it.
pub const PREFILL_IDLE_S: f64 = 86_400.0;

/// The fastest host link the series resolution is planned for (bytes/s): a PCIe 5.0 x4 link.
const FASTEST_LINK_BYTES_S: f64 = 14e9;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Saturation {
    /// `sequential` (the reviews' default) or `random` (every block once, in random order).
    pub pattern: Pattern,
    pub block_bytes: u64,
    pub queue_depth: u32,
    /// Share of the user capacity the first write covers, in percent (100: the whole drive); at
    /// most the part after the prefill.
    pub fill_pct: f64,
    /// Share of the user capacity written (and left idle for a day) before the measured write,
    /// in percent; the measured writes start where it ends. 0: an empty drive.
    pub prefill_pct: f64,
    /// Idle time after the first write, in minutes; 0 skips the idle time and the second write.
    pub idle_minutes: f64,
    /// Size of the second write (sequential, from the start of the drive), in percent of the user
    /// capacity.
    pub after_idle_pct: f64,
    /// Points of the MB/s curve over the first write (each covers an equal share of its bytes).
    pub points: u32,
}

impl Default for Saturation {
    fn default() -> Self {
        Saturation {
            pattern: Pattern::Sequential,
            block_bytes: 128 * 1024,
            queue_depth: 32,
            fill_pct: 100.0,
            prefill_pct: 0.0,
            idle_minutes: 0.0,
            after_idle_pct: 10.0,
            points: 200,
        }
    }
}

/// One point of a curve: GB (10^9 bytes) written so far in the phase and MB/s over the point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CurvePoint {
    pub gb_written: f64,
    pub mb_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SaturationSummary {
    pub user_capacity_bytes: u64,
    /// Percent of the drive filled before the measured write.
    pub prefill_pct: f64,
    /// GB written in the first write.
    pub written_gb: f64,
    /// MB/s at the start (median of the first five points).
    pub mb_s_initial: f64,
    /// GB written before the speed first fell below half of `mb_s_initial` after reaching it (a
    /// slow first point is not the cliff, see `first_below`); `None` if it never did.
    pub cache_gb: Option<f64>,
    /// Mean MB/s before that point, and from it to the end of the first write.
    pub mb_s_in_cache: f64,
    pub mb_s_after_cache: Option<f64>,
    /// Mean MB/s of the whole first write (TechPowerUp's "average to fill").
    pub mb_s_average: f64,
    /// Mean MB/s of the write after idle, and GB of it written before its speed first fell below
    /// the midpoint of `mb_s_in_cache` and `mb_s_after_cache` (half of `mb_s_initial` without a
    /// cliff; its whole size if it never did): the midpoint tells cache speed from a native
    /// speed above half of it (a TLC drive's 2 GB/s after a 4 GB/s cache).
    pub mb_s_after_idle: Option<f64>,
    pub recovered_gb: Option<f64>,
    /// NAND writes / host writes over the first write (folded data counts: it is written twice).
    pub write_amplification: f64,
    /// GB the host wrote into pSLC blocks and GB folded out of them over the first write.
    pub slc_written_gb: f64,
    pub folded_gb: f64,
    pub curve: Vec<CurvePoint>,
    pub after_idle_curve: Vec<CurvePoint>,
}

impl Saturation {
    fn bytes(&self, user_bytes: u64, pct: f64) -> u64 {
        let raw = (user_bytes as f64 * pct / 100.0) as u64;
        raw / self.block_bytes * self.block_bytes
    }

    /// Bytes of the measured write: `fill_pct`, at most what the prefill left.
    fn fill_bytes(&self, user_bytes: u64) -> u64 {
        let pct = self.fill_pct.min(100.0 - self.prefill_pct);
        self.bytes(user_bytes, pct)
    }

    fn write(&self, label: &str, pattern: Pattern, offset: u64, bytes: u64) -> Step {
        // Fine enough that the fastest conceivable write of these bytes spans 4 intervals per point.
        let interval_ms =
            (bytes as f64 / FASTEST_LINK_BYTES_S * 1000.0 / f64::from(4 * self.points)).max(1.0);
        Step::Run {
            workload: Workload {
                label: label.into(),
                rw: Rw::Write,
                pattern,
                block_bytes: self.block_bytes,
                queue_depth: self.queue_depth,
                offset_bytes: offset,
                span_bytes: bytes,
                random_map: pattern == Pattern::Random,
                interval_ms,
                ..Workload::default()
            },
        }
    }
}

/// The MB/s curve of a write phase in points of `bin_bytes`, interpolating within series
/// intervals: each point's time runs from when its first byte's share completed to its last's.
pub fn curve(phase: &PhaseResult, bin_bytes: f64) -> Vec<CurvePoint> {
    let bytes = &phase.series.bytes[1];
    let dt = phase.series.interval_ns as f64 / 1e9;
    let total: u64 = bytes.iter().sum();
    let mut points = Vec::new();
    if bin_bytes <= 0.0 || total == 0 {
        return points;
    }
    let (mut cum, mut last_t, mut next) = (0.0f64, 0.0f64, bin_bytes);
    for (i, &b) in bytes.iter().enumerate() {
        let b = b as f64;
        while b > 0.0 && cum + b >= next - 1e-6 {
            let t = (i as f64 + (next - cum) / b) * dt;
            points.push(CurvePoint {
                gb_written: next / 1e9,
                mb_s: bin_bytes / (t - last_t).max(1e-12) / 1e6,
            });
            last_t = t;
            next += bin_bytes;
        }
        cum += b;
    }
    points
}

/// Bytes / seconds of the points of a curve, each `bin_bytes` (MB/s).
fn mean_mb_s(points: &[CurvePoint], bin_bytes: f64) -> Option<f64> {
    let secs: f64 = points.iter().map(|p| bin_bytes / 1e6 / p.mb_s).sum();
    (!points.is_empty()).then(|| points.len() as f64 * bin_bytes / 1e6 / secs)
}

impl Procedure for Saturation {
    type Summary = SaturationSummary;

    fn steps(&self, user_bytes: u64) -> Result<Vec<Step>> {
        if self.block_bytes == 0 || self.block_bytes % SECTOR_BYTES != 0 {
            return Err(Error::Workload(format!(
                "the saturation block size must be a positive multiple of 512 bytes (a sector), got {}",
                self.block_bytes
            )));
        }
        if !(self.fill_pct > 0.0 && self.fill_pct <= 100.0) {
            return Err(Error::Workload(format!(
                "the saturation fill must be in (0, 100] percent of the drive, got {}",
                self.fill_pct
            )));
        }
        if !(self.prefill_pct.is_finite() && (0.0..100.0).contains(&self.prefill_pct)) {
            return Err(Error::Workload(format!(
                "the prefill must be in [0, 100) percent of the drive, got {}",
                self.prefill_pct
            )));
        }
        if !(self.idle_minutes.is_finite() && (0.0..=166_666.0).contains(&self.idle_minutes)) {
            return Err(Error::Workload(format!(
                "idle minutes must be from 0 to 166666 (10^7 s), got {}",
                self.idle_minutes
            )));
        }
        if !(self.after_idle_pct > 0.0 && self.after_idle_pct <= 100.0) {
            return Err(Error::Workload(format!(
                "the write after idle must be in (0, 100] percent of the drive, got {}",
                self.after_idle_pct
            )));
        }
        if !(10..=10_000).contains(&self.points) {
            return Err(Error::Workload(format!(
                "a saturation curve has 10 to 10000 points, got {}",
                self.points
            )));
        }
        let start = self.bytes(user_bytes, self.prefill_pct);
        let fill = self.fill_bytes(user_bytes);
        // Each point must hold at least the requests in flight, or completions arrive in lumps
        // larger than a point and its speed means nothing.
        let per_point = u64::from(self.points)
            .saturating_mul(self.block_bytes)
            .saturating_mul(u64::from(self.queue_depth.max(1)));
        if fill < per_point {
            return Err(Error::Workload(format!(
                "a saturation curve of {} points needs a queue's worth of requests per point ({} x {} KiB), \
                 {} KiB in all; the write covers {} KiB: use a larger --capacity or --fill-pct, or a smaller \
                 {}",
                self.points,
                self.queue_depth,
                self.block_bytes / 1024,
                per_point / 1024,
                fill / 1024,
                if start > 0 {
                    "--block-size, --qd or --prefill-pct"
                } else {
                    "--block-size or --qd"
                }
            )));
        }
        let mut steps = vec![Step::SecureErase];
        if start > 0 {
            steps.push(self.write(PREFILL_LABEL, Pattern::Sequential, 0, start));
            steps.push(Step::Idle {
                seconds: PREFILL_IDLE_S,
            });
        }
        steps.push(self.write(WRITE_LABEL, self.pattern, start, fill));
        if self.idle_minutes > 0.0 {
            let second = self
                .bytes(user_bytes, self.after_idle_pct)
                .min(user_bytes / self.block_bytes * self.block_bytes - start)
                .max(self.block_bytes);
            steps.push(Step::Idle {
                seconds: self.idle_minutes * 60.0,
            });
            steps.push(self.write(AFTER_IDLE_LABEL, Pattern::Sequential, start, second));
        }
        Ok(steps)
    }

    fn summarize(&self, results: &[StepResult], user_bytes: u64) -> SaturationSummary {
        let fill = self.fill_bytes(user_bytes) as f64;
        let bin = fill / f64::from(self.points);
        let phase = |label: &str| {
            results
                .iter()
                .find(|r| r.label == label)
                .and_then(|r| r.phase.as_ref())
        };
        let first = phase(WRITE_LABEL);
        let points = first.map_or_else(Vec::new, |p| curve(p, bin));
        let mut head: Vec<f64> = points.iter().take(5).map(|p| p.mb_s).collect();
        head.sort_by(f64::total_cmp);
        let initial = head.get(head.len() / 2).copied().unwrap_or(0.0);
        let cliff = first_below(&points, initial / 2.0);
        let (before, after) = points.split_at(cliff.unwrap_or(points.len()));
        let after_idle = phase(AFTER_IDLE_LABEL).map(|p| curve(p, bin));
        let counters = first.map(|p| p.counters).unwrap_or_default();
        let gb = |units: u64| (units * UNIT_BYTES) as f64 / 1e9;
        SaturationSummary {
            user_capacity_bytes: user_bytes,
            prefill_pct: self.prefill_pct,
            written_gb: fill / 1e9,
            mb_s_initial: initial,
            cache_gb: cliff.map(|i| i as f64 * bin / 1e9),
            mb_s_in_cache: mean_mb_s(before, bin).unwrap_or(0.0),
            mb_s_after_cache: mean_mb_s(after, bin),
            mb_s_average: mean_mb_s(&points, bin).unwrap_or(0.0),
            mb_s_after_idle: after_idle.as_deref().and_then(|c| mean_mb_s(c, bin)),
            recovered_gb: after_idle.as_deref().map(|c| {
                let fast = match mean_mb_s(after, bin) {
                    Some(slow) if cliff.is_some() => {
                        (mean_mb_s(before, bin).unwrap_or(initial) + slow) / 2.0
                    }
                    _ => initial / 2.0,
                };
                let n = first_below(c, fast).unwrap_or(c.len());
                n as f64 * bin / 1e9
            }),
            write_amplification: counters.write_amplification().unwrap_or(0.0),
            slc_written_gb: gb(counters.slc_write_units),
            folded_gb: gb(counters.slc_folded_units),
            curve: points,
            after_idle_curve: after_idle.unwrap_or_default(),
        }
    }
}

/// The first point below `mb_s` once the write got going (0 if it never reached `mb_s`; `None`
/// if it never fell below again): a write's first point can be slow for a reason of its own (each
/// die first finishes the native block it had open), and that is not the cache running out.
fn first_below(points: &[CurvePoint], mb_s: f64) -> Option<usize> {
    let Some(start) = points.iter().position(|p| p.mb_s >= mb_s) else {
        return Some(0);
    };
    points[start..]
        .iter()
        .position(|p| p.mb_s < mb_s)
        .map(|i| start + i)
}

#[cfg(test)]
mod tests {
    use super::{first_below, CurvePoint};

    fn points(speeds: &[f64]) -> Vec<CurvePoint> {
        speeds
            .iter()
            .enumerate()
            .map(|(i, &mb_s)| CurvePoint {
                gb_written: i as f64,
                mb_s,
            })
            .collect()
    }

    #[test]
    fn a_slow_first_point_is_not_the_cliff() {
        // A write after a prefill: the first point is slow, then 12 points in the cache, then
        // native speed (the 660p at 80 % full, as `saturation` measured it).
        let mut v = vec![739.0];
        v.extend([1800.0; 12]);
        v.extend([100.0; 20]);
        assert_eq!(first_below(&points(&v), 900.0), Some(13));
    }

    #[test]
    fn a_write_that_never_gets_going_has_nothing_before_the_cliff() {
        assert_eq!(first_below(&points(&[100.0; 10]), 900.0), Some(0));
        assert_eq!(first_below(&points(&[1800.0; 10]), 900.0), None);
    }
}
