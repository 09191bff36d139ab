//! fio's `verify` on a simulated drive.
//!
//! A verifying job writes fio's verify content: every block (or every `verify_interval` of it,
//! a *chunk*) starts with a header carrying the magic 0xacca, the verify type, the chunk length,
//! the write's random seed and offset and `numberio` (the job's write count), followed by data
//! made from the seed (or `verify_pattern`) and protected by a checksum in the header. Here the
//! bytes are stood for by tokens in the drive's content store ([`crate::store`]): one 64-bit
//! token per 512-byte sector, which encodes what fio's checks look at (see `Token`), so a block
//! read back can be checked exactly as fio checks it, without the bytes.
//!
//! What this follows (fio 3.33; file:line at tag fio-3.33):
//!
//! * **Which blocks, when** (backend.c `thread_main` 1861-1946, `do_io` 943-1100, `do_verify`
//!   613-770; iolog.c `log_io_piece` 269-340; verify.c `get_next_verify` 1293-1370): a job runs
//!   passes; each writes `pass_bytes` (fio's `total_bytes`: the region, or `io_size` for random
//!   writes without a random map), logging every write (an *io piece*), then, once the pass's
//!   writes completed, reads every logged piece back at the job's depth and checks it. Pieces are
//!   read in write order when the job has a random map (a list), otherwise in offset order with
//!   an overlapping older piece dropped (fio's rb-tree). After `loops` passes, more run while
//!   the bytes read and written stay below `io_size` (or `size`) by a block (`keep_running`).
//!   `runtime` ends the job in either phase. `verify_backlog=N` reads back `backlog_batch` (N by
//!   default) pieces whenever N pieces are waiting (io_u.c `check_get_verify` 1677-1702), during
//!   the writes. `verify_only` (backend.c `do_dry_run` 1570-1612) issues no writes: it logs them
//!   (reported as writes of no time) and verifies. A job that only reads checks every read.
//! * **The checks** (verify.c `verify_io_u` 877-1004, `verify_header` 809-875,
//!   `verify_io_u_pattern` 367-414): per chunk, the header's magic, length, seed (jobs that read
//!   and write, without backlog), offset (always right here: a header sits where it was written)
//!   and `numberio` (jobs that write one block size, not time-based, not `verify_only`); a header
//!   failure fails the block at once. Then the data against the header's checksum, or against the
//!   pattern (`verify=pattern`, `meta` with a pattern, `verify_pattern` alone). A data failure
//!   is logged and the next chunk checked; with `verify_fatal` the block stops there; without it
//!   the block fails only if its last chunk does (fio's `ret` is overwritten chunk by chunk).
//!   Messages are fio's. A failed block ends the job with error 84 (EILSEQ) after that read
//!   completes, as fio's io_u error does (io_u.c 2152).
//!
//! What is not fio's: the checksums printed ("Expected CRC" / "Received CRC") are the store's
//! 64-bit sums over the chunk's data sectors, not the algorithm's digest (the algorithm does not
//! matter on a simulated drive); a header's time and thread fields are not modelled; the seed
//! printed is a 64-bit value derived from the job and the write's place in its pass.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::control::JobError;
use crate::drive::{Drive, IoKind};
use crate::error::{Error, Result};
use crate::store::{mix64, synthetic_sector, unmix64, Run, SectorSums, Store};
use crate::units::{SimTime, SECTOR_BYTES};

/// fio's verify types (verify.h `enum`), as headers carry them.
pub const VERIFY_NONE: u8 = 0;
pub const VERIFY_HDR_ONLY: u8 = 1;
pub const VERIFY_PATTERN: u8 = 17;
pub const VERIFY_PATTERN_NO_HDR: u8 = 18;
pub const VERIFY_NULL: u8 = 19;
/// fio's header magic.
pub const FIO_HDR_MAGIC: u16 = 0xacca;
/// `EILSEQ`, the error of a failed verify.
pub const EILSEQ: i32 = 84;
/// Most writers (verifying jobs) one run can tell apart.
pub const MAX_WRITERS: u32 = 4095;
/// fio's longest pattern (`MAX_PATTERN_SIZE`).
pub const MAX_PATTERN: usize = 512;
/// io_u flags fio prints with a data failure: `IN_CUR_DEPTH`, plus `VER_LIST` for a logged piece.
const FLAGS_READ: u32 = 0x8;
const FLAGS_LISTED: u32 = 0x88;

/// One verifying job, as the job file asks (the planner derives these from fio's options).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
#[allow(clippy::struct_excessive_bools)] // fio's own switches, one each
pub struct VerifySpec {
    /// fio's verify type code (verify.h): what headers carry and which check applies.
    pub type_code: u8,
    /// The type's header size in bytes (`struct verify_header` plus its checksum; 0 for
    /// `pattern`): where the data area starts in a chunk.
    pub header_bytes: u32,
    /// `verify_pattern`, as bytes (empty: random data).
    pub pattern: Vec<u8>,
    /// `verify_interval` after fio's adjustments (init.c 818-842), in bytes; 0: one header per
    /// block.
    pub interval: u64,
    /// The job writes (fio's `td_write`): it logs its writes and verifies them.
    pub writes: bool,
    /// Run the verify phase after the writes (`do_verify`; false for time-based jobs, whose
    /// writes take all of their runtime).
    pub do_verify: bool,
    /// `verify_only`: log the writes without issuing them, then verify.
    pub only: bool,
    /// `verify_backlog` (0: off) and `verify_backlog_batch` (0: the backlog).
    pub backlog: u64,
    pub backlog_batch: u64,
    /// `verify_fatal`.
    pub fatal: bool,
    /// Check the header's `numberio` / seed (see the module doc).
    pub check_numberio: bool,
    pub check_seed: bool,
    /// The verify list in offset order (fio's rb-tree: no random map), else in write order.
    pub sorted: bool,
    /// Reads and writes count towards a pass (fio's `td_rw`), else writes only.
    pub pass_counts_reads: bool,
    /// Bytes a pass issues (fio's `total_bytes`); 0: no end (a time-based job writes until its
    /// runtime).
    pub pass_bytes: u64,
    /// Passes fio always runs (`loops`).
    pub loops: u64,
    /// More passes run while read + written bytes stay below this by `max_block` (0: none).
    pub limit_bytes: u64,
    /// What the job issues over all its passes, at most (fio's `io_issue_bytes_exceeded`:
    /// `io_size`, or `size`, times `loops`; writes, and reads too when they count towards a
    /// pass); 0: no such bound (a time-based job). A pass ends when it is reached, and the
    /// passes after it issue nothing.
    #[serde(default)]
    pub issue_cap_bytes: u64,
    pub max_block: u64,
    /// Every read is checked (a job that reads and does not write: fio's `!td_rw`).
    pub check_reads: bool,
    /// This job's identity in the content, 1..=4095, distinct per job in a run.
    pub writer: u32,
    /// The file name fio prints (the job's `filename`, else `jobname.N.0`).
    pub file: String,
    /// A failed block is counted and the job goes on (fio's `continue_on_error` with EILSEQ
    /// among `ignore_error`'s verify errors: td_error.c `td_non_fatal_error`); with
    /// `verify_fatal` the job still stops, without an error.
    #[serde(default)]
    pub ignore_errors: bool,
}

