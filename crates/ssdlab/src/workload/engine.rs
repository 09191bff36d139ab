//! The closed-loop engine: `queue_depth` slots, each submitting its next request when the previous
//! one completes (plus think time, within the rate limit), until the phase's limit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::steady::steady_reached;
use super::stream::{RequestStream, LOOKAHEAD};
use super::{PhaseResult, Progress, Rw, Workload};
use crate::drive::{Drive, Io, IoKind};
use crate::error::{Error, Result};
use crate::metrics::{IntervalClock, LatencyRecorder, Series};
use crate::units::{SimTime, NS_PER_SEC, UNIT_BYTES};

impl Workload {
    /// Runs the phase on `drive` from its current time. `observer` sees progress every few
    /// thousand requests and stops the run by returning `false`.
    pub fn run(
        &self,
        drive: &mut Drive,
        seed: u64,
        observer: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<PhaseResult> {
        let plan = self.plan(drive.user_units())?;
        let mut stream = RequestStream::new(
            self,
            self.seed.unwrap_or(seed),
            plan.span_start,
            plan.span_units,
            plan.block_units,
        );
        let start = drive.now();
        let counters_before = drive.counters();
        let mut series = Series::new(plan.interval_ns);
        drive.start_work_log(start, plan.interval_ns);
        // Submissions come in time order, completions nearly so: one clock for each.
        let (mut submit_clock, mut done_clock) = (
            IntervalClock::new(plan.interval_ns),
            IntervalClock::new(plan.interval_ns),
        );
        let mut latency: [LatencyRecorder; 3] = Default::default();
        let mut ios = [0u64; 3];
        let mut bytes = [0u64; 3];
        let mut submitted_ios = 0u64;
        let mut submitted_bytes = 0u64;
        let block_bytes = plan.block_units * UNIT_BYTES;
        let mut next_allowed = start;
        let mut last_ack = start;
        let end_time = plan.end.map(|d| start + d);
        let mut slots: BinaryHeap<Reverse<SimTime>> =
            (0..self.queue_depth).map(|_| Reverse(start)).collect();
        let mut before = drive.tally();
        let buckets = u64::from(self.position_buckets);
        let mut position_done = vec![0u64; buckets as usize];
        let mut position_bytes = vec![0u64; buckets as usize];
        let mut steady_at: Option<f64> = None;
        let mut checked_second = 0u64;

        loop {
            // The slot that frees first submits next; it is refilled in place below.
            let mut slot = slots.peek_mut().expect("the loop keeps queue_depth slots");
            let Reverse(mut t) = *slot;
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
            let (kind, lpn) = stream.next();
            // Overlap the L2P cache misses of the requests coming next (writes and TRIMs).
            if kind != IoKind::Read {
                if let Some((_, l)) = stream.peek(LOOKAHEAD - 1) {
                    drive.prefetch(l as u32, 0);
                }
                if let Some((_, l)) = stream.peek(LOOKAHEAD / 2) {
                    drive.prefetch(l as u32, 1);
                }
            }
            let io = Io {
                kind,
                lpn: lpn as u32,
                units: plan.block_units as u32,
                compressibility: self.compressibility,
            };
            let t = if self.rw == Rw::TrimWrite {
                let trim = Io {
                    kind: IoKind::Trim,
                    ..io
                };
                let trimmed = drive.submit(trim, t)?;
                ios[2] += 1;
                bytes[2] += block_bytes;
                latency[2].record((trimmed - t).ns());
                series.completed(
                    done_clock.index((trimmed - start).ns()),
                    IoKind::Trim,
                    block_bytes,
                    (trimmed - t).ns(),
                );
                trimmed
            } else {
                t
            };
            let ack = drive.submit(io, t)?;
            if buckets > 0 {
                let b = ((lpn - plan.span_start) * buckets / plan.span_units) as usize;
                let done = (ack - start).ns();
                position_done[b] = position_done[b].max(done);
                position_bytes[b] += block_bytes;
            }
            let k = kind as usize;
            ios[k] += 1;
            bytes[k] += block_bytes;
            submitted_ios += 1;
            submitted_bytes += block_bytes;
            latency[k].record((ack - t).ns());
            series.completed(
                done_clock.index((ack - start).ns()),
                kind,
                block_bytes,
                (ack - t).ns(),
            );
            let after = drive.tally();
            series.caused(submit_clock.index((t - start).ns()), &before, &after);
            before = after;
            last_ack = last_ack.max(ack);
            *slot = Reverse(ack + plan.think);
            drop(slot);

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
                if !observer(Progress {
                    fraction: fraction.min(1.0),
                    sim_seconds: elapsed,
                }) {
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
        let work = drive.take_work_log();
        series.finish(intervals.max(1), work, before.slots_per_unit);
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
            position_bytes,
            series,
        })
    }
}
