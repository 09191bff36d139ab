//! The simulator: one [`Drive`] serving the requests of every connection in the order they
//! arrive, with no threads of its own (the server runs it on one thread; tests call it
//! directly).
//!
//! **When a request arrives, in simulated time.**
//! - `Clock::Virtual`: each connection is a closed loop of `depth` slots (1 by default). A
//!   request takes the slot that frees first, so with depth 1 it arrives at the latest simulated
//!   completion the server has replied to on that connection (the "now" its client has seen);
//!   with depth N at the completion of the request N before it. No request arrives before the
//!   one the simulator took before it (from any connection): simulated time never goes back.
//!   Nothing depends on the wall clock or on thread timing, so one connection's request
//!   sequence and the seed give the same results, bit for bit.
//! - `Clock::Real`: a request arrives at the wall-clock time its header was read, counted from
//!   the server's start and mapped one to one onto simulated time from the drive's time at start
//!   (again never before the request taken before it); its reply is held until the wall clock
//!   reaches its simulated completion (`Reply::done`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::time::Instant;

use serde_json::{json, Value};
use ssdlab::ftl::Counters;
use ssdlab::metrics::{IntervalClock, LatencyRecorder, Series};
use ssdlab::store::Payload;
use ssdlab::units::NS_PER_SEC;
use ssdlab::{Drive, Error, IoKind, PhaseResult, SimTime};

use crate::protocol::{self as p, Request};

/// How requests are placed in simulated time (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    Virtual,
    Real,
}

/// Where the bytes the clients write are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// In memory, sparse (the drive's content store in data mode).
    Memory,
    /// Nowhere: timing only, reads return zeros.
    None,
    /// In a sparse backing file ([`crate::file_store::FileStore`], given with [`Sim::set_file`]).
    File,
}

/// The answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub cookie: u64,
    /// 0 or an NBD errno.
    pub error: u32,
    /// Why, for a structured error chunk.
    pub message: String,
    /// A successful read's bytes.
    pub data: Option<Vec<u8>>,
    /// A successful `NBD_CMD_BLOCK_STATUS`'s extents of `base:allocation`: (length, status).
    pub extents: Option<Vec<(u32, u32)>>,
    /// The request's offset (a structured read's data chunk names it).
    pub offset: u64,
    /// Its simulated arrival and completion.
    pub arrival: SimTime,
    pub done: SimTime,
    /// Bytes the connection counts against its limit of replies in flight until this one is
    /// sent (set by the server; 0 here).
    pub charge: u64,
}

/// What the server counted beyond the phase's figures.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ServeStats {
    /// Requests by command (`protocol::COMMAND_NAMES`), good or bad.
    pub requests: BTreeMap<&'static str, u64>,
    /// Requests answered with an error, by errno name.
    pub errors: BTreeMap<&'static str, u64>,
    /// Connections closed for a protocol violation (a bad handshake, a request without its magic).
    pub protocol_errors: u64,
    /// Connections accepted and connections open now.
    pub connections: u64,
    pub connections_open: u64,
    /// Handshakes that ended in the transmission phase.
    pub sessions: u64,
    /// Writes with FUA, flushes, write-zeroes with NO_HOLE.
    pub fua: u64,
    pub zero_writes: u64,
}

fn errno_name(e: u32) -> &'static str {
    match e {
        p::EPERM => "EPERM",
        p::EIO => "EIO",
        p::ENOMEM => "ENOMEM",
        p::EINVAL => "EINVAL",
        p::ENOSPC => "ENOSPC",
        p::EOVERFLOW => "EOVERFLOW",
        p::ENOTSUP => "ENOTSUP",
        p::ESHUTDOWN => "ESHUTDOWN",
        _ => "other",
    }
}

/// One connection's closed loop (virtual clock) and whether it selected `base:allocation`.
#[derive(Debug)]
struct Slots(BinaryHeap<Reverse<SimTime>>, bool);

/// The most of the export one `NBD_CMD_BLOCK_STATUS` reply describes (the client asks again
/// from where it ends).
const BLOCK_STATUS_SPAN: u64 = 128 << 20;