impl VerifySpec {
    pub(super) fn validate(&self, name: &str) -> Result<()> {
        let err = |m: String| Err(Error::Workload(format!("{name}: verify: {m}")));
        if self.writer == 0 || self.writer > MAX_WRITERS {
            return err(format!(
                "writer {} is not in 1..={MAX_WRITERS} (at most {MAX_WRITERS} verifying jobs in a run)",
                self.writer
            ));
        }
        if self.type_code > VERIFY_NULL {
            return err(format!("unknown verify type code {}", self.type_code));
        }
        if self.pattern.len() > MAX_PATTERN {
            return err(format!(
                "a pattern of {} bytes is longer than fio's {MAX_PATTERN}",
                self.pattern.len()
            ));
        }
        if (self.type_code == VERIFY_PATTERN || self.type_code == VERIFY_PATTERN_NO_HDR)
            && self.pattern.is_empty()
        {
            return err("a pattern check needs verify_pattern".into());
        }
        if self.interval % SECTOR_BYTES != 0 {
            return err(format!(
                "verify_interval={} is not a whole number of 512-byte sectors",
                self.interval
            ));
        }
        if self.header_bytes as u64 >= SECTOR_BYTES {
            return err(format!(
                "a header of {} bytes does not fit a sector",
                self.header_bytes
            ));
        }
        Ok(())
    }
}

/// What the verify phase of a job did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VerifyReport {
    /// Blocks (pieces, or reads of a job that only reads) read back and checked.
    pub verified_blocks: u64,
    pub verified_bytes: u64,
    /// Write passes run.
    pub passes: u64,
    /// verify_only: writes logged but not issued (counted as writes, with no time).
    pub phantom_writes: u64,
    /// fio's per-direction runtimes: time spent in write passes and in verify phases (ns).
    pub write_ns: u64,
    pub verify_ns: u64,
    /// 0, or `EILSEQ` (84) when a block failed.
    pub error: i32,
    /// Blocks that failed and were let go (`ignore_errors`).
    pub ignored_errors: u64,
    /// What fio prints for the failure (verify.c's lines), in order.
    pub messages: Vec<String>,
    /// The failing block (byte offset, length), and when its read completed (ns since the
    /// phase started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_block: Option<[u64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_at_ns: Option<u64>,
}

// -- tokens ----------------------------------------------------------------------------------------

/// What a sector holds, decoded from its token (`mix64` of a packed value, see the constructors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Zero,
    /// Content that is no part of fio's verify layout (another job's data, a trace's writes).
    Other(u64),
    /// A chunk's first sector: fio's header (and the data after it).
    Header {
        type_code: u8,
        len_sectors: u64,
        writer: u32,
        numberio: u16,
        /// The data after the header is a pattern (with `key` its key's low 12 bits), else
        /// random data made from the seed (`key`: the write's place in its pass, low 12 bits).
        pattern: bool,
        key: u16,
    },
    /// Sector `pos` (1..) of a chunk of random data.
    Data {
        writer: u32,
        pos: u32,
        numberio: u16,
        seed: u16,
    },
    /// A pattern's bytes from `phase` on (normalised: shortest period; plen <= 4: the bytes).
    Pattern {
        plen: u32,
        phase: u32,
        key: u32,
    },
}

const K_HEADER: u64 = 1;
const K_DATA: u64 = 2;
const K_PATTERN: u64 = 3;

fn header_token(
    type_code: u8,
    len_sectors: u64,
    writer: u32,
    numberio: u16,
    pattern: bool,
    key: u16,
) -> u64 {
    mix64(
        K_HEADER << 62
            | u64::from(type_code & 0x1f) << 57
            | ((len_sectors - 1) & 0xffff) << 41
            | u64::from(writer & 0xfff) << 29
            | u64::from(numberio) << 13
            | u64::from(pattern) << 12
            | u64::from(key & 0xfff),
    )
}

fn data_token(writer: u32, pos: u32, numberio: u16, seed: u16) -> u64 {
    mix64(
        K_DATA << 62
            | u64::from(writer & 0xfff) << 50
            | u64::from(pos & 0xffff) << 34
            | u64::from(numberio) << 18
            | u64::from(seed & 0xfff) << 6,
    )
}

fn pattern_token(p: &Pattern, phase: u64) -> u64 {
    if p.zero {
        return 0;
    }
    let phase = phase % p.bytes.len() as u64;
    mix64(K_PATTERN << 62 | (p.bytes.len() as u64 - 1) << 53 | phase << 44 | u64::from(p.key) << 12)
}

fn decode(t: u64) -> Token {
    if t == 0 {
        return Token::Zero;
    }
    let p = unmix64(t);
    match p >> 62 {
        K_HEADER => Token::Header {
            type_code: ((p >> 57) & 0x1f) as u8,
            len_sectors: ((p >> 41) & 0xffff) + 1,
            writer: ((p >> 29) & 0xfff) as u32,
            numberio: ((p >> 13) & 0xffff) as u16,
            pattern: (p >> 12) & 1 == 1,
            key: (p & 0xfff) as u16,
        },
        K_DATA => Token::Data {
            writer: ((p >> 50) & 0xfff) as u32,
            pos: ((p >> 34) & 0xffff) as u32,
            numberio: ((p >> 18) & 0xffff) as u16,
            seed: ((p >> 6) & 0xfff) as u16,
        },
        K_PATTERN => Token::Pattern {
            plen: (((p >> 53) & 0x1ff) + 1) as u32,
            phase: ((p >> 44) & 0x1ff) as u32,
            key: ((p >> 12) & 0xffff_ffff) as u32,
        },
        _ => Token::Other(t),
    }
}

/// A pattern normalised to its shortest period (a buffer of `0xaaaa` is a buffer of `0xaa`).
#[derive(Clone, Debug)]
struct Pattern {
    bytes: Vec<u8>,
    /// Short patterns: their bytes; longer: a 32-bit hash of them.
    key: u32,
    zero: bool,
}

impl Pattern {
    fn new(raw: &[u8]) -> Option<Pattern> {
        if raw.is_empty() {
            return None;
        }
        let n = raw.len();
        let period = (1..=n)
            .find(|&p| n % p == 0 && raw.iter().enumerate().all(|(i, &b)| b == raw[i % p]))
            .unwrap_or(n);
        let bytes = raw[..period].to_vec();
        let key = if period <= 4 {
            let mut k = [0u8; 4];
            k[..period].copy_from_slice(&bytes);
            u32::from_le_bytes(k)
        } else {
            let mut h = 0x811C_9DC5u64;
            for &b in &bytes {
                h = mix64(h ^ u64::from(b));
            }
            h as u32
        };
        Some(Pattern {
            zero: bytes.iter().all(|&b| b == 0),
            bytes,
            key,
        })
    }
}

/// A seed fio would have drawn for `writer`'s write `ordinal` (of its pass).
fn seed_of(writer: u32, ordinal: u16) -> u64 {
    mix64(u64::from(writer) << 32 | u64::from(ordinal) | 1 << 63)
}

