//! What a workload phase measured: per-interval series (IOs, bytes and latency by direction; host,
//! NAND and GC units; erases) and latency distributions.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::drive::IoKind;
use crate::ftl::{Tally, Work};

/// The percentiles fio reports by default, plus 99.99.
pub const PERCENTILES: [f64; 18] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99, 100.0,
];

/// PTS's "5 9s" response time, the 99.999th percentile (not in fio's default list above).
pub const FIVE_NINES: f64 = 99.999;

/// Per-interval series. Index 0/1/2 of the direction arrays is read/write/trim, as in fio.
/// IOs, bytes and latency are counted in the interval in which each IO completed; host units
/// and host bytes written in the interval in which the host wrote them; NAND and GC units and
/// erases in the interval in which the NAND completed the program or erase (so a second never
/// shows more NAND work than the dies can do in a second).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub interval_ns: u64,
    pub ios: [Vec<u64>; 3],
    pub bytes: [Vec<u64>; 3],
    pub latency_sum_ns: [Vec<u64>; 3],
    /// The longest response time of the IOs that completed in each interval (0: none did):
    /// PTS's MRT per sample (XSR).
    pub latency_max_ns: [Vec<u64>; 3],
    pub host_units: Vec<u64>,
    /// Bytes the host's writes carried (the denominator of write amplification: a write of part
    /// of a unit counts one unit in `host_units` but only its own bytes here).
    pub host_bytes: Vec<u64>,
    pub nand_units: Vec<u64>,
    pub gc_units: Vec<u64>,
    pub erases: Vec<u64>,
}

