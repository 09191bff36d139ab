//! fio's offset modifiers (`rw=write:4k`, `rw=read:-8k`, `rw=randread:8`) and `rw_sequencer`.
//!
//! As fio 3.33 (options.c `str_rw_cb`; io_u.c `get_next_offset`, `get_next_block`,
//! `get_next_seq_offset`), in bytes, with `F` the region's start (fio's `file_offset`), `S` its
//! length (the file's `io_size`) and `R` the drive's size (`real_file_size`):
//!
//! * a sequential job's modifier is a size added to each offset after the first (`pos += add` once
//!   `pos` = `last_pos − F` is not 0): holes when positive, backwards when negative. A position
//!   past `R` wraps: to `F` going forwards, to `min(S, R) + add` going backwards; a backwards job
//!   starting at `F` ≠ 0 first rewinds to `min(S, R)` (fio's absolute/relative mix, kept).
//! * a random job's modifier `N` takes a new random offset every `N`-th request, the first
//!   included (fio starts its countdown at 1); the requests between follow on from where the
//!   last one ended (`rw_sequencer=sequential`, the default) or repeat its offset (`identical`).
//! * a pass over the region ends when the next offset is at or past `S` (or its request would
//!   not fit): fio closes the file, and, unless `io_size`, `loops` or `time_based` keep the job
//!   going, the job ends -- so `rw=write:4k` over 64 KiB writes 32 KiB. A new pass starts at `F`
//!   with a fresh random map.

use serde::{Deserialize, Serialize};

fn one() -> u32 {
    1
}

/// A job's offset modifier.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Sequencer {
    /// Sequential: bytes added to every offset after the first (fio's `ddir_seq_add`), a
    /// multiple of 512.
    #[serde(default)]
    pub add_bytes: i64,
    /// Random: a new random offset every this many requests (fio's `ddir_seq_nr`; 0: never
    /// after the first... as fio, which then only follows on).
    #[serde(default = "one")]
    pub every: u32,
    /// `rw_sequencer=identical`: the requests between random offsets repeat the last offset.
    #[serde(default)]
    pub identical: bool,
    /// The job ends when this many passes are over (fio ends a job whose file is done unless
    /// `io_size`, `loops` or `time_based` keep it going); `None`: only the job's limits end it.
    #[serde(default)]
    pub passes: Option<u64>,
}

/// The modifier's state over a pass, in bytes.
#[derive(Clone, Debug)]
pub(super) struct SeqState {
    f: u64,
    s: u64,
    r: u64,
    add: i64,
    every: u32,
    left: u32,
    pub identical: bool,
    last_pos: u64,
    last_start: Option<u64>,
    /// Passes begun (the first is 1).
    pub pass: u64,
}

impl SeqState {
    /// The state for a region of `s` bytes at `f` on a drive of `r` bytes.
    pub(super) fn new(spec: &Sequencer, f: u64, s: u64, r: u64) -> SeqState {
        SeqState {
            f,
            s,
            r,
            add: spec.add_bytes,
            every: spec.every,
            left: 1,
            identical: spec.identical,
            last_pos: f,
            last_start: None,
            pass: 1,
        }
    }

    /// A new pass (fio's `fio_file_reset` when the file is opened again).
    pub(super) fn new_pass(&mut self) {
        self.last_pos = self.f;
        self.last_start = None;
        self.pass += 1;
    }

    /// fio's `ddir_seq_nr` countdown: whether this request takes a new random offset.
    #[inline]
    pub(super) fn random_turn(&mut self) -> bool {
        if self.every == 0 {
            return false;
        }
        self.left = self.left.wrapping_sub(1);
        if self.left == 0 {
            self.left = self.every;
            return true;
        }
        false
    }

    fn span_or_drive(&self) -> u64 {
        if self.r > self.s {
            self.s
        } else {
            self.r
        }
    }

    /// fio's `get_next_seq_offset`: the next position from the region's start, or `None` when
    /// the last one ended at or past the drive's end.
    fn seq_pos(&mut self) -> Option<u64> {
        if self.last_pos >= self.r {
            return None;
        }
        if self.last_pos == self.f && self.f != 0 && self.add < 0 {
            self.last_pos = self.span_or_drive();
        }
        let mut pos = self.last_pos.wrapping_sub(self.f);
        if pos != 0 && self.add != 0 {
            pos = pos.wrapping_add(self.add as u64);
            if pos >= self.r {
                pos = if self.add > 0 {
                    self.f
                } else {
                    self.span_or_drive().wrapping_add(self.add as u64)
                };
            }
        }
        Some(pos)
    }