/// The first bytes of a sector as fio would see them (for a header read where it is not:
/// fio prints its magic, length and type fields as they come).
fn virtual_byte(tok: Token, raw: u64, own: Option<&Pattern>, sector: u64, i: usize) -> u8 {
    match tok {
        Token::Zero => 0,
        Token::Header {
            type_code,
            len_sectors,
            numberio,
            ..
        } => {
            let mut head = [0u8; 40];
            head[0..2].copy_from_slice(&FIO_HDR_MAGIC.to_le_bytes());
            head[2..4].copy_from_slice(&u16::from(type_code).to_le_bytes());
            head[4..8].copy_from_slice(&((len_sectors * SECTOR_BYTES) as u32).to_le_bytes());
            head[16..24].copy_from_slice(&(sector * SECTOR_BYTES).to_le_bytes());
            head[34..36].copy_from_slice(&numberio.to_le_bytes());
            if i < 40 && !(8..16).contains(&i) {
                head[i]
            } else {
                synthetic_sector(raw)[i]
            }
        }
        Token::Pattern { plen, phase, key } => {
            let p = plen as usize;
            if p <= 4 {
                key.to_le_bytes()[(phase as usize + i) % p]
            } else if let Some(own) = own.filter(|o| o.key == key && o.bytes.len() == p) {
                own.bytes[(phase as usize + i) % p]
            } else {
                synthetic_sector(raw)[i]
            }
        }
        Token::Other(_) | Token::Data { .. } => synthetic_sector(raw)[i],
    }
}

// -- the job's state -------------------------------------------------------------------------------

/// A logged write (fio's io piece), in sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Piece {
    pub sector: u64,
    pub sectors: u64,
    numberio: u16,
    /// When its write completed: it is verified no earlier (fio's `IP_F_IN_FLIGHT`).
    ack: SimTime,
}

/// What a verifying job does next, when a queue slot of it is free at `t`.
pub(super) enum Next {
    /// Its own next request, from its stream.
    Stream,
    /// verify_only: the stream's next request, logged (a write) but not issued.
    Phantom,
    /// Read this piece back and check it.
    Verify(Piece),
    /// Nothing before this time (the pass's writes are still in flight).
    Wait(SimTime),
    /// The job is done.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Write,
    Verify,
    Done,
}

/// A verifying job's state while it runs.
pub(super) struct VerifyState {
    spec: VerifySpec,
    pattern: Option<Pattern>,
    list: VecDeque<Piece>,
    tree: BTreeMap<u64, Piece>,
    phase: Phase,
    /// fio's `io_issues[DDIR_WRITE]`: the next write's `numberio`.
    writes: u64,
    /// Writes and verify reads of this pass, in order (the seeds' ordinals).
    pass_writes: u64,
    pass_reads: u64,
    /// Bytes this pass issued (writes, and reads when they count).
    pass_issued: u64,
    /// Bytes read and written over all passes (fio's `io_bytes`, for `keep_running`).
    io_bytes: u64,
    /// Bytes issued over all passes that count towards `issue_cap_bytes` (fio's
    /// `io_issue_bytes`, never reset between loops).
    cap_issued: u64,
    loops_left: u64,
    /// `verify_backlog`: pieces of the current batch left, and whether the last request was a
    /// read (fio's `last_ddir`).
    batch: u64,
    last_read: bool,
    /// When the pass's last write completes (the verify phase starts no earlier), and when the
    /// current phase started.
    pass_acks: SimTime,
    phase_start: SimTime,
    last_ack: SimTime,
    report: VerifyReport,
}

impl VerifyState {
    pub(super) fn new(spec: &VerifySpec, start: SimTime) -> VerifyState {
        VerifyState {
            pattern: Pattern::new(&spec.pattern),
            spec: spec.clone(),
            list: VecDeque::new(),
            tree: BTreeMap::new(),
            phase: Phase::Write,
            writes: 0,
            pass_writes: 0,
            pass_reads: 0,
            pass_issued: 0,
            io_bytes: 0,
            cap_issued: 0,
            loops_left: spec.loops.max(1) - 1,
            batch: 0,
            last_read: false,
            pass_acks: start,
            phase_start: start,
            last_ack: start,
            report: VerifyReport {
                passes: 1,
                ..VerifyReport::default()
            },
        }
    }

    /// Whether this state decides when the job ends (a writing job), rather than the job's own
    /// limits (a job that only reads, checking each read).
    pub(super) fn governs(&self) -> bool {
        self.spec.writes
    }

    /// Whether a read of the job's own stream is checked.
    pub(super) fn checks_reads(&self) -> bool {
        self.spec.check_reads
    }

    fn pieces(&self) -> usize {
        if self.spec.sorted {
            self.tree.len()
        } else {
            self.list.len()
        }
    }

    fn front(&self) -> Option<Piece> {
        if self.spec.sorted {
            self.tree.first_key_value().map(|(_, p)| *p)
        } else {
            self.list.front().copied()
        }
    }

    fn pop(&mut self) {
        if self.spec.sorted {
            self.tree.pop_first();
        } else {
            self.list.pop_front();
        }
    }

    /// fio's `keep_running` after a pass: another pass, or done.
    fn next_pass(&mut self, t: SimTime) -> bool {
        let again = if self.loops_left > 0 {
            self.loops_left -= 1;
            true
        } else {
            self.spec.limit_bytes > 0
                && self.io_bytes < self.spec.limit_bytes
                && self.spec.limit_bytes - self.io_bytes >= self.spec.max_block
        };
        if !again {
            self.phase = Phase::Done;
            return false;
        }
        self.phase = Phase::Write;
        self.phase_start = t;
        self.pass_writes = 0;
        self.pass_issued = 0;
        self.report.passes += 1;
        true
    }

    /// The end of a write pass: its verify phase (once its writes completed), or the next pass.
    fn end_pass(&mut self, t: SimTime) {
        self.report.write_ns += self
            .pass_acks
            .max(t)
            .ns()
            .saturating_sub(self.phase_start.ns());
        if self.spec.do_verify && self.pieces() > 0 {
            self.phase = Phase::Verify;
            self.phase_start = self.pass_acks.max(t);
            self.pass_reads = 0;
        } else {
            let at = self.pass_acks.max(t);
            self.next_pass(at);
        }
    }

