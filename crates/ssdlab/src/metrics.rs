//! What a workload phase measured: per-interval series (IOs, bytes and latency by direction; host,
//! NAND and GC units; erases) and latency distributions.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::drive::IoKind;
use crate::ftl::Tally;

/// The percentiles fio reports by default, plus 99.99.
pub const PERCENTILES: [f64; 18] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99, 100.0,
];

/// Per-interval series. Index 0/1/2 of the direction arrays is read/write/trim, as in fio.
/// IOs, bytes and latency are counted in the interval in which each IO completed; host, NAND and
/// GC units and erases in the interval in which the host IO that caused them was submitted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub interval_ns: u64,
    pub ios: [Vec<u64>; 3],
    pub bytes: [Vec<u64>; 3],
    pub latency_sum_ns: [Vec<u64>; 3],
    pub host_units: Vec<u64>,
    pub nand_units: Vec<u64>,
    pub gc_units: Vec<u64>,
    pub erases: Vec<u64>,
}

#[inline]
fn bump(v: &mut Vec<u64>, i: usize, by: u64) {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] += by;
}

impl Series {
    pub fn new(interval_ns: u64) -> Series {
        Series {
            interval_ns,
            ..Series::default()
        }
    }

    #[inline]
    pub fn completed(&mut self, kind: IoKind, since_start_ns: u64, bytes: u64, latency_ns: u64) {
        let i = (since_start_ns / self.interval_ns) as usize;
        let k = kind as usize;
        bump(&mut self.ios[k], i, 1);
        bump(&mut self.bytes[k], i, bytes);
        bump(&mut self.latency_sum_ns[k], i, latency_ns);
    }

    /// Adds the counter growth `delta` caused by an IO submitted `since_start_ns` into the phase.
    /// NAND and GC figures are accumulated in allocation slots; [`Series::finish`] turns them
    /// into units.
    #[inline]
    pub fn caused(&mut self, since_start_ns: u64, before: &Tally, after: &Tally) {
        let i = (since_start_ns / self.interval_ns) as usize;
        if i >= self.host_units.len() {
            let n = i + 1;
            for v in [
                &mut self.host_units,
                &mut self.nand_units,
                &mut self.gc_units,
                &mut self.erases,
            ] {
                v.resize(n, 0);
            }
        }
        self.host_units[i] += after.host_write_units - before.host_write_units;
        self.nand_units[i] += after.nand_write_slots - before.nand_write_slots;
        self.gc_units[i] += after.gc_write_slots - before.gc_write_slots;
        self.erases[i] += after.erases - before.erases;
    }

    /// Pads or cuts every series to `n` intervals and converts slot counts to units.
    pub fn finish(&mut self, n: usize, slots_per_unit: u32) {
        self.resize(n);
        if slots_per_unit > 1 {
            for v in [&mut self.nand_units, &mut self.gc_units] {
                for x in v.iter_mut() {
                    *x /= u64::from(slots_per_unit);
                }
            }
        }
    }

    /// Pads or cuts every series to `n` intervals.
    pub fn resize(&mut self, n: usize) {
        for v in self
            .ios
            .iter_mut()
            .chain(self.bytes.iter_mut())
            .chain(self.latency_sum_ns.iter_mut())
            .chain([
                &mut self.host_units,
                &mut self.nand_units,
                &mut self.gc_units,
                &mut self.erases,
            ])
        {
            v.resize(n, 0);
        }
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
        })
    }
}