    /// The pass's next position for a request of `len` bytes that follows on (or repeats, with
    /// `identical`), from the region's start. `Ok(None)`: the pass is over; `Err(())`: fio
    /// would draw a random offset instead (a random job whose last request ended at the drive's
    /// end).
    pub(super) fn follow(&mut self, len: u64) -> std::result::Result<Option<u64>, ()> {
        let pos = if self.identical {
            self.last_start.map_or(0, |s| s - self.f)
        } else {
            match self.seq_pos() {
                Some(p) => p,
                None => return Err(()),
            }
        };
        // fio's get_next_offset: at or past the region's (or drive's) end, the file is done;
        // a request that would not fit ends it too (io_u_fits).
        if pos >= self.s || pos.saturating_add(self.f) >= self.r || pos + len > self.s {
            return Ok(None);
        }
        Ok(Some(pos))
    }

    /// A request went out at `pos` (from the region's start) for `len` bytes.
    #[inline]
    pub(super) fn issued(&mut self, pos: u64, len: u64) {
        self.last_start = Some(self.f + pos);
        self.last_pos = self.f + pos + len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    /// The offsets (in 4 KiB blocks from the drive's start) of a sequential job with modifier
    /// `add` over `s` bytes at `f` on a 16 MiB drive, for `n` requests of 4 KiB, passes
    /// starting over as they end.
    fn sequential(add: i64, f: u64, s: u64, n: usize) -> Vec<u64> {
        let spec = Sequencer {
            add_bytes: add,
            every: 1,
            identical: false,
            passes: None,
        };
        let mut st = SeqState::new(&spec, f, s, 16 * K * K);
        let mut out = Vec::new();
        while out.len() < n {
            match st.follow(4 * K) {
                Ok(Some(pos)) => {
                    st.issued(pos, 4 * K);
                    out.push((f + pos) / (4 * K));
                }
                Ok(None) => st.new_pass(),
                Err(()) => panic!("sequential jobs never fall back"),
            }
        }
        out
    }

    /// The offsets fio 3.33 wrote to its iolog for these jobs (`write_iolog`, a 16 MiB file,
    /// bs=4k), read back with `awk '{print $4/4096}'`.
    #[test]
    fn sequential_modifiers_give_fios_offsets() {
        // rw=read:4k size=64k io_size=256k
        let holes: Vec<u64> = [0, 2, 4, 6, 8, 10, 12, 14].repeat(2);
        assert_eq!(sequential(4096, 0, 64 * K, 16), holes);
        // rw=read:-8k size=64k io_size=256k
        let back = [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 14, 13];
        assert_eq!(sequential(-8192, 0, 64 * K, 18), back);
        // rw=read:-8k size=64k offset=32k
        let back_off = [14, 13, 12, 11, 10, 9, 8, 22, 21, 20, 19, 18, 17, 16, 15, 14];
        assert_eq!(sequential(-8192, 32 * K, 64 * K, 16), back_off);
        // rw=read:8k size=64k offset=32k io_size=256k
        let skip = [8, 11, 14, 17, 20, 23].repeat(2);
        assert_eq!(sequential(8192, 32 * K, 64 * K, 12), skip);
    }

    /// rw=randread:4: a random offset at the 1st, 5th, 9th ... request, the ones between follow
    /// on (fio's countdown starts at 1); a follow-on past the region's end ends the pass.
    #[test]
    fn random_modifier_counts_down_from_one() {
        let spec = Sequencer {
            add_bytes: 0,
            every: 4,
            identical: false,
            passes: Some(1),
        };
        let mut st = SeqState::new(&spec, 0, 64 * K, 16 * K * K);
        let turns: Vec<bool> = (0..9).map(|_| st.random_turn()).collect();
        assert_eq!(
            turns,
            [true, false, false, false, true, false, false, false, true]
        );
        // fio's draws in its iolog were blocks 0, 11, 13: 0 1 2 3 11 12 13 14 13 14 15, then the
        // pass (and, without io_size, the job) ended.
        let mut st = SeqState::new(&spec, 0, 64 * K, 16 * K * K);
        let mut draws = [0u64, 11, 13].into_iter();
        let mut out = Vec::new();
        loop {
            let pos = if st.random_turn() {
                draws.next().unwrap() * 4 * K
            } else {
                match st.follow(4 * K) {
                    Ok(Some(p)) => p,
                    Ok(None) => break,
                    Err(()) => unreachable!(),
                }
            };
            st.issued(pos, 4 * K);
            out.push(pos / (4 * K));
        }
        assert_eq!(out, [0, 1, 2, 3, 11, 12, 13, 14, 13, 14, 15]);
        // rw_sequencer=identical repeats the random offset: 0 0 0 0 11 11 11 11 ...
        let mut st = SeqState::new(
            &Sequencer {
                identical: true,
                ..spec
            },
            0,
            64 * K,
            16 * K * K,
        );
        let mut draws = [0u64, 11].into_iter();
        let out: Vec<u64> = (0..8)
            .map(|_| {
                let pos = if st.random_turn() {
                    draws.next().unwrap() * 4 * K
                } else {
                    st.follow(4 * K).unwrap().unwrap()
                };
                st.issued(pos, 4 * K);
                pos / (4 * K)
            })
            .collect();
        assert_eq!(out, [0, 0, 0, 0, 11, 11, 11, 11]);
    }
}