    /// The job's next step for a slot free at `t`. `timed_out`: its runtime is over (fio stops
    /// in either phase); `ios_out`: its `number_ios` is reached (the pass ends, no more passes).
    pub(super) fn next(&mut self, t: SimTime, timed_out: bool, ios_out: bool) -> Next {
        if timed_out {
            self.close(t);
            return Next::Done;
        }
        loop {
            match self.phase {
                Phase::Done => return Next::Done,
                Phase::Write => {
                    if ios_out
                        || (self.spec.pass_bytes > 0 && self.pass_issued >= self.spec.pass_bytes)
                        || (self.spec.issue_cap_bytes > 0
                            && self.cap_issued >= self.spec.issue_cap_bytes)
                    {
                        if ios_out {
                            self.loops_left = 0;
                            self.spec.limit_bytes = 0;
                        }
                        self.end_pass(t);
                        continue;
                    }
                    if self.spec.backlog > 0 && self.pieces() > 0 {
                        let mut take = self.batch > 0;
                        if !take && self.pieces() as u64 % self.spec.backlog == 0 && !self.last_read
                        {
                            self.batch = if self.spec.backlog_batch > 0 {
                                self.spec.backlog_batch
                            } else {
                                self.spec.backlog
                            };
                            take = true;
                        }
                        if take {
                            if let Some(p) = self.front().filter(|p| p.ack <= t) {
                                self.pop();
                                self.batch -= 1;
                                self.last_read = true;
                                return Next::Verify(p);
                            }
                        }
                    }
                    self.last_read = false;
                    return if self.spec.only {
                        Next::Phantom
                    } else {
                        Next::Stream
                    };
                }
                Phase::Verify => {
                    if t < self.phase_start {
                        return Next::Wait(self.phase_start);
                    }
                    if let Some(p) = self.front() {
                        self.pop();
                        return Next::Verify(p);
                    }
                    self.report.verify_ns += self.last_ack.max(t).ns() - self.phase_start.ns();
                    let at = self.last_ack.max(t);
                    if !self.next_pass(at) {
                        return Next::Done;
                    }
                }
            }
        }
    }

    /// Closes the time of the phase running at `t` (the job ends).
    fn close(&mut self, t: SimTime) {
        let end = self.last_ack.max(t).ns();
        match self.phase {
            Phase::Write => self.report.write_ns += end.saturating_sub(self.phase_start.ns()),
            Phase::Verify => self.report.verify_ns += end.saturating_sub(self.phase_start.ns()),
            Phase::Done => {}
        }
        self.phase = Phase::Done;
    }

    /// The job's stream issued a request of `kind` (not a verify read) of `bytes`.
    fn issued(&mut self, bytes: u64, counts: bool) {
        if counts {
            self.pass_issued += bytes;
            self.cap_issued += bytes;
        }
        self.io_bytes += bytes;
    }

    /// A write of the job was submitted (acknowledged at `ack`): its content goes to the store,
    /// and it is logged for the verify phase.
    pub(super) fn wrote(
        &mut self,
        store: Option<&mut Store>,
        sector: u64,
        sectors: u64,
        ack: SimTime,
    ) -> Result<()> {
        let numberio = self.writes as u16;
        let ordinal = self.pass_writes as u16;
        self.writes += 1;
        self.pass_writes += 1;
        self.issued(sectors * SECTOR_BYTES, true);
        self.pass_acks = self.pass_acks.max(ack);
        self.last_ack = self.last_ack.max(ack);
        if let Some(store) = store {
            let hdr = self.chunk_sectors(sectors);
            let spec = &self.spec;
            let pattern = self.pattern.as_ref();
            let header = spec.type_code != VERIFY_PATTERN_NO_HDR;
            let (is_pattern, key) = match pattern {
                Some(p) => (true, (p.key & 0xfff) as u16),
                None => (false, ordinal & 0xfff),
            };
            let token = |rel: u64| {
                let pos = rel % hdr;
                if pos == 0 && header {
                    header_token(spec.type_code, hdr, spec.writer, numberio, is_pattern, key)
                } else if let Some(p) = pattern {
                    pattern_token(p, rel * SECTOR_BYTES)
                } else {
                    data_token(spec.writer, pos as u32, numberio, ordinal)
                }
            };
            if pattern.is_none() && hdr <= 1 << 16 {
                // Random data: one run (a header, then data tokens numbered in the chunk, their
                // packed values a step of `pos` apart), one extent in the store.
                let run = Run {
                    period: hdr,
                    head: if header { token(0) } else { 0 },
                    base: unmix64(data_token(spec.writer, 0, numberio, ordinal)),
                    step: 1 << 34,
                };
                debug_assert!((0..sectors).all(|rel| run.token(rel) == token(rel)));
                store.write_run(sector, sectors, run)?;
            } else {
                store.write_tokens(sector, sectors, |s| token(s - sector))?;
            }
        }
        if self.spec.do_verify {
            self.log(Piece {
                sector,
                sectors,
                numberio,
                ack,
            });
        }
        Ok(())
    }

    /// verify_only: a request of the stream that is logged (a write) but not issued.
    pub(super) fn phantom(&mut self, write: bool, sector: u64, sectors: u64, t: SimTime) {
        self.issued(sectors * SECTOR_BYTES, write || self.spec.pass_counts_reads);
        if write {
            let numberio = self.writes as u16;
            self.writes += 1;
            self.pass_writes += 1;
            self.report.phantom_writes += 1;
            if self.spec.do_verify {
                self.log(Piece {
                    sector,
                    sectors,
                    numberio,
                    ack: t,
                });
            }
        }
    }

    fn log(&mut self, p: Piece) {
        if !self.spec.sorted {
            self.list.push_back(p);
            return;
        }
        // fio's rb-tree: an older piece that overlaps this one is dropped.
        let end = p.sector + p.sectors;
        let overlapping: Vec<u64> = self
            .tree
            .range(..end)
            .rev()
            .take_while(|(_, q)| q.sector + q.sectors > p.sector)
            .map(|(&k, _)| k)
            .collect();
        for k in overlapping {
            self.tree.remove(&k);
        }
        self.tree.insert(p.sector, p);
    }

    /// A read of the job's own stream was submitted: counted (a job that reads and writes).
    pub(super) fn read_issued(&mut self, sectors: u64) {
        self.last_read = true;
        self.issued(sectors * SECTOR_BYTES, self.spec.pass_counts_reads);
    }

    fn chunk_sectors(&self, sectors: u64) -> u64 {
        let interval = self.spec.interval / SECTOR_BYTES;
        if interval > 0 && interval <= sectors {
            interval
        } else {
            sectors
        }
    }

    /// A verify read of `piece` (a logged write, or the job's own read when `listed` is false)
    /// submitted at `t`, completing at `ack`, against the store's content now. Returns whether
    /// the block failed: the job then ends (error 84).
    pub(super) fn check(
        &mut self,
        store: Option<&Store>,
        piece: Piece,
        listed: bool,
        start: SimTime,
        ack: SimTime,
    ) -> bool {
        self.last_ack = self.last_ack.max(ack);
        self.io_bytes += piece.sectors * SECTOR_BYTES;
        if self.spec.pass_counts_reads {
            self.cap_issued += piece.sectors * SECTOR_BYTES; // fio's io_issue_bytes[READ]
        }
        self.report.verified_blocks += 1;
        self.report.verified_bytes += piece.sectors * SECTOR_BYTES;
        let ordinal = self.pass_reads as u16;
        self.pass_reads += 1;
        let Some(store) = store else { return false };
        if self.spec.type_code == VERIFY_NULL || self.spec.type_code == VERIFY_NONE {
            return false;
        }
        let mut lines = Vec::new();
        let sums = store.sums(piece.sector, piece.sectors);
        let failed = self.check_block(&sums, piece, listed, ordinal, &mut lines);
        if !lines.is_empty() {
            self.report.messages.extend(lines);
        }
        if !failed {
            return false;
        }
        if self.report.failed_block.is_none() {
            self.report.failed_block =
                Some([piece.sector * SECTOR_BYTES, piece.sectors * SECTOR_BYTES]);
            self.report.failed_at_ns = Some(ack.ns() - start.ns());
        }
        if self.spec.ignore_errors {
            // Counted and let go; verify_fatal still ends the job (verify.c 1001-1002).
            self.report.ignored_errors += 1;
            if !self.spec.fatal {
                return false;
            }
        } else {
            self.report.error = EILSEQ;
        }
        self.close(ack);
        true
    }

