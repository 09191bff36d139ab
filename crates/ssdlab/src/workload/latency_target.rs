//! fio's `latency_target`: the search for the deepest queue that keeps the latency target.
//!
//! As fio 3.33's io_u.c (`lat_target_init`, `lat_target_check`, `lat_target_success`,
//! `__lat_target_failed`, `lat_target_failed`, `queue_full`). The job starts at depth 1
//! (`low` = 1, `high` = `iodepth`) and keeps at most `qd` requests in flight. Windows of
//! `latency_window` start at the job's start and after every change of depth:
//!
//! * With `latency_percentile` = 100 every request slower than the target fails at once, as it
//!   completes: `high` = `qd` (`low` − 1 if `qd` = `low`), `qd` = ⌊(`qd` + `low`)/2⌋, the job waits
//!   for everything in flight (fio's `io_u_quiesce`, whose completions are judged the same way)
//!   and a new window starts. At depth 1 such a request is fatal: the job ends with ETIMEDOUT
//!   ("max latency exceeded", err=110) unless `continue_on_error`/`ignore_error` let it go on.
//! * Below 100, slow requests are counted, and when a window has passed the share of requests
//!   completed within the target decides (a window with no completion counts as failed).
//! * A window that succeeds raises `low` to `qd` and `qd` to ⌊(`qd` + `high`)/2⌋, or doubles it while
//!   `high` is still `iodepth`, at most `iodepth`; three successes in a row one below `high`
//!   raise `high` by one. When `qd` stays where it was the depth is found: the job waits for
//!   what is in flight, forgets its statistics (fio's `reset_all_stats`, `reset_io_stats`), runs
//!   one more window at that depth and ends after it (or goes on for good with `latency_run`).
//!   fio reports the depth it ended at as `latency_depth`.

use serde::{Deserialize, Serialize};

use crate::units::SimTime;

fn hundred() -> f64 {
    100.0
}

/// The search's settings.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LatencyTarget {
    /// Latency (submission to completion) a request must not exceed, in ns.
    pub target_ns: u64,
    /// The span a depth is tried for, in ns (fio's `latency_window`).
    pub window_ns: u64,
    /// Share of requests, in percent, that must meet the target (fio's `latency_percentile`).
    #[serde(default = "hundred")]
    pub percentile: f64,
    /// Keep adjusting the depth for the whole job instead of ending once it is found (fio's
    /// `latency_run`).
    #[serde(default)]
    pub keep_running: bool,
    /// Per direction (read, write, trim): a request over the target at depth 1 is counted and
    /// the job goes on (fio's `continue_on_error` with ETIMEDOUT in `ignore_error` for the
    /// direction's error type), instead of ending the job with ETIMEDOUT.
    #[serde(default)]
    pub timeout_ignored: [bool; 3],
}

impl LatencyTarget {
    pub(super) fn validate(&self) -> std::result::Result<(), String> {
        if self.target_ns == 0 {
            return Err("latency_target must be positive".into());
        }
        if !(self.percentile.is_finite() && self.percentile > 0.0 && self.percentile <= 100.0) {
            return Err(format!(
                "latency_percentile must be in (0, 100], got {}",
                self.percentile
            ));
        }
        Ok(())
    }
}

/// What the engine must do after the search saw an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing changes.
    Go,
    /// The depth rose from the given one: open the new slots now.
    Grow(u32),
    /// Wait for everything in flight, then start a new window (the depth fell; with `reset`,
    /// the depth was found: forget the statistics first).
    Quiesce { reset: bool },
    /// The depth was found and its final window is over: the job ends.
    Done,
    /// A request over the target at depth 1: the job ends with ETIMEDOUT.
    Fatal,
}

/// The search's state.
#[derive(Clone, Debug)]
pub(super) struct Search {
    pub spec: LatencyTarget,
    max_depth: u32,
    /// Requests the job may keep in flight now (fio's `latency_qd`).
    pub qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    window_start: SimTime,
    window_ios: u64,
    window_failed: u64,
    end_run: bool,
}

impl Search {
    pub(super) fn new(spec: LatencyTarget, max_depth: u32, start: SimTime) -> Search {
        Search {
            spec,
            max_depth,
            qd: 1,
            low: 1,
            high: max_depth,
            stable: 0,
            window_start: start,
            window_ios: 0,
            window_failed: 0,
            end_run: false,
        }
    }

    /// fio's `lat_new_cycle`.
    pub(super) fn new_window(&mut self, now: SimTime) {
        self.window_start = now;
        self.window_ios = 0;
        self.window_failed = 0;
    }

