//! The workload engine: a closed loop that keeps `queue_depth` requests outstanding, drawn from a
//! request stream (sequential or uniform random over a span; reads, writes, TRIMs or a mix), with
//! optional think time and rate limit, until a time, IO-count or byte limit.
//!
//! Requests are any size a block device takes: whole 512-byte sectors at sector-aligned offsets.
//! The FTL maps 4 KiB units, so a request that covers a unit only in part costs what it costs a
//! drive (engine and trace replay both submit through [`crate::drive::Drive::submit_bytes`]): a
//! read reads the whole unit; a write reads the unit's old data (a NAND read if it holds data)
//! and programs the whole merged unit, so 512-byte random writes program 4096 bytes each (write
//! amplification 8 before any GC, counted against the host's bytes); a TRIM unmaps only the
//! units it covers whole and leaves the partly covered ones mapped, as FTLs do.

mod distribution;
mod engine;
mod replay;
mod slots;
#[cfg(test)]
mod small_io;
mod steady;
mod stream;
mod verify;
// fio's job semantics beyond rw/bs/size: rate process and floor, latency target, flow, offset
// modifiers, and how jobs end (errors, exitall).
mod arrivals;
mod control;
#[cfg(test)]
mod fio_semantics;
mod flow;
mod inflight;
#[cfg(test)]
mod job_start;
mod jobctl;
mod latency_target;
mod min_rate;
mod sequencer;

use serde::{Deserialize, Serialize};

pub use distribution::{Distribution, Zone};
pub use engine::{run_together, Together};
pub use replay::{Replay, ReplayOptions, ReplayResult, ReplayStats, Timing, TraceRequest};
pub use steady::{SteadyCriterion, SteadyMetric, SteadyState};
pub use verify::{VerifyReport, VerifySpec};

pub use arrivals::RateProcess;
pub use control::{Exit, ExitWhat, JobError, Outcome};
pub use flow::Flow;
pub use latency_target::LatencyTarget;
pub use min_rate::RateMin;
pub use sequencer::Sequencer;