/// The simulated drive and everything measured on it.
pub struct Sim {
    drive: Drive,
    clock: Clock,
    store: StoreKind,
    depth: u32,
    size: u64,
    origin: SimTime,
    wall_origin: Instant,
    interval_ns: u64,
    last_arrival: SimTime,
    last_done: SimTime,
    conns: HashMap<u64, Slots>,
    series: Series,
    submit_clock: IntervalClock,
    done_clock: IntervalClock,
    latency: [LatencyRecorder; 3],
    ios: [u64; 3],
    bytes: [u64; 3],
    counters_before: Counters,
    stats: ServeStats,
    commands: [u64; p::COMMAND_NAMES.len()],
    broken: Option<String>,
    file: Option<crate::file_store::FileStore>,
    /// Per simulated second (at its first request): free blocks, and units in the SLC cache.
    free_blocks: Vec<u64>,
    slc_units: Vec<u64>,
}

impl Sim {
    /// Starts serving `drive` at its current time. With `StoreKind::Memory` the drive gets an
    /// empty content store here (a drive preconditioned before reads zeros: its data is made up).
    pub fn new(
        mut drive: Drive,
        clock: Clock,
        store: StoreKind,
        depth: u32,
    ) -> ssdlab::Result<Sim> {
        if depth == 0 || depth > ssdlab::limits::MAX_QUEUE_DEPTH {
            return Err(Error::Workload(format!(
                "the virtual clock's depth must be between 1 and {}, got {depth}",
                ssdlab::limits::MAX_QUEUE_DEPTH
            )));
        }
        if store == StoreKind::Memory {
            drive.enable_store(ssdlab::store::StoreMode::Data)?;
        }
        let origin = drive.now();
        let interval_ns = NS_PER_SEC;
        drive.start_work_log(origin, interval_ns);
        Ok(Sim {
            size: drive.user_bytes(),
            counters_before: drive.counters(),
            drive,
            clock,
            store,
            depth,
            origin,
            wall_origin: Instant::now(),
            interval_ns,
            last_arrival: origin,
            last_done: origin,
            conns: HashMap::new(),
            series: Series::new(interval_ns),
            submit_clock: IntervalClock::new(interval_ns),
            done_clock: IntervalClock::new(interval_ns),
            latency: Default::default(),
            ios: [0; 3],
            bytes: [0; 3],
            stats: ServeStats::default(),
            commands: [0; p::COMMAND_NAMES.len()],
            broken: None,
            file: None,
            free_blocks: Vec::new(),
            slc_units: Vec::new(),
        })
    }

    /// Keeps the export's bytes in `file` (`StoreKind::File`).
    pub fn set_file(&mut self, file: crate::file_store::FileStore) {
        self.store = StoreKind::File;
        self.file = Some(file);
    }

    /// The export's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The wall-clock instant simulated time `t` maps to (real clock).
    pub fn wall_of(&self, t: SimTime) -> Instant {
        self.wall_origin + std::time::Duration::from_nanos((t - self.origin).ns())
    }

    /// The wall-clock instant simulated time started at (real clock).
    pub fn wall_origin(&self) -> Instant {
        self.wall_origin
    }

    /// The simulated time serving started at.
    pub fn origin(&self) -> SimTime {
        self.origin
    }

    /// A connection was accepted.
    pub fn accepted(&mut self) {
        self.stats.connections += 1;
    }

    /// A connection closed for a protocol violation.
    pub fn protocol_error(&mut self) {
        self.stats.protocol_errors += 1;
    }

    /// Connection `id` entered the transmission phase.
    pub fn open(&mut self, id: u64) {
        self.open_with(id, false);
    }

    /// Connection `id` entered the transmission phase; `meta`: it selected `base:allocation`.
    pub fn open_with(&mut self, id: u64, meta: bool) {
        self.stats.sessions += 1;
        self.stats.connections_open += 1;
        self.conns.insert(
            id,
            Slots(
                (0..self.depth).map(|_| Reverse(self.last_done)).collect(),
                meta,
            ),
        );
    }

    /// Connection `id` closed.
    pub fn close(&mut self, id: u64) {
        if self.conns.remove(&id).is_some() {
            self.stats.connections_open = self.stats.connections_open.saturating_sub(1);
        }
    }

    /// Connections in the transmission phase now.
    pub fn open_connections(&self) -> u64 {
        self.stats.connections_open
    }

