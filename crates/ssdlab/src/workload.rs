//! The workload engine: a closed loop that keeps `queue_depth` requests outstanding, drawn from a
//! request stream (sequential or uniform random over a span; reads, writes, TRIMs or a mix), with
//! optional think time and rate limit, until a time, IO-count or byte limit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::drive::{Drive, Io, IoKind};
use crate::error::{Error, Result};
use crate::ftl::Counters;
use crate::metrics::{LatencyRecorder, LatencyStats, Series};
use crate::units::{SimTime, NS_PER_SEC, UNIT_BYTES};

/// What the requests do.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Rw {
    Read,
    Write,
    Trim,
    /// Reads with probability `read_fraction`, writes otherwise.
    Mixed,
    /// Each block is trimmed, then written (fio's `trimwrite`).
    TrimWrite,
}

/// Where the requests go.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Block after block from the span's start, wrapping at its end.
    Sequential,
    /// Uniformly random block-aligned offsets in the span, with replacement.
    Random,
}

/// One workload phase.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub label: String,
    pub rw: Rw,
    pub pattern: Pattern,
    /// Share of reads in a `mixed` workload, 0..=1.
    pub read_fraction: f64,
    /// Request size in bytes, a multiple of 4096.
    pub block_bytes: u64,
    /// Requests kept outstanding.
    pub queue_depth: u32,
    /// Start of the span, in bytes from LBA 0 (a multiple of 4096).
    pub offset_bytes: u64,
    /// Length of the span in bytes; 0 means to the end of the user space.
    pub span_bytes: u64,
    /// Stop submitting after this much simulated time.
    pub duration_s: Option<f64>,
    /// Stop after this many requests.
    pub io_limit: Option<u64>,
    /// Stop after this many bytes. With no limit at all, one pass over the span.
    pub byte_limit: Option<u64>,
    /// Host time between a completion and the next request on that queue slot.
    pub think_time_us: f64,
    /// Cap on submitted requests per second.
    pub rate_iops: Option<f64>,
    /// Compressed size / original size of the written data: 1.0 is incompressible.
    pub compressibility: f64,
    /// Length of one series interval.
    pub interval_ms: f64,
    /// Overrides the seed the scenario derives for this phase.
    pub seed: Option<u64>,
    /// Random pattern only: visit every block once per pass, in a random order (fio's default
    /// random map), instead of drawing with replacement.
    pub random_map: bool,
    /// Stop early once throughput is steady (fio's `ss`, `ss_dur`, `ss_ramp`).
    pub steady_state: Option<SteadyState>,
    /// Record completion times per 1/`position_buckets` of the span (HD Tach's MB/s against
    /// position); 0 turns it off.
    pub position_buckets: u32,
}

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
            SteadyCriterion::Deviation => samples.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max),
            SteadyCriterion::Slope => {
                let xm = (n - 1.0) / 2.0;
                let (num, den) = samples.iter().enumerate().fold((0.0, 0.0), |(a, b), (i, &y)| {
                    let dx = i as f64 - xm;
                    (a + dx * (y - mean), b + dx * dx)
                });
                if den == 0.0 { 0.0 } else { (num / den).abs() }
            }
        };
        let limit = if self.percent { self.limit / 100.0 * mean } else { self.limit };
        mean > 0.0 && value <= limit
    }
}

/// A pseudo-random permutation of `0..n`: a keyed bijection on the next power of two, walked in
/// order, skipping values at or above `n`.
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    bits: u32,
    keys: [u64; 3],
    next: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Permutation {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        Permutation { n, bits, keys: [rng.gen::<u64>() | 1, rng.gen::<u64>() | 1, rng.gen::<u64>() | 1], next: 0 }
    }

    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        let mask = if self.bits == 64 { u64::MAX } else { (1u64 << self.bits) - 1 };
        let half = self.bits.div_ceil(2).max(1);
        for &k in &self.keys {
            x = (x ^ (k & mask)) & mask;
            x = x.wrapping_mul(k) & mask;
            x ^= x >> half;
        }
        x & mask
    }

    /// The next value, or `None` once all `n` were given.
    fn next(&mut self) -> Option<u64> {
        let m = 1u64 << self.bits;
        while self.next < m {
            let v = self.mix(self.next);
            self.next += 1;
            if v < self.n {
                return Some(v);
            }
        }
        None
    }
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            label: String::new(),
            rw: Rw::Write,
            pattern: Pattern::Random,
            read_fraction: 0.5,
            block_bytes: 4096,
            queue_depth: 32,
            offset_bytes: 0,
            span_bytes: 0,
            duration_s: None,
            io_limit: None,
            byte_limit: None,
            think_time_us: 0.0,
            rate_iops: None,
            compressibility: 1.0,
            interval_ms: 1000.0,
            seed: None,
            random_map: false,
            steady_state: None,
            position_buckets: 0,
        }
    }
}