/// Interval `i` of `v`, which grows to hold it.
#[inline]
fn slot(v: &mut Vec<u64>, i: usize) -> &mut u64 {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

#[inline]
fn bump(v: &mut Vec<u64>, i: usize, by: u64) {
    *slot(v, i) += by;
}

impl Series {
    pub fn new(interval_ns: u64) -> Series {
        Series {
            interval_ns,
            ..Series::default()
        }
    }

    /// Counts an IO that completed in interval `i`.
    #[inline]
    pub fn completed(&mut self, i: usize, kind: IoKind, bytes: u64, latency_ns: u64) {
        let k = kind as usize;
        bump(&mut self.ios[k], i, 1);
        bump(&mut self.bytes[k], i, bytes);
        bump(&mut self.latency_sum_ns[k], i, latency_ns);
        let top = slot(&mut self.latency_max_ns[k], i);
        *top = (*top).max(latency_ns);
    }

    /// Adds the host units and bytes written from `before` to `after` by an IO submitted in
    /// interval `i`.
    #[inline]
    pub fn caused(&mut self, i: usize, before: &Tally, after: &Tally) {
        bump(
            &mut self.host_units,
            i,
            after.host_write_units - before.host_write_units,
        );
        bump(
            &mut self.host_bytes,
            i,
            after.host_write_bytes - before.host_write_bytes,
        );
    }

    /// Takes the NAND work the drive logged over the phase (in allocation slots), pads or cuts
    /// every series to `n` intervals and converts slot counts to units. Work that completes
    /// after the phase's last interval is in the phase's counters but not in its series.
    pub fn finish(&mut self, n: usize, work: Work, slots_per_unit: u32) {
        let per = u64::from(slots_per_unit.max(1));
        self.nand_units = work.nand_slots.into_iter().map(|x| x / per).collect();
        self.gc_units = work.gc_slots.into_iter().map(|x| x / per).collect();
        self.erases = work.erases;
        self.resize(n);
    }

    /// Pads or cuts every series to `n` intervals.
    pub fn resize(&mut self, n: usize) {
        for v in self
            .ios
            .iter_mut()
            .chain(self.bytes.iter_mut())
            .chain(self.latency_sum_ns.iter_mut())
            .chain(self.latency_max_ns.iter_mut())
            .chain([
                &mut self.host_units,
                &mut self.host_bytes,
                &mut self.nand_units,
                &mut self.gc_units,
                &mut self.erases,
            ])
        {
            v.resize(n, 0);
        }
    }

    /// Adds another series' host-side columns (IOs, bytes, latency sums, host units and bytes)
    /// interval by interval, and keeps the larger of the two maximum latencies: the series of
    /// jobs that ran together, summed. The NAND columns are the drive's and are left alone.
    pub fn add_host(&mut self, other: &Series) {
        self.add_host_at(other, 0);
    }

    /// `add_host` with `other`'s interval 0 at this series' interval `at` (a job that started
    /// `at` intervals after the first of the jobs it ran with: fio's `startdelay`, `ramp_time`).
    pub fn add_host_at(&mut self, other: &Series, at: usize) {
        // `b`'s intervals combined into `a`'s from interval `at` on, `a` growing to hold them
        let merge = |a: &mut Vec<u64>, b: &Vec<u64>, f: fn(u64, u64) -> u64| {
            if a.len() < at + b.len() {
                a.resize(at + b.len(), 0);
            }
            for (x, &y) in a[at..].iter_mut().zip(b) {
                *x = f(*x, y);
            }
        };
        let sum: fn(u64, u64) -> u64 = |x, y| x + y;
        for k in 0..3 {
            merge(&mut self.ios[k], &other.ios[k], sum);
            merge(&mut self.bytes[k], &other.bytes[k], sum);
            merge(&mut self.latency_sum_ns[k], &other.latency_sum_ns[k], sum);
            merge(
                &mut self.latency_max_ns[k],
                &other.latency_max_ns[k],
                u64::max,
            );
        }
        merge(&mut self.host_units, &other.host_units, sum);
        merge(&mut self.host_bytes, &other.host_bytes, sum);
    }

    /// Completions of every direction per interval.
    pub fn total_ios(&self) -> Vec<u64> {
        let n = self.ios.iter().map(Vec::len).max().unwrap_or(0);
        (0..n)
            .map(|i| {
                self.ios
                    .iter()
                    .map(|v| v.get(i).copied().unwrap_or(0))
                    .sum()
            })
            .collect()
    }
}

/// Maps times since a phase's start to interval indices, dividing only when a time leaves the
/// interval of the previous one (per-IO divisions were a measurable cost of the engine).
#[derive(Clone, Copy, Debug)]
pub struct IntervalClock {
    interval_ns: u64,
    start: u64,
    index: usize,
}

impl IntervalClock {
    pub fn new(interval_ns: u64) -> IntervalClock {
        IntervalClock {
            interval_ns,
            start: 0,
            index: 0,
        }
    }

    /// The interval holding `since_start_ns`.
    #[inline]
    pub fn index(&mut self, since_start_ns: u64) -> usize {
        if since_start_ns.wrapping_sub(self.start) >= self.interval_ns {
            self.index = (since_start_ns / self.interval_ns) as usize;
            self.start = self.index as u64 * self.interval_ns;
        }
        self.index
    }
}

/// A latency distribution in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyStats {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    /// `(percentile, nanoseconds)` at each of [`PERCENTILES`].
    pub percentiles: Vec<(f64, u64)>,
    /// The latency at [`FIVE_NINES`] (PTS's "5 9s").
    pub p99_999_ns: u64,
}

impl LatencyStats {
    /// The latency at percentile `p` (one of [`PERCENTILES`]).
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}

/// Records latencies with 3 significant digits from 1 ns to one hour.
#[derive(Clone, Debug)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        LatencyRecorder {
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("valid histogram bounds"),
        }
    }
}

impl LatencyRecorder {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds another recorder's latencies (the jobs of a group, reported together).
    pub fn merge(&mut self, other: &LatencyRecorder) {
        self.hist
            .add(&other.hist)
            .expect("recorders share their bounds");
    }

    pub fn stats(&self) -> Option<LatencyStats> {
        let h = &self.hist;
        (!h.is_empty()).then(|| LatencyStats {
            count: h.len(),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stdev(),
            percentiles: PERCENTILES
                .iter()
                .map(|&p| (p, h.value_at_percentile(p)))
                .collect(),
            p99_999_ns: h.value_at_percentile(FIVE_NINES),
        })
    }

    /// The histogram's recorded buckets in increasing order: `[lowest, highest, count]`, the
    /// lowest and highest nanoseconds the bucket stands for (3 significant digits: a bucket
    /// spans at most 1/1024 of its values) and how many latencies fell in it.
    pub fn buckets(&self) -> Vec<[u64; 3]> {
        let h = &self.hist;
        h.iter_recorded()
            .map(|v| {
                let x = v.value_iterated_to();
                [
                    h.lowest_equivalent(x),
                    h.highest_equivalent(x),
                    v.count_at_value(),
                ]
            })
            .collect()
    }