use crate::error::{Error, Result};
use crate::ftl::Counters;
use crate::limits;
use crate::metrics::{LatencyStats, Series};
use crate::units::{SimTime, NS_PER_SEC, SECTOR_BYTES, UNIT_BYTES};

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
    /// Request size in bytes, a multiple of 512 (a sector); sizes that are not a multiple of
    /// 4096, or offsets inside a 4 KiB unit, cost read-modify-writes of the partial units.
    pub block_bytes: u64,
    /// Requests kept outstanding.
    pub queue_depth: u32,
    /// Start of the span, in bytes from LBA 0 (a multiple of 512).
    pub offset_bytes: u64,
    /// Length of the span in bytes (a multiple of 512); 0 means to the end of the user space.
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
    /// Caps per direction (read, write, trim) on submitted requests per second (fio's
    /// `rate_iops=r,w,t`): a request waits for its own direction's cap; the mix stays as drawn.
    pub rate_iops_per_direction: [Option<f64>; 3],
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
    /// Sequential with position buckets only: write this many requests at the start of each
    /// bucket, then go on at the next bucket's start (HD Tach tests areas spread over the drive,
    /// not every LBA); 0 writes every block of every bucket.
    pub position_sample_blocks: u64,
    /// Where random requests land (fio's `random_distribution`); uniform by default.
    pub distribution: Distribution,
    /// Request sizes with their shares in percent (fio's `bssplit`); empty: `block_bytes` only.
    /// `block_bytes` must then be the smallest size: random offsets align to it.
    pub block_sizes: Vec<BlockShare>,
    /// A size mix per direction (read, write, trim; fio's `bssplit=READS,WRITES,TRIMS`): a
    /// non-empty entry replaces `block_sizes` for its direction. A request draws its direction
    /// first, then its size from that direction's mix (fio's `get_next_buflen` uses
    /// `bssplit[ddir]`). `block_bytes` must be the smallest size of every mix in use.
    pub direction_block_sizes: [Vec<BlockShare>; 3],
    /// Request sizes drawn from `[min, max]` bytes as fio's `bsrange` draws them (uniformly,
    /// aligned down to `min`); `block_bytes` must be `min`.
    pub block_range: Option<[u64; 2]>,
    /// How `rate_iops` spaces the requests (fio's `rate_process`): evenly, or as Poisson
    /// arrivals at the rate.
    pub rate_process: RateProcess,
    /// Rate floors (fio's `rate_min`, `rate_iops_min`, `rate_cycle`): below them the job ends
    /// in error.
    pub rate_min: Option<RateMin>,
    /// fio's `latency_target` search for the deepest queue (up to `queue_depth`) that keeps
    /// the target.
    pub latency_target: Option<LatencyTarget>,
    /// fio's `flow`: jobs run together keep their request counts in the ratio of their weights.
    pub flow: Option<Flow>,
    /// fio's offset modifiers (`rw=write:4k`, `rw=randread:8`) and `rw_sequencer`.
    pub sequencer: Option<Sequencer>,
    /// Random offsets align to this many bytes instead of `block_bytes` (fio's `blockalign`), a
    /// multiple of 512; 0: `block_bytes`. Not with `random_map`.
    pub block_align_bytes: u64,
    /// fio's `exitall`, `exit_what`, `exitall_on_error`: which jobs this job's end stops.
    pub exit: Option<Exit>,
    /// fio's `verify`: the job writes fio's verify content and reads it back, or checks what it
    /// reads (`verify::VerifySpec`); the drive needs a content store for the checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySpec>,
    /// fio's `startdelay`: the job starts this many seconds after the phase does (jobs that run
    /// together each at their own time).
    #[serde(skip_serializing_if = "is_zero")]
    pub start_delay_s: f64,
    /// fio's `ramp_time`: the job runs this many seconds before its figures start (fio's
    /// `ramp_time_over`, `reset_all_stats`). A request counts when it completes after the ramp;
    /// the ramp's requests count towards the job's byte and request limits, as fio's issued
    /// bytes do, and its duration runs from the ramp's end. A job that ends within its ramp
    /// reports all of its requests, as fio does.
    #[serde(skip_serializing_if = "is_zero")]
    pub ramp_s: f64,
    /// Return the phase's response-time histogram of reads and writes together
    /// (`PhaseResult::latency_histogram`): PTS's response-time histograms.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub latency_histogram: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// One request size of a size mix and its share of the requests.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlockShare {
    pub bytes: u64,
    /// Share of the requests, in percent.
    pub pct: f64,
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
            rate_iops_per_direction: [None; 3],
            compressibility: 1.0,
            interval_ms: 1000.0,
            seed: None,
            random_map: false,
            steady_state: None,
            position_buckets: 0,
            position_sample_blocks: 0,
            distribution: Distribution::Uniform,
            block_sizes: Vec::new(),
            direction_block_sizes: Default::default(),
            block_range: None,
            rate_process: RateProcess::Linear,
            rate_min: None,
            latency_target: None,
            flow: None,
            sequencer: None,
            block_align_bytes: 0,
            exit: None,
            verify: None,
            start_delay_s: 0.0,
            ramp_s: 0.0,
            latency_histogram: false,
        }
    }
}

/// The first block (counted from the span's start) of each of `buckets` position buckets over
/// `span_units` units in blocks of `block_units`, plus the end: bucket `b` holds the blocks whose
/// first unit falls in its 1/`buckets` of the span (the engine's rule), so
/// `start[b] = ceil(b × span_units / (block_units × buckets))`. Only the ratio matters: the
/// engine counts in sectors, which gives the same starts as 4 KiB units.
pub fn bucket_starts(span_units: u64, block_units: u64, buckets: u64) -> Vec<u64> {
    let blocks = span_units / block_units;
    let den = u128::from(block_units) * u128::from(buckets);
    (0..=buckets)
        .map(|b| {
            if b == buckets {
                blocks
            } else {
                let k = (u128::from(b) * u128::from(span_units)).div_ceil(den);
                (k as u64).min(blocks)
            }
        })
        .collect()
}

