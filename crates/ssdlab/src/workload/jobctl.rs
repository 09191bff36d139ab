//! A job's state for fio's semantics beyond the closed loop (rate process and floor, latency
//! target, flow, being terminated), kept out of the engine's hot path: a job that uses none of
//! them has no `Control` at all.

use super::arrivals::{Poisson, RateProcess};
use super::control::Outcome;
use super::inflight::InFlight;
use super::latency_target::Search;
use super::min_rate::MinRateCheck;
use super::Workload;
use crate::units::SimTime;

#[derive(Clone, Debug, Default)]
pub(super) struct Control {
    pub poisson: Option<Poisson>,
    pub min_rate: Option<MinRateCheck>,
    pub search: Option<Search>,
    /// Requests in flight, in completion order (with a rate floor or a latency target).
    pub inflight: Option<InFlight>,
    /// The job's own count in its flow (fio's `td->flow_counter`).
    pub flow_count: u64,
    /// Held back by its flow until another job of the flow counts.
    pub flow_blocked: bool,
    /// The job issues nothing before this time (a flow's sleep, being let go by a flow).
    pub hold_until: SimTime,
    /// Another job's end stops this one from this time (fio's terminate).
    pub terminate_at: Option<SimTime>,
    /// When the job stopped for a reason of its own besides its limits (an error, being
    /// terminated, its latency search done): it ends then, or when its last request completes.
    pub stopped_at: Option<SimTime>,
    pub outcome: Outcome,
}

impl Control {
    /// The state `w` needs from `start` (seeded from the job's `seed`), or `None` when it needs
    /// none and no job it runs with does (`together`: a job it runs with uses flow or exitall).
    pub(super) fn new(
        w: &Workload,
        seed: u64,
        start: SimTime,
        together: bool,
    ) -> Option<Box<Control>> {
        let poisson = (w.rate_process == RateProcess::Poisson).then(|| {
            let per_dir = w.rate_iops_per_direction;
            let iops = match w.rate_iops {
                Some(r) => [r; 3],
                None => per_dir.map(|r| r.unwrap_or(1.0)),
            };
            Poisson::new(seed, iops)
        });
        let min_rate = w.rate_min.map(|r| MinRateCheck::new(r, start));
        let search = w
            .latency_target
            .map(|l| Search::new(l, w.queue_depth, start));
        let needed = poisson.is_some()
            || min_rate.is_some()
            || search.is_some()
            || w.flow.is_some()
            || w.exit.is_some()
            || w.verify.is_some() // a failed verify ends the job with an error (verify.rs)
            || together;
        if !needed {
            return None;
        }
        let inflight = (min_rate.is_some() || search.is_some()).then(InFlight::default);
        Some(Box::new(Control {
            poisson,
            min_rate,
            search,
            inflight,
            hold_until: start,
            ..Control::default()
        }))
    }
}
