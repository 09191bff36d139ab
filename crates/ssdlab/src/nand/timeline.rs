//! Die and channel timelines: each operation occupies its die, and its data transfer occupies the
//! die's channel. A die serves its operations first come, first served; a channel books each
//! transfer into the earliest gap of its [`Calendar`], so work queued far ahead on one die does
//! not hold up transfers of the other dies on its channel.

use super::calendar::Calendar;
use strength_reduce::StrengthReducedU32;

use crate::units::SimTime;

#[derive(Clone, Debug)]
pub struct Timelines {
    die_free: Vec<SimTime>,
    channels: Vec<Calendar>,
    /// The channel count as a multiply-and-shift divisor (every operation finds its die's channel).
    channel_count: StrengthReducedU32,
    /// Die-busy nanoseconds, for utilisation figures.
    busy_ns: u64,
}

impl Timelines {
    pub fn new(dies: u32, channels: u32) -> Timelines {
        Timelines {
            die_free: vec![SimTime::ZERO; dies as usize],
            channels: vec![Calendar::new(); channels as usize],
            channel_count: StrengthReducedU32::new(channels),
            busy_ns: 0,
        }
    }

    /// When `die` finishes the work placed on it so far.
    #[inline]
    pub fn die_free(&self, die: u32) -> SimTime {
        self.die_free[die as usize]
    }

    /// When each die finishes its work, by die.
    #[inline]
    pub fn die_free_times(&self) -> &[SimTime] {
        &self.die_free
    }

    /// When every die is idle.
    pub fn all_free(&self) -> SimTime {
        self.die_free.iter().copied().max().unwrap_or(SimTime::ZERO)
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Declares that no operation will be ready before `t` (the host's current time).
    pub fn advance_floor(&mut self, t: SimTime) {
        for c in &mut self.channels {
            c.advance_floor(t);
        }
    }

    #[inline]
    fn channel(&mut self, die: u32) -> &mut Calendar {
        &mut self.channels[(die % self.channel_count) as usize]
    }

    /// Transfers data in over the channel, then programs it. Returns the completion time.
    #[inline]
    pub fn program(&mut self, die: u32, ready: SimTime, xfer: SimTime, t_prog: SimTime) -> SimTime {
        let d = die as usize;
        let earliest = ready.max(self.die_free[d]);
        let start = self.channel(die).book(earliest, xfer);
        let done = start + xfer + t_prog;
        self.busy_ns += (done - earliest).ns();
        self.die_free[d] = done;
        done
    }

    /// Reads a page into the die's register, then transfers `xfer` worth of it out over the
    /// channel. Returns when the data is in the controller.
    #[inline]
    pub fn read(&mut self, die: u32, ready: SimTime, t_read: SimTime, xfer: SimTime) -> SimTime {
        let d = die as usize;
        let start = ready.max(self.die_free[d]);
        let xs = self.channel(die).book(start + t_read, xfer);
        let done = xs + xfer;
        self.busy_ns += (done - start).ns();
        self.die_free[d] = done;
        done
    }

    /// Erases a block on `die`. Returns the completion time.
    #[inline]
    pub fn erase(&mut self, die: u32, ready: SimTime, t_erase: SimTime) -> SimTime {
        let d = die as usize;
        let start = ready.max(self.die_free[d]);
        let done = start + t_erase;
        self.busy_ns += t_erase.ns();
        self.die_free[d] = done;
        done
    }

    /// Occupies every die until `until` (secure erase).
    pub fn occupy_all(&mut self, until: SimTime) {
        for t in &mut self.die_free {
            *t = (*t).max(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dies_on_one_channel_share_its_transfers() {
        let slot = crate::nand::calendar::SLOT_NS;
        let mut tl = Timelines::new(2, 1);
        let a = tl.program(0, SimTime(0), SimTime(10 * slot), SimTime(100 * slot));
        let b = tl.program(1, SimTime(0), SimTime(10 * slot), SimTime(100 * slot));
        assert_eq!(a, SimTime(110 * slot));
        // Die 1 waits for the channel, not for die 0's program.
        assert_eq!(b, SimTime(120 * slot));
        assert!(tl.die_free(0) < tl.die_free(1));
        let c = tl.program(0, SimTime(0), SimTime(10 * slot), SimTime(100 * slot));
        assert_eq!(c, SimTime(220 * slot));
        // Work booked far ahead on die 0 leaves the channel free now for die 1.
        let far = tl.program(0, SimTime(0), SimTime(10 * slot), SimTime(100 * slot));
        assert_eq!(far, SimTime(330 * slot));
        assert_eq!(
            tl.program(1, SimTime(0), SimTime(10 * slot), SimTime(100 * slot)),
            SimTime(230 * slot)
        );
    }

    #[test]
    fn reads_and_erases_queue_on_the_die() {
        let slot = crate::nand::calendar::SLOT_NS;
        let mut tl = Timelines::new(1, 1);
        assert_eq!(
            tl.erase(0, SimTime(5 * slot), SimTime(100 * slot)),
            SimTime(105 * slot)
        );
        assert_eq!(
            tl.read(0, SimTime(0), SimTime(50 * slot), SimTime(20 * slot)),
            SimTime(175 * slot)
        );
        assert_eq!(tl.all_free(), SimTime(175 * slot));
    }
}
