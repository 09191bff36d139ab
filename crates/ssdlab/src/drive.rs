//! The drive as the host sees it: a host link, a DRAM write-back buffer and the FTL behind them.
//!
//! A write is acknowledged once its data crossed the link and found room in the write buffer;
//! buffer space is released when the NAND program holding the data completes. A read waits for
//! its units' dies and channels, then its data crosses the link back. A TRIM costs a command.
//! All times are simulated nanoseconds.
//!
//! The link has two directions, each a frontier in time: commands and write data go to the
//! drive; read data comes back. A read holds the return direction only while its data crosses,
//! so the commands behind it reach the drive at once and their NAND reads overlap on other dies
//! (NVMe's queues, SATA's NCQ). Read data leaves in the order the reads arrived. A SATA link is
//! half duplex; that reads' and writes' data cannot cross at the same time is not modelled, so a
//! mixed workload's link may carry both directions at once.
//!
//! The host addresses bytes in 512-byte sectors; the FTL maps 4 KiB units. Every workload
//! submits through [`Drive::submit_bytes`], which turns a byte range into unit operations the way
//! a page-mapped drive must: a read reads every unit it touches whole; a write that covers a
//! unit only in part reads that unit's old data (a NAND read, if the unit holds data) and
//! programs the whole merged unit (a read-modify-write); a TRIM unmaps only the units it covers
//! whole.

use crate::config::DriveConfig;
use crate::error::{Error, Result};
use crate::ftl::{Counters, Ftl};
use crate::nand::Layout;
use crate::units::{Lpn, SimTime, UNIT_BYTES};
use crate::write_buffer::WriteBuffer;

/// The three directions of host IO, in fio's order (read 0, write 1, trim 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoKind {
    Read = 0,
    Write = 1,
    Trim = 2,
}

/// One host request over `units` 4 KiB units starting at `lpn`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Io {
    pub kind: IoKind,
    pub lpn: Lpn,
    pub units: u32,
    /// Compressed size / size of written data (1.0: incompressible); only compressing drives care.
    pub compressibility: f64,
}

impl Io {
    /// An incompressible request.
    pub fn new(kind: IoKind, lpn: Lpn, units: u32) -> Io {
        Io {
            kind,
            lpn,
            units,
            compressibility: 1.0,
        }
    }
}

/// What a request given in bytes did to the mapping units ([`Drive::submit_bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Units the request read or wrote (every unit it touches, whole), or unmapped (a TRIM: the
    /// units it covers whole).
    pub units: u64,
    /// Units a write covered only in part (0, 1 or 2: its first and last): the drive merged the
    /// host's bytes into each unit's old data, read from NAND when the unit held data and was no
    /// longer in the write buffer.
    pub rmw_units: u64,
    /// Bytes of a TRIM that lay in units it covered only in part, and so stay mapped.
    pub trim_bytes_kept: u64,
    /// The request starts or ends inside a unit.
    pub unaligned: bool,
}

/// `units` as the `u32` an [`Io`] holds, or an error naming the request's `length`.
#[inline]
fn unit_count(units: u64, length: u64) -> Result<u32> {
    u32::try_from(units).map_err(|_| {
        Error::Workload(format!(
            "a request of {length} bytes is too long to simulate"
        ))
    })
}

#[derive(Clone, Debug)]
pub struct Drive {
    config: DriveConfig,
    layout: Layout,
    ftl: Ftl,
    /// When the host-to-drive direction (commands, write data) is free.
    link_free: SimTime,
    /// When the drive-to-host direction (read data) is free.
    return_free: SimTime,
    /// The last request size and its time on the link ([`Drive::link_time`]).
    link_memo: (u64, SimTime),
    buffer: WriteBuffer,
    now: SimTime,
    /// Last time the channel calendars' floor was moved.
    floor: SimTime,
    /// When the last request completed: idle time is measured from here.
    last_ack: SimTime,
    /// Host idle time after which idle GC may start, if the drive has idle GC.
    idle_delay: Option<SimTime>,
    /// What the host wrote, if the drive keeps content (`crate::store`; off by default).
    pub(crate) store: Option<Box<crate::store::Store>>,
    /// The volatile write cache is enabled (write-back, the default); off, a write is
    /// acknowledged once its data is programmed ([`Drive::set_write_cache`]).
    write_cache: bool,
}