/// Blocks written in each position bucket when `sample` blocks are written at each bucket's start
/// (0: all of them).
pub fn bucket_sample_blocks(starts: &[u64], sample: u64) -> impl Iterator<Item = u64> + '_ {
    starts.windows(2).map(move |w| {
        let n = w[1] - w[0];
        if sample == 0 {
            n
        } else {
            n.min(sample)
        }
    })
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
    /// Reads and writes as one latency distribution (PTS's response times of a mixed workload);
    /// left out of the JSON when the phase completed no read or write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_rw: Option<LatencyStats>,
    /// With `latency_histogram`: the buckets of `latency_rw`'s histogram, `[lowest ns, highest
    /// ns, count]` in increasing order (`LatencyRecorder::buckets`); for jobs run together, the
    /// combined phase's holds every job's that asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<Vec<[u64; 3]>>,
    /// Counter growth over the phase.
    pub counters: Counters,
    /// With `steady_state`: the second at which the window was steady, if it was.
    pub steady_state_at_s: Option<f64>,
    /// With `position_buckets`: for each bucket of the span, when its last request completed
    /// (ns since the phase started).
    pub position_done_ns: Vec<u64>,
    /// Bytes written in each position bucket.
    pub position_bytes: Vec<u64>,
    /// How the job ended besides its limits (an error, another job's exit, a latency target's
    /// depth); its fields are left out of the JSON when they are not set.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// fio's `verify`: what the job read back and checked (none for a job that does not verify).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
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

/// A checked workload; addresses in 512-byte sectors.
struct Plan {
    span_start: u64,
    span_sectors: u64,
    block_sectors: u64,
    end: Option<SimTime>,
    io_limit: Option<u64>,
    byte_limit: Option<u64>,
    think: SimTime,
    rate_gap: Option<SimTime>,
    direction_gaps: [Option<SimTime>; 3],
    interval_ns: u64,
    /// The drive's user space in sectors (fio's `real_file_size`, for offset modifiers).
    drive_sectors: u64,
    /// fio's `startdelay` and `ramp_time`.
    delay: SimTime,
    ramp: SimTime,
}

/// How to mend a byte count that is not a whole number of sectors.
fn sector_hint(bytes: u64) -> String {
    let down = bytes / SECTOR_BYTES * SECTOR_BYTES;
    if down == 0 {
        format!("use {SECTOR_BYTES} or a multiple of it")
    } else {
        format!("use {down} or {} instead", down + SECTOR_BYTES)
    }
}

fn finite_positive(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::Workload(format!(
            "{name} must be a positive number, got {v}"
        )))
    }
}

/// Refuses a request larger than `limits::MAX_BLOCK_BYTES`.
fn too_large(name: &str, what: &str, bytes: u64) -> Result<()> {
    if bytes > limits::MAX_BLOCK_BYTES {
        return Err(Error::Workload(format!(
            "{name}: {what} of {bytes} bytes is larger than the {} bytes (32 MiB) a drive takes in one \
             command; use a smaller block size",
            limits::MAX_BLOCK_BYTES
        )));
    }
    Ok(())
}

impl Workload {
    /// The fill that starts the reviewers' tests: sequential writes of `block_bytes` at QD32 over
    /// the whole drive (set `span_bytes` for less), labelled "fill".
    pub fn sequential_fill(block_bytes: u64) -> Workload {
        Workload {
            label: "fill".into(),
            pattern: Pattern::Sequential,
            block_bytes,
            ..Workload::default()
        }
    }