    fn check_block(
        &self,
        store: &SectorSums<'_>,
        piece: Piece,
        listed: bool,
        ordinal: u16,
        lines: &mut Vec<String>,
    ) -> bool {
        let spec = &self.spec;
        let file = &spec.file;
        let hdr = self.chunk_sectors(piece.sectors);
        let hdr_len = hdr * SECTOR_BYTES;
        let (offset, buflen) = (piece.sector * SECTOR_BYTES, piece.sectors * SECTOR_BYTES);
        let flags = if listed { FLAGS_LISTED } else { FLAGS_READ };
        let header_mode = spec.type_code != VERIFY_PATTERN_NO_HDR;
        let mut ret = false;
        for c in 0..piece.sectors / hdr {
            if ret && spec.fatal {
                break;
            }
            let s0 = piece.sector + c * hdr;
            let at_offset = offset + c * hdr_len;
            let first = store.sum(s0);
            let found = decode(first);
            let mut media_type = u16::from(virtual_byte(found, first, None, s0, 2))
                | u16::from(virtual_byte(found, first, None, s0, 3)) << 8;
            if header_mode {
                let where_ = format!(
                    " at file {file} offset {at_offset}, length {hdr_len} (requested block: offset={offset}, length={buflen})"
                );
                let Token::Header {
                    type_code,
                    len_sectors,
                    writer,
                    numberio,
                    pattern,
                    key,
                } = found
                else {
                    let magic = u16::from(virtual_byte(found, first, None, s0, 0))
                        | u16::from(virtual_byte(found, first, None, s0, 1)) << 8;
                    lines.push(format!(
                        "verify: bad magic header {magic:x}, wanted {FIO_HDR_MAGIC:x}{where_}"
                    ));
                    return true;
                };
                media_type = u16::from(type_code);
                if len_sectors != hdr {
                    lines.push(format!(
                        "verify: bad header length {}, wanted {hdr_len}{where_}",
                        len_sectors * SECTOR_BYTES
                    ));
                    return true;
                }
                if spec.check_seed {
                    let got = seed_of(writer, if pattern { 0 } else { key });
                    let want = seed_of(spec.writer, ordinal & 0xfff);
                    if got != want {
                        lines.push(format!(
                            "verify: bad header rand_seed {got}, wanted {want}{where_}"
                        ));
                        return true;
                    }
                }
                if spec.check_numberio && numberio != piece.numberio {
                    lines.push(format!(
                        "verify: bad header numberio {numberio}, wanted {}{where_}",
                        piece.numberio
                    ));
                    return true;
                }
                // The data area: against the header's checksum, or the pattern.
                let checksum = !matches!(
                    spec.type_code,
                    VERIFY_HDR_ONLY | VERIFY_PATTERN | VERIFY_NULL
                );
                if checksum {
                    let expect = |i: u64| -> Option<u64> {
                        if pattern {
                            None
                        } else {
                            Some(data_token(writer, i as u32, numberio, key))
                        }
                    };
                    let ok = if type_code == spec.type_code {
                        self.data_consistent(store, s0, hdr, pattern, key, expect)
                    } else {
                        false // the header's checksum is another algorithm's
                    };
                    if !ok {
                        let (good, bad) = self.area_sums(store, s0, hdr, expect);
                        lines.push(format!(
                            "{:.8}: verify failed at file {file} offset {at_offset}, length {hdr_len} (requested block: offset={offset}, length={buflen}, flags={flags:x})",
                            type_name(spec.type_code)
                        ));
                        lines.push(format!("       Expected CRC: {good:016x}"));
                        lines.push(format!("       Received CRC: {bad:016x}"));
                        if u16::from(spec.type_code) != media_type {
                            lines.push(format!(
                                "fio: verify type mismatch ({media_type} media, {} given)",
                                spec.type_code
                            ));
                        }
                        ret = true;
                        continue;
                    }
                    ret = false;
                    continue;
                }
            }
            // A pattern check (verify=pattern, meta with a pattern, verify_pattern alone).
            let Some(p) = self.pattern.as_ref() else {
                ret = false;
                continue;
            };
            let skip = if header_mode {
                u64::from(spec.header_bytes)
            } else {
                0
            };
            match self.pattern_mismatch(store, s0, hdr, c * hdr_len, skip, p) {
                None => ret = false,
                Some((got, want, i)) => {
                    lines.push(format!(
                        "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {}",
                        (got ^ want).count_ones()
                    ));
                    lines.push(format!("fio: bad pattern block offset {i}"));
                    // fio reads the length (and so the offset) from where the header would be.
                    let len = if header_mode {
                        hdr_len
                    } else {
                        u64::from(u32::from_le_bytes(std::array::from_fn(|k| {
                            virtual_byte(found, first, Some(p), s0, 4 + k)
                        })))
                    };
                    let at = offset + c * len;
                    lines.push(format!(
                        "pattern: verify failed at file {file} offset {at}, length {len} (requested block: offset={offset}, length={buflen}, flags={flags:x})"
                    ));
                    if u16::from(spec.type_code) != media_type {
                        lines.push(format!(
                            "fio: verify type mismatch ({media_type} media, {} given)",
                            spec.type_code
                        ));
                    }
                    ret = true;
                }
            }
        }
        ret
    }

    /// The data sectors of the chunk at `s0` are those of the write that wrote its header.
    fn data_consistent(
        &self,
        store: &SectorSums<'_>,
        s0: u64,
        hdr: u64,
        pattern: bool,
        key: u16,
        expect: impl Fn(u64) -> Option<u64>,
    ) -> bool {
        if !pattern {
            return (1..hdr).all(|i| Some(store.sum(s0 + i)) == expect(i));
        }
        // Pattern data: the same pattern in every sector, in phase (its key's low bits in the
        // header stand for the checksum over it).
        let mut first: Option<(u32, u32, u32)> = None;
        for i in 1..hdr {
            let t = store.sum(s0 + i);
            match decode(t) {
                Token::Zero if self.pattern.as_ref().is_some_and(|p| p.zero) => {}
                Token::Pattern {
                    plen,
                    phase,
                    key: k,
                } => {
                    if (k & 0xfff) as u16 != key {
                        return false;
                    }
                    match first {
                        None => first = Some((plen, phase, k)),
                        Some((fl, fp, fk)) => {
                            let want = (u64::from(fp) + (i - 1) * SECTOR_BYTES) % u64::from(fl);
                            if plen != fl || k != fk || u64::from(phase) != want {
                                return false;
                            }
                        }
                    }
                }
                _ => return false,
            }
        }
        true
    }

