//! The closed-loop engine: each job keeps `queue_depth` slots, each submitting its next request
//! when the previous one completes (plus think time, within the rate limit), until the job's
//! limit. Several jobs run at the same time on one drive (fio's jobs without `stonewall`, or
//! `numjobs`): the slot that frees first, over all jobs, submits next (ties go to the job listed
//! first), so the jobs share the drive's link, buffer and dies as they would.
use super::control::{Exit, ExitWhat, JobError, EIO, ETIMEDOUT};
use super::flow::Flows;
use super::inflight::Completion;
use super::jobctl::Control;
use super::latency_target::Step as Search;
use super::slots::Slots;
use super::steady::steady_reached;
use super::stream::{RequestStream, LOOKAHEAD};
use super::verify::{verify_error, verify_request, Next, VerifyState};
use super::{PhaseResult, Plan, Progress, Rw, Workload};
use crate::drive::{Drive, IoKind};
use crate::error::{Error, Result};
use crate::ftl::{Counters, Tally};
use crate::metrics::{IntervalClock, LatencyRecorder, Series};
use crate::units::{SimTime, NS_PER_SEC, SECTORS_PER_UNIT, SECTOR_BYTES};

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
    slots: Slots,
    position_done: Vec<u64>,
    position_bytes: Vec<u64>,
    steady_at: Option<f64>,
    checked_second: u64,
    done: bool,
    /// fio's semantics beyond the closed loop, for a job that uses them (jobctl.rs).
    ctl: Option<Box<Control>>,
    /// fio's `verify` (`super::verify`): none for a job that does not verify.
    verify: Option<Box<VerifyState>>,
    /// Where the job's figures start: when it started (the phase's start plus its `startdelay`),
    /// then, once its ramp is over, the ramp's end (fio's `reset_all_stats` resets the epoch).
    origin: SimTime,
    /// The end of the job's `ramp_time`, while it is not over.
    ramp_end: Option<SimTime>,
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

/// `from + gap`, the next time a rate limit lets a request go, checked: a deadline more than
/// `limits::MAX_RATE_DEADLINE_SECONDS`, or more than `limits::MAX_INTERVALS` series intervals,
/// after the phase's `start` (a very low rate on a job limited by bytes or requests, not by
/// time) is a one-line error, never an overflow of the u64 clock or a series out of memory.
#[inline]
fn rate_deadline(
    from: SimTime,
    gap: SimTime,
    start: SimTime,
    interval_ns: u64,
    label: &str,
) -> Result<SimTime> {
    let limit = ((crate::limits::MAX_RATE_DEADLINE_SECONDS * NS_PER_SEC as f64) as u64)
        .min(interval_ns.saturating_mul(crate::limits::MAX_INTERVALS));
    let label = if label.is_empty() { "workload" } else { label };
    match from.0.checked_add(gap.0) {
        Some(due) if due.saturating_sub(start.0) <= limit => Ok(SimTime(due)),
        _ => Err(Error::Workload(format!(
            "{label}: the rate limit would hold a request past {:e} simulated seconds (at most {:e} s, \
             and {} series intervals); raise the rate or bound the job by runtime",
            limit as f64 / NS_PER_SEC as f64,
            crate::limits::MAX_RATE_DEADLINE_SECONDS,
            crate::limits::MAX_INTERVALS
        ))),
    }
}