/// What one phase measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseResult {
    pub label: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Requests completed and bytes moved, by direction (read, write, trim).
    pub ios: [u64; 3],
    pub bytes: [u64; 3],
    pub latency: [Option<LatencyStats>; 3],
    /// Counter growth over the phase.
    pub counters: Counters,
    /// With `steady_state`: the second at which the window was steady, if it was.
    pub steady_state_at_s: Option<f64>,
    /// With `position_buckets`: for each bucket of the span, when its last request completed
    /// (ns since the phase started).
    pub position_done_ns: Vec<u64>,
    #[serde(skip)]
    pub series: Series,
}

/// Progress of a running phase, for progress bars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// 0..=1 of the phase's limit.
    pub fraction: f64,
    /// Simulated seconds since the phase started.
    pub sim_seconds: f64,
}

/// A checked workload in units.
struct Plan {
    span_start: u64,
    span_units: u64,
    block_units: u64,
    end: Option<SimTime>,
    io_limit: Option<u64>,
    byte_limit: Option<u64>,
    think: SimTime,
    rate_gap: Option<SimTime>,
    interval_ns: u64,
}

fn finite_positive(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::Workload(format!("{name} must be a positive number, got {v}")))
    }
}

impl Workload {
    fn plan(&self, user_units: u64) -> Result<Plan> {
        let name = if self.label.is_empty() { "workload" } else { &self.label };
        let user_bytes = user_units * UNIT_BYTES;
        if self.block_bytes == 0 || self.block_bytes % UNIT_BYTES != 0 {
            return Err(Error::Workload(format!(
                "{name}: block size must be a positive multiple of 4096 bytes, got {}",
                self.block_bytes
            )));
        }
        if self.queue_depth == 0 || self.queue_depth > 65_536 {
            return Err(Error::Workload(format!(
                "{name}: queue depth must be between 1 and 65536, got {}",
                self.queue_depth
            )));
        }
        if self.offset_bytes % UNIT_BYTES != 0 || self.span_bytes % UNIT_BYTES != 0 {
            return Err(Error::Workload(format!("{name}: offset and span must be multiples of 4096 bytes")));
        }
        if self.offset_bytes >= user_bytes {
            return Err(Error::Workload(format!(
                "{name}: offset {} is beyond the drive's {user_bytes} user bytes",
                self.offset_bytes
            )));
        }
        let span_bytes = if self.span_bytes == 0 { user_bytes - self.offset_bytes } else { self.span_bytes };
        if self.offset_bytes + span_bytes > user_bytes {
            return Err(Error::Workload(format!(
                "{name}: span of {span_bytes} bytes at offset {} runs past the drive's {user_bytes} user bytes",
                self.offset_bytes
            )));
        }
        if span_bytes < self.block_bytes {
            return Err(Error::Workload(format!(
                "{name}: the span ({span_bytes} bytes) is smaller than one block ({} bytes)",
                self.block_bytes
            )));
        }
        if !(0.0..=1.0).contains(&self.read_fraction) {
            return Err(Error::Workload(format!("{name}: read fraction must be within 0..1, got {}", self.read_fraction)));
        }
        if !(self.compressibility > 0.0 && self.compressibility <= 1.0) {
            return Err(Error::Workload(format!(
                "{name}: compressibility must be in (0, 1] (1 = incompressible), got {}",
                self.compressibility
            )));
        }
        if !(self.think_time_us.is_finite() && self.think_time_us >= 0.0) {
            return Err(Error::Workload(format!("{name}: think time must be zero or more, got {}", self.think_time_us)));
        }
        finite_positive(&format!("{name}: interval_ms"), self.interval_ms)?;
        if let Some(d) = self.duration_s {
            finite_positive(&format!("{name}: duration"), d)?;
        }
        if let Some(r) = self.rate_iops {
            finite_positive(&format!("{name}: rate_iops"), r)?;
        }
        if let Some(ss) = &self.steady_state {
            finite_positive(&format!("{name}: steady-state window"), ss.window_s)?;
            if !(ss.limit.is_finite() && ss.limit >= 0.0) || !(ss.ramp_s.is_finite() && ss.ramp_s >= 0.0) {
                return Err(Error::Workload(format!("{name}: steady-state limit and ramp must be zero or more")));
            }
        }
        if self.position_buckets > 0 && self.pattern != Pattern::Sequential {
            return Err(Error::Workload(format!("{name}: position buckets need a sequential pattern")));
        }
        if self.io_limit == Some(0) || self.byte_limit == Some(0) {
            return Err(Error::Workload(format!("{name}: IO and byte limits must be positive")));
        }
        let byte_limit = match (self.duration_s, self.io_limit, self.byte_limit) {
            (None, None, None) => Some(span_bytes),
            (_, _, b) => b,
        };
        Ok(Plan {
            span_start: self.offset_bytes / UNIT_BYTES,
            span_units: span_bytes / UNIT_BYTES,
            block_units: self.block_bytes / UNIT_BYTES,
            end: self.duration_s.map(|d| SimTime((d * NS_PER_SEC as f64).round() as u64)),
            io_limit: self.io_limit,
            byte_limit,
            think: SimTime::from_us_f64(self.think_time_us),
            rate_gap: self.rate_iops.map(|r| SimTime((NS_PER_SEC as f64 / r).round().max(1.0) as u64)),
            interval_ns: ((self.interval_ms * 1e6).round() as u64).max(1),
        })
    }