    /// The "checksums" printed for a failed data area: the store's sums over its sectors, as
    /// written by the header's write (expected) and as found.
    #[allow(clippy::unused_self)] // a method of the check, beside its siblings
    fn area_sums(
        &self,
        store: &SectorSums<'_>,
        s0: u64,
        hdr: u64,
        expect: impl Fn(u64) -> Option<u64>,
    ) -> (u64, u64) {
        let mut good = 0x9E37_79B9u64;
        let mut bad = 0x9E37_79B9u64;
        for i in 1..hdr.max(2) {
            let found = if i < hdr { store.sum(s0 + i) } else { 0 };
            let want = if i < hdr {
                expect(i).unwrap_or(found)
            } else {
                0
            };
            good = mix64(good ^ want.wrapping_add(i));
            bad = mix64(bad ^ found.wrapping_add(i));
        }
        if good == bad {
            // A header of another type: its checksum field holds another algorithm's digest.
            good = mix64(good ^ 0x5A5A);
        }
        (good, bad)
    }

    /// The first byte of the chunk at `s0` (from byte `skip` on) that is not the pattern:
    /// (found, wanted, offset in the checked area). `base`: the chunk's offset in the block.
    #[allow(clippy::unused_self)] // a method of the check, beside its siblings
    fn pattern_mismatch(
        &self,
        store: &SectorSums<'_>,
        s0: u64,
        hdr: u64,
        base: u64,
        skip: u64,
        p: &Pattern,
    ) -> Option<(u8, u8, u64)> {
        let plen = p.bytes.len() as u64;
        for i in 0..hdr {
            let raw = store.sum(s0 + i);
            let at = base + i * SECTOR_BYTES;
            if (i > 0 || skip == 0) && raw == pattern_token(p, at) {
                continue;
            }
            let tok = decode(raw);
            if i == 0 && skip > 0 {
                // The header's sector: the data after the header is the pattern its writer
                // wrote (the header keeps the pattern's key).
                if let Token::Header {
                    pattern: true, key, ..
                } = tok
                {
                    if key == (p.key & 0xfff) as u16 {
                        continue;
                    }
                }
            }
            let from = if i == 0 { skip } else { 0 };
            for b in from..SECTOR_BYTES {
                let want = p.bytes[((at + b) % plen) as usize];
                let got = virtual_byte(tok, raw, Some(p), s0 + i, b as usize);
                if got != want {
                    return Some((got, want, i * SECTOR_BYTES + b - skip));
                }
            }
        }
        None
    }

    /// The report, with the time of the phase still open at `end`.
    pub(super) fn finish(mut self, end: SimTime) -> VerifyReport {
        if self.phase != Phase::Done {
            self.close(end);
        }
        self.report
    }

    /// A piece for a read of the job's own stream (a job that only reads checks every read).
    pub(super) fn own_read(sector: u64, sectors: u64) -> Piece {
        Piece {
            sector,
            sectors,
            numberio: 0,
            ack: SimTime::ZERO,
        }
    }
}

impl VerifyState {
    /// Whether a block failed (the job ended with EILSEQ).
    pub(super) fn failed(&self) -> bool {
        self.report.error != 0
    }

    /// The job's outcome with its verify: the error of a failed block, or the failures let go.
    pub(super) fn add_to(&self, o: &mut super::Outcome) {
        if o.error.is_none() && self.failed() {
            o.error = Some(verify_error(Some(self)));
        }
        if self.report.ignored_errors > 0 {
            o.ignored_errors += self.report.ignored_errors;
            o.first_ignored_error.get_or_insert(EILSEQ);
        }
    }
}

/// What a request the engine just submitted means to a verifying job `v`: a write's content goes
/// to the store and into the verify list; a verify read (`listed`, or any read of a job that only
/// reads) is checked. Returns whether the block failed.
#[allow(clippy::too_many_arguments)]
pub(super) fn verify_request(
    v: &mut VerifyState,
    drive: &mut Drive,
    kind: IoKind,
    listed: Option<Piece>,
    sector: u64,
    sectors: u64,
    start: SimTime,
    ack: SimTime,
) -> Result<bool> {
    Ok(match (kind, listed) {
        (_, Some(p)) => v.check(drive.store(), p, true, start, ack),
        (IoKind::Write, None) => {
            v.wrote(drive.store_mut(), sector, sectors, ack)?;
            false
        }
        (IoKind::Read, None) if v.checks_reads() => v.check(
            drive.store(),
            VerifyState::own_read(sector, sectors),
            false,
            start,
            ack,
        ),
        (IoKind::Read, None) => {
            v.read_issued(sectors);
            false
        }
        (IoKind::Trim, None) => false,
    })
}

/// The job error of a failed verify, as fio 3.33 reports it (io_u.c 2152: the completion's
/// EILSEQ); `message` holds verify.c's lines.
pub(super) fn verify_error(v: Option<&VerifyState>) -> JobError {
    JobError {
        errno: EILSEQ,
        func: "io_u_sync_complete".into(),
        at: "file:io_u.c:2152".into(),
        message: v.map(|v| v.report.messages.join("\n")).unwrap_or_default(),
    }
}

