//! How a job ends besides its limits: errors (fio's `error`), and jobs ending jobs (fio's
//! `exitall`, `exit_what`, `exitall_on_error`).
//!
//! fio (3.33, backend.c `thread_main`, libfio.c `fio_terminate_threads`): `exitall` is global --
//! any job that sets it makes every job, when it ends, terminate the jobs `exit_what` names:
//! `group` (the default) the jobs of its reporting group, `stonewall` every job running (the
//! jobs that run together here), `all` every job, also those not started yet (they never run).
//! `exitall_on_error` does the same for a job that ends in error. A terminated job stops issuing
//! requests; those in flight complete and count; it ends, and so triggers its own `exit_what` in
//! turn.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which jobs a job's end terminates (fio's `exit_what`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ExitWhat {
    /// The jobs of its reporting group.
    #[default]
    Group,
    /// Every job running.
    Stonewall,
    /// Every job, also those that have not started.
    All,
}

/// A job's exit rules.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct Exit {
    #[serde(default)]
    pub what: ExitWhat,
    /// Terminate when this job ends (fio's `exitall`, set for every job when any job sets it).
    #[serde(default)]
    pub on_end: bool,
    /// Terminate when this job ends in error (fio's `exitall_on_error`).
    #[serde(default)]
    pub on_error: bool,
    /// The job's reporting group (fio's `groupid`), which `group` terminates.
    #[serde(default)]
    pub group: u32,
}

/// An error a job ended with, as fio reports it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    /// fio's `error`: the errno (5 EIO, 110 ETIMEDOUT).
    pub errno: i32,
    /// What failed (fio's `func=`): `check_min_rate`, `max latency exceeded`.
    pub func: String,
    /// fio's source location of the failure, as fio 3.33 prints it (`file:backend.c:1131`).
    pub at: String,
    /// The line fio logs to stderr.
    pub message: String,
}

/// How a job's phase ended, beyond its figures.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
    /// Errors counted and let go (fio's `continue_on_error` with `ignore_error`): `total_err`.
    #[serde(skip_serializing_if = "is_zero")]
    pub ignored_errors: u64,
    /// The first of them (fio's `first_error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_ignored_error: Option<i32>,
    /// When another job's end made this one stop (ns since the phase started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminated_at_ns: Option<u64>,
    /// This job's end terminated every job, also those not started (`exit_what=all`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ends_all: bool,
    /// `latency_target`: the depth the search ended at (fio's `latency_depth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    /// `latency_target`: when the final window at the found depth started; the job's requests,
    /// bytes and latencies count from there (fio resets its statistics), its series is whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats_start_ns: Option<u64>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// errno values fio reports.
pub const EIO: i32 = 5;
pub const ETIMEDOUT: i32 = 110;

impl super::Workload {
    /// Checks the fio semantics fields (rate process and floor, latency target, flow, offset
    /// modifiers, block alignment) against the workload and its span.
    pub(super) fn check_fio_semantics(&self, name: &str, span_bytes: u64) -> Result<()> {
        use super::{Pattern, RateProcess, Rw};
        use crate::units::SECTOR_BYTES;
        let err = |m: String| Err(Error::Workload(format!("{name}: {m}")));
        if self.rate_process == RateProcess::Poisson
            && self.rate_iops.is_none()
            && self.rate_iops_per_direction.iter().all(Option::is_none)
        {
            return err("poisson arrivals need a rate (rate_iops)".into());
        }
        if self.rate_process == RateProcess::Poisson
            && self
                .rate_iops
                .iter()
                .chain(self.rate_iops_per_direction.iter().flatten())
                .any(|r| *r < 1.0)
        {
            // fio's usec_for_io (backend.c): iops = bps / min_bs is 0, and 1000000 / iops
            // divides by zero.
            return err(
                "poisson arrivals need at least one request per second (fio divides by zero below it)"
                    .into(),
            );
        }
        if let Some(r) = &self.rate_min {
            if let Err(m) = r.validate() {
                return err(m);
            }
        }
        if let Some(l) = &self.latency_target {
            if let Err(m) = l.validate() {
                return err(m);
            }
        }
        if let Some(s) = &self.sequencer {
            if s.add_bytes.unsigned_abs() % SECTOR_BYTES != 0 {
                return err(format!(
                    "an offset modifier of {} bytes is not a whole number of 512-byte sectors",
                    s.add_bytes
                ));
            }
            if matches!(self.rw, Rw::Mixed | Rw::TrimWrite) {
                return err(
                    "offset modifiers need a one-direction workload (fio keeps one position per direction)"
                        .into(),
                );
            }
            if self.position_buckets > 0 {
                return err("offset modifiers do not go with position buckets".into());
            }
            let random = self.pattern == Pattern::Random;
            if (random && s.add_bytes != 0) || (!random && (s.every != 1 || s.identical)) {
                return err(
                    "an offset modifier adds bytes to sequential offsets and counts requests between random ones"
                        .into(),
                );
            }
            if s.passes == Some(0) {
                return err("an offset modifier's pass limit must be positive".into());
            }
        }
        if self.block_align_bytes > 0 {
            if self.block_align_bytes % SECTOR_BYTES != 0 {
                return err(format!(
                    "block alignment of {} bytes is not a whole number of 512-byte sectors",
                    self.block_align_bytes
                ));
            }
            if self.pattern != Pattern::Random || self.random_map {
                return err(
                    "block alignment applies to random offsets drawn without a random map (as fio)"
                        .into(),
                );
            }
            if self.block_align_bytes > span_bytes {
                return err(format!(
                    "block alignment of {} bytes is larger than the span ({span_bytes} bytes)",
                    self.block_align_bytes
                ));
            }
        }
        Ok(())
    }
}
