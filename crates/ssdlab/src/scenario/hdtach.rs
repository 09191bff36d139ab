//! HD Tach: a sequential write pass with large blocks over areas spread across the user span,
//! recording MB/s against LBA position (seed articles 000 and 002), on a clean drive and optionally
//! after torture. Like HD Tach, which "reads from areas all over the hard drive and reports an
//! average speed" (its documentation), a pass writes a sample at the start of each of its 200
//! positions, not every LBA: `sample_pct` of each position (100 writes the whole span).

use serde::{Deserialize, Serialize};

use super::{Procedure, Step, StepResult};
use crate::error::{Error, Result};
use crate::workload::{Pattern, PhaseResult, Rw, Workload};

/// Label prefix of the steps that are HD Tach passes; the rest of the label names the pass.
pub const PASS_PREFIX: &str = "hdtach:";

/// Positions recorded per pass: one per 0.5 % of the span.
pub const BUCKETS: u32 = 200;

/// A standalone HD Tach run: a clean pass, and a pass after `torture_minutes` of torture.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HdTach {
    /// Minutes of 4 KiB QD32 random writes after a sequential fill before the second pass; 0
    /// runs the clean pass only.
    pub torture_minutes: f64,
    /// Compressibility of the data written (1.0: incompressible).
    pub compressibility: f64,
    pub block_bytes: u64,
    pub queue_depth: u32,
    /// Percent of each position a pass writes, at the position's start.
    pub sample_pct: f64,
}

/// Percent of each position an HD Tach pass writes by default.
pub const SAMPLE_PCT: f64 = 50.0;

impl Default for HdTach {
    fn default() -> Self {
        HdTach {
            torture_minutes: 0.0,
            compressibility: 1.0,
            block_bytes: 128 * 1024,
            queue_depth: 1,
            sample_pct: SAMPLE_PCT,
        }
    }
}

/// How an HD Tach pass writes: request size, queue depth, data, and the requests written at the
/// start of each position (0: all of them).
#[derive(Clone, Copy, Debug)]
pub struct PassSpec {
    pub block_bytes: u64,
    pub queue_depth: u32,
    pub compressibility: f64,
    pub sample_blocks: u64,
}

impl PassSpec {
    /// The pass of `block_bytes` requests at `queue_depth` writing `sample_pct` percent of each
    /// position of a `user_bytes` drive (at least one request per position).
    pub fn new(
        user_bytes: u64,
        block_bytes: u64,
        queue_depth: u32,
        compressibility: f64,
        sample_pct: f64,
    ) -> Result<PassSpec> {
        if !(sample_pct.is_finite() && sample_pct > 0.0 && sample_pct <= 100.0) {
            return Err(Error::Workload(format!(
                "an HD Tach pass writes a percentage of each position in (0, 100], got {sample_pct}"
            )));
        }
        let per_bucket = user_bytes / block_bytes.max(1) / u64::from(BUCKETS);
        let sample_blocks = if sample_pct >= 100.0 {
            0
        } else {
            ((per_bucket as f64 * sample_pct / 100.0).round() as u64).max(1)
        };
        Ok(PassSpec {
            block_bytes,
            queue_depth,
            compressibility,
            sample_blocks,
        })
    }
}

/// The figures of one pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PassSummary {
    pub name: String,
    /// Mean of the position samples, MB/s (10^6 bytes).
    pub avg_mb_s: f64,
    pub min_mb_s: f64,
    /// `avg_mb_s` as a percentage of the clean pass's.
    pub pct_of_clean: Option<f64>,
    /// MB/s at each 0.5 % of the span.
    pub curve: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HdTachSummary {
    pub passes: Vec<PassSummary>,
}

/// The workload of one pass named `name`.
pub fn pass(name: &str, spec: PassSpec) -> Step {
    Step::Run {
        workload: Workload {
            label: format!("{PASS_PREFIX}{name}"),
            rw: Rw::Write,
            pattern: Pattern::Sequential,
            block_bytes: spec.block_bytes,
            queue_depth: spec.queue_depth,
            compressibility: spec.compressibility,
            position_buckets: BUCKETS,
            position_sample_blocks: spec.sample_blocks,
            ..Workload::default()
        },
    }
}

