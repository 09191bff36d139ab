//! fio's `rate_min` / `rate_iops_min` with `rate_cycle`: a job that falls below a floor fails.
//!
//! As fio's `__check_min_rate` (backend.c, fio 3.33), checked each time the job goes round its
//! loop (here: each submission), for each direction that has completed IO:
//!
//! * nothing is checked in the job's first 2000 ms (fio's settle period);
//! * the first check after it records the completed bytes and requests and the time, and so does
//!   every check that compares;
//! * a later check compares once at least `rate_cycle` ms passed since the recorded time: the rate
//!   over that span, `(completed now − recorded) × 1000 / spent_ms` in whole bytes (or requests)
//!   per second, must reach the floor, else the job fails: fio logs
//!   `NAME: rate_min=NB/s not met, got MB/s` (or `rate_iops_min=N not met, got M IOPS`) and ends
//!   the job with EIO (`err=5`, `func=check_min_rate`).
//!
//! A direction with a byte floor is checked in bytes, else in requests (fio refuses a job that
//! gives both kinds).

use serde::{Deserialize, Serialize};

use crate::units::SimTime;

/// fio's settle period before the first check.
const SETTLE_MS: u64 = 2000;

fn default_cycle() -> u64 {
    1000
}

/// Floors per direction (read, write, trim); 0 is no floor.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RateMin {
    /// Least bytes per second (fio's `rate_min`).
    #[serde(default)]
    pub bytes_per_s: [u64; 3],
    /// Least requests per second (fio's `rate_iops_min`), for a direction without a byte floor.
    #[serde(default)]
    pub iops: [u64; 3],
    /// The span a rate is averaged over, in milliseconds (fio's `rate_cycle`).
    #[serde(default = "default_cycle")]
    pub cycle_ms: u64,
}

impl RateMin {
    pub(super) fn validate(&self) -> std::result::Result<(), String> {
        if self.cycle_ms == 0 {
            return Err("rate_min: the rate cycle must be at least 1 ms".into());
        }
        if self.bytes_per_s.iter().chain(&self.iops).all(|&v| v == 0) {
            return Err("rate_min: give a floor for at least one direction".into());
        }
        Ok(())
    }
}

/// Whole milliseconds from `a` to `b` (fio's `mtime_since`).
#[inline]
fn ms(a: SimTime, b: SimTime) -> u64 {
    b.ns().saturating_sub(a.ns()) / 1_000_000
}

/// The check's state while a job runs.
#[derive(Clone, Debug)]
pub(super) struct MinRateCheck {
    spec: RateMin,
    start: SimTime,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    last_time: [SimTime; 3],
}

impl MinRateCheck {
    pub(super) fn new(spec: RateMin, start: SimTime) -> MinRateCheck {
        MinRateCheck {
            spec,
            start,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            last_time: [start; 3],
        }
    }

    /// Starts over at `start` (fio's statistics reset).
    pub(super) fn restart(&mut self, start: SimTime) {
        *self = MinRateCheck::new(self.spec, start);
    }

    /// The check at `now`, with `done_bytes`/`done_ios` completed so far: the messages of the
    /// directions below their floor (empty: the job goes on).
    pub(super) fn check(
        &mut self,
        now: SimTime,
        done_bytes: &[u64; 3],
        done_ios: &[u64; 3],
        job: &str,
    ) -> Vec<String> {
        let mut failed = Vec::new();
        for d in 0..3 {
            if done_bytes[d] == 0 {
                continue; // fio checks only the directions that moved bytes
            }
            let (floor_bytes, floor_iops) = (self.spec.bytes_per_s[d], self.spec.iops[d]);
            if floor_bytes == 0 && floor_iops == 0 {
                continue;
            }
            if ms(self.start, now) < SETTLE_MS {
                continue;
            }
            if self.last_bytes[d] != 0 || self.last_ios[d] != 0 {
                let spent = ms(self.last_time[d], now);
                if spent < self.spec.cycle_ms || spent == 0 {
                    continue;
                }
                if floor_bytes != 0 {
                    let got = (done_bytes[d] - self.last_bytes[d]) * 1000 / spent;
                    if got < floor_bytes {
                        failed.push(format!(
                            "{job}: rate_min={floor_bytes}B/s not met, got {got}B/s"
                        ));
                        continue;
                    }
                } else {
                    let got = (done_ios[d] - self.last_ios[d]) * 1000 / spent;
                    if got < floor_iops {
                        failed.push(format!(
                            "{job}: rate_iops_min={floor_iops} not met, got {got} IOPS"
                        ));
                        continue;
                    }
                }
            }
            self.last_bytes[d] = done_bytes[d];
            self.last_ios[d] = done_ios[d];
            self.last_time[d] = now;
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// fio's schedule: nothing before 2 s, a baseline at the first check after it, a comparison
    /// once a cycle passed; the rate in whole units per second over the whole span spent.
    #[test]
    fn checks_after_the_settle_period_over_a_cycle() {
        let spec = RateMin {
            bytes_per_s: [0; 3],
            iops: [50, 0, 0],
            cycle_ms: 1000,
        };
        let mut c = MinRateCheck::new(spec, SimTime(0));
        // 20 IOPS from the start: below the floor, but not checked before 2000 ms.
        let at = |s_ms: u64| SimTime(s_ms * MS);
        let done = |s_ms: u64| [s_ms / 50, 0, 0];
        let bytes = |s_ms: u64| [s_ms / 50 * 4096, 0, 0];
        assert!(c.check(at(1999), &bytes(1999), &done(1999), "j").is_empty());
        assert!(c.check(at(2000), &bytes(2000), &done(2000), "j").is_empty()); // baseline: 40 IOs
        assert!(c.check(at(2999), &bytes(2999), &done(2999), "j").is_empty()); // 999 ms: too soon
                                                                               // 1009 ms after the baseline, 20 more IOs: 20 * 1000 / 1009 = 19 IOPS (fio's own figures).
        let failed = c.check(at(3009), &bytes(3009), &[60, 0, 0], "j");
        assert_eq!(
            failed,
            vec!["j: rate_iops_min=50 not met, got 19 IOPS".to_string()]
        );
    }

    /// Met floors move the baseline; a byte floor is checked in bytes.
    #[test]
    fn a_met_floor_moves_the_baseline() {
        let spec = RateMin {
            bytes_per_s: [0, 1_000_000, 0],
            iops: [0; 3],
            cycle_ms: 500,
        };
        let mut c = MinRateCheck::new(spec, SimTime(0));
        let s = |ms_: u64| SimTime(ms_ * MS);
        // 2 MB/s until 3 s, then 0.5 MB/s.
        let w = |ms_: u64| {
            if ms_ <= 3000 {
                2_000 * ms_
            } else {
                6_000_000 + 500 * (ms_ - 3000)
            }
        };
        for t in (2000..=3000).step_by(250) {
            assert!(
                c.check(s(t), &[0, w(t), 0], &[0, 1, 0], "j").is_empty(),
                "{t}"
            );
        }
        // 500 ms after the 3000 ms baseline: (6.25e6 - 6e6) * 1000 / 500 = 500000 B/s.
        let failed = c.check(s(3500), &[0, w(3500), 0], &[0, 2, 0], "j");
        assert_eq!(
            failed,
            vec!["j: rate_min=1000000B/s not met, got 500000B/s".to_string()]
        );
    }
}
