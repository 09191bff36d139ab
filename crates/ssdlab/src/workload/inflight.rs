//! A job's requests in flight, in the order they complete: what fio's completion path sees
//! (`io_completed`), for the checks that act on completions as they happen (`rate_min`,
//! `latency_target`). The engine knows each request's completion time when it submits it; this
//! queue hands the completions back in time order and counts what completed by a given time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::SimTime;

/// One completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Completion {
    pub at: SimTime,
    /// Direction: 0 read, 1 write, 2 trim.
    pub dir: u8,
    pub offset: u64,
    pub bytes: u64,
    /// Submission to completion.
    pub latency_ns: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct InFlight {
    heap: BinaryHeap<Reverse<Completion>>,
    /// Requests and bytes completed so far, per direction (fio's `io_blocks`, `io_bytes`).
    pub done_ios: [u64; 3],
    pub done_bytes: [u64; 3],
}

impl InFlight {
    pub(super) fn push(&mut self, c: Completion) {
        self.heap.push(Reverse(c));
    }

    /// The next request to complete at or before `now`, counted as completed.
    #[inline]
    pub(super) fn pop_until(&mut self, now: SimTime) -> Option<Completion> {
        match self.heap.peek() {
            Some(Reverse(c)) if c.at <= now => {
                let c = *c;
                self.heap.pop();
                self.done_ios[c.dir as usize] += 1;
                self.done_bytes[c.dir as usize] += c.bytes;
                Some(c)
            }
            _ => None,
        }
    }

    /// Forgets the counts (fio's statistics reset), keeping what is in flight.
    pub(super) fn reset_counts(&mut self) {
        self.done_ios = [0; 3];
        self.done_bytes = [0; 3];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_come_back_in_time_order_and_are_counted() {
        let mut q = InFlight::default();
        for (at, dir) in [(30, 1), (10, 0), (20, 1)] {
            q.push(Completion {
                at: SimTime(at),
                dir,
                offset: 0,
                bytes: 4096,
                latency_ns: at,
            });
        }
        assert_eq!(q.pop_until(SimTime(5)), None);
        assert_eq!(q.pop_until(SimTime(25)).map(|c| c.at), Some(SimTime(10)));
        assert_eq!(q.pop_until(SimTime(25)).map(|c| c.at), Some(SimTime(20)));
        assert_eq!(q.pop_until(SimTime(25)), None);
        assert_eq!((q.done_ios, q.done_bytes), ([1, 1, 0], [4096, 4096, 0]));
        assert_eq!(q.pop_until(SimTime(30)).map(|c| c.at), Some(SimTime(30)));
    }
}
