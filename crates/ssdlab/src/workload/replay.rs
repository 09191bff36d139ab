//! Trace replay: requests given one by one (direction, byte offset, byte length, timestamp), fed
//! in batches by whoever reads the trace, played on a drive either open loop at the trace's
//! timestamps (scaled by a speed factor) or closed loop as fast as possible at a queue depth.
//!
//! Requests are taken as the host sent them, in bytes: one that starts or ends inside a 4 KiB
//! unit is unaligned. They go through the drive's one byte-level path, the workload engine's too
//! ([`Drive::submit_bytes`]): an unaligned read reads the whole units it touches; an unaligned
//! write costs a read-modify-write of its partial first and last units; an unaligned TRIM unmaps
//! only the units it covers whole (a drive cannot unmap part of a unit), and the bytes it leaves
//! mapped are counted. Every byte of every request is counted in the result: `bytes` are the
//! requests' own byte lengths.

use serde::{Deserialize, Serialize};

use super::slots::Slots;
use super::PhaseResult;
use crate::drive::{Drive, IoKind};
use crate::error::{Error, Result};
use crate::ftl::{Counters, Tally};
use crate::limits;
use crate::metrics::{IntervalClock, LatencyRecorder, Series};
use crate::units::{SimTime, NS_PER_SEC};

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRequest {
    pub kind: IoKind,
    /// Byte offset on the drive.
    pub offset: u64,
    /// Byte length (positive).
    pub length: u64,
    /// The trace's timestamp, in nanoseconds (any origin).
    pub time_ns: u64,
}

/// When requests are submitted.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(tag = "mode", rename_all = "snake_case", deny_unknown_fields)]
pub enum Timing {
    /// Open loop: each request arrives at its timestamp (relative to the first request's),
    /// divided by `speed`; requests the drive cannot absorb wait, and their latency shows it.
    Trace { speed: f64 },
    /// Closed loop: `queue_depth` requests outstanding, each submitted when one completes.
    Afap { queue_depth: u32 },
}

/// How a replay runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplayOptions {
    pub label: String,
    pub timing: Timing,
    /// Length of one series interval.
    pub interval_ms: f64,
}

/// What a replay did beyond a phase's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReplayStats {
    /// Requests replayed.
    pub requests: u64,
    /// Requests that start or end inside a 4 KiB unit, by direction.
    pub unaligned_requests: [u64; 3],
    /// Partial units of unaligned writes the drive merged by a read-modify-write (reading NAND
    /// when the unit held data and was no longer in the write buffer: those reads are in the
    /// counters' `host_page_reads`).
    pub rmw_read_units: u64,
    /// Bytes of unaligned TRIMs that lay in partly covered units, and so stayed mapped.
    pub trim_bytes_not_unmapped: u64,
    /// Units moved by direction: the whole units the requests touched (reads, writes) or
    /// unmapped (TRIMs).
    pub units: [u64; 3],
    /// Requests whose timestamp was earlier than the one before (submitted at the earlier's
    /// time, since a host cannot send a request back in time).
    pub out_of_order: u64,
}

/// The result of a replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayResult {
    pub phase: PhaseResult,
    pub stats: ReplayStats,
}

/// A replay in progress on a drive.
#[derive(Debug)]
pub struct Replay {
    options: ReplayOptions,
    start: SimTime,
    interval_ns: u64,
    speed: f64,
    first_trace_ns: Option<u64>,
    last_arrival: SimTime,
    slots: Slots,
    counters_before: Counters,
    before: Tally,
    series: Series,
    submit_clock: IntervalClock,
    done_clock: IntervalClock,
    latency: [LatencyRecorder; 3],
    ios: [u64; 3],
    bytes: [u64; 3],
    last_ack: SimTime,
    stats: ReplayStats,
}

impl Replay {
    /// Starts a replay on `drive` at its current time.
    pub fn start(drive: &mut Drive, options: ReplayOptions) -> Result<Replay> {
        if !(options.interval_ms.is_finite() && options.interval_ms >= limits::MIN_INTERVAL_MS) {
            return Err(Error::Workload(format!(
                "interval_ms must be at least {} ms, got {}",
                limits::MIN_INTERVAL_MS,
                options.interval_ms
            )));
        }
        let (speed, depth) = match options.timing {
            Timing::Trace { speed } => {
                if !(speed.is_finite()
                    && (limits::MIN_REPLAY_SPEED..=limits::MAX_REPLAY_SPEED).contains(&speed))
                {
                    return Err(Error::Workload(format!(
                        "speed must be a factor from {:e} to {:e}, got {speed}",
                        limits::MIN_REPLAY_SPEED,
                        limits::MAX_REPLAY_SPEED
                    )));
                }
                (speed, 0)
            }
            Timing::Afap { queue_depth } => {
                if queue_depth == 0 || queue_depth > limits::MAX_QUEUE_DEPTH {
                    return Err(Error::Workload(format!(
                        "queue depth must be between 1 and {}, got {queue_depth}",
                        limits::MAX_QUEUE_DEPTH
                    )));
                }
                (1.0, queue_depth)
            }
        };
        let start = drive.now();
        let interval_ns = ((options.interval_ms * 1e6).round() as u64).max(1);
        drive.start_work_log(start, interval_ns);
        Ok(Replay {
            options,
            start,
            interval_ns,
            speed,
            first_trace_ns: None,
            last_arrival: start,
            slots: Slots::new(depth as usize, start),
            counters_before: drive.counters(),
            before: drive.tally(),
            series: Series::new(interval_ns),
            submit_clock: IntervalClock::new(interval_ns),
            done_clock: IntervalClock::new(interval_ns),
            latency: Default::default(),
            ios: [0; 3],
            bytes: [0; 3],
            last_ack: start,
            stats: ReplayStats::default(),
        })
    }