/// Sequential fill of the whole span, then `minutes` of 4 KiB QD32 random writes.
pub fn fill_and_torture(minutes: f64, compressibility: f64) -> Result<[Step; 3]> {
    if !(minutes.is_finite() && minutes > 0.0) {
        return Err(Error::Workload(format!(
            "torture needs a positive number of minutes, got {minutes}"
        )));
    }
    Ok([
        Step::SecureErase,
        Step::Run {
            workload: Workload {
                compressibility,
                ..Workload::sequential_fill(128 * 1024)
            },
        },
        Step::Run {
            workload: Workload {
                label: format!("torture {}", minutes_label(minutes)),
                duration_s: Some(minutes * 60.0),
                compressibility,
                ..Workload::default()
            },
        },
    ])
}

/// "20 min", "1.5 min".
pub fn minutes_label(minutes: f64) -> String {
    if minutes.fract() == 0.0 {
        format!("{minutes:.0} min")
    } else {
        format!("{minutes} min")
    }
}

/// MB/s at each position bucket of a pass: the bytes written there over the time since the
/// previous position's last request completed.
pub fn curve(phase: &PhaseResult) -> Vec<f64> {
    let mut prev = 0u64;
    phase
        .position_done_ns
        .iter()
        .zip(&phase.position_bytes)
        .map(|(&done, &bytes)| {
            let bytes = bytes as f64;
            let dt = done.saturating_sub(prev).max(1) as f64 / 1e9;
            prev = prev.max(done);
            bytes / dt / 1e6
        })
        .collect()
}

/// Summaries of every pass among `results`, in run order; the first is the clean baseline.
pub fn summarize_passes(results: &[StepResult]) -> HdTachSummary {
    let mut passes: Vec<PassSummary> = results
        .iter()
        .filter_map(|r| {
            let name = r.label.strip_prefix(PASS_PREFIX)?;
            let c = curve(r.phase.as_ref()?);
            let avg = c.iter().sum::<f64>() / c.len().max(1) as f64;
            let min = c.iter().copied().fold(f64::INFINITY, f64::min);
            Some(PassSummary {
                name: name.to_string(),
                avg_mb_s: avg,
                min_mb_s: min,
                pct_of_clean: None,
                curve: c,
            })
        })
        .collect();
    if let Some(clean) = passes.first().map(|p| p.avg_mb_s) {
        for p in &mut passes {
            p.pct_of_clean = Some(100.0 * p.avg_mb_s / clean);
        }
    }
    HdTachSummary { passes }
}

/// Checks that a pass over `user_bytes` has at least one request per position bucket.
pub(super) fn check_pass_span(user_bytes: u64, block_bytes: u64) -> Result<()> {
    if block_bytes == 0 || user_bytes / block_bytes < u64::from(BUCKETS) {
        return Err(Error::Workload(format!(
            "an HD Tach pass records {BUCKETS} positions, so the drive needs room for {BUCKETS} requests of {} KiB; \
             this one has {} KiB: use a larger --capacity",
            block_bytes / 1024,
            user_bytes / 1024
        )));
    }
    Ok(())
}

impl Procedure for HdTach {
    type Summary = HdTachSummary;

    fn summarize(&self, results: &[StepResult], _user_bytes: u64) -> HdTachSummary {
        summarize_passes(results)
    }

    fn steps(&self, user_bytes: u64) -> Result<Vec<Step>> {
        check_compressibility(self.compressibility)?;
        check_pass_span(user_bytes, self.block_bytes)?;
        let spec = PassSpec::new(
            user_bytes,
            self.block_bytes,
            self.queue_depth,
            self.compressibility,
            self.sample_pct,
        )?;
        let mut steps = vec![Step::SecureErase, pass("clean", spec)];
        if self.torture_minutes != 0.0 {
            steps.extend(fill_and_torture(
                self.torture_minutes,
                self.compressibility,
            )?);
            let name = format!("after {} torture", minutes_label(self.torture_minutes));
            steps.push(pass(&name, spec));
        }
        Ok(steps)
    }
}

pub(super) fn check_compressibility(c: f64) -> Result<()> {
    if c > 0.0 && c <= 1.0 {
        Ok(())
    } else {
        Err(Error::Workload(format!(
            "compressibility must be in (0, 1] (1 = incompressible), got {c}"
        )))
    }
}