    fn plan(&self, user_units: u64) -> Result<Plan> {
        let name = if self.label.is_empty() {
            "workload"
        } else {
            &self.label
        };
        let user_bytes = user_units * UNIT_BYTES;
        if self.block_bytes == 0 || self.block_bytes % SECTOR_BYTES != 0 {
            return Err(Error::Workload(format!(
                "{name}: block size must be a positive multiple of 512 bytes (a sector), got {}; {}",
                self.block_bytes,
                sector_hint(self.block_bytes)
            )));
        }
        too_large(name, "block size", self.block_bytes)?;
        if self.queue_depth == 0 || self.queue_depth > limits::MAX_QUEUE_DEPTH {
            return Err(Error::Workload(format!(
                "{name}: queue depth must be between 1 and {}, got {}",
                limits::MAX_QUEUE_DEPTH,
                self.queue_depth
            )));
        }
        for (what, bytes) in [("offset", self.offset_bytes), ("span", self.span_bytes)] {
            if bytes % SECTOR_BYTES != 0 {
                return Err(Error::Workload(format!(
                    "{name}: {what} of {bytes} bytes is not a multiple of 512 bytes (a sector); {}",
                    sector_hint(bytes)
                )));
            }
        }
        if self.offset_bytes >= user_bytes {
            return Err(Error::Workload(format!(
                "{name}: offset {} is beyond the drive's {user_bytes} user bytes",
                self.offset_bytes
            )));
        }
        let span_bytes = if self.span_bytes == 0 {
            user_bytes - self.offset_bytes
        } else {
            self.span_bytes
        };
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
            return Err(Error::Workload(format!(
                "{name}: read fraction must be within 0..1, got {}",
                self.read_fraction
            )));
        }
        if !(self.compressibility > 0.0 && self.compressibility <= 1.0) {
            return Err(Error::Workload(format!(
                "{name}: compressibility must be in (0, 1] (1 = incompressible), got {}",
                self.compressibility
            )));
        }
        if !(self.think_time_us.is_finite()
            && self.think_time_us >= 0.0
            && self.think_time_us <= limits::MAX_OP_US)
        {
            return Err(Error::Workload(format!(
                "{name}: think time must be from 0 to {} µs (one second), got {}",
                limits::MAX_OP_US,
                self.think_time_us
            )));
        }
        if !(self.interval_ms.is_finite() && self.interval_ms >= limits::MIN_INTERVAL_MS) {
            return Err(Error::Workload(format!(
                "{name}: interval_ms must be at least {} ms, got {}",
                limits::MIN_INTERVAL_MS,
                self.interval_ms
            )));
        }
        if let Some(d) = self.duration_s {
            finite_positive(&format!("{name}: duration"), d)?;
            if d < 1.0 / NS_PER_SEC as f64 {
                return Err(Error::Workload(format!(
                    "{name}: duration of {d:e} s is shorter than the clock's resolution (1 ns)"
                )));
            }
            if d > limits::MAX_SCHEDULED_SECONDS {
                return Err(Error::Workload(format!(
                    "{name}: duration of {d} s is beyond the {:e} s a drive can be scheduled for",
                    limits::MAX_SCHEDULED_SECONDS
                )));
            }
            let intervals = (d * 1000.0 / self.interval_ms).ceil();
            if intervals > limits::MAX_INTERVALS as f64 {
                return Err(Error::Workload(format!(
                    "{name}: {d} s at {} ms intervals is {intervals:.0} series intervals, more than the {} one phase \
                     may record; shorten the duration or lengthen the interval",
                    self.interval_ms,
                    limits::MAX_INTERVALS
                )));
            }
        }
        for r in self
            .rate_iops
            .iter()
            .chain(self.rate_iops_per_direction.iter().flatten())
        {
            let r = *r;
            if !(r.is_finite() && r >= limits::MIN_RATE_IOPS) {
                return Err(Error::Workload(format!(
                    "{name}: rate_iops must be at least {} request per second, got {r}",
                    limits::MIN_RATE_IOPS
                )));
            }
        }
        if let Some(ss) = &self.steady_state {
            finite_positive(&format!("{name}: steady-state window"), ss.window_s)?;
            if ss.window_s > limits::MAX_SCHEDULED_SECONDS
                || ss.ramp_s > limits::MAX_SCHEDULED_SECONDS
            {
                return Err(Error::Workload(format!(
                    "{name}: steady-state window and ramp must be at most {:e} s",
                    limits::MAX_SCHEDULED_SECONDS
                )));
            }
            if !(ss.limit.is_finite()
                && ss.limit >= 0.0
                && ss.ramp_s.is_finite()
                && ss.ramp_s >= 0.0)
            {
                return Err(Error::Workload(format!(
                    "{name}: steady-state limit and ramp must be zero or more"
                )));
            }
        }
        if self.position_buckets > 0 && self.pattern != Pattern::Sequential {
            return Err(Error::Workload(format!(
                "{name}: position buckets need a sequential pattern"
            )));
        }
        if self.position_sample_blocks > 0 && self.position_buckets == 0 {
            return Err(Error::Workload(format!(
                "{name}: a position sample needs position buckets"
            )));
        }
        let span_blocks = span_bytes / self.block_bytes;
        let max_buckets = span_blocks.min(limits::MAX_INTERVALS);
        if u64::from(self.position_buckets) > max_buckets {
            return Err(Error::Workload(format!(
                "{name}: {} position buckets for a span of {span_blocks} blocks; at most {max_buckets} \
                 (one block per bucket, and at most {})",
                self.position_buckets,
                limits::MAX_INTERVALS
            )));
        }
        self.distribution
            .validate(span_bytes)
            .map_err(|e| Error::Workload(format!("{name}: {e}")))?;
        let largest = self.check_sizes(name)?;
        too_large(name, "the largest request size", largest)?;
        if span_bytes < largest {
            return Err(Error::Workload(format!(
                "{name}: the span ({span_bytes} bytes) is smaller than the largest request ({largest} bytes)"
            )));
        }
        if (!self.block_sizes.is_empty()
            || self.direction_block_sizes.iter().any(|m| !m.is_empty())
            || self.block_range.is_some()
            || !self.distribution.is_uniform())
            && self.position_buckets > 0
        {
            return Err(Error::Workload(format!(
                "{name}: position buckets need one request size and uniform offsets"
            )));
        }
        if self.io_limit == Some(0) || self.byte_limit == Some(0) {
            return Err(Error::Workload(format!(
                "{name}: IO and byte limits must be positive"
            )));
        }
        let byte_limit = match (self.duration_s, self.io_limit, self.byte_limit) {
            (None, None, None) if self.position_sample_blocks > 0 => {
                let starts = bucket_starts(
                    span_bytes / SECTOR_BYTES,
                    self.block_bytes / SECTOR_BYTES,
                    u64::from(self.position_buckets),
                );
                let blocks: u64 = bucket_sample_blocks(&starts, self.position_sample_blocks).sum();
                Some(blocks * self.block_bytes)
            }
            (None, None, None) => Some(span_bytes / self.block_bytes * self.block_bytes),
            (_, _, b) => b,
        };
        let mut at = [SimTime(0); 2];
        for (k, (what, v)) in [
            ("startdelay", self.start_delay_s),
            ("ramp_time", self.ramp_s),
        ]
        .into_iter()
        .enumerate()
        {
            if !(v.is_finite() && (0.0..=limits::MAX_SCHEDULED_SECONDS).contains(&v)) {
                return Err(Error::Workload(format!(
                    "{name}: {what} must be from 0 to {:e} s, got {v}",
                    limits::MAX_SCHEDULED_SECONDS
                )));
            }
            at[k] = SimTime((v * NS_PER_SEC as f64).round() as u64);
        }
        if self.ramp_s > 0.0 {
            let intervals = (self.ramp_s * 1000.0 / self.interval_ms).ceil();
            if intervals > limits::MAX_INTERVALS as f64 {
                return Err(Error::Workload(format!(
                    "{name}: a ramp of {} s at {} ms intervals is {intervals:.0} series intervals, more than the {} \
                     one phase may record; shorten it or lengthen the interval",
                    self.ramp_s,
                    self.interval_ms,
                    limits::MAX_INTERVALS
                )));
            }
        }
        self.check_fio_semantics(name, span_bytes)?;
        if let Some(v) = &self.verify {
            v.validate(name)?;
        }
        Ok(Plan {
            drive_sectors: user_bytes / SECTOR_BYTES,
            span_start: self.offset_bytes / SECTOR_BYTES,
            span_sectors: span_bytes / SECTOR_BYTES,
            block_sectors: self.block_bytes / SECTOR_BYTES,
            end: self
                .duration_s
                .map(|d| SimTime((d * NS_PER_SEC as f64).round() as u64)),
            io_limit: self.io_limit,
            byte_limit,
            think: SimTime::from_us_f64(self.think_time_us),
            rate_gap: self
                .rate_iops
                .map(|r| SimTime((NS_PER_SEC as f64 / r).round().max(1.0) as u64)),
            direction_gaps: self
                .rate_iops_per_direction
                .map(|r| r.map(|r| SimTime((NS_PER_SEC as f64 / r).round().max(1.0) as u64))),
            interval_ns: ((self.interval_ms * 1e6).round() as u64).max(1),
            delay: at[0],
            ramp: at[1],
        })
    }

    /// Checks the size mixes; returns the largest request size in bytes.
    fn check_sizes(&self, name: &str) -> Result<u64> {
        if self.direction_block_sizes.iter().all(Vec::is_empty) {
            return self.check_one_mix(name);
        }
        if self.block_range.is_some() {
            return Err(Error::Workload(format!(
                "{name}: give size mixes per direction or a size range (bsrange), not both"
            )));
        }
        // Each direction's mix as a one-mix workload (the default mix, `block_sizes` or
        // `block_bytes`, for a direction without its own); block_bytes the smallest of them.
        let mut largest = 0;
        let mut smallest = u64::MAX;
        for mix in &self.direction_block_sizes {
            let one = Workload {
                block_sizes: if mix.is_empty() {
                    self.block_sizes.clone()
                } else {
                    mix.clone()
                },
                direction_block_sizes: Default::default(),
                block_bytes: if mix.is_empty() && self.block_sizes.is_empty() {
                    self.block_bytes
                } else {
                    mix.iter()
                        .chain(if mix.is_empty() {
                            self.block_sizes.iter()
                        } else {
                            [].iter()
                        })
                        .map(|s| s.bytes)
                        .min()
                        .unwrap_or(0)
                },
                ..Workload::default()
            };
            largest = largest.max(one.check_one_mix(name)?);
            smallest = smallest.min(one.block_bytes);
        }
        if smallest != self.block_bytes {
            return Err(Error::Workload(format!(
                "{name}: with size mixes per direction, block_bytes must be their smallest size ({smallest}), got {}",
                self.block_bytes
            )));
        }
        Ok(largest)
    }

    /// Checks the one size mix (or range); returns the largest request size in bytes.
    fn check_one_mix(&self, name: &str) -> Result<u64> {
        let sector_multiple = |b: u64| b > 0 && b % SECTOR_BYTES == 0;
        if !self.block_sizes.is_empty() && self.block_range.is_some() {
            return Err(Error::Workload(format!(
                "{name}: give a size mix (bssplit) or a size range (bsrange), not both"
            )));
        }
        if !self.block_sizes.is_empty() {
            let total: f64 = self.block_sizes.iter().map(|s| s.pct).sum();
            if self
                .block_sizes
                .iter()
                .any(|s| !(sector_multiple(s.bytes) && s.pct.is_finite() && s.pct >= 0.0))
                || (total - 100.0).abs() > 1e-6
            {
                return Err(Error::Workload(format!(
                    "{name}: a size mix needs sizes that are positive multiples of 512 bytes (a sector) and shares \
                     that add up to 100 %, got {:?}",
                    self.block_sizes
                )));
            }
            let smallest = self.block_sizes.iter().map(|s| s.bytes).min().unwrap_or(0);
            if smallest != self.block_bytes {
                return Err(Error::Workload(format!(
                    "{name}: with a size mix, block_bytes must be its smallest size ({smallest}), got {}",
                    self.block_bytes
                )));
            }
            return Ok(self.block_sizes.iter().map(|s| s.bytes).max().unwrap_or(0));
        }
        if let Some([lo, hi]) = self.block_range {
            if !sector_multiple(lo) || !sector_multiple(hi) || lo > hi || lo != self.block_bytes {
                return Err(Error::Workload(format!(
                    "{name}: a size range needs multiples of 512 bytes (a sector), min <= max and block_bytes = min, \
                     got {lo}-{hi} with block_bytes {}",
                    self.block_bytes
                )));
            }
            return Ok(hi);
        }
        Ok(self.block_bytes)
    }

    /// Checks the workload against a drive of `user_units` units without running it.
    pub fn validate(&self, user_units: u64) -> Result<()> {
        self.plan(user_units).map(|_| ())
    }
}
