//! The reviewers' procedures as lists of steps (secure erase, workload phases, idle time, TRIM),
//! one module per procedure with the figures it reports.

mod consistency;
mod hdtach;
mod saturation;
mod torture;
mod used_vs_new;
mod wa;

pub use consistency::{burst_seconds, Consistency, ConsistencySummary, LatencySummary};
pub use hdtach::{summarize_passes, HdTach, HdTachSummary, PassSummary};
pub use saturation::{CurvePoint, Saturation, SaturationSummary};
pub use torture::{Torture, TortureSummary};
pub use used_vs_new::{UsedVsNew, UsedVsNewSummary};
pub use wa::{WorstCaseWa, WorstCaseWaSummary};

use serde::{Deserialize, Serialize};

use crate::drive::Drive;
use crate::error::{Error, Result};
use crate::ftl::Counters;
use crate::limits;
use crate::units::{SimTime, NS_PER_SEC, UNIT_BYTES};
use crate::workload::{PhaseResult, Progress, Rw, Workload};

/// A review procedure (HD Tach, torture, used vs new, worst-case WA): the steps it runs on a
/// drive of `user_bytes`, and the figures it reports from their results.
pub trait Procedure {
    type Summary: Serialize;

    /// The steps, checked against the drive's size.
    fn steps(&self, user_bytes: u64) -> Result<Vec<Step>>;

    /// The procedure's figures from the results of its steps.
    fn summarize(&self, results: &[StepResult], user_bytes: u64) -> Self::Summary;
}

/// One step of a procedure.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
// A procedure has a handful of steps, built once: boxing the workload would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Step {
    /// Erase every block and forget every mapping.
    SecureErase,
    /// Run a workload phase.
    Run { workload: Workload },
    /// Run workload phases at the same time on the drive (fio's jobs without `stonewall`
    /// between them, or a job's `numjobs` clones).
    RunTogether {
        workloads: Vec<Workload>,
        /// Each workload's reporting group (fio's `group_reporting`), if any: the result then
        /// also holds each group's jobs as one (`groups`).
        #[serde(default)]
        report_as: Vec<u32>,
    },
    /// Leave the drive idle.
    Idle { seconds: f64 },
    /// TRIM a byte range (a format TRIMs everything); `length_bytes` 0 means to the end.
    Trim {
        offset_bytes: u64,
        length_bytes: u64,
    },
    /// Turn the drive's volatile write cache on (write-back) or off (write-through; see
    /// [`Drive::set_write_cache`]).
    WriteCache { enabled: bool },
}

impl Step {
    pub fn kind(&self) -> &'static str {
        match self {
            Step::SecureErase => "secure_erase",
            Step::Run { .. } => "run",
            Step::RunTogether { .. } => "run_together",
            Step::Idle { .. } => "idle",
            Step::Trim { .. } => "trim",
            Step::WriteCache { .. } => "write_cache",
        }
    }
}

/// What one step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepResult {
    pub index: usize,
    pub kind: &'static str,
    pub label: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Set for `run` steps; for `run_together` steps, all the jobs as one (see
    /// [`crate::workload::Together`]).
    pub phase: Option<PhaseResult>,
    /// For `run_together` steps: each job's result, in the order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseResult>,
    /// For `run_together` steps with `report_as`: each reporting group's jobs as one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<PhaseResult>,
    /// Drive counters after the step.
    pub counters_after: Counters,
    pub free_blocks_after: u64,
}

/// `SplitMix64`: derives independent per-step seeds from one run seed.
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The simulated time a workload's explicit durations schedule: its start delay, ramp and
/// duration.
fn scheduled_seconds(w: &Workload) -> f64 {
    w.start_delay_s.max(0.0) + w.ramp_s.max(0.0) + w.duration_s.unwrap_or(0.0).max(0.0)
}

