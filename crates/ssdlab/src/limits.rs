//! The bounds of what can be simulated, and why (docs/parameters.md, "Bounds").
//!
//! Simulated time is a `u64` count of nanoseconds: it holds 1.8 × 10^10 s (584 years). The bounds
//! below keep every run far inside that clock and every per-run allocation inside memory, so a
//! value outside them is refused at validation instead of overflowing, saturating or aborting.

/// The longest NAND or controller operation, in µs (`read_us`, `program_us`, `erase_us`,
/// `command_overhead_us`, `think_time_us`): one second. Even a fill of the largest drive
/// (2^32 units, one program each, on one die) then takes at most 4.3 × 10^9 s, inside the clock.
pub const MAX_OP_US: f64 = 1e6;

/// The shortest NAND operation, in µs: one nanosecond, the clock's resolution. A shorter one
/// would round to no time at all, and a duration-limited phase could then never end.
pub const MIN_OP_US: f64 = 1e-3;

/// The slowest channel or host link, in MB/s: 0.01 MB/s moves a 4 KiB unit in 0.41 s, inside
/// the one-second operation bound.
pub const MIN_BANDWIDTH_MB_S: f64 = 0.01;

/// The most simulated seconds one drive may be scheduled for by explicit durations (run
/// durations, idle steps), counted from its current time: 10^9 s (31.7 years), which leaves
/// more than 1.7 × 10^10 s of the clock for byte-limited phases such as fills.
pub const MAX_SCHEDULED_SECONDS: f64 = 1e9;

/// The most series intervals (or HD Tach position buckets) one phase may record: 10^7, about
/// 1 GB of per-interval counters in the core (13 `u64` each) before Python copies them; at the
/// default 1 s interval that is 115 days of simulated time per phase.
pub const MAX_INTERVALS: u64 = 10_000_000;

/// The most requests one phase may issue: 10^12 (a day of wall time at the simulator's
/// rate of millions per second).
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;

/// The shortest series interval, in ms: fio logs at whole milliseconds.
pub const MIN_INTERVAL_MS: f64 = 1.0;

/// The lowest rate limit, in requests per second: 10^-6, one request every 10^15 ns (11.6 days).
/// fio takes any rate: `rate` is in bytes per second, so `rate=300` at 4 KiB is 0.073 IOPS
/// (init.c `__setup_rate`, backend.c `usec_for_io`). A gap of 10^15 ns keeps the engine's u64
/// nanosecond arithmetic far from overflow; its rate deadlines are also checked
/// (`MAX_RATE_DEADLINE_SECONDS`).
pub const MIN_RATE_IOPS: f64 = 1e-6;

/// The latest a rate limit may schedule a request, in simulated seconds after the phase
/// starts: 10^10 s. A byte- or count-limited job at a very low rate that would wait longer ends
/// with an error rather than running the u64 nanosecond clock (1.8 × 10^10 s) out.
pub const MAX_RATE_DEADLINE_SECONDS: f64 = 1e10;

/// The deepest queue: fio's own `iodepth` limit.
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

/// The largest request, in bytes: 32 MiB, the largest command Linux sends a drive (ATA's 48-bit
/// commands carry at most 65 536 sectors of 512 bytes; NVMe drives take less, their MDTS). A
/// larger host request reaches a real drive split into commands of this size or smaller, so one
/// request of it would simulate a drive no host can talk to; it would also make a per-second
/// IOPS series count a request or none.
pub const MAX_BLOCK_BYTES: u64 = 32 * 1024 * 1024;

/// The fastest trace replay, as a factor of the recorded timing.
pub const MAX_REPLAY_SPEED: f64 = 1e9;

/// The slowest trace replay: 10^-9. Slower, one nanosecond of the trace (the finest clock any
/// format records) lasts more than a simulated second, and a trace of one second more than the
/// 10^9 s a drive may be scheduled for (`MAX_SCHEDULED_SECONDS`).
pub const MIN_REPLAY_SPEED: f64 = 1e-9;

/// The bounds as JSON (for the Python package, which checks CLI values and device runs against
/// the same numbers before anything runs or is written).
pub fn to_json() -> String {
    serde_json::json!({
        "max_op_us": MAX_OP_US,
        "min_op_us": MIN_OP_US,
        "min_bandwidth_mb_s": MIN_BANDWIDTH_MB_S,
        "max_scheduled_seconds": MAX_SCHEDULED_SECONDS,
        "max_intervals": MAX_INTERVALS,
        "min_interval_ms": MIN_INTERVAL_MS,
        "min_rate_iops": MIN_RATE_IOPS,
        "max_queue_depth": MAX_QUEUE_DEPTH,
        "max_requests": MAX_REQUESTS,
        "max_block_bytes": MAX_BLOCK_BYTES,
        "sector_bytes": crate::units::SECTOR_BYTES,
        "min_replay_speed": MIN_REPLAY_SPEED,
        "max_replay_speed": MAX_REPLAY_SPEED,
    })
    .to_string()
}