    /// Checks the workload against a drive of `user_units` units without running it.
    pub fn validate(&self, user_units: u64) -> Result<()> {
        self.plan(user_units).map(|_| ())
    }

    /// Runs the phase on `drive` from its current time. `observer` sees progress every few
    /// thousand requests and stops the run by returning `false`.
    pub fn run(&self, drive: &mut Drive, seed: u64, observer: &mut dyn FnMut(Progress) -> bool) -> Result<PhaseResult> {
        let plan = self.plan(drive.user_units())?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed.unwrap_or(seed));
        let start = drive.now();
        let counters_before = drive.counters();
        let mut series = Series::new(plan.interval_ns);
        let mut latency: [LatencyRecorder; 3] = Default::default();
        let mut ios = [0u64; 3];
        let mut bytes = [0u64; 3];
        let mut submitted_ios = 0u64;
        let mut submitted_bytes = 0u64;
        let block_bytes = plan.block_units * UNIT_BYTES;
        let blocks_in_span = plan.span_units / plan.block_units;
        let mut cursor = plan.span_start;
        let span_end = plan.span_start + plan.span_units;
        let mut next_allowed = start;
        let mut last_ack = start;
        let end_time = plan.end.map(|d| start + d);
        let mut slots: BinaryHeap<Reverse<SimTime>> = (0..self.queue_depth).map(|_| Reverse(start)).collect();
        let mut before = counters_before;
        let mut permutation = (self.random_map && self.pattern == Pattern::Random)
            .then(|| Permutation::new(blocks_in_span, &mut rng));
        let buckets = u64::from(self.position_buckets);
        let mut position_done = vec![0u64; buckets as usize];
        let mut steady_at: Option<f64> = None;
        let mut checked_second = 0u64;