impl<'a> Job<'a> {
    /// The job of `w` in a phase that starts at `phase_start`: it starts its `startdelay` later.
    fn new(w: &'a Workload, plan: Plan, seed: u64, phase_start: SimTime) -> Job<'a> {
        let start = phase_start + plan.delay;
        let ramp_end = (plan.ramp > SimTime(0)).then(|| start + plan.ramp);
        let stream = RequestStream::new(
            w,
            w.seed.unwrap_or(seed),
            plan.span_start,
            plan.span_sectors,
            plan.block_sectors,
            plan.drive_sectors,
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
            // fio's runtime runs from the ramp's end (the epoch `ramp_time_over` resets)
            end_time: plan.end.map(|d| start + plan.ramp + d),
            slots: Slots::new(w.queue_depth as usize, start),
            position_done: vec![0u64; w.position_buckets as usize],
            position_bytes: vec![0u64; w.position_buckets as usize],
            steady_at: None,
            checked_second: 0,
            done: false,
            ctl: None,
            verify: w
                .verify
                .as_ref()
                .map(|v| Box::new(VerifyState::new(v, start))),
            origin: start,
            ramp_end,
            stream,
            plan,
        }
    }

    /// Whether a request that completes at `ack` counts in the job's figures (fio accounts a
    /// completion only once `ramp_time_over`). The first completion at or after the ramp's end
    /// ends the ramp: the figures start over there. A request of the ramp that completes later
    /// than that one, but before the ramp's end, is not counted; a job that ends within its
    /// ramp counts every request, as fio reports it.
    #[inline]
    fn counts(&mut self, ack: SimTime) -> bool {
        match self.ramp_end {
            None => ack >= self.origin,
            Some(end) if ack >= end => {
                self.end_ramp(end);
                true
            }
            Some(_) => true,
        }
    }

    /// The ramp is over at `end`: fio's `reset_all_stats` (figures, series, epoch) and
    /// `reset_io_counters` (the rate's schedule and floor start over there).
    #[cold]
    fn end_ramp(&mut self, end: SimTime) {
        self.ramp_end = None;
        self.origin = end;
        self.ios = [0; 3];
        self.bytes = [0; 3];
        self.latency = Default::default();
        self.series = Series::new(self.plan.interval_ns);
        self.submit_clock = IntervalClock::new(self.plan.interval_ns);
        self.done_clock = IntervalClock::new(self.plan.interval_ns);
        self.position_done.iter_mut().for_each(|x| *x = 0);
        self.position_bytes.iter_mut().for_each(|x| *x = 0);
        self.checked_second = 0;
        self.next_allowed = end;
        self.direction_allowed = [end; 3];
        if let Some(c) = self.ctl.as_deref_mut() {
            if let Some(q) = c.inflight.as_mut() {
                q.reset_counts();
            }
            if let Some(m) = c.min_rate.as_mut() {
                m.restart(end);
            }
        }
    }

    /// In the job's ramp at `t` (fio checks no rate floor or latency target then).
    #[inline]
    fn in_ramp(&self, t: SimTime) -> bool {
        self.ramp_end.is_some_and(|end| t < end)
    }

    /// When this job's next request would be submitted.
    #[inline]
    fn next_time(&self) -> SimTime {
        let mut t = self.slots.first().expect("a job keeps queue_depth slots");
        if self.plan.rate_gap.is_some() {
            t = t.max(self.next_allowed);
        }
        if let Some(c) = &self.ctl {
            t = t.max(c.hold_until);
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
    /// `VERIFY`: the job verifies (fio's `verify`); a job that does not runs the step compiled
    /// without any of it.
    fn step<const VERIFY: bool>(
        &mut self,
        drive: &mut Drive,
        start: SimTime,
        before: &mut Tally,
    ) -> Result<()> {
        let plan = &self.plan;
        let mut t = self.slots.first().expect("a job keeps queue_depth slots");
        if let Some(gap) = plan.rate_gap {
            t = t.max(self.next_allowed);
            self.next_allowed = match self.ctl.as_deref_mut().and_then(|c| c.poisson.as_mut()) {
                // Poisson arrivals are due at their own times, however late the last one went.
                Some(p) => rate_deadline(
                    self.next_allowed,
                    p.gap(self.stream.peek(0).map_or(0, |r| r.0 as usize)),
                    start,
                    plan.interval_ns,
                    &self.w.label,
                )?,
                None => rate_deadline(t, gap, start, plan.interval_ns, &self.w.label)?,
            };
        }
        if let Some(c) = self.ctl.as_deref_mut() {
            t = t.max(c.hold_until);
        }
        if let Some(ss) = &self.w.steady_state {
            let second = t.saturating_sub(self.origin).ns() / NS_PER_SEC;
            if second > self.checked_second {
                self.checked_second = second;
                if let Some(at) = steady_reached(ss, &self.series, second) {
                    self.steady_at = Some(at);
                    self.done = true;
                    return Ok(());
                }
            }
        }
        // A verifying job that writes runs fio's passes (writes, then reading them back): its
        // verify state says what comes next and when it ends.
        let mut listed = None;
        if let Some(v) = self.verify.as_deref_mut().filter(|v| VERIFY && v.governs()) {
            let timed_out = self.end_time.is_some_and(|e| t >= e);
            let ios_out = plan.io_limit.is_some_and(|n| self.submitted_ios >= n);
            match v.next(t, timed_out, ios_out) {
                Next::Done => {
                    self.done = true;
                    return Ok(());
                }
                Next::Wait(at) => {
                    self.slots.replace_first(at);
                    return Ok(());
                }
                Next::Phantom => {
                    let (k, s, n) = self.stream.next();
                    v.phantom(k == IoKind::Write, s, n, t);
                    self.ios[k as usize] += 1;
                    self.bytes[k as usize] += n * SECTOR_BYTES;
                    self.submitted_ios += 1;
                    self.submitted_bytes += n * SECTOR_BYTES;
                    return Ok(());
                }
                Next::Verify(p) => listed = Some(p),
                Next::Stream => {}
            }
        } else if self.end_time.is_some_and(|e| t >= e)
            || plan.io_limit.is_some_and(|n| self.submitted_ios >= n)
            || plan.byte_limit.is_some_and(|b| self.submitted_bytes >= b)
            || self
                .w
                .sequencer
                .and_then(|q| q.passes)
                .is_some_and(|p| self.stream.next_pass() > p)
        {
            self.done = true;
            return Ok(());
        }
        let (drawn, sector, sectors) = match listed {
            Some(p) => (IoKind::Read, p.sector, p.sectors),
            None => self.stream.next(),
        };
        let (kind, at) = direction_at(
            &plan.direction_gaps,
            &self.direction_allowed,
            self.w.rw,
            drawn,
            t,
        );
        if let Some(gap) = plan.direction_gaps[kind as usize].filter(|_| listed.is_none()) {
            t = at;
            // As fio: the k-th request of a direction is due k gaps after the start (a direction
            // that fell behind catches up), not one gap after the previous one went out.
            let gap = match self.ctl.as_deref_mut().and_then(|c| c.poisson.as_mut()) {
                Some(p) => p.gap(kind as usize),
                None => gap,
            };
            self.direction_allowed[kind as usize] = rate_deadline(
                self.direction_allowed[kind as usize],
                gap,
                start,
                plan.interval_ns,
                &self.w.label,
            )?;
            if self.end_time.is_some_and(|e| t >= e) {
                self.done = true;
                return Ok(());
            }
        }
        // Overlap the L2P cache misses of the requests coming next, a batch at a time: their
        // page walks then overlap too (a prefetch waits for its address translation).
        if self.submitted_ios % PREFETCH_BATCH as u64 == 0 {
            for i in 0..PREFETCH_BATCH {
                if let Some((_, s, _)) = self.stream.peek(LOOKAHEAD - PREFETCH_BATCH + i) {
                    drive.prefetch((s / SECTORS_PER_UNIT) as u32, 0);
                }
            }
            for i in 0..PREFETCH_BATCH {
                if let Some((_, s, _)) = self.stream.peek(LOOKAHEAD - 2 * PREFETCH_BATCH + i) {
                    drive.prefetch((s / SECTORS_PER_UNIT) as u32, 1);
                }
            }
        }
        // Every request goes through the drive's one byte-level path: whole units as they are,
        // a unit covered in part by a read-modify-write (`Drive::submit_bytes`).
        let offset = sector * SECTOR_BYTES;
        let block_bytes = sectors * SECTOR_BYTES;
        let compressibility = self.w.compressibility;
        let mut trim = None;
        let t = if self.w.rw == Rw::TrimWrite && listed.is_none() {
            let (trimmed, _) =
                drive.submit_bytes(IoKind::Trim, offset, block_bytes, compressibility, t)?;
            trim = Some((t, trimmed));
            trimmed
        } else {
            t
        };
        let (ack, _) = drive.submit_bytes(kind, offset, block_bytes, compressibility, t)?;
        // The slot is free again when the request completes (plus think time).
        self.slots.replace_first(ack + plan.think);
        if let Some((at, trimmed)) = trim {
            if self.counts(trimmed) {
                self.ios[2] += 1;
                self.bytes[2] += block_bytes;
                self.latency[2].record((trimmed - at).ns());
                self.series.completed(
                    self.done_clock.index((trimmed - self.origin).ns()),
                    IoKind::Trim,
                    block_bytes,
                    (trimmed - at).ns(),
                );
            }
        }
        let origin = self.origin;
        let failed = match self.verify.as_deref_mut().filter(|_| VERIFY) {
            Some(v) => verify_request(v, drive, kind, listed, sector, sectors, origin, ack)?,
            None => false,
        };
        let k = kind as usize;
        self.submitted_ios += 1;
        self.submitted_bytes += block_bytes;
        let after = drive.tally();
        if self.counts(ack) {
            let plan = &self.plan;
            let buckets = self.position_done.len() as u64;
            if buckets > 0 {
                let b = (u128::from(sector - plan.span_start) * u128::from(buckets)
                    / u128::from(plan.span_sectors)) as usize;
                let done = (ack - self.origin).ns();
                self.position_done[b] = self.position_done[b].max(done);
                self.position_bytes[b] += block_bytes;
            }
            self.ios[k] += 1;
            self.bytes[k] += block_bytes;
            self.latency[k].record((ack - t).ns());
            self.series.completed(
                self.done_clock.index((ack - self.origin).ns()),
                kind,
                block_bytes,
                (ack - t).ns(),
            );
            self.series.caused(
                self.submit_clock.index(t.saturating_sub(self.origin).ns()),
                before,
                &after,
            );
        }
        *before = after;
        self.last_ack = self.last_ack.max(ack);
        if VERIFY && failed {
            // As fio: the failed read ends the job with EILSEQ.
            self.done = true;
            if let Some(c) = self.ctl.as_deref_mut() {
                c.stopped_at = Some(ack);
                if self.verify.as_deref().is_some_and(VerifyState::failed) {
                    c.outcome.error = Some(verify_error(self.verify.as_deref()));
                }
            }
        }
        if let Some(q) = self.ctl.as_deref_mut().and_then(|c| c.inflight.as_mut()) {
            q.push(Completion {
                at: ack,
                dir: k as u8,
                offset,
                bytes: block_bytes,
                latency_ns: (ack - t).ns(),
            });
        }
        Ok(())
    }

    fn progress(&self, t: SimTime, start: SimTime) -> Progress {
        let plan = &self.plan;
        let elapsed = (t - start).as_secs_f64();
        let mut fraction: f64 = 0.0;
        if let Some(d) = plan.end {
            // the job's runtime runs from its start delay and ramp on
            let ran = t
                .saturating_sub(start + plan.delay + plan.ramp)
                .as_secs_f64();
            fraction = fraction.max(ran / d.as_secs_f64());
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
        if let Some(s) = self.ctl.as_ref().and_then(|c| c.stopped_at) {
            return s.max(self.last_ack);
        }
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
    // fio's semantics beyond the closed loop; flows and exitall reach across jobs, so then every
    // job keeps the state.
    let together = jobs.len() > 1 && jobs.iter().any(|w| w.flow.is_some() || w.exit.is_some());
    for (j, &seed) in state.iter_mut().zip(seeds) {
        j.ctl = Control::new(j.w, j.w.seed.unwrap_or(seed), start, together);
        if j.ctl.as_ref().is_some_and(|c| c.search.is_some()) {
            j.slots = Slots::new(1, start); // a latency search starts at depth 1
        }
    }
    let flow_of = if together {
        let (f, of) = Flows::new(&jobs.iter().map(|w| w.flow).collect::<Vec<_>>());
        Some((f, of))
    } else {
        None
    };
    let (mut flows, flow_of) = flow_of.unwrap_or_default();
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
                .filter(|(_, j)| !j.done && !j.ctl.as_ref().is_some_and(|c| c.flow_blocked))
                .min_by_key(|(i, j)| (j.next_time(), *i))
                .map(|(i, _)| i)
        };
        let Some(i) = next else { break };
        let turn = if state[i].ctl.is_some() {
            state[i].control(start, &mut flows, flow_of.get(i).copied().flatten())
        } else {
            Turn::Go
        };
        if let Turn::Counted(f, at) = turn {
            let_go(&mut state, f, at, &flow_of);
        }
        if !matches!(turn, Turn::Handled) {
            if state[i].verify.is_some() {
                state[i].step::<true>(drive, start, &mut before)?;
            } else {
                state[i].step::<false>(drive, start, &mut before)?;
            }
        }
        if state[i].done && state[i].ctl.is_some() {
            job_ended(&mut state, i, &mut flows, &flow_of);
        }
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
            let job_end = j.end().max(j.origin);
            let intervals = (job_end - j.origin).ns().div_ceil(interval_ns) as usize;
            // The drive's NAND work from the interval the job's figures start in.
            let skip = ((j.origin - start).ns() / interval_ns) as usize;
            let work = if skip == 0 {
                work.clone()
            } else {
                work.from_interval(skip)
            };
            j.series
                .finish(intervals.max(1), work, before.slots_per_unit);
            PhaseResult {
                label: j.w.label.clone(),
                start_ns: j.origin.ns(),
                end_ns: job_end.ns(),
                ios: j.ios,
                bytes: j.bytes,
                latency_rw: LatencyRecorder::merged_stats(&j.latency[..2]),
                latency_histogram: j
                    .w
                    .latency_histogram
                    .then(|| LatencyRecorder::merged_buckets(&j.latency[..2])),
                latency: j.latency.map(|l| l.stats()),
                counters,
                steady_state_at_s: j.steady_at,
                position_done_ns: j.position_done,
                position_bytes: j.position_bytes,
                outcome: {
                    let mut o = j.ctl.map_or_else(super::Outcome::default, |c| {
                        let mut o = c.outcome;
                        o.latency_depth = c.search.map(|s| s.qd);
                        o
                    });
                    if let Some(v) = j.verify.as_deref() {
                        v.add_to(&mut o);
                    }
                    o
                },
                verify: j.verify.map(|v| v.finish(job_end)),
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
        // From the first member's start (members may start later: startdelay, ramp_time).
        let first = SimTime(
            members
                .iter()
                .map(|&i| results[i].start_ns)
                .min()
                .unwrap_or(start.ns()),
        );
        let mut last = first;
        let mut outcome = super::Outcome::default();
        for &i in members {
            let o = &results[i].outcome;
            if outcome.error.is_none() {
                outcome.error.clone_from(&o.error);
            }
            outcome.ignored_errors += o.ignored_errors;
            outcome.first_ignored_error = outcome.first_ignored_error.or(o.first_ignored_error);
            outcome.latency_depth = outcome.latency_depth.or(o.latency_depth);
            for (c, l) in latency.iter_mut().zip(&recorders[i]) {
                c.merge(l);
            }
            let at = (results[i].start_ns - first.ns()) / interval_ns;
            series.add_host_at(&results[i].series, at as usize);
            for k in 0..3 {
                ios[k] += results[i].ios[k];
                bytes[k] += results[i].bytes[k];
            }
            last = last.max(SimTime(results[i].end_ns));
        }
        let intervals = (last - first).ns().div_ceil(interval_ns) as usize;
        let skip = ((first - start).ns() / interval_ns) as usize;
        let work = if skip == 0 {
            work.clone()
        } else {
            work.from_interval(skip)
        };
        series.finish(intervals.max(1), work, before.slots_per_unit);
        PhaseResult {
            label: members
                .iter()
                .map(|&i| results[i].label.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            start_ns: first.ns(),
            end_ns: last.ns(),
            ios,
            bytes,
            latency_rw: LatencyRecorder::merged_stats(&latency[..2]),
            latency_histogram: {
                let asked: Vec<LatencyRecorder> = members
                    .iter()
                    .filter(|&&i| results[i].latency_histogram.is_some())
                    .flat_map(|&i| recorders[i][..2].iter().cloned())
                    .collect();
                (!asked.is_empty()).then(|| LatencyRecorder::merged_buckets(&asked))
            },
            latency: latency.map(|l| l.stats()),
            counters,
            steady_state_at_s: None,
            position_done_ns: Vec::new(),
            position_bytes: Vec::new(),
            outcome,
            verify: None,
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

/// What a job's turn of fio's checks decided (`Job::control`).
enum Turn {
    /// Something happened instead of a request this turn: a completion judged, the depth
    /// changed, held back by its flow, or the job stopped.
    Handled,
    /// Go on and issue the next request.
    Go,
    /// Go on; the job counted one in flow `.0` at `.1`, which may let jobs it held back go.
    Counted(usize, SimTime),
}

/// File name in fio's latency message: the simulated drive stands in for fio's file.
const FILE_NAME: &str = "ssdlab-drive";
const DIR_NAMES: [&str; 3] = ["read", "write", "trim"];

impl Job<'_> {
    /// fio's checks at the top of the job's loop, in fio's order (backend.c `do_io`): being
    /// terminated, the completions up to now (`latency_target`), the rate floor, the latency
    /// window, the flow.
    fn control(&mut self, start: SimTime, flows: &mut Flows, flow: Option<usize>) -> Turn {
        let t = self.next_time();
        let c = self.ctl.as_deref_mut().expect("a job with control");
        if let Some(at) = c.terminate_at.filter(|&at| t >= at) {
            c.outcome.terminated_at_ns = Some((at - start).ns());
            c.stopped_at = Some(at);
            self.done = true;
            return Turn::Handled;
        }
        if c.inflight.is_some() && self.completions(t) {
            return Turn::Handled;
        }
        let ramp = self.in_ramp(t); // fio checks neither floor nor target in the ramp
        let c = self.ctl.as_deref_mut().expect("a job with control");
        if let (Some(m), Some(q), false) = (c.min_rate.as_mut(), c.inflight.as_ref(), ramp) {
            let failed = m.check(t, &q.done_bytes, &q.done_ios, &self.w.label);
            if !failed.is_empty() {
                c.outcome.error = Some(JobError {
                    errno: EIO,
                    func: "check_min_rate".into(),
                    at: "file:backend.c:1131".into(),
                    message: failed.join("\n"),
                });
                c.stopped_at = Some(t);
                self.done = true;
                return Turn::Handled;
            }
        }
        if let Some(s) = c.search.as_mut().filter(|_| !ramp) {
            let step = s.check(t);
            if self.apply(step, t) {
                return Turn::Handled;
            }
        }
        let (Some(i), Some(f)) = (flow, self.w.flow) else {
            return Turn::Go;
        };
        let c = self.ctl.as_deref_mut().expect("a job with control");
        if flows.exceeded(i, &mut c.flow_count, f.weight) {
            if f.sleep_us > 0 {
                // fio waits for what is in flight, then sleeps.
                let last = self.slots.last().unwrap_or(t).max(t);
                c.hold_until = last + SimTime(f.sleep_us * 1000);
            } else {
                c.flow_blocked = true; // fio asks again at once: until another job counts
            }
            return Turn::Handled;
        }
        Turn::Counted(i, t)
    }

    /// Judges the completions up to `t` in their order; `true` when the job's slots or state
    /// changed (no request this turn).
    fn completions(&mut self, t: SimTime) -> bool {
        loop {
            let c = self.ctl.as_deref_mut().expect("a job with control");
            let Some(done) = c.inflight.as_mut().and_then(|q| q.pop_until(t)) else {
                return false;
            };
            let Some(s) = c.search.as_mut() else {
                continue; // a rate floor only counts them
            };
            let step = s.completed(done.latency_ns);
            if step == Search::Fatal {
                if self.fatal(done) {
                    return true;
                }
                continue;
            }
            if self.apply(step, done.at) {
                return true;
            }
        }
    }

    /// A request over the latency target at depth 1: the job ends with ETIMEDOUT (`true`),
    /// unless the error is ignored for its direction (counted, `false`).
    fn fatal(&mut self, done: Completion) -> bool {
        let c = self.ctl.as_deref_mut().expect("a job with control");
        let spec = c.search.as_ref().expect("a latency search").spec;
        if spec.timeout_ignored[done.dir as usize] {
            c.outcome.ignored_errors += 1;
            c.outcome.first_ignored_error.get_or_insert(ETIMEDOUT);
            return false;
        }
        c.outcome.error = Some(JobError {
            errno: ETIMEDOUT,
            func: "max latency exceeded".into(),
            at: "file:io_u.c:1432".into(),
            message: format!(
                "fio: latency of {} nsec exceeds specified max ({} nsec): {FILE_NAME} {} {} {}",
                done.latency_ns,
                spec.target_ns,
                DIR_NAMES[done.dir as usize],
                done.offset,
                done.bytes
            ),
        });
        c.stopped_at = Some(done.at);
        self.done = true;
        true
    }

    /// Acts on the latency search's verdict at `now`; `true` when the job must not issue a
    /// request this turn.
    fn apply(&mut self, step: Search, now: SimTime) -> bool {
        let c = self.ctl.as_deref_mut().expect("a job with control");
        match step {
            Search::Go => false,
            Search::Grow(old) => {
                let qd = c.search.as_ref().expect("a latency search").qd;
                for _ in old..qd {
                    self.slots.push(now);
                }
                false
            }
            Search::Quiesce { reset } => {
                self.quiesce(now, reset);
                true
            }
            Search::Done => {
                c.stopped_at = Some(now);
                self.done = true;
                true
            }
            Search::Fatal => unreachable!("judged where requests complete"),
        }
    }

    /// fio's `io_u_quiesce` after a change of depth: every request in flight completes (each
    /// judged as it does), then a new window starts at the new depth; with `reset`, the job's
    /// figures start over there (the found depth's final window).
    fn quiesce(&mut self, now: SimTime, reset: bool) {
        let mut last = now;
        loop {
            let c = self.ctl.as_deref_mut().expect("a job with control");
            let Some(done) = c
                .inflight
                .as_mut()
                .and_then(|q| q.pop_until(SimTime(u64::MAX)))
            else {
                break;
            };
            last = last.max(done.at);
            let s = c.search.as_mut().expect("a latency search");
            if s.completed(done.latency_ns) == Search::Fatal && self.fatal(done) {
                return;
            }
        }
        let c = self.ctl.as_deref_mut().expect("a job with control");
        let s = c.search.as_mut().expect("a latency search");
        s.new_window(last);
        let free = last + self.plan.think;
        self.slots = Slots::new(s.qd as usize, free);
        if reset {
            self.ios = [0; 3];
            self.bytes = [0; 3];
            self.latency = Default::default();
            if let Some(q) = c.inflight.as_mut() {
                q.reset_counts();
            }
            if let Some(m) = c.min_rate.as_mut() {
                m.restart(last);
            }
            c.outcome.stats_start_ns = Some(last.saturating_sub(self.origin).ns());
            self.end_time = self.plan.end.map(|d| last + d);
            self.next_allowed = last;
            self.direction_allowed = [last; 3];
        }
    }
}

/// Lets the jobs of flow `flow` that it held back go again at `at`.
fn let_go(state: &mut [Job<'_>], flow: usize, at: SimTime, flow_of: &[Option<usize>]) {
    for (j, f) in state.iter_mut().zip(flow_of) {
        if *f != Some(flow) {
            continue;
        }
        if let Some(c) = j.ctl.as_deref_mut().filter(|c| c.flow_blocked) {
            c.flow_blocked = false;
            c.hold_until = c.hold_until.max(at);
        }
    }
}

/// Job `i` ended: it leaves its flow (fio's `flow_exit_job`), letting the jobs it held back go,
/// and with `exitall` (or `exitall_on_error` and an error) stops the jobs its `exit_what`
/// names from the time it ended (control.rs).
fn job_ended(state: &mut [Job<'_>], i: usize, flows: &mut Flows, flow_of: &[Option<usize>]) {
    let at = state[i].end().max(state[i].next_time());
    let Some(c) = state[i].ctl.as_deref() else {
        return;
    };
    let (count, failed) = (c.flow_count, c.outcome.error.is_some());
    if let (Some(Some(f)), Some(flow)) = (flow_of.get(i), state[i].w.flow) {
        flows.leave(*f, count, flow.weight);
        let_go(state, *f, at, flow_of);
    }
    let Some(Exit {
        what,
        on_end,
        on_error,
        group,
    }) = state[i].w.exit
    else {
        return;
    };
    if !(on_end || (on_error && failed)) {
        return;
    }
    if what == ExitWhat::All {
        if let Some(c) = state[i].ctl.as_deref_mut() {
            c.outcome.ends_all = true;
        }
    }
    for (k, j) in state.iter_mut().enumerate() {
        let in_scope = match what {
            ExitWhat::Group => j.w.exit.is_some_and(|x| x.group == group),
            ExitWhat::Stonewall | ExitWhat::All => true,
        };
        if k == i || j.done || !in_scope {
            continue;
        }
        if let Some(c) = j.ctl.as_deref_mut() {
            c.terminate_at = Some(c.terminate_at.map_or(at, |x| x.min(at)));
            c.flow_blocked = false;
        }
    }
}
