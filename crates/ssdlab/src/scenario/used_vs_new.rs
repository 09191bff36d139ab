//! Used vs new (seed article 004): 4 KiB random-write speed on a clean drive, on a used drive
//! (an "OS" area of valid data, installed as an OS is: written, then partly rewritten in small
//! random writes; the rest filled with data deleted without TRIM, so the drive still holds it as
//! valid), and on the used drive after TRIM of the deleted space.

use serde::{Deserialize, Serialize};

use super::{Procedure, Step, StepResult};
use crate::error::{Error, Result};
use crate::units::UNIT_BYTES;
use crate::workload::{Pattern, Workload};

/// Label prefix of the measuring steps.
pub const TEST_PREFIX: &str = "test:";

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct UsedVsNew {
    /// Bytes the random-write test covers; 0: 8 GB (AnandTech's span) or a quarter of the
    /// drive, whichever is smaller.
    pub test_span_bytes: u64,
    pub duration_s: f64,
    pub queue_depth: u32,
    /// Percent of the drive holding the "OS and applications" (valid, never deleted).
    pub os_pct: f64,
    /// Percent of the OS area rewritten in 4 KiB random writes (QD32) after it is written: the
    /// small files and updates of an OS and application install, "a twist of randomness"
    /// (seed 004, and the SSD Anthology's used state).
    pub os_rewrite_pct: f64,
}

impl Default for UsedVsNew {
    fn default() -> Self {
        UsedVsNew {
            test_span_bytes: 0,
            duration_s: 180.0,
            queue_depth: 3,
            os_pct: 20.0,
            os_rewrite_pct: OS_REWRITE_PCT,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateSummary {
    pub state: String,
    pub mb_s: f64,
    pub iops: f64,
    pub write_amplification: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UsedVsNewSummary {
    pub states: Vec<StateSummary>,
    pub test_span_bytes: u64,
}

const BLOCK: u64 = 128 * 1024;

/// Percent of the OS area rewritten in random writes by default.
pub const OS_REWRITE_PCT: f64 = 100.0;

impl UsedVsNew {
    fn layout(&self, user_bytes: u64) -> Result<(u64, u64)> {
        if !(self.os_pct.is_finite() && (0.0..90.0).contains(&self.os_pct)) {
            return Err(Error::Workload(format!(
                "os_pct must be at least 0 and below 90, got {}",
                self.os_pct
            )));
        }
        if !(self.os_rewrite_pct.is_finite() && (0.0..1000.0).contains(&self.os_rewrite_pct)) {
            return Err(Error::Workload(format!(
                "os_rewrite_pct must be at least 0 and below 1000, got {}",
                self.os_rewrite_pct
            )));
        }
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(Error::Workload(format!(
                "duration must be a positive number of seconds, got {}",
                self.duration_s
            )));
        }
        let os = (user_bytes as f64 * self.os_pct / 100.0) as u64 / BLOCK * BLOCK;
        let span = if self.test_span_bytes == 0 {
            (8_000_000_000u64).min(user_bytes / 4)
        } else {
            self.test_span_bytes
        };
        let span = span / UNIT_BYTES * UNIT_BYTES;
        if span == 0 || os + span > user_bytes {
            return Err(Error::Workload(format!(
                "the test span ({span} bytes) does not fit after the OS area ({os} bytes) on a drive of {user_bytes} bytes"
            )));
        }
        if self.test_span_bytes % UNIT_BYTES != 0 {
            return Err(Error::Workload(format!(
                "the test span must be a whole number of 4 KiB blocks, got {} bytes (never rounded silently)",
                self.test_span_bytes
            )));
        }
        Ok((os, span))
    }
}

impl Procedure for UsedVsNew {
    type Summary = UsedVsNewSummary;

    fn steps(&self, user_bytes: u64) -> Result<Vec<Step>> {
        let (os, span) = self.layout(user_bytes)?;
        let test = |state: &str| Step::Run {
            workload: Workload {
                label: format!("{TEST_PREFIX}{state}"),
                offset_bytes: os,
                span_bytes: span,
                queue_depth: self.queue_depth,
                duration_s: Some(self.duration_s),
                ..Workload::default()
            },
        };
        let fill = |label: &str, offset: u64, len: u64| Step::Run {
            workload: Workload {
                label: label.into(),
                pattern: Pattern::Sequential,
                block_bytes: BLOCK,
                offset_bytes: offset,
                span_bytes: len,
                ..Workload::default()
            },
        };
        let mut steps = vec![Step::SecureErase, test("clean"), Step::SecureErase];
        if os > 0 {
            steps.push(fill("os and applications", 0, os));
            let rewrite =
                (os as f64 * self.os_rewrite_pct / 100.0) as u64 / UNIT_BYTES * UNIT_BYTES;
            if rewrite > 0 {
                steps.push(Step::Run {
                    workload: Workload {
                        label: "os and applications: small writes".into(),
                        offset_bytes: 0,
                        span_bytes: os,
                        byte_limit: Some(rewrite),
                        ..Workload::default()
                    },
                });
            }
        }
        steps.push(fill(
            "data deleted without TRIM",
            os,
            (user_bytes - os) / BLOCK * BLOCK,
        ));
        steps.push(test("used"));
        steps.push(Step::Trim {
            offset_bytes: os,
            length_bytes: 0,
        });
        steps.push(test("used after TRIM"));
        Ok(steps)
    }

    fn summarize(&self, results: &[StepResult], user_bytes: u64) -> UsedVsNewSummary {
        let states = results
            .iter()
            .filter_map(|r| {
                let state = r.label.strip_prefix(TEST_PREFIX)?;
                let p = r.phase.as_ref()?;
                let secs = self.duration_s;
                Some(StateSummary {
                    state: state.to_string(),
                    mb_s: p.bytes[1] as f64 / secs / 1e6,
                    iops: p.ios[1] as f64 / secs,
                    write_amplification: p.counters.write_amplification().unwrap_or(0.0),
                })
            })
            .collect();
        UsedVsNewSummary {
            states,
            test_span_bytes: self.layout(user_bytes).map_or(0, |(_, s)| s),
        }
    }
}