impl Drive {
    /// Builds a fresh (secure-erased) drive. `seed` drives the FTL's own randomness (d-choices).
    pub fn new(config: &DriveConfig, seed: u64) -> Result<Drive> {
        let layout = config.validate()?;
        let needed = layout.table_bytes(config.ftl.compression);
        if let Some(available) = crate::memory::available_memory() {
            if needed > available / 10 * 9 {
                return Err(Error::Config(format!(
                    "simulating this drive needs about {} of memory for its mapping tables but only {} is available; \
                     choose a smaller --capacity",
                    crate::units::format_bytes(needed),
                    crate::units::format_bytes(available)
                )));
            }
        }
        let ftl = Ftl::new(config, layout.clone(), seed);
        // Idle work starts after the shorter of the idle-GC and SLC-fold delays.
        let idle_gc_delay = config
            .ftl
            .idle_gc
            .as_ref()
            .map(|i| SimTime((i.delay_s * crate::units::NS_PER_SEC as f64).round() as u64));
        let idle_delay = match (idle_gc_delay, ftl.idle_fold_delay()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(Drive {
            config: config.clone(),
            buffer: WriteBuffer::new(layout.buffer_units, layout.dies),
            layout,
            ftl,
            link_free: SimTime::ZERO,
            return_free: SimTime::ZERO,
            link_memo: (0, SimTime::ZERO),
            now: SimTime::ZERO,
            floor: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            idle_delay,
            store: None,
            write_cache: true,
        })
    }

    pub fn config(&self) -> &DriveConfig {
        &self.config
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Test hook: turns on the FTL's double-program audit.
    pub fn enable_audit(&mut self) {
        self.ftl.enable_audit();
    }

    pub fn counters(&self) -> Counters {
        self.ftl.counters()
    }

    /// The running totals behind the per-interval series.
    #[inline]
    pub fn tally(&self) -> crate::ftl::Tally {
        self.ftl.tally()
    }

    /// The host's clock: when the last step ended.
    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn user_units(&self) -> u64 {
        self.layout.user_units
    }

    pub fn user_bytes(&self) -> u64 {
        self.layout.user_units * UNIT_BYTES
    }

    /// Moves the host's clock forward at the end of a phase.
    pub fn advance_to(&mut self, t: SimTime) {
        self.now = self.now.max(t);
    }

    /// Leaves the drive idle until `t` (idle GC may run).
    pub fn idle_until(&mut self, t: SimTime) -> Result<()> {
        self.ftl.idle(self.last_ack.max(self.now), t)?;
        self.now = self.now.max(t);
        Ok(())
    }

    /// Turns the volatile write cache on (write-back: a write is acknowledged once its data is
    /// in the DRAM buffer) or off (write-through, NVMe's Volatile Write Cache feature cleared,
    /// PTS's WCD: a write is acknowledged once every unit of it is programmed; the host page
    /// it ends in is programmed at once, padded to a whole page, so the next write starts a new
    /// page). Turning it off drains nothing: data already buffered is programmed as before.
    pub fn set_write_cache(&mut self, enabled: bool) {
        self.write_cache = enabled;
    }

    /// Whether the volatile write cache is on.
    pub fn write_cache(&self) -> bool {
        self.write_cache
    }

    /// Secure erase: every block erased, every mapping gone, the write buffer dropped.
    pub fn secure_erase(&mut self) -> SimTime {
        self.buffer.clear();
        if let Some(store) = self.store.as_deref_mut() {
            store.clear();
        }
        let done = self.ftl.secure_erase(self.now);
        self.now = done;
        self.link_free = self.link_free.max(done);
        self.return_free = self.return_free.max(done);
        self.last_ack = done;
        done
    }

    /// Starts counting NAND work per interval from `origin` (see [`crate::ftl::Work`]).
    pub fn start_work_log(&mut self, origin: SimTime, interval_ns: u64) {
        self.ftl.start_work_log(origin, interval_ns);
    }

    /// Stops counting NAND work and returns the counts.
    pub fn take_work_log(&mut self) -> crate::ftl::Work {
        self.ftl.take_work_log()
    }

    /// Hints that a request at `lpn` is coming (see [`Ftl::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, stage: u8) {
        self.ftl.prefetch(lpn, stage);
    }

    /// Checks that a request lies inside the user space.
    pub fn check_range(&self, lpn: u64, units: u64) -> Result<()> {
        if units == 0 || lpn + units > self.layout.user_units {
            return Err(Error::Workload(format!(
                "request at unit {lpn} of {units} units is outside the drive's {} user units",
                self.layout.user_units
            )));
        }
        Ok(())
    }

    /// Serves one request of whole units submitted at `t`; returns its completion time.
    #[inline]
    pub fn submit(&mut self, io: Io, t: SimTime) -> Result<SimTime> {
        if self.store.is_some() {
            let unit = UNIT_BYTES;
            self.store_request(
                io.kind,
                u64::from(io.lpn) * unit,
                u64::from(io.units) * unit,
            )?;
        }
        self.accept(io, t, &[], u64::from(io.units) * UNIT_BYTES)
    }

    /// Serves a request of `length` bytes at byte `offset` submitted at `t`; returns its
    /// completion time and what it did to the units. This is the one path of every workload
    /// (the engine's request streams and trace replay):
    ///
    /// - a request of whole units goes to [`Drive::submit`] unchanged;
    /// - a read reads every unit it touches whole (a NAND read of each unit that holds data) and
    ///   moves `length` bytes over the link;
    /// - a write moves `length` bytes over the link; a unit it covers only in part (its first
    ///   and/or last) costs a read-modify-write: the drive reads the unit's old data, merges the
    ///   host's bytes into it and programs the whole unit, so a 512-byte write programs 4096
    ///   bytes. The read is a NAND read when the unit holds data (it counts in
    ///   `host_page_reads`); a unit never written or trimmed reads as zeros, with no NAND read.
    ///   The write is acknowledged no earlier than those reads complete. A unit still in the host
    ///   page being assembled (in the write buffer, not yet programmed) is merged there instead,
    ///   with no read and no new program ([`Ftl::in_open_host_page`]): sequential 512-byte
    ///   writes fill a unit in DRAM;
    /// - a TRIM unmaps only the units it covers whole. A drive cannot unmap part of a unit (its
    ///   mapping has no finer grain), and the usual FTL ignores the partial part, as here: those
    ///   bytes keep their data (`trim_bytes_kept`). A TRIM that covers no unit whole still costs a
    ///   command.
    ///
    /// The request must lie in the user space.
    // Always inlined (measured with callgrind): the store test stays a test of an `Option` in the
    // caller, and the timing path is inlined exactly as before the store existed.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn submit_bytes(
        &mut self,
        kind: IoKind,
        offset: u64,
        length: u64,
        compressibility: f64,
        t: SimTime,
    ) -> Result<(SimTime, Touched)> {
        if self.store.is_some() {
            return self.submit_bytes_stored(kind, offset, length, compressibility, t);
        }
        self.submit_bytes_timed(kind, offset, length, compressibility, t)
    }

