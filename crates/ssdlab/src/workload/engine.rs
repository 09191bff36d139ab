//! The closed-loop engine: each job keeps `queue_depth` slots, each submitting its next request
//! when the previous one completes (plus think time, within the rate limit), until the job's
//! limit. Several jobs run at the same time on one drive (fio's jobs without `stonewall`, or
//! `numjobs`): the slot that frees first, over all jobs, submits next (ties go to the job listed
//! first), so the jobs share the drive's link, buffer and dies as they would.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::steady::steady_reached;
use super::stream::{RequestStream, LOOKAHEAD};
use super::{PhaseResult, Plan, Progress, Rw, Workload};
use crate::drive::{Drive, Io, IoKind};
use crate::error::{Error, Result};
use crate::ftl::{Counters, Tally};
use crate::metrics::{IntervalClock, LatencyRecorder, Series};
use crate::units::{SimTime, NS_PER_SEC, UNIT_BYTES};

/// Requests whose mapping entries are prefetched together (every `PREFETCH_BATCH` submissions).
const PREFETCH_BATCH: usize = 8;

/// One job's state while it runs.
struct Job<'a> {
    w: &'a Workload,
    plan: Plan,
    stream: RequestStream,
    series: Series,
    submit_clock: IntervalClock,
    done_clock: IntervalClock,
    latency: [LatencyRecorder; 3],
    ios: [u64; 3],
    bytes: [u64; 3],
    submitted_ios: u64,
    submitted_bytes: u64,
    next_allowed: SimTime,
    direction_allowed: [SimTime; 3],
    last_ack: SimTime,
    end_time: Option<SimTime>,
    slots: BinaryHeap<Reverse<SimTime>>,
    position_done: Vec<u64>,
    position_bytes: Vec<u64>,
    steady_at: Option<f64>,
    checked_second: u64,
    done: bool,
}

/// The direction and time of a request drawn as `kind` for a slot free at `t`, under the
/// per-direction caps. As fio's `rate_ddir`: a direction ahead of its cap yields to the other
/// one of a mixed job when that one is not (a direction without a cap never is); when both
/// are ahead, the one due first goes, at its time.
#[inline]
fn direction_at(
    gaps: &[Option<SimTime>; 3],
    allowed: &[SimTime; 3],
    rw: Rw,
    kind: IoKind,
    t: SimTime,
) -> (IoKind, SimTime) {
    let k = kind as usize;
    if gaps[k].is_none() || allowed[k] <= t {
        return (kind, t);
    }
    if rw == Rw::Mixed && kind != IoKind::Trim {
        let other = if kind == IoKind::Read {
            IoKind::Write
        } else {
            IoKind::Read
        };
        let o = other as usize;
        if gaps[o].is_none() || allowed[o] <= t {
            return (other, t);
        }
        if allowed[o] < allowed[k] {
            return (other, allowed[o]);
        }
    }
    (kind, allowed[k])
}