/// Checks every step against the drive before anything runs.
pub fn validate_steps(drive: &Drive, steps: &[Step]) -> Result<()> {
    // Explicit durations (run limits, idle) from the drive's current time must stay inside the
    // schedulable horizon, so simulated time cannot overflow (crate::limits).
    let mut scheduled = drive.now().0 as f64 / NS_PER_SEC as f64;
    for (i, step) in steps.iter().enumerate() {
        scheduled += match step {
            Step::Run { workload } => scheduled_seconds(workload),
            Step::RunTogether { workloads, .. } => {
                workloads.iter().map(scheduled_seconds).fold(0.0, f64::max)
            }
            Step::Idle { seconds } => seconds.max(0.0),
            _ => 0.0,
        };
        if scheduled > limits::MAX_SCHEDULED_SECONDS {
            return Err(Error::Workload(format!(
                "step {}: the run's durations add up to more than {:e} simulated seconds, the most a drive \
                 can be scheduled for; shorten them",
                i + 1,
                limits::MAX_SCHEDULED_SECONDS
            )));
        }
        match step {
            Step::Run { workload } => {
                workload
                    .validate(drive.user_units())
                    .map_err(|e| Error::Workload(format!("step {}: {e}", i + 1)))?;
                amount_fits(drive, workload)
                    .map_err(|e| Error::Workload(format!("step {}: {e}", i + 1)))?;
            }
            Step::RunTogether {
                workloads,
                report_as,
            } => {
                if !report_as.is_empty()
                    && (report_as.len() != workloads.len()
                        || report_as.iter().any(|&g| g as usize >= workloads.len()))
                {
                    return Err(Error::Workload(format!(
                        "step {}: report_as needs one group number below {} per workload",
                        i + 1,
                        workloads.len()
                    )));
                }
                if workloads.is_empty() || workloads.len() > limits::MAX_QUEUE_DEPTH as usize {
                    return Err(Error::Workload(format!(
                        "step {}: running together needs 1 to {} workloads, got {}",
                        i + 1,
                        limits::MAX_QUEUE_DEPTH,
                        workloads.len()
                    )));
                }
                for (k, workload) in workloads.iter().enumerate() {
                    workload
                        .validate(drive.user_units())
                        .and_then(|()| amount_fits(drive, workload))
                        .map_err(|e| {
                            Error::Workload(format!("step {}, job {}: {e}", i + 1, k + 1))
                        })?;
                }
            }
            Step::Idle { seconds } => {
                if !(seconds.is_finite() && *seconds > 0.0) {
                    return Err(Error::Workload(format!(
                        "step {}: idle needs a positive duration in seconds, got {seconds}",
                        i + 1
                    )));
                }
            }
            Step::Trim {
                offset_bytes,
                length_bytes,
            } => {
                let (lpn, units) = trim_units(drive, *offset_bytes, *length_bytes)
                    .map_err(|e| Error::Workload(format!("step {}: {e}", i + 1)))?;
                drive
                    .check_range(lpn, units)
                    .map_err(|e| Error::Workload(format!("step {}: {e}", i + 1)))?;
            }
            Step::SecureErase | Step::WriteCache { .. } => {}
        }
    }
    Ok(())
}

/// A phase limited by bytes or requests only must be able to finish inside the clock and its
/// series: even at the host link's full rate (a bound no drive beats) its data would take
/// `bytes / link rate` simulated seconds, which must stay within `limits::MAX_SCHEDULED_SECONDS`
/// and `limits::MAX_INTERVALS` intervals; and it may issue at most `limits::MAX_REQUESTS`.
fn amount_fits(drive: &Drive, w: &Workload) -> Result<()> {
    if w.duration_s.is_some() {
        return Ok(()); // the duration bounds it (Workload::validate)
    }
    let span = if w.span_bytes == 0 {
        drive.user_bytes().saturating_sub(w.offset_bytes)
    } else {
        w.span_bytes
    };
    let bytes = match (w.byte_limit, w.io_limit) {
        (None, None) => span,
        (b, n) => b
            .unwrap_or(u64::MAX)
            .min(n.map_or(u64::MAX, |n| n.saturating_mul(w.block_bytes))),
    };
    let requests = bytes / w.block_bytes.max(1);
    if requests > limits::MAX_REQUESTS {
        return Err(Error::Workload(format!(
            "{requests} requests in one phase; at most {} can be simulated -- lower the byte or IO limit",
            limits::MAX_REQUESTS
        )));
    }
    if w.rw != Rw::Trim {
        let seconds = bytes as f64 / drive.layout().link_bytes_per_s;
        let intervals = seconds * 1000.0 / w.interval_ms;
        if seconds > limits::MAX_SCHEDULED_SECONDS || intervals > limits::MAX_INTERVALS as f64 {
            return Err(Error::Workload(format!(
                "{bytes} bytes take at least {seconds:.3e} simulated seconds even at the host link's full rate, \
                 more than one phase can run and record ({:e} s, {} intervals of {} ms); lower the byte limit",
                limits::MAX_SCHEDULED_SECONDS,
                limits::MAX_INTERVALS,
                w.interval_ms
            )));
        }
    }
    Ok(())
}

