//! fio's `flow`, `flow_id`, `flow_sleep`: jobs that share a flow id keep their request counts in
//! the ratio of their weights.
//!
//! As fio 3.33's flow.c: a flow holds a counter that starts at 1 and the total weight of its
//! jobs (every job joins when fio sets it up, and leaves, taking its count and weight along, when
//! it ends). Each turn of a job's loop first asks `flow_threshold_exceeded`: if the job's own
//! count over the flow's counter is above its weight over the total weight, the job is held back
//! -- with `flow_sleep` it waits for its requests in flight and sleeps that many microseconds
//! before asking again; without, it asks again at once (a busy wait) and so goes on as soon as
//! another job of the flow counted. Otherwise both counters count one and the job goes on to
//! issue a request. Weights are 0..=1000 (0: the job takes no part).

use serde::{Deserialize, Serialize};

/// A job's part in a flow.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// The flow (fio's `flow_id`).
    #[serde(default)]
    pub id: i64,
    /// The job's weight (fio's `flow`, an unsigned 32-bit number).
    pub weight: u32,
    /// Microseconds to sleep when held back (fio's `flow_sleep`); 0: ask again at once.
    #[serde(default)]
    pub sleep_us: u64,
}

/// The flows of jobs that run together.
#[derive(Clone, Debug, Default)]
pub(super) struct Flows {
    /// Per flow: its id, counter and total weight.
    flows: Vec<(i64, u64, u64)>,
}

impl Flows {
    /// The flows of `jobs` (each job's flow id and weight, `None`: no part); returns each job's
    /// flow index.
    pub(super) fn new(jobs: &[Option<Flow>]) -> (Flows, Vec<Option<usize>>) {
        let mut f = Flows::default();
        let index = jobs
            .iter()
            .map(|j| {
                let j = j.as_ref().filter(|j| j.weight > 0)?;
                let i = match f.flows.iter().position(|&(id, _, _)| id == j.id) {
                    Some(i) => i,
                    None => {
                        f.flows.push((j.id, 1, 0));
                        f.flows.len() - 1
                    }
                };
                f.flows[i].2 += u64::from(j.weight);
                Some(i)
            })
            .collect();
        (f, index)
    }

    /// fio's `flow_threshold_exceeded` for a job of flow `i` with `weight` and its own `count`:
    /// `true` holds the job back; `false` counts one on both counters.
    #[inline]
    pub(super) fn exceeded(&mut self, i: usize, count: &mut u64, weight: u32) -> bool {
        let (_, counter, total) = &mut self.flows[i];
        let count_ratio = *count as f64 / *counter as f64;
        let weight_ratio = f64::from(weight) / *total as f64;
        if count_ratio > weight_ratio {
            return true;
        }
        *counter += 1;
        *count += 1;
        false
    }

    /// A job of flow `i` ended (fio's `flow_exit_job`).
    pub(super) fn leave(&mut self, i: usize, count: u64, weight: u32) {
        let (_, counter, total) = &mut self.flows[i];
        *counter -= count;
        *total -= u64::from(weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two jobs of weights 1 and 2 that always want to go, taking turns: their counts stay
    /// within one request of 1:2.
    #[test]
    fn counts_follow_the_weights() {
        let flow = |weight| {
            Some(Flow {
                id: 0,
                weight,
                sleep_us: 0,
            })
        };
        let (mut f, idx) = Flows::new(&[flow(1), flow(2), None]);
        assert_eq!(idx, vec![Some(0), Some(0), None]);
        let mut counts = [0u64; 2];
        let weights = [1u32, 2];
        for turn in 0..30_000 {
            let j = turn % 2;
            let _ = f.exceeded(0, &mut counts[j], weights[j]);
        }
        assert!(counts[1].abs_diff(2 * counts[0]) <= 2, "{counts:?}");
        assert!(counts[0] > 7_000, "{counts:?}");
        f.leave(0, counts[0], 1);
        f.leave(0, counts[1], 2);
        assert_eq!(
            f.flows[0],
            (0, 1, 0),
            "fio asserts the counter is back at 1"
        );
    }
}
