//! Estimated worst-case write amplification (seed article 000; AnandTech's Intel 335 method):
//! fill the drive, then 4 KiB QD32 random writes; the true NAND/host ratio next to the
//! "speed-ratio" estimate readers guessed (clean write speed / worst-case write speed).

use serde::{Deserialize, Serialize};

use super::hdtach::{check_compressibility, fill_and_torture};
use super::{Procedure, Step, StepResult};
use crate::error::Result;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WorstCaseWa {
    pub torture_minutes: f64,
    /// Compressibility of both the fill and the random writes (1.0: incompressible).
    pub compressibility: f64,
}

impl Default for WorstCaseWa {
    fn default() -> Self {
        WorstCaseWa {
            torture_minutes: 20.0,
            compressibility: 1.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstCaseWaSummary {
    /// NAND writes / host writes over the torture.
    pub write_amplification: f64,
    /// NAND writes / host writes over the last fifth of the torture (the window of `worst_mb_s`).
    pub steady_write_amplification: f64,
    /// Clean write speed / worst-case write speed (None if the drive wrote nothing at the end).
    pub speed_ratio_estimate: Option<f64>,
    /// Mean MB/s of the fresh drive's burst: the torture's seconds before the cliff, at most 10.
    pub clean_mb_s: f64,
    /// Mean MB/s over the last fifth of the torture.
    pub worst_mb_s: f64,
    pub compressibility: f64,
}

impl Procedure for WorstCaseWa {
    type Summary = WorstCaseWaSummary;

    /// The fill and torture cover the whole drive, whatever its size.
    fn steps(&self, _user_bytes: u64) -> Result<Vec<Step>> {
        check_compressibility(self.compressibility)?;
        Ok(fill_and_torture(self.torture_minutes, self.compressibility)?.to_vec())
    }

    fn summarize(&self, results: &[StepResult], _user_bytes: u64) -> WorstCaseWaSummary {
        let phase = results.iter().rev().find_map(|r| r.phase.as_ref());
        let (wa, steady, clean, worst) = phase.map_or((0.0, 0.0, 0.0, 0.0), |p| {
            let bytes = &p.series.bytes[1];
            let secs = ((self.torture_minutes * 60.0).ceil() as usize).min(bytes.len());
            let window = secs - secs / 5..secs;
            let mean = |s: &[u64]| s.iter().sum::<u64>() as f64 / s.len().max(1) as f64 / 1e6;
            let sum = |v: &[u64]| v.get(window.clone()).map_or(0, |s| s.iter().sum::<u64>());
            let (host, nand) = (sum(&p.series.host_bytes), sum(&p.series.nand_units));
            let steady = crate::ftl::write_amplification(nand, host).unwrap_or(0.0);
            let burst = super::consistency::burst_seconds(&bytes[..secs]).clamp(1, 10);
            (
                p.counters.write_amplification().unwrap_or(0.0),
                steady,
                mean(&bytes[..secs.min(burst)]),
                mean(&bytes[window.clone()]),
            )
        });
        WorstCaseWaSummary {
            write_amplification: wa,
            steady_write_amplification: steady,
            speed_ratio_estimate: (worst > 0.0).then(|| clean / worst),
            clean_mb_s: clean,
            worst_mb_s: worst,
            compressibility: self.compressibility,
        }
    }
}