fn trim_units(drive: &Drive, offset: u64, length: u64) -> Result<(u64, u64)> {
    if offset % UNIT_BYTES != 0 || length % UNIT_BYTES != 0 {
        return Err(Error::Workload(
            "TRIM offset and length must be multiples of 4096 bytes".into(),
        ));
    }
    let lpn = offset / UNIT_BYTES;
    let units = if length == 0 {
        drive.user_units().saturating_sub(lpn)
    } else {
        length / UNIT_BYTES
    };
    Ok((lpn, units))
}

/// Runs `steps` in order. `observer(step_index, progress)` sees progress within run steps and
/// stops the procedure by returning `false`.
pub fn run_steps(
    drive: &mut Drive,
    steps: &[Step],
    seed: u64,
    observer: &mut dyn FnMut(usize, Progress) -> bool,
) -> Result<Vec<StepResult>> {
    validate_steps(drive, steps)?;
    let mut results = Vec::with_capacity(steps.len());
    for (index, step) in steps.iter().enumerate() {
        let start = drive.now();
        let mut phase = None;
        let mut phases = Vec::new();
        let mut groups = Vec::new();
        let mut label = String::new();
        match step {
            Step::SecureErase => {
                drive.secure_erase();
            }
            Step::Run { workload } => {
                label.clone_from(&workload.label);
                let result = workload.run(drive, derive_seed(seed, index as u64), &mut |p| {
                    observer(index, p)
                })?;
                phase = Some(result);
            }
            Step::RunTogether {
                workloads,
                report_as,
            } => {
                let step_seed = derive_seed(seed, index as u64);
                let seeds: Vec<u64> = (0..workloads.len() as u64)
                    .map(|k| derive_seed(step_seed, k))
                    .collect();
                let jobs: Vec<&Workload> = workloads.iter().collect();
                let together =
                    crate::workload::run_together(&jobs, drive, &seeds, report_as, &mut |p| {
                        observer(index, p)
                    })?;
                label.clone_from(&together.combined.label);
                phase = Some(together.combined);
                phases = together.jobs;
                groups = together.groups;
            }
            Step::Idle { seconds } => {
                drive.idle_until(start + SimTime((seconds * NS_PER_SEC as f64).round() as u64))?;
            }
            Step::Trim {
                offset_bytes,
                length_bytes,
            } => {
                let (lpn, units) = trim_units(drive, *offset_bytes, *length_bytes)?;
                drive.trim_range(lpn, units)?;
            }
            Step::WriteCache { enabled } => drive.set_write_cache(*enabled),
        }
        if !observer(
            index,
            Progress {
                fraction: 1.0,
                sim_seconds: (drive.now() - start).as_secs_f64(),
            },
        ) {
            return Err(Error::Cancelled);
        }
        results.push(StepResult {
            index,
            kind: step.kind(),
            label,
            start_ns: start.ns(),
            end_ns: drive.now().ns(),
            phase,
            phases,
            groups,
            counters_after: drive.counters(),
            free_blocks_after: drive.ftl().free_blocks(),
        });
    }
    Ok(results)
}