    /// [`Drive::submit_bytes`] on a drive with a content store (`crate::store`), kept out of
    /// line: a drive without one runs the code it ran before the store existed.
    #[inline(never)]
    fn submit_bytes_stored(
        &mut self,
        kind: IoKind,
        offset: u64,
        length: u64,
        compressibility: f64,
        t: SimTime,
    ) -> Result<(SimTime, Touched)> {
        self.store_request(kind, offset, length)?;
        self.submit_bytes_timed(kind, offset, length, compressibility, t)
    }

    /// [`Drive::submit_bytes`]'s timing: the units the request touches, through the FTL.
    #[inline]
    pub(crate) fn submit_bytes_timed(
        &mut self,
        kind: IoKind,
        offset: u64,
        length: u64,
        compressibility: f64,
        t: SimTime,
    ) -> Result<(SimTime, Touched)> {
        if (offset | length) % UNIT_BYTES == 0 {
            // Whole units: the path every 4 KiB-aligned workload takes, as before.
            let units = length / UNIT_BYTES;
            let io = Io {
                kind,
                lpn: (offset / UNIT_BYTES) as Lpn,
                units: unit_count(units, length)?,
                compressibility,
            };
            let ack = self.accept(io, t, &[], length)?;
            let touched = Touched {
                units,
                ..Touched::default()
            };
            return Ok((ack, touched));
        }
        self.submit_partial(kind, offset, length, compressibility, t)
    }