    /// The simulated time request of connection `id` arrives at (`wall`: when its header was
    /// read, for the real clock).
    fn arrival(&mut self, id: u64, wall: Option<Instant>) -> SimTime {
        let t = match self.clock {
            Clock::Virtual => self
                .conns
                .get(&id)
                .and_then(|s| s.0.peek().map(|r| r.0))
                .unwrap_or(self.last_done),
            Clock::Real => {
                let since = wall.map_or(std::time::Duration::ZERO, |w| {
                    w.saturating_duration_since(self.wall_origin)
                });
                self.origin + SimTime(since.as_nanos() as u64)
            }
        };
        t.max(self.last_arrival)
    }

    fn completed(&mut self, id: u64, done: SimTime) {
        if let Some(s) = self.conns.get_mut(&id) {
            if let Some(mut slot) = s.0.peek_mut() {
                *slot = Reverse(done);
            }
        }
        self.last_done = self.last_done.max(done);
    }

    /// Serves request `r` of connection `id` (`payload`: a write's bytes). Returns the reply,
    /// or `None` for `NBD_CMD_DISC` (which has none).
    pub fn request(
        &mut self,
        id: u64,
        r: &Request,
        payload: Option<&[u8]>,
        structured: bool,
        wall: Option<Instant>,
    ) -> Option<Reply> {
        self.commands[p::command_index(r.command)] += 1;
        if r.command == p::CMD_DISC {
            return None;
        }
        let t = self.arrival(id, wall);
        let mut reply = Reply {
            cookie: r.cookie,
            error: 0,
            message: String::new(),
            data: None,
            extents: None,
            offset: r.offset,
            arrival: t,
            done: t,
            charge: 0,
        };
        let refuse = |reply: &mut Reply, stats: &mut ServeStats, e: u32, msg: String| {
            *stats.errors.entry(errno_name(e)).or_default() += 1;
            reply.error = e;
            reply.message = msg;
        };
        if let Some(msg) = &self.broken {
            let msg = msg.clone();
            refuse(&mut reply, &mut self.stats, p::ESHUTDOWN, msg);
            return Some(reply);
        }
        let oversized_write = r.command == p::CMD_WRITE && payload.is_none();
        let meta = self.conns.get(&id).is_some_and(|s| s.1);
        if let Some(e) = p::check_request_with(r, self.size, structured, meta)
            .or(oversized_write.then_some(p::EOVERFLOW))
        {
            let what = format!(
                "{} of {} bytes at offset {}: {}",
                p::COMMAND_NAMES[p::command_index(r.command)],
                r.length,
                r.offset,
                errno_name(e),
            );
            let msg = if e == p::ENOTSUP {
                format!("{what} (FAST_ZERO with NO_HOLE: the drive programs the zeros, no faster than a write)")
            } else {
                format!(
                    "{what} (export of {} bytes, 512-byte blocks, at most {} bytes a request)",
                    self.size,
                    p::MAX_PAYLOAD
                )
            };
            refuse(&mut reply, &mut self.stats, e, msg);
            return Some(reply);
        }
        self.last_arrival = t;
        let len = u64::from(r.length);
        if r.command == p::CMD_BLOCK_STATUS {
            reply.extents = Some(self.extents(r.offset, len, r.flags & p::CMD_FLAG_REQ_ONE != 0));
            return Some(reply);
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.serve(r, len, payload, t)
        }));
        match outcome {
            Ok(Ok((done, data))) => {
                reply.done = done;
                reply.data = data;
            }
            Ok(Err(e)) => {
                let errno = if e.to_string().contains("memory budget") {
                    p::ENOSPC
                } else {
                    p::EIO
                };
                refuse(&mut reply, &mut self.stats, errno, e.to_string());
            }
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(ToString::to_string)
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                let msg = format!("ssdlab internal error ({msg}); the server stopped serving");
                self.broken = Some(msg.clone());
                refuse(&mut reply, &mut self.stats, p::EIO, msg);
            }
        }
        self.completed(id, reply.done);
        self.sample(t);
        Some(reply)
    }

    /// Records the drive's free blocks and SLC cache for the second of `t` and any before it
    /// that had no request (the state carried forward), once per second.
    fn sample(&mut self, t: SimTime) {
        let second = ((t - self.origin).ns() / self.interval_ns) as usize;
        if second < self.free_blocks.len() || second as u64 >= ssdlab::limits::MAX_INTERVALS {
            return;
        }
        let free = self.drive.ftl().free_blocks();
        let slc = self.drive.ftl().slc_state().map_or(0, |s| s.cached_units);
        let carried = (
            self.free_blocks.last().copied().unwrap_or(free),
            self.slc_units.last().copied().unwrap_or(slc),
        );
        while self.free_blocks.len() < second {
            self.free_blocks.push(carried.0);
            self.slc_units.push(carried.1);
        }
        self.free_blocks.push(free);
        self.slc_units.push(slc);
    }

    /// `base:allocation` of `[offset, offset + len)` (at most `BLOCK_STATUS_SPAN` of it; one
    /// extent with `one`): a 4 KiB unit the memory store holds nothing for reads zeros and is a
    /// hole; with `--store none` everything is; a backing file is reported as data throughout.
    fn extents(&self, offset: u64, len: u64, one: bool) -> Vec<(u32, u32)> {
        const UNIT: u64 = 4096;
        let end = offset + len.min(BLOCK_STATUS_SPAN);
        let state = |unit: u64| -> u32 {
            let hole = match self.store {
                StoreKind::None => true,
                StoreKind::File => false,
                StoreKind::Memory => self.drive.store().is_some_and(|s| !s.unit_held(unit)),
            };
            if hole {
                p::STATE_HOLE | p::STATE_ZERO
            } else {
                0
            }
        };
        let mut out: Vec<(u32, u32)> = Vec::new();
        let mut pos = offset;
        while pos < end {
            let unit = pos / UNIT;
            let next = ((unit + 1) * UNIT).min(end);
            let st = state(unit);
            let n = (next - pos) as u32;
            match out.last_mut() {
                Some((l, s)) if *s == st => *l += n,
                _ => {
                    if one && !out.is_empty() {
                        break;
                    }
                    out.push((n, st));
                }
            }
            pos = next;
        }
        out
    }

    /// Runs one checked request on the drive: its completion and a read's bytes.
    fn serve(
        &mut self,
        r: &Request,
        len: u64,
        payload: Option<&[u8]>,
        t: SimTime,
    ) -> ssdlab::Result<(SimTime, Option<Vec<u8>>)> {
        let fua = r.flags & p::CMD_FLAG_FUA != 0;
        let (kind, done, data) = match r.command {
            p::CMD_READ => {
                if len == 0 {
                    return Ok((t, Some(Vec::new())));
                }
                let (ack, _) =
                    self.drive
                        .submit_payload(IoKind::Read, r.offset, len, Payload::None, t)?;
                let mut buf = vec![0u8; len as usize];
                if let Some(file) = &self.file {
                    file.read(r.offset, &mut buf)?;
                } else if let Some(store) = self.drive.store() {
                    store.read(r.offset / 512, &mut buf)?;
                }
                (Some(IoKind::Read), ack, Some(buf))
            }
            p::CMD_WRITE | p::CMD_TRIM | p::CMD_WRITE_ZEROES => {
                if len == 0 {
                    return Ok((t, None));
                }
                let (kind, content) = match r.command {
                    p::CMD_WRITE => (IoKind::Write, Payload::Bytes(payload.unwrap_or(&[]))),
                    p::CMD_TRIM => (IoKind::Trim, Payload::Zeros),
                    _ if r.flags & p::CMD_FLAG_NO_HOLE != 0 => {
                        self.stats.zero_writes += 1;
                        (IoKind::Write, Payload::Zeros)
                    }
                    _ => (IoKind::Trim, Payload::Zeros),
                };
                let content = match (&mut self.file, content) {
                    (None, c) => c,
                    (Some(file), Payload::Bytes(b)) => {
                        file.write(r.offset, b)?;
                        Payload::None
                    }
                    (Some(file), c) => {
                        file.zero(r.offset, len)?;
                        c
                    }
                };
                let before = self.drive.tally();
                let (mut ack, _) = self.drive.submit_payload(kind, r.offset, len, content, t)?;
                let since = (t - self.origin).ns();
                self.series
                    .caused(self.submit_clock.index(since), &before, &self.drive.tally());
                if fua && kind == IoKind::Write {
                    self.stats.fua += 1;
                    ack = self.drive.flush(ack);
                }
                (Some(kind), ack, None)
            }
            p::CMD_FLUSH => (None, self.drive.flush(t), None),
            // NBD_CMD_CACHE (sent by some clients unasked): nothing to do.
            _ => (None, t, None),
        };
        if let Some(kind) = kind {
            let k = kind as usize;
            self.ios[k] += 1;
            self.bytes[k] += len;
            let latency = (done - t).ns();
            self.latency[k].record(latency);
            let i = self.done_clock.index((done - self.origin).ns());
            self.series.completed(i, kind, len, latency);
        }
        Ok((done, data))
    }

    /// The drive's store kind.
    pub fn store_kind(&self) -> StoreKind {
        self.store
    }

    /// The figures a status line shows: totals so far and the last whole simulated second.
    pub fn status(&self) -> Value {
        let c = self.drive.counters().since(&self.counters_before);
        let mut now = self.last_done.max(self.last_arrival);
        if self.clock == Clock::Real {
            // Simulated time passes with the wall clock, requests or not.
            now = now.max(self.origin + SimTime(self.wall_origin.elapsed().as_nanos() as u64));
        }
        let sim_s = (now - self.origin).as_secs_f64();
        let second = ((now - self.origin).ns() / self.interval_ns) as usize;
        let last = second.checked_sub(1);
        let at = |v: &Vec<u64>| last.and_then(|i| v.get(i).copied()).unwrap_or(0);
        let wa = (c.host_write_bytes > 0)
            .then(|| c.nand_write_units as f64 * 4096.0 / c.host_write_bytes as f64);
        let slc = self.drive.ftl().slc_state();
        json!({
            "sim_seconds": sim_s,
            "requests": self.requests_by_command(),
            "errors": self.stats.errors,
            "protocol_errors": self.stats.protocol_errors,
            "connections": self.stats.connections,
            "connections_open": self.stats.connections_open,
            "sessions": self.stats.sessions,
            "host_read_bytes": self.bytes[0],
            "host_write_bytes": c.host_write_bytes,
            "host_trim_bytes": self.bytes[2],
            "nand_write_units": c.nand_write_units,
            "gc_write_units": c.gc_write_units,
            "erases": c.erases,
            "write_amplification": wa,
            "free_blocks": self.drive.ftl().free_blocks(),
            "slc_cache": slc,
            "store": self.store,
            "store_units_held": self.drive.store().map(ssdlab::store::Store::units_held),
            "store_memory_bytes": self.drive.store().map(ssdlab::store::Store::memory_bytes),
            "store_file": self.file.as_ref().map(|f| f.path().display().to_string()),
            "store_file_bytes": self.file.as_ref().map(crate::file_store::FileStore::allocated_bytes),
            "last_second": {
                "index": last,
                "read_iops": at(&self.series.ios[0]),
                "write_iops": at(&self.series.ios[1]),
                "trim_iops": at(&self.series.ios[2]),
                "read_mb_s": at(&self.series.bytes[0]) as f64 / 1e6,
                "write_mb_s": at(&self.series.bytes[1]) as f64 / 1e6,
            },
            "broken": self.broken,
        })
    }

    fn requests_by_command(&self) -> BTreeMap<&'static str, u64> {
        p::COMMAND_NAMES
            .iter()
            .zip(self.commands)
            .filter(|&(_, n)| n > 0)
            .map(|(&k, n)| (k, n))
            .collect()
    }

    /// Ends serving: the phase's figures (as a replay's: per-direction requests, bytes and
    /// latency, counters, the per-second series with the NAND work) and the server's.
    pub fn finish(mut self) -> (Value, Series, Drive) {
        let end = self.last_done.max(self.last_arrival);
        self.drive.advance_to(end);
        let intervals = (end - self.origin).ns().div_ceil(self.interval_ns).max(1) as usize;
        let work = self.drive.take_work_log();
        let tally = self.drive.tally();
        self.series.finish(intervals, work, tally.slots_per_unit);
        self.stats.requests = self.requests_by_command();
        let phase = PhaseResult {
            label: "serve".into(),
            start_ns: self.origin.ns(),
            end_ns: end.ns(),
            ios: self.ios,
            bytes: self.bytes,
            latency: self.latency.each_ref().map(LatencyRecorder::stats),
            latency_rw: LatencyRecorder::merged_stats(&self.latency[..2]),
            latency_histogram: None,
            counters: self.drive.counters().since(&self.counters_before),
            steady_state_at_s: None,
            position_done_ns: Vec::new(),
            position_bytes: Vec::new(),
            outcome: ssdlab::workload::Outcome::default(),
            verify: None,
            series: Series::default(),
        };
        let out = json!({
            "phase": phase,
            "stats": self.stats,
            "status": self.status(),
            "per_second": {
                "free_blocks": self.free_blocks,
                "slc_cached_units": self.slc_units,
            },
        });
        (out, std::mem::take(&mut self.series), self.drive)
    }
}
