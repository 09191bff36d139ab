//! The drive as the host sees it: a host link, a DRAM write-back buffer and the FTL behind them.
//!
//! A write is acknowledged once its data crossed the link and found room in the write buffer;
//! buffer space is released when the NAND program holding the data completes. A read waits for
//! its units' dies and channels, then crosses the link. A TRIM costs a command. All times are
//! simulated nanoseconds.

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

#[derive(Clone, Debug)]
pub struct Drive {
    config: DriveConfig,
    layout: Layout,
    ftl: Ftl,
    link_free: SimTime,
    buffer: WriteBuffer,
    now: SimTime,
    /// Last time the channel calendars' floor was moved.
    floor: SimTime,
    /// When the last request completed: idle time is measured from here.
    last_ack: SimTime,
    /// Host idle time after which idle GC may start, if the drive has idle GC.
    idle_delay: Option<SimTime>,
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
            now: SimTime::ZERO,
            floor: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            idle_delay,
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

    /// Secure erase: every block erased, every mapping gone, the write buffer dropped.
    pub fn secure_erase(&mut self) -> SimTime {
        self.buffer.clear();
        let done = self.ftl.secure_erase(self.now);
        self.now = done;
        self.link_free = self.link_free.max(done);
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

    /// Serves one request submitted at `t`; returns its completion time.
    #[inline]
    pub fn submit(&mut self, io: Io, t: SimTime) -> Result<SimTime> {
        self.accept(io, t, &[])
    }

    /// Serves a write submitted at `t` whose first and/or last unit the host covers only in part
    /// (`partial` lists those units): the drive reads their old contents from NAND and merges
    /// them before it takes the write (a read-modify-write), so the write is acknowledged no
    /// earlier than those reads complete. The reads count as host unit reads in the counters.
    pub fn submit_read_modify_write(
        &mut self,
        io: Io,
        partial: &[Lpn],
        t: SimTime,
    ) -> Result<SimTime> {
        debug_assert!(io.kind == IoKind::Write);
        self.accept(io, t, partial)
    }

    #[inline]
    fn accept(&mut self, io: Io, t: SimTime, partial: &[Lpn]) -> Result<SimTime> {
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
        let ack = self.serve(io, t, partial)?;
        self.last_ack = self.last_ack.max(ack);
        Ok(ack)
    }

    #[inline]
    fn serve(&mut self, io: Io, t: SimTime, partial: &[Lpn]) -> Result<SimTime> {
        let bytes = u64::from(io.units) * UNIT_BYTES;
        let command_done = t.max(self.link_free) + self.layout.t_command;
        match io.kind {
            IoKind::Write => {
                let arrived = command_done + SimTime::transfer(bytes, self.layout.link_bytes_per_s);
                self.link_free = arrived;
                let mut ack = arrived;
                for &lpn in partial {
                    ack = ack.max(self.ftl.host_read(lpn, command_done)?);
                }
                let end = io.lpn + io.units;
                let mut lpn = io.lpn;
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
                        }
                        lpn += run;
                        continue;
                    }
                    ack = self.buffer.admit(ack);
                    if let Some(p) = self.ftl.host_write(lpn, ack, io.compressibility)? {
                        self.buffer.programmed(p.die, p.done, p.units);
                    }
                    if let Some(until) = self.ftl.take_stall() {
                        // Clean up later: the drive takes no data until its GC batch is done.
                        ack = ack.max(until);
                        self.link_free = self.link_free.max(until);
                    }
                    lpn += 1;
                }
                Ok(ack)
            }
            IoKind::Read => {
                self.link_free = command_done;
                let mut ready = command_done;
                for lpn in io.lpn..io.lpn + io.units {
                    ready = ready.max(self.ftl.host_read(lpn, command_done)?);
                }
                let start = ready.max(self.link_free);
                let ack = start + SimTime::transfer(bytes, self.layout.link_bytes_per_s);
                self.link_free = ack;
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

    /// TRIMs `[lpn, lpn + units)` at once, as a format does; returns when it completed.
    pub fn trim_range(&mut self, lpn: u64, units: u64) -> Result<SimTime> {
        self.check_range(lpn, units)?;
        for l in lpn..lpn + units {
            self.ftl.trim(l as Lpn);
        }
        self.now = self.now.max(self.link_free) + self.layout.t_command;
        self.link_free = self.now;
        Ok(self.now)
    }
}