    /// [`Drive::submit_bytes`] for a request that starts or ends inside a unit (kept out of
    /// line: the whole-unit path stays as small as it was).
    #[inline(never)]
    fn submit_partial(
        &mut self,
        kind: IoKind,
        offset: u64,
        length: u64,
        compressibility: f64,
        t: SimTime,
    ) -> Result<(SimTime, Touched)> {
        let end = offset + length;
        let first = offset / UNIT_BYTES;
        let last = end.div_ceil(UNIT_BYTES); // one past the last unit touched
        let units = last - first;
        let mut touched = Touched {
            units,
            unaligned: true,
            ..Touched::default()
        };
        let io = Io {
            kind,
            lpn: first as Lpn,
            units: unit_count(units, length)?,
            compressibility,
        };
        let ack = match kind {
            IoKind::Read => self.accept(io, t, &[], length)?,
            IoKind::Write => {
                let mut partial = [0 as Lpn; 2];
                let mut n = 0;
                if offset % UNIT_BYTES != 0 {
                    partial[n] = first as Lpn;
                    n += 1;
                }
                if end % UNIT_BYTES != 0 && (n == 0 || last - 1 != first) {
                    partial[n] = (last - 1) as Lpn;
                    n += 1;
                }
                touched.rmw_units = n as u64;
                self.accept(io, t, &partial[..n], length)?
            }
            IoKind::Trim => {
                let whole_first = offset.div_ceil(UNIT_BYTES);
                let whole = (end / UNIT_BYTES).saturating_sub(whole_first);
                touched.units = whole;
                touched.trim_bytes_kept = length - whole * UNIT_BYTES;
                let lpn = if whole > 0 { whole_first } else { first };
                let trim = Io::new(IoKind::Trim, lpn as Lpn, unit_count(whole, length)?);
                self.accept(trim, t, &[], 0)?
            }
        };
        Ok((ack, touched))
    }

    /// The time `bytes` take on the host link. A workload's requests are mostly one size, so
    /// the last size's time is kept: its floating-point division was on every request's
    /// critical path (perf).
    #[inline]
    fn link_time(&mut self, bytes: u64) -> SimTime {
        if bytes != self.link_memo.0 {
            self.link_memo = (
                bytes,
                SimTime::transfer(bytes, self.layout.link_bytes_per_s),
            );
        }
        self.link_memo.1
    }

    #[inline]
    fn accept(&mut self, io: Io, t: SimTime, partial: &[Lpn], bytes: u64) -> Result<SimTime> {
        // Requests arrive in time order, so nothing will be ready before `t` again.
        if t.ns() > self.floor.ns() + 10_000_000 {
            self.floor = t;
            self.ftl.advance_floor(t);
        }
        if let Some(delay) = self.idle_delay {
            if t > self.last_ack + delay {
                self.ftl.idle(self.last_ack, t)?;
            }
        }
        let ack = self.serve(io, t, partial, bytes)?;
        self.last_ack = self.last_ack.max(ack);
        Ok(ack)
    }