    /// A request completed after `latency_ns` (fio's `account_io_completion`).
    pub(super) fn completed(&mut self, latency_ns: u64) -> Step {
        self.window_ios += 1;
        if latency_ns <= self.spec.target_ns {
            return Step::Go;
        }
        #[allow(clippy::float_cmp)] // fio compares the option's value with 100.0 exactly
        if self.spec.percentile == 100.0 {
            if self.qd == 1 {
                return Step::Fatal;
            }
            return self.fail();
        }
        self.window_failed += 1;
        Step::Go
    }

    /// fio's `__lat_target_failed` above depth 1.
    fn fail(&mut self) -> Step {
        if self.qd == 1 {
            return Step::Go; // fio returns "fatal" here, which lat_target_check ignores
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        Step::Quiesce { reset: false }
    }

    /// fio's `lat_target_check`, after each turn of the job's loop at `now`.
    pub(super) fn check(&mut self, now: SimTime) -> Step {
        if now.ns().saturating_sub(self.window_start.ns()) / 1000 < self.spec.window_ns / 1000 {
            return Step::Go; // fio compares whole microseconds
        }
        let ios = self.window_ios as f64;
        // 0 / 0 is NaN, which fails the comparison: a window without completions fails.
        let success = (ios - self.window_failed as f64) / ios * 100.0;
        if success >= self.spec.percentile {
            self.succeed(now)
        } else {
            self.fail()
        }
    }

    /// fio's `lat_target_success`.
    fn succeed(&mut self, now: SimTime) -> Step {
        let qd = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        if self.high == self.max_depth {
            self.qd *= 2;
        } else {
            self.qd = (self.qd + self.high) / 2;
        }
        self.qd = self.qd.min(self.max_depth);
        if !self.spec.keep_running && self.qd == qd {
            if self.end_run {
                return Step::Done;
            }
            self.end_run = true;
            return Step::Quiesce { reset: true };
        }
        self.new_window(now);
        if self.qd > qd {
            Step::Grow(qd)
        } else {
            Step::Go
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIN: u64 = 100_000_000;

    fn spec(pct: f64) -> LatencyTarget {
        LatencyTarget {
            target_ns: 1_000_000,
            window_ns: WIN,
            percentile: pct,
            keep_running: false,
            timeout_ignored: [false; 3],
        }
    }

    /// A drive whose latency is depth × 300 µs meets a 1 ms target at depth 3 and not at 4: the
    /// search doubles 1 → 2 → 4, fails at 4, bisects down to 3, finds that 3 stays 3, forgets
    /// its statistics, runs its final window at 3 and ends.
    #[test]
    fn finds_the_deepest_queue_that_meets_the_target() {
        let mut s = Search::new(spec(99.0), 32, SimTime(0));
        let mut now = 0u64;
        let mut depths = vec![s.qd];
        let mut reset_seen = false;
        for _ in 0..200 {
            // One window at the current depth: 50 completions at depth × 300 µs.
            for _ in 0..50 {
                assert_eq!(s.completed(u64::from(s.qd) * 300_000), Step::Go);
            }
            now += WIN;
            match s.check(SimTime(now)) {
                Step::Done => {
                    assert!(reset_seen, "a final window after the reset");
                    assert_eq!(s.qd, 3);
                    assert_eq!(depths[..5], [1, 2, 4, 3, 3]);
                    return;
                }
                Step::Quiesce { reset } => {
                    reset_seen |= reset;
                    s.new_window(SimTime(now));
                }
                Step::Grow(_) | Step::Go => {}
                Step::Fatal => panic!("not at 100 %"),
            }
            depths.push(s.qd);
        }
        panic!("no depth found: {depths:?}");
    }

    /// At 100 % every slow request backs off at once; at depth 1 it is fatal.
    #[test]
    fn every_slow_request_backs_off_at_100_percent() {
        let mut s = Search::new(spec(100.0), 16, SimTime(0));
        assert_eq!(s.completed(2_000_000), Step::Fatal);
        for w in 1..=4 {
            for _ in 0..10 {
                s.completed(10);
            }
            s.check(SimTime(w * WIN));
        }
        assert_eq!(s.qd, 16);
        assert_eq!(s.completed(2_000_000), Step::Quiesce { reset: false });
        assert_eq!(s.qd, 12); // (16 + low 8) / 2
        assert_eq!(s.completed(2_000_000), Step::Quiesce { reset: false });
        assert_eq!(s.qd, 10);
    }

    /// A window in which nothing completed fails (fio's 0/0).
    #[test]
    fn an_empty_window_fails() {
        let mut s = Search::new(spec(90.0), 8, SimTime(0));
        s.completed(10);
        assert_eq!(s.check(SimTime(WIN)), Step::Grow(1));
        assert_eq!(s.qd, 2);
        assert_eq!(s.check(SimTime(2 * WIN)), Step::Quiesce { reset: false });
        assert_eq!(s.qd, 1);
    }
}