    /// Requests replayed so far.
    pub fn requests(&self) -> u64 {
        self.stats.requests
    }

    /// Simulated seconds since the replay started, up to the last submission.
    pub fn sim_seconds(&self) -> f64 {
        (self.last_arrival - self.start).as_secs_f64()
    }

    /// When request `r` is submitted; an error if the trace's time, scaled by the speed, runs past
    /// what one replay may be scheduled for (checked before it becomes a clock value, so it never
    /// saturates or wraps).
    fn arrival(&mut self, r: &TraceRequest) -> Result<SimTime> {
        if self.slots.is_empty() {
            let first = *self.first_trace_ns.get_or_insert(r.time_ns);
            let since = r.time_ns.saturating_sub(first);
            // At the recorded speed, times stay exact integers.
            let scaled = if (self.speed - 1.0).abs() < f64::EPSILON {
                since as f64
            } else {
                (since as f64 / self.speed).round()
            };
            if scaled > limits::MAX_SCHEDULED_SECONDS * NS_PER_SEC as f64 {
                return Err(self.too_long(scaled));
            }
            let t = self.start + SimTime(scaled as u64);
            if t < self.last_arrival {
                self.stats.out_of_order += 1;
                return Ok(self.last_arrival);
            }
            Ok(t)
        } else {
            let t = self.slots.first().expect("a closed loop has slots");
            Ok(t.max(self.last_arrival))
        }
    }

    fn too_long(&self, since_ns: f64) -> Error {
        Error::Workload(format!(
            "the trace reaches {:.0} simulated seconds, more than one replay can record ({} intervals of {} ms, \
             at most {:e} s); raise --speed, or select a shorter time window",
            since_ns / NS_PER_SEC as f64,
            limits::MAX_INTERVALS,
            self.options.interval_ms,
            limits::MAX_SCHEDULED_SECONDS
        ))
    }

    /// Replays `requests` in order.
    pub fn feed(&mut self, drive: &mut Drive, requests: &[TraceRequest]) -> Result<()> {
        let user_bytes = drive.user_bytes();
        for (i, r) in requests.iter().enumerate() {
            let end = r.offset.checked_add(r.length).filter(|&e| e <= user_bytes);
            if r.length == 0 || end.is_none() {
                return Err(Error::Workload(format!(
                    "request {} ({} bytes at offset {}) is empty or runs past the drive's {user_bytes} user bytes",
                    self.stats.requests + i as u64 + 1,
                    r.length,
                    r.offset
                )));
            }
            self.one(drive, r)?;
        }
        Ok(())
    }

    fn one(&mut self, drive: &mut Drive, r: &TraceRequest) -> Result<()> {
        let t = self.arrival(r)?;
        let since = (t - self.start).ns();
        if since as f64 > limits::MAX_SCHEDULED_SECONDS * NS_PER_SEC as f64
            || since / self.interval_ns >= limits::MAX_INTERVALS
        {
            return Err(self.too_long(since as f64));
        }
        self.last_arrival = t;
        let k = r.kind as usize;
        let (ack, touched) = drive.submit_bytes(r.kind, r.offset, r.length, 1.0, t)?;
        if touched.unaligned {
            self.stats.unaligned_requests[k] += 1;
        }
        self.stats.units[k] += touched.units;
        self.stats.rmw_read_units += touched.rmw_units;
        self.stats.trim_bytes_not_unmapped += touched.trim_bytes_kept;
        self.stats.requests += 1;
        self.ios[k] += 1;
        self.bytes[k] += r.length;
        let latency = (ack - t).ns();
        self.latency[k].record(latency);
        self.series.completed(
            self.done_clock.index((ack - self.start).ns()),
            r.kind,
            r.length,
            latency,
        );
        let after = drive.tally();
        self.series
            .caused(self.submit_clock.index(since), &self.before, &after);
        self.before = after;
        self.last_ack = self.last_ack.max(ack);
        self.slots.replace_first(ack);
        Ok(())
    }

    /// Ends the replay once every request completed; the drive's clock moves to that time.
    pub fn finish(mut self, drive: &mut Drive) -> ReplayResult {
        let end = self.last_ack.max(self.last_arrival);
        drive.advance_to(end);
        let intervals = (end - self.start).ns().div_ceil(self.interval_ns) as usize;
        let work = drive.take_work_log();
        self.series
            .finish(intervals.max(1), work, self.before.slots_per_unit);
        ReplayResult {
            phase: PhaseResult {
                label: self.options.label.clone(),
                start_ns: self.start.ns(),
                end_ns: end.ns(),
                ios: self.ios,
                bytes: self.bytes,
                latency_rw: LatencyRecorder::merged_stats(&self.latency[..2]),
                latency_histogram: None,
                latency: self.latency.map(|l| l.stats()),
                counters: drive.counters().since(&self.counters_before),
                steady_state_at_s: None,
                position_done_ns: Vec::new(),
                position_bytes: Vec::new(),
                outcome: super::Outcome::default(),
                verify: None,
                series: self.series,
            },
            stats: self.stats,
        }
    }
}