    #[inline]
    /// Serves `io` over whole units; `bytes` is what crosses the link (the host's own length,
    /// which a partial unit makes shorter than the units), `partial` the units a write merges.
    fn serve(&mut self, io: Io, t: SimTime, partial: &[Lpn], bytes: u64) -> Result<SimTime> {
        let command_done = t.max(self.link_free) + self.layout.t_command;
        match io.kind {
            IoKind::Write => {
                self.ftl.count_host_write_bytes(bytes);
                let arrived = command_done + self.link_time(bytes);
                self.link_free = arrived;
                let mut ack = arrived;
                // Write-through: the latest completion of a program holding this write's data.
                let mut programmed = SimTime::ZERO;
                let (mut lpn, mut end) = (io.lpn, io.lpn + io.units);
                for &p in partial {
                    if self.ftl.in_open_host_page(p) {
                        // Still in the write buffer: merged there, no read and no new program.
                        if p == lpn {
                            lpn += 1;
                        } else {
                            end -= 1;
                        }
                    } else {
                        // Read-modify-write: the unit's old data first (no NAND read if unmapped).
                        ack = ack.max(self.ftl.host_read(p, command_done)?);
                    }
                }
                while lpn < end {
                    // Units that fit both the open host page and the free buffer go in together.
                    let run = self.ftl.host_run_room().min(end - lpn);
                    let run = if run >= 2 {
                        run.min(self.buffer.room(ack))
                    } else {
                        run
                    };
                    if run >= 2 {
                        self.buffer.admit_run(run);
                        if let Some(p) = self.ftl.host_write_run(lpn, run, ack)? {
                            self.buffer.programmed(p.die, p.done, p.units);
                            programmed = programmed.max(p.done);
                        }
                        lpn += run;
                        continue;
                    }
                    ack = self.buffer.admit(ack);
                    if let Some(p) = self.ftl.host_write(lpn, ack, io.compressibility)? {
                        self.buffer.programmed(p.die, p.done, p.units);
                        programmed = programmed.max(p.done);
                    }
                    if let Some(until) = self.ftl.take_stall() {
                        // Clean up later: the drive takes no data until its GC batch is done.
                        ack = ack.max(until);
                        self.link_free = self.link_free.max(until);
                    }
                    lpn += 1;
                }
                if !self.write_cache {
                    if let Some(p) = self.ftl.program_open_host_page(ack)? {
                        self.buffer.programmed(p.die, p.done, p.units);
                        programmed = programmed.max(p.done);
                    }
                    ack = ack.max(programmed);
                }
                Ok(ack)
            }
            IoKind::Read => {
                self.link_free = command_done;
                let mut ready = command_done;
                for lpn in io.lpn..io.lpn + io.units {
                    ready = ready.max(self.ftl.host_read(lpn, command_done)?);
                }
                let start = ready.max(self.return_free);
                let ack = start + self.link_time(bytes);
                self.return_free = ack;
                Ok(ack)
            }
            IoKind::Trim => {
                self.link_free = command_done;
                for lpn in io.lpn..io.lpn + io.units {
                    self.ftl.trim(lpn);
                }
                Ok(command_done)
            }
        }
    }

    /// A cache flush submitted at `t`: completes once the command crossed the link and every
    /// program holding data of the write buffer completed. The units of a host page still
    /// being assembled are taken as safe (the drive's power-loss protection), as on drives with
    /// capacitors.
    pub fn flush(&mut self, t: SimTime) -> SimTime {
        let command_done = t.max(self.link_free) + self.layout.t_command;
        self.link_free = command_done;
        let done = command_done.max(self.buffer.drained_at());
        self.last_ack = self.last_ack.max(done);
        done
    }

    /// TRIMs `[lpn, lpn + units)` at once, as a format does; returns when it completed.
    pub fn trim_range(&mut self, lpn: u64, units: u64) -> Result<SimTime> {
        self.check_range(lpn, units)?;
        if let Some(store) = self.store.as_deref_mut() {
            let per = UNIT_BYTES / crate::units::SECTOR_BYTES;
            store.zero(lpn * per, units * per)?;
        }
        for l in lpn..lpn + units {
            self.ftl.trim(l as Lpn);
        }
        self.now = self.now.max(self.link_free) + self.layout.t_command;
        self.link_free = self.now;
        Ok(self.now)
    }
}
