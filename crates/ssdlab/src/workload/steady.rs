//! fio-style steady-state detection (`ss`, `ss_dur`, `ss_ramp`) over one-second samples.

use serde::{Deserialize, Serialize};

use crate::metrics::Series;
use crate::units::NS_PER_SEC;

/// fio-style steady-state detection over one-second samples.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    pub criterion: SteadyCriterion,
    /// The limit: a fraction in percent of the window's mean when `percent`, else absolute
    /// (IOPS or bytes/s for deviation; per second for slope).
    pub limit: f64,
    pub percent: bool,
    /// Length of the window of samples that must be steady (fio's `ss_dur`).
    pub window_s: f64,
    /// Samples ignored at the start (fio's `ss_ramp`).
    #[serde(default)]
    pub ramp_s: f64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SteadyMetric {
    Iops,
    Bw,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SteadyCriterion {
    /// Every sample within `limit` of the window's mean.
    Deviation,
    /// The least-squares slope of the window within `limit`.
    Slope,
}

impl SteadyState {
    /// Whether `samples` (the window, one per second) meet the criterion.
    pub fn is_steady(&self, samples: &[f64]) -> bool {
        let n = samples.len() as f64;
        if samples.is_empty() {
            return false;
        }
        let mean = samples.iter().sum::<f64>() / n;
        let value = match self.criterion {
            SteadyCriterion::Deviation => {
                samples.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max)
            }
            SteadyCriterion::Slope => {
                let xm = (n - 1.0) / 2.0;
                let (num, den) = samples
                    .iter()
                    .enumerate()
                    .fold((0.0, 0.0), |(a, b), (i, &y)| {
                        let dx = i as f64 - xm;
                        (a + dx * (y - mean), b + dx * dx)
                    });
                if den == 0.0 {
                    0.0
                } else {
                    (num / den).abs()
                }
            }
        };
        let limit = if self.percent {
            self.limit / 100.0 * mean
        } else {
            self.limit
        };
        mean > 0.0 && value <= limit
    }
}

/// Checks the steady-state window ending at `second` (exclusive) on one-second samples.
pub(super) fn steady_reached(ss: &SteadyState, series: &Series, second: u64) -> Option<f64> {
    let per_second = NS_PER_SEC / series.interval_ns.max(1);
    let window = ss.window_s.ceil() as u64;
    let ramp = ss.ramp_s.ceil() as u64;
    if second < ramp + window || per_second == 0 {
        return None;
    }
    let samples: Vec<f64> = (second - window..second)
        .map(|sec| {
            let range = (sec * per_second) as usize..((sec + 1) * per_second) as usize;
            let sum = |v: &[Vec<u64>; 3]| -> u64 {
                v.iter()
                    .map(|d| d.get(range.clone()).map_or(0, |r| r.iter().sum::<u64>()))
                    .sum()
            };
            match ss.metric {
                SteadyMetric::Iops => sum(&series.ios) as f64,
                SteadyMetric::Bw => sum(&series.bytes) as f64,
            }
        })
        .collect();
    ss.is_steady(&samples).then_some(second as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_state_criteria() {
        let dev = SteadyState {
            metric: SteadyMetric::Iops,
            criterion: SteadyCriterion::Deviation,
            limit: 10.0,
            percent: true,
            window_s: 4.0,
            ramp_s: 0.0,
        };
        assert!(dev.is_steady(&[100.0, 105.0, 95.0, 100.0]));
        assert!(!dev.is_steady(&[100.0, 120.0, 95.0, 100.0]));
        let slope = SteadyState {
            criterion: SteadyCriterion::Slope,
            limit: 1.0,
            ..dev.clone()
        };
        assert!(slope.is_steady(&[100.0, 100.5, 101.0, 101.5]));
        assert!(!slope.is_steady(&[100.0, 110.0, 120.0, 130.0]));
        assert!(!dev.is_steady(&[0.0, 0.0]));
    }
}
