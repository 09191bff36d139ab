//! "Performance over time & TRIM" (seed articles 000 and 002): a clean HD Tach pass; secure
//! erase, sequential fill and N minutes of 4 KiB QD32 random writes; passes, idle periods and
//! finally a TRIM of the whole span (a format) and a last pass.

use serde::{Deserialize, Serialize};

use super::hdtach::{
    self, check_compressibility, fill_and_torture, minutes_label, pass, HdTachSummary, PassSpec,
};
use super::{Procedure, Step, StepResult};
use crate::error::{Error, Result};

/// The procedure. After the torture: an optional pass, `idle_minutes` idle, a pass, the `then`
/// actions, and a TRIM + pass.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Torture {
    pub torture_minutes: f64,
    /// Run a pass right after the torture, before idling (the reviews did; a pass itself
    /// rewrites the drive sequentially, so leave it out to see what idle time alone does).
    pub pass_after_torture: bool,
    /// Idle minutes before the next pass; 0 skips idling.
    pub idle_minutes: f64,
    /// Further actions, in order: `"pass"` or `"idle:MINUTES"`.
    pub then: Vec<String>,
    /// TRIM the whole span and run a last pass.
    pub trim: bool,
    pub compressibility: f64,
    pub block_bytes: u64,
    pub queue_depth: u32,
    /// Percent of each position a pass writes (`HdTach::sample_pct`).
    pub sample_pct: f64,
}

impl Default for Torture {
    fn default() -> Self {
        Torture {
            torture_minutes: 20.0,
            pass_after_torture: true,
            idle_minutes: 30.0,
            then: Vec::new(),
            trim: true,
            compressibility: 1.0,
            block_bytes: 128 * 1024,
            queue_depth: 1,
            sample_pct: hdtach::SAMPLE_PCT,
        }
    }
}

/// Per-pass figures plus the torture phase's write amplification.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TortureSummary {
    #[serde(flatten)]
    pub hdtach: HdTachSummary,
    pub torture_write_amplification: f64,
}

impl Procedure for Torture {
    type Summary = TortureSummary;

    fn steps(&self, user_bytes: u64) -> Result<Vec<Step>> {
        check_compressibility(self.compressibility)?;
        hdtach::check_pass_span(user_bytes, self.block_bytes)?;
        if !(self.idle_minutes.is_finite() && self.idle_minutes >= 0.0) {
            return Err(Error::Workload(format!(
                "idle needs a duration of zero or more minutes, got {}",
                self.idle_minutes
            )));
        }
        let spec = PassSpec::new(
            user_bytes,
            self.block_bytes,
            self.queue_depth,
            self.compressibility,
            self.sample_pct,
        )?;
        let p = |name: &str| pass(name, spec);
        let mut steps = vec![Step::SecureErase, p("clean")];
        steps.extend(fill_and_torture(
            self.torture_minutes,
            self.compressibility,
        )?);
        let mut history = format!("{} torture", minutes_label(self.torture_minutes));
        if self.pass_after_torture {
            steps.push(p(&format!("after {history}")));
            history = format!("{history}, pass");
        }
        if self.idle_minutes > 0.0 {
            steps.push(Step::Idle {
                seconds: self.idle_minutes * 60.0,
            });
            history = format!("{history}, {} idle", minutes_label(self.idle_minutes));
            steps.push(p(&format!("after {history}")));
            history = format!("{history}, pass");
        }
        for action in &self.then {
            match action.trim() {
                "pass" => {
                    steps.push(p(&format!("after {history}")));
                    history = format!("{history}, pass");
                }
                other => {
                    let minutes = other
                        .strip_prefix("idle:")
                        .and_then(|m| m.trim().parse::<f64>().ok())
                        .filter(|m| m.is_finite() && *m > 0.0)
                        .ok_or_else(|| {
                            Error::Workload(format!(
                                "unknown torture action '{other}': use 'pass' or 'idle:MINUTES' with a positive number of minutes"
                            ))
                        })?;
                    steps.push(Step::Idle {
                        seconds: minutes * 60.0,
                    });
                    history = format!("{history}, {} idle", minutes_label(minutes));
                }
            }
        }
        if self.trim {
            steps.push(Step::Trim {
                offset_bytes: 0,
                length_bytes: 0,
            });
            steps.push(p("after TRIM"));
        }
        Ok(steps)
    }

    fn summarize(&self, results: &[StepResult], _user_bytes: u64) -> TortureSummary {
        let torture = results
            .iter()
            .find(|r| r.label.starts_with("torture"))
            .and_then(|r| r.phase.as_ref())
            .and_then(|p| p.counters.write_amplification())
            .unwrap_or(0.0);
        TortureSummary {
            hdtach: hdtach::summarize_passes(results),
            torture_write_amplification: torture,
        }
    }
}