impl<'a> Job<'a> {
    fn new(w: &'a Workload, plan: Plan, seed: u64, start: SimTime) -> Job<'a> {
        let stream = RequestStream::new(
            w,
            w.seed.unwrap_or(seed),
            plan.span_start,
            plan.span_units,
            plan.block_units,
        );
        Job {
            w,
            series: Series::new(plan.interval_ns),
            submit_clock: IntervalClock::new(plan.interval_ns),
            done_clock: IntervalClock::new(plan.interval_ns),
            latency: Default::default(),
            ios: [0; 3],
            bytes: [0; 3],
            submitted_ios: 0,
            submitted_bytes: 0,
            next_allowed: start,
            direction_allowed: [start; 3],
            last_ack: start,
            end_time: plan.end.map(|d| start + d),
            slots: (0..w.queue_depth).map(|_| Reverse(start)).collect(),
            position_done: vec![0u64; w.position_buckets as usize],
            position_bytes: vec![0u64; w.position_buckets as usize],
            steady_at: None,
            checked_second: 0,
            done: false,
            stream,
            plan,
        }
    }

    /// When this job's next request would be submitted.
    #[inline]
    fn next_time(&self) -> SimTime {
        let Reverse(mut t) = *self.slots.peek().expect("a job keeps queue_depth slots");
        if self.plan.rate_gap.is_some() {
            t = t.max(self.next_allowed);
        }
        match self.stream.peek(0) {
            Some((kind, _, _)) => {
                direction_at(
                    &self.plan.direction_gaps,
                    &self.direction_allowed,
                    self.w.rw,
                    kind,
                    t,
                )
                .1
            }
            None => t,
        }
    }

    /// Submits the job's next request, or marks the job done when it reached its limit.
    #[inline]
    fn step(&mut self, drive: &mut Drive, start: SimTime, before: &mut Tally) -> Result<()> {
        let plan = &self.plan;
        let mut slot = self
            .slots
            .peek_mut()
            .expect("a job keeps queue_depth slots");
        let Reverse(mut t) = *slot;
        if let Some(gap) = plan.rate_gap {
            t = t.max(self.next_allowed);
            self.next_allowed = t + gap;
        }
        if let Some(ss) = &self.w.steady_state {
            let second = (t - start).ns() / NS_PER_SEC;
            if second > self.checked_second {
                self.checked_second = second;
                if let Some(at) = steady_reached(ss, &self.series, second) {
                    self.steady_at = Some(at);
                    self.done = true;
                    return Ok(());
                }
            }
        }
        if self.end_time.is_some_and(|e| t >= e)
            || plan.io_limit.is_some_and(|n| self.submitted_ios >= n)
            || plan.byte_limit.is_some_and(|b| self.submitted_bytes >= b)
        {
            self.done = true;
            return Ok(());
        }
        let (drawn, lpn, units) = self.stream.next();
        let (kind, at) = direction_at(
            &plan.direction_gaps,
            &self.direction_allowed,
            self.w.rw,
            drawn,
            t,
        );
        if let Some(gap) = plan.direction_gaps[kind as usize] {
            t = at;
            // As fio: the k-th request of a direction is due k gaps after the start (a direction
            // that fell behind catches up), not one gap after the previous one went out.
            self.direction_allowed[kind as usize] += gap;
            if self.end_time.is_some_and(|e| t >= e) {
                self.done = true;
                return Ok(());
            }
        }
        // Overlap the L2P cache misses of the requests coming next, a batch at a time: their
        // page walks then overlap too (a prefetch waits for its address translation).
        if self.submitted_ios % PREFETCH_BATCH as u64 == 0 {
            for i in 0..PREFETCH_BATCH {
                if let Some((_, l, _)) = self.stream.peek(LOOKAHEAD - PREFETCH_BATCH + i) {
                    drive.prefetch(l as u32, 0);
                }
            }
            for i in 0..PREFETCH_BATCH {
                if let Some((_, l, _)) = self.stream.peek(LOOKAHEAD - 2 * PREFETCH_BATCH + i) {
                    drive.prefetch(l as u32, 1);
                }
            }
        }
        let block_bytes = units * UNIT_BYTES;
        let io = Io {
            kind,
            lpn: lpn as u32,
            units: units as u32,
            compressibility: self.w.compressibility,
        };
        let t = if self.w.rw == Rw::TrimWrite {
            let trim = Io {
                kind: IoKind::Trim,
                ..io
            };
            let trimmed = drive.submit(trim, t)?;
            self.ios[2] += 1;
            self.bytes[2] += block_bytes;
            self.latency[2].record((trimmed - t).ns());
            self.series.completed(
                self.done_clock.index((trimmed - start).ns()),
                IoKind::Trim,
                block_bytes,
                (trimmed - t).ns(),
            );
            trimmed
        } else {
            t
        };
        let ack = drive.submit(io, t)?;
        let buckets = self.position_done.len() as u64;
        if buckets > 0 {
            let b = ((lpn - plan.span_start) * buckets / plan.span_units) as usize;
            let done = (ack - start).ns();
            self.position_done[b] = self.position_done[b].max(done);
            self.position_bytes[b] += block_bytes;
        }
        let k = kind as usize;
        self.ios[k] += 1;
        self.bytes[k] += block_bytes;
        self.submitted_ios += 1;
        self.submitted_bytes += block_bytes;
        self.latency[k].record((ack - t).ns());
        self.series.completed(
            self.done_clock.index((ack - start).ns()),
            kind,
            block_bytes,
            (ack - t).ns(),
        );
        let after = drive.tally();
        self.series
            .caused(self.submit_clock.index((t - start).ns()), before, &after);
        *before = after;
        self.last_ack = self.last_ack.max(ack);
        *slot = Reverse(ack + plan.think);
        Ok(())
    }

    fn progress(&self, t: SimTime, start: SimTime) -> Progress {
        let plan = &self.plan;
        let elapsed = (t - start).as_secs_f64();
        let mut fraction: f64 = 0.0;
        if let Some(d) = plan.end {
            fraction = fraction.max(elapsed / d.as_secs_f64());
        }
        if let Some(n) = plan.io_limit {
            fraction = fraction.max(self.submitted_ios as f64 / n as f64);
        }
        if let Some(b) = plan.byte_limit {
            fraction = fraction.max(self.submitted_bytes as f64 / b as f64);
        }
        if self.done {
            fraction = 1.0;
        }
        Progress {
            fraction: fraction.min(1.0),
            sim_seconds: elapsed,
        }
    }

    /// When the job ended: a time-based job lasts its duration, unless steady state ended it.
    fn end(&self) -> SimTime {
        match (self.end_time, self.steady_at) {
            (Some(e), None) => e.max(self.last_ack),
            _ => self.last_ack,
        }
    }
}

/// What jobs that ran together measured: each job's result, all of them as one, and the jobs of
/// each reporting group as one (fio's `group_reporting`: IOs, bytes and host series summed,
/// latency distributions merged).
#[derive(Clone, Debug, PartialEq)]
pub struct Together {
    pub jobs: Vec<PhaseResult>,
    pub combined: PhaseResult,
    /// One per reporting group `0..=max(report_as)` (empty without `report_as`).
    pub groups: Vec<PhaseResult>,
}

impl Workload {
    /// Runs the phase on `drive` from its current time. `observer` sees progress every few
    /// thousand requests and stops the run by returning `false`.
    pub fn run(
        &self,
        drive: &mut Drive,
        seed: u64,
        observer: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<PhaseResult> {
        let mut results = run_together(&[self], drive, &[seed], &[], observer)?;
        Ok(results.jobs.pop().expect("one job, one result"))
    }
}

/// Runs `jobs` at the same time on `drive` from its current time, job `i` with `seeds[i]`
/// (unless it sets its own). Each result holds the job's own requests, bytes, latencies and
/// series of host writes; the NAND work (counters, and the series' NAND, GC and erase columns) is
/// the drive's over the whole run, shared by the jobs. `report_as[i]` (if given, one per job) is
/// job `i`'s reporting group: each group's jobs are also returned as one. `observer` sees the
/// progress of the job furthest behind.
pub fn run_together(
    jobs: &[&Workload],
    drive: &mut Drive,
    seeds: &[u64],
    report_as: &[u32],
    observer: &mut dyn FnMut(Progress) -> bool,
) -> Result<Together> {
    assert_eq!(jobs.len(), seeds.len(), "one seed per job");
    assert!(!jobs.is_empty(), "at least one job");
    let plans = jobs
        .iter()
        .map(|w| w.plan(drive.user_units()))
        .collect::<Result<Vec<_>>>()?;
    if let Some(first) = plans.first() {
        if plans.iter().any(|p| p.interval_ns != first.interval_ns) {
            return Err(Error::Workload(
                "jobs that run at the same time must log at the same interval".into(),
            ));
        }
    }
    let interval_ns = plans[0].interval_ns;
    let start = drive.now();
    let counters_before: Counters = drive.counters();
    drive.start_work_log(start, interval_ns);
    let mut state: Vec<Job<'_>> = jobs
        .iter()
        .zip(plans)
        .zip(seeds)
        .map(|((w, plan), &seed)| Job::new(w, plan, seed, start))
        .collect();
    let mut before = drive.tally();
    let mut submitted = 0u64;
    loop {
        // The job whose next submission comes first (the first listed on a tie).
        let next = if state.len() == 1 {
            (!state[0].done).then_some(0)
        } else {
            state
                .iter()
                .enumerate()
                .filter(|(_, j)| !j.done)
                .min_by_key(|(i, j)| (j.next_time(), *i))
                .map(|(i, _)| i)
        };
        let Some(i) = next else { break };
        state[i].step(drive, start, &mut before)?;
        submitted += 1;
        if submitted % 8192 == 0 {
            let slowest = state
                .iter()
                .map(|j| j.progress(j.next_time(), start))
                .min_by(|a, b| a.fraction.total_cmp(&b.fraction))
                .expect("at least one job");
            if !observer(slowest) {
                return Err(Error::Cancelled);
            }
        }
    }
    let end = state.iter().map(Job::end).max().expect("at least one job");
    drive.advance_to(end);
    let work = drive.take_work_log();
    let counters = drive.counters().since(&counters_before);
    let recorders: Vec<[LatencyRecorder; 3]> = state.iter().map(|j| j.latency.clone()).collect();
    let results: Vec<PhaseResult> = state
        .into_iter()
        .map(|mut j| {
            let job_end = j.end();
            let intervals = (job_end - start).ns().div_ceil(interval_ns) as usize;
            j.series
                .finish(intervals.max(1), work.clone(), before.slots_per_unit);
            PhaseResult {
                label: j.w.label.clone(),
                start_ns: start.ns(),
                end_ns: job_end.ns(),
                ios: j.ios,
                bytes: j.bytes,
                latency: j.latency.map(|l| l.stats()),
                counters,
                steady_state_at_s: j.steady_at,
                position_done_ns: j.position_done,
                position_bytes: j.position_bytes,
                series: j.series,
            }
        })
        .collect();
    // The jobs `members` as one: IOs, bytes and host series summed, latencies merged; the NAND
    // columns are the drive's.
    let combine = |members: &[usize]| -> PhaseResult {
        let mut latency: [LatencyRecorder; 3] = Default::default();
        let mut series = Series::new(interval_ns);
        let (mut ios, mut bytes) = ([0u64; 3], [0u64; 3]);
        let mut last = start;
        for &i in members {
            for (c, l) in latency.iter_mut().zip(&recorders[i]) {
                c.merge(l);
            }
            series.add_host(&results[i].series);
            for k in 0..3 {
                ios[k] += results[i].ios[k];
                bytes[k] += results[i].bytes[k];
            }
            last = last.max(SimTime(results[i].end_ns));
        }
        let intervals = (last - start).ns().div_ceil(interval_ns) as usize;
        series.finish(intervals.max(1), work.clone(), before.slots_per_unit);
        PhaseResult {
            label: members
                .iter()
                .map(|&i| results[i].label.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            start_ns: start.ns(),
            end_ns: last.ns(),
            ios,
            bytes,
            latency: latency.map(|l| l.stats()),
            counters,
            steady_state_at_s: None,
            position_done_ns: Vec::new(),
            position_bytes: Vec::new(),
            series,
        }
    };
    let all: Vec<usize> = (0..results.len()).collect();
    let combined = combine(&all);
    let groups = match report_as.iter().max() {
        Some(&top) if report_as.len() == results.len() => (0..=top)
            .map(|g| {
                let members: Vec<usize> =
                    all.iter().copied().filter(|&i| report_as[i] == g).collect();
                combine(&members)
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Together {
        jobs: results,
        combined,
        groups,
    })
}