    /// The buckets of `recorders` as one histogram (see [`LatencyRecorder::buckets`]).
    pub fn merged_buckets(recorders: &[LatencyRecorder]) -> Vec<[u64; 3]> {
        let mut all = LatencyRecorder::default();
        for r in recorders {
            all.merge(r);
        }
        all.buckets()
    }

    /// The statistics of `recorders` as one distribution (a mixed workload's reads and writes).
    pub fn merged_stats(recorders: &[LatencyRecorder]) -> Option<LatencyStats> {
        let mut all = LatencyRecorder::default();
        for r in recorders {
            all.merge(r);
        }
        all.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::{IntervalClock, LatencyRecorder, Series};
    use crate::drive::IoKind;
    use proptest::prelude::*;

    /// Each interval keeps the longest response of the IOs that completed in it (PTS's MRT per
    /// sample), per direction; jobs run together keep the larger, at their offset.
    #[test]
    fn each_interval_keeps_its_longest_response() {
        let mut s = Series::new(1_000);
        s.completed(0, IoKind::Write, 4096, 700);
        s.completed(0, IoKind::Write, 4096, 9_000);
        s.completed(0, IoKind::Write, 4096, 300);
        s.completed(2, IoKind::Write, 4096, 50);
        s.completed(2, IoKind::Read, 4096, 80_000);
        assert_eq!(s.latency_max_ns[1], vec![9_000, 0, 50]);
        assert_eq!(s.latency_max_ns[0], vec![0, 0, 80_000]);
        assert_eq!(s.latency_sum_ns[1], vec![10_000, 0, 50]);
        let mut other = Series::new(1_000);
        other.completed(0, IoKind::Write, 4096, 20_000);
        other.completed(1, IoKind::Write, 4096, 10);
        s.add_host_at(&other, 1);
        assert_eq!(s.latency_max_ns[1], vec![9_000, 20_000, 50]);
        s.resize(4);
        assert_eq!(s.latency_max_ns[1], vec![9_000, 20_000, 50, 0]);
    }

    /// The histogram's 3 significant digits hold at the tail: the 99.999th percentile of a
    /// million latencies is the exact order statistic within 0.1 % (hdrhistogram reports the
    /// highest value equivalent to the sample's bucket: sub-buckets of 1/1024 of the magnitude).
    #[test]
    fn five_nines_is_the_order_statistic_within_the_resolution() {
        // a long-tailed set: 1 million values from 20 µs up, the top ones seconds long
        let mut values: Vec<u64> = (0..1_000_000u64)
            .map(|i| 20_000 + (i * i) % 7_919 * 13 + if i % 99_991 == 0 { i * 3_000 } else { 0 })
            .collect();
        let mut rec = LatencyRecorder::default();
        for &v in &values {
            rec.record(v);
        }
        values.sort_unstable();
        let s = rec.stats().expect("recorded");
        let rank = (0.99999_f64 * values.len() as f64).ceil() as usize; // hdrhistogram's rank
        let exact = values[rank - 1] as f64;
        let got = s.p99_999_ns as f64;
        assert!(
            got >= exact && got <= exact * 1.001,
            "5 9s {got} against the exact {exact}"
        );
        let largest = values[values.len() - 1] as f64;
        assert!(s.max_ns as f64 >= largest && s.max_ns as f64 <= largest * 1.001);
        // merging read and write recorders gives the distribution of both
        let (mut a, mut b) = (LatencyRecorder::default(), LatencyRecorder::default());
        for (i, &v) in values.iter().enumerate() {
            if i % 3 == 0 {
                a.record(v);
            } else {
                b.record(v);
            }
        }
        let both = LatencyRecorder::merged_stats(&[a, b]).expect("recorded");
        assert_eq!(both.p99_999_ns, s.p99_999_ns);
        assert_eq!(both.count, 1_000_000);
    }

    proptest! {
        /// The clock gives the same index as dividing, whatever order the times come in.
        #[test]
        fn interval_clock_matches_division(interval in 1u64..5_000, times in prop::collection::vec(0u64..100_000, 1..200)) {
            let mut clock = IntervalClock::new(interval);
            for t in times {
                prop_assert_eq!(clock.index(t), (t / interval) as usize);
            }
        }
    }
}