/// fio's name of a verify type (as its messages print it).
fn type_name(code: u8) -> &'static str {
    const NAMES: [&str; 20] = [
        "none", "meta", "md5", "crc64", "crc32", "crc32c", "crc32c", "crc16", "crc7", "sha256",
        "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "sha1", "pattern",
        "pattern", "null",
    ];
    NAMES.get(code as usize).copied().unwrap_or("verify")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DriveConfig;
    use crate::store::StoreMode;
    use crate::workload::{run_together, Pattern as Order, PhaseResult, Rw, Workload};

    const K: u64 = 1024;

    /// The default drive at 1 GiB with a checksum store.
    fn drive() -> Drive {
        let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
        let mut d = Drive::new(&cfg, 1).unwrap();
        d.enable_store(StoreMode::Checksums).unwrap();
        d
    }

    /// fio's `verify=crc32c` on a job writing `span` bytes from `offset` in `bs` blocks.
    fn spec(writer: u32, span: u64, bs: u64) -> VerifySpec {
        VerifySpec {
            type_code: 5,
            header_bytes: 44,
            pattern: Vec::new(),
            interval: 0,
            writes: true,
            do_verify: true,
            only: false,
            backlog: 0,
            backlog_batch: 0,
            fatal: false,
            check_numberio: true,
            check_seed: false,
            sorted: true,
            pass_counts_reads: false,
            pass_bytes: span,
            loops: 1,
            limit_bytes: span,
            issue_cap_bytes: 0,
            max_block: bs,
            check_reads: false,
            writer,
            file: format!("job{writer}.0.0"),
            ignore_errors: false,
        }
    }

    fn job(v: VerifySpec, offset: u64, span: u64, bs: u64) -> Workload {
        Workload {
            label: format!("job{}", v.writer),
            rw: Rw::Write,
            pattern: Order::Sequential,
            block_bytes: bs,
            queue_depth: 4,
            offset_bytes: offset,
            span_bytes: span,
            verify: Some(v),
            ..Workload::default()
        }
    }

    fn run(d: &mut Drive, jobs: &[Workload]) -> Vec<PhaseResult> {
        let refs: Vec<&Workload> = jobs.iter().collect();
        let seeds: Vec<u64> = (1..=jobs.len() as u64).collect();
        run_together(&refs, d, &seeds, &[], &mut |_| true)
            .unwrap()
            .jobs
    }

    fn report(p: &PhaseResult) -> &VerifyReport {
        p.verify.as_ref().expect("a verifying job reports")
    }

    /// A write job with verify=crc32c writes 1 MiB, reads back all 256 blocks (the reads cost
    /// simulated time and are counted as reads), and finds no error.
    #[test]
    fn clean_run_verifies_everything() {
        let mut d = drive();
        let r = &run(&mut d, &[job(spec(1, 1 << 20, 4096), 0, 1 << 20, 4096)])[0];
        let v = report(r);
        assert_eq!(
            (v.error, v.verified_blocks, v.verified_bytes),
            (0, 256, 1 << 20)
        );
        assert!(v.messages.is_empty(), "{:?}", v.messages);
        assert_eq!((r.ios, r.bytes), ([256, 256, 0], [1 << 20, 1 << 20, 0]));
        assert!(v.write_ns > 0 && v.verify_ns > 0, "{v:?}");
        assert_eq!(v.write_ns + v.verify_ns, r.end_ns - r.start_ns);
        assert!(r.outcome.error.is_none());
        d.check_store().unwrap();
        // Deterministic: the same run gives the same figures.
        let mut again = drive();
        let r2 = &run(&mut again, &[job(spec(1, 1 << 20, 4096), 0, 1 << 20, 4096)])[0];
        assert_eq!(r2.verify, r.verify);
        assert_eq!(r2.end_ns, r.end_ns);
    }

    /// Two jobs writing overlapping regions at the same time, at the same pace: job 1 writes
    /// 0..1 MiB, job 2 512 KiB..1.5 MiB, so job 1's second half lands on blocks job 2 wrote half
    /// a pass earlier. Job 1 finds its own blocks and verifies clean; job 2's first block holds
    /// job 1's 129th write. fio reports it this way (on a file, fio 3.33 printed the same line
    /// for whichever job the race left behind).
    #[test]
    fn overlapping_jobs_fail_as_fio_reports() {
        let mut d = drive();
        let a = job(spec(1, 1 << 20, 4096), 0, 1 << 20, 4096);
        let b = job(spec(2, 1 << 20, 4096), 512 * K, 1 << 20, 4096);
        let r = run(&mut d, &[a, b]);
        let (va, vb) = (report(&r[0]), report(&r[1]));
        assert_eq!(
            (va.error, va.verified_blocks),
            (0, 256),
            "{:?}",
            va.messages
        );
        assert!(r[0].outcome.error.is_none());
        assert_eq!(
            vb.messages,
            vec!["verify: bad header numberio 128, wanted 0 at file job2.0.0 offset 524288, length 4096 \
                  (requested block: offset=524288, length=4096)"
                .replace("                  ", "")]
        );
        assert_eq!((vb.error, vb.verified_blocks, r[1].ios[0]), (EILSEQ, 1, 1));
        let e = r[1].outcome.error.as_ref().expect("the job ends in error");
        assert_eq!(
            (e.errno, e.func.as_str(), e.at.as_str()),
            (84, "io_u_sync_complete", "file:io_u.c:2152")
        );
        assert_eq!(e.message, vb.messages.join("\n"));
        // Without the overlap both verify clean.
        let mut d = drive();
        let a = job(spec(1, 512 * K, 4096), 0, 512 * K, 4096);
        let b = job(spec(2, 512 * K, 4096), 512 * K, 512 * K, 4096);
        for p in run(&mut d, &[a, b]) {
            assert_eq!((report(&p).error, report(&p).verified_blocks), (0, 128));
        }
    }

    /// continue_on_error=verify: the failures are counted and the job reads on; with
    /// verify_fatal it stops at the first, without an error.
    #[test]
    fn ignored_failures_are_counted() {
        for fatal in [false, true] {
            let mut d = drive();
            let a = job(spec(1, 1 << 20, 4096), 0, 1 << 20, 4096);
            let mut bv = spec(2, 1 << 20, 4096);
            (bv.ignore_errors, bv.fatal) = (true, fatal);
            let r = run(&mut d, &[a, job(bv, 512 * K, 1 << 20, 4096)]);
            let v = report(&r[1]);
            let failures = if fatal { 1 } else { 128 };
            assert_eq!((v.error, v.ignored_errors), (0, failures));
            assert_eq!(v.verified_blocks, if fatal { 1 } else { 256 });
            assert_eq!(v.messages.len() as u64, failures);
            assert!(r[1].outcome.error.is_none());
            assert_eq!(r[1].outcome.ignored_errors, failures);
            assert_eq!(r[1].outcome.first_ignored_error, Some(EILSEQ));
        }
    }

    /// Written, then trimmed in part, then read back by a job that reads with verify: the first
    /// trimmed block reads zeros, fio's "bad magic header 0".
    #[test]
    fn trim_then_verify_reads_zeros() {
        let mut d = drive();
        let mut w = spec(1, 64 * K, 4096);
        w.do_verify = false;
        let r = run(&mut d, &[job(w, 0, 64 * K, 4096)]);
        assert_eq!(report(&r[0]).verified_blocks, 0);
        d.trim_range(4, 2).unwrap(); // 16 KiB .. 24 KiB
        d.check_store().unwrap();
        let mut reader = spec(2, 64 * K, 4096);
        reader.writes = false;
        reader.check_reads = true;
        reader.check_numberio = false;
        let mut read = job(reader, 0, 64 * K, 4096);
        read.rw = Rw::Read;
        let r = &run(&mut d, &[read])[0];
        let v = report(r);
        assert_eq!(
            v.messages,
            vec!["verify: bad magic header 0, wanted acca at file job2.0.0 offset 16384, length 4096 \
                  (requested block: offset=16384, length=4096)"
                .replace("                  ", "")]
        );
        // fio 3.33 read 5 blocks (20 KiB) on a loop device with this job file, the fifth failing.
        assert_eq!((r.ios[0], r.bytes[0], v.error), (5, 20 * K, EILSEQ));
    }

    /// verify_only on a region never written: nothing is issued but the reads; the first block
    /// is zeros. fio 3.33 printed this line and reported 16 phantom writes of no time.
    #[test]
    fn verify_only_on_a_fresh_region() {
        let mut d = drive();
        let mut v = spec(1, 64 * K, 4096);
        v.only = true;
        v.check_numberio = false;
        let r = &run(&mut d, &[job(v, 0, 64 * K, 4096)])[0];
        let v = report(r);
        assert_eq!(v.phantom_writes, 16);
        assert_eq!((r.ios, r.bytes), ([1, 16, 0], [4096, 64 * K, 0]));
        assert_eq!(
            d.counters().host_write_bytes,
            0,
            "verify_only writes nothing"
        );
        assert_eq!(v.write_ns, 0);
        assert_eq!(
            v.messages,
            vec![
                "verify: bad magic header 0, wanted acca at file job1.0.0 offset 0, length 4096 \
                  (requested block: offset=0, length=4096)"
                    .replace("                  ", "")
            ]
        );
    }

    /// verify=pattern 0xaa written, verify_only with 0xab: fio 3.33's four lines, byte for byte
    /// (the length is the pattern's bytes read as a header's, as fio reads them).
    #[test]
    fn pattern_mismatch_prints_what_fio_prints() {
        let mut d = drive();
        let mut w = spec(1, 64 * K, 4096);
        (w.type_code, w.header_bytes, w.pattern, w.do_verify) = (18, 0, vec![0xaa], false);
        w.check_numberio = false;
        run(&mut d, &[job(w.clone(), 0, 64 * K, 4096)]);
        let mut v = w.clone();
        (v.writer, v.pattern, v.only, v.do_verify, v.file) =
            (2, vec![0xab], true, true, w.file.clone());
        let r = &run(&mut d, &[job(v, 0, 64 * K, 4096)])[0];
        assert_eq!(
            report(r).messages,
            vec![
                "fio: got pattern 'aa', wanted 'ab'. Bad bits 1".to_string(),
                "fio: bad pattern block offset 0".to_string(),
                "pattern: verify failed at file job1.0.0 offset 0, length 2863311530 (requested block: offset=0, \
                 length=4096, flags=88)"
                    .replace("                 ", ""),
                "fio: verify type mismatch (43690 media, 18 given)".to_string(),
            ]
        );
        // The same pattern verifies clean, whatever job wrote it.
        let mut same = w.clone();
        (same.writer, same.only, same.do_verify) = (3, true, true);
        let r = &run(&mut d, &[job(same, 0, 64 * K, 4096)])[0];
        assert_eq!((report(r).error, report(r).verified_blocks), (0, 16));
    }

    /// Reading crc32c content with md5: the checksum fails and the types differ (fio 3.33:
    /// "md5: verify failed ..." then "fio: verify type mismatch (5 media, 2 given)").
    #[test]
    fn another_checksum_type_fails_the_data_check() {
        let mut d = drive();
        let mut w = spec(1, 64 * K, 4096);
        w.do_verify = false;
        run(&mut d, &[job(w.clone(), 0, 64 * K, 4096)]);
        let mut v = w;
        (v.writer, v.type_code, v.header_bytes, v.only, v.do_verify) = (2, 2, 56, true, true);
        v.check_numberio = false;
        let r = run(&mut d, &[job(v, 0, 64 * K, 4096)]);
        let m = &report(&r[0]).messages;
        assert_eq!(m.len(), 4, "{m:?}");
        assert_eq!(
            m[0],
            "md5: verify failed at file job1.0.0 offset 0, length 4096 (requested block: offset=0, length=4096, flags=88)"
        );
        assert!(
            m[1].starts_with("       Expected CRC: ") && m[2].starts_with("       Received CRC: ")
        );
        assert_eq!(m[3], "fio: verify type mismatch (5 media, 2 given)");
    }

    /// verify_interval: 8 KiB blocks with a header every 4 KiB. A 512-byte overwrite in the
    /// second half fails the block; in the first half it is logged but, without verify_fatal,
    /// the block passes when its last chunk does (fio's overwritten `ret`), and with
    /// verify_fatal it fails.
    #[test]
    fn verify_interval_checks_each_chunk() {
        for (hit, fatal, fails) in [
            (4096 + 512, false, true),
            (512, false, false),
            (512, true, true),
        ] {
            let mut d = drive();
            let mut w = spec(1, 64 * K, 8192);
            (w.interval, w.do_verify, w.fatal) = (4096, false, fatal);
            run(&mut d, &[job(w.clone(), 0, 64 * K, 8192)]);
            d.submit_bytes(IoKind::Write, 8192 + hit, 512, 1.0, d.now())
                .unwrap();
            let mut v = w;
            (v.only, v.do_verify, v.check_numberio) = (true, true, false);
            let r = &run(&mut d, &[job(v, 0, 64 * K, 8192)])[0];
            let rep = report(r);
            let chunk = 8192 + hit / 4096 * 4096;
            assert_eq!(
                rep.messages[0],
                format!(
                    "crc32c: verify failed at file job1.0.0 offset {chunk}, length 4096 (requested block: offset=8192, \
                     length=8192, flags=88)"
                )
                .replace("                     ", "")
            );
            assert_eq!(rep.error != 0, fails, "hit {hit} fatal {fatal}: {rep:?}");
            assert_eq!(rep.verified_blocks, if fails { 2 } else { 8 });
        }
    }

    /// verify_backlog=4: the job reads back 4 blocks whenever 4 are waiting, during its writes,
    /// so the first verify read comes long before the last write; everything is verified once.
    #[test]
    fn backlog_verifies_while_writing() {
        let mut d = drive();
        let mut v = spec(1, 1 << 20, 4096);
        v.backlog = 4;
        let with = &run(&mut d, &[job(v, 0, 1 << 20, 4096)])[0];
        let mut d2 = drive();
        let without = &run(&mut d2, &[job(spec(1, 1 << 20, 4096), 0, 1 << 20, 4096)])[0];
        for r in [with, without] {
            assert_eq!((report(r).error, report(r).verified_blocks), (0, 256));
        }
        // Interleaved: most reads happen in the write passes, which take longer, and the verify
        // phase at the end has little left.
        let (w, wo) = (report(with), report(without));
        assert!(w.write_ns > wo.write_ns, "{w:?} {wo:?}");
        assert!(w.verify_ns * 4 < wo.verify_ns, "{w:?} {wo:?}");
    }

    #[test]
    fn tokens_round_trip() {
        let h = header_token(5, 8, 7, 65535, false, 0xabc);
        assert_eq!(
            decode(h),
            Token::Header {
                type_code: 5,
                len_sectors: 8,
                writer: 7,
                numberio: 65535,
                pattern: false,
                key: 0xabc
            }
        );
        assert_eq!(
            decode(data_token(4095, 65535, 3, 0xfff)),
            Token::Data {
                writer: 4095,
                pos: 65535,
                numberio: 3,
                seed: 0xfff
            }
        );
        let p = Pattern::new(&[0xaa, 0xaa]).unwrap();
        assert_eq!(p.bytes, vec![0xaa], "a pattern is its shortest period");
        assert!(matches!(
            decode(pattern_token(&p, 3)),
            Token::Pattern {
                plen: 1,
                phase: 0,
                key: 0xaa
            }
        ));
        assert_eq!(pattern_token(&Pattern::new(&[0, 0]).unwrap(), 0), 0);
        assert_eq!(decode(0), Token::Zero);
        // Anonymous content never decodes as fio's layout.
        for s in 0..1000 {
            assert!(matches!(
                decode(crate::store::anonymous_token(s + 1, s * 7)),
                Token::Other(_)
            ));
        }
    }
}