        loop {
            let Reverse(mut t) = slots.pop().expect("the loop keeps queue_depth slots");
            if let Some(gap) = plan.rate_gap {
                t = t.max(next_allowed);
                next_allowed = t + gap;
            }
            if let Some(ss) = &self.steady_state {
                let second = (t - start).ns() / NS_PER_SEC;
                if second > checked_second {
                    checked_second = second;
                    if let Some(at) = steady_reached(ss, &series, second) {
                        steady_at = Some(at);
                        break;
                    }
                }
            }
            if end_time.is_some_and(|e| t >= e)
                || plan.io_limit.is_some_and(|n| submitted_ios >= n)
                || plan.byte_limit.is_some_and(|b| submitted_bytes >= b)
            {
                break;
            }
            let kind = match self.rw {
                Rw::Read => IoKind::Read,
                Rw::Write | Rw::TrimWrite => IoKind::Write,
                Rw::Trim => IoKind::Trim,
                Rw::Mixed => {
                    if rng.gen::<f64>() < self.read_fraction {
                        IoKind::Read
                    } else {
                        IoKind::Write
                    }
                }
            };
            let lpn = match self.pattern {
                Pattern::Random => {
                    let block = match &mut permutation {
                        Some(p) => match p.next() {
                            Some(b) => b,
                            None => {
                                let mut fresh = Permutation::new(blocks_in_span, &mut rng);
                                let b = fresh.next().expect("a span holds at least one block");
                                *p = fresh;
                                b
                            }
                        },
                        None => rng.gen_range(0..blocks_in_span),
                    };
                    plan.span_start + block * plan.block_units
                }
                Pattern::Sequential => {
                    if cursor + plan.block_units > span_end {
                        cursor = plan.span_start;
                    }
                    let l = cursor;
                    cursor += plan.block_units;
                    l
                }
            };
            let io = Io { kind, lpn: lpn as u32, units: plan.block_units as u32 };
            let t = if self.rw == Rw::TrimWrite {
                let trim = Io { kind: IoKind::Trim, ..io };
                let trimmed = drive.submit(trim, t)?;
                ios[2] += 1;
                bytes[2] += block_bytes;
                latency[2].record((trimmed - t).ns());
                series.completed(IoKind::Trim, (trimmed - start).ns(), block_bytes, (trimmed - t).ns());
                trimmed
            } else {
                t
            };
            let ack = drive.submit(io, t)?;
            if buckets > 0 {
                let b = ((lpn - plan.span_start) * buckets / plan.span_units) as usize;
                let done = (ack - start).ns();
                position_done[b] = position_done[b].max(done);
            }
            let k = kind as usize;
            ios[k] += 1;
            bytes[k] += block_bytes;
            submitted_ios += 1;
            submitted_bytes += block_bytes;
            latency[k].record((ack - t).ns());
            series.completed(kind, (ack - start).ns(), block_bytes, (ack - t).ns());
            let after = drive.counters();
            series.caused((t - start).ns(), &after.since(&before));
            before = after;
            last_ack = last_ack.max(ack);
            slots.push(Reverse(ack + plan.think));

            if submitted_ios % 8192 == 0 {
                let elapsed = (t - start).as_secs_f64();
                let mut fraction: f64 = 0.0;
                if let Some(d) = plan.end {
                    fraction = fraction.max(elapsed / d.as_secs_f64());
                }
                if let Some(n) = plan.io_limit {
                    fraction = fraction.max(submitted_ios as f64 / n as f64);
                }
                if let Some(b) = plan.byte_limit {
                    fraction = fraction.max(submitted_bytes as f64 / b as f64);
                }
                if !observer(Progress { fraction: fraction.min(1.0), sim_seconds: elapsed }) {
                    return Err(Error::Cancelled);
                }
            }
        }
        // A time-based phase lasts its duration, unless steady state ended it early.
        let end = match (end_time, steady_at) {
            (Some(e), None) => e.max(last_ack),
            _ => last_ack,
        };
        drive.advance_to(end);
        let intervals = (end - start).ns().div_ceil(plan.interval_ns) as usize;
        series.resize(intervals.max(1));
        Ok(PhaseResult {
            label: self.label.clone(),
            start_ns: start.ns(),
            end_ns: end.ns(),
            ios,
            bytes,
            latency: latency.map(|l| l.stats()),
            counters: drive.counters().since(&counters_before),
            steady_state_at_s: steady_at,
            position_done_ns: position_done,
            series,
        })
    }
}

/// Checks the steady-state window ending at `second` (exclusive) on one-second samples.
fn steady_reached(ss: &SteadyState, series: &Series, second: u64) -> Option<f64> {
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
                v.iter().map(|d| d.get(range.clone()).map_or(0, |r| r.iter().sum::<u64>())).sum()
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
    fn permutations_visit_every_value_once() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut p = Permutation::new(n, &mut rng);
            let mut seen: Vec<u64> = std::iter::from_fn(|| p.next()).collect();
            assert_eq!(seen.len() as u64, n);
            seen.sort_unstable();
            assert!(seen.iter().enumerate().all(|(i, &v)| i as u64 == v));
        }
        let mut p = Permutation::new(1000, &mut rng);
        let first: Vec<u64> = (0..10).filter_map(|_| p.next()).collect();
        assert_ne!(first, (0..10).collect::<Vec<_>>(), "not the identity");
    }

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
        let slope = SteadyState { criterion: SteadyCriterion::Slope, limit: 1.0, ..dev.clone() };
        assert!(slope.is_steady(&[100.0, 100.5, 101.0, 101.5]));
        assert!(!slope.is_steady(&[100.0, 110.0, 120.0, 130.0]));
        assert!(!dev.is_steady(&[0.0, 0.0]));
    }
}
