//! The mapping cache of a DRAM-less drive, after DFTL (Gupta, Kim, Urgaonkar, "DFTL: a flash
//! translation layer employing demand-based selective caching of page-level address mappings",
//! ASPLOS 2009).
//!
//! The L2P table lives on NAND in translation pages: one flash page each, holding
//! `page_bytes / 4` entries of 4 bytes (a 16 KiB page maps 4096 units, 16 MiB of LBAs). The
//! controller caches whole translation pages, least recently used first out, in two tiers:
//!
//! - its SRAM (`sram_kib`): a lookup costs nothing;
//! - the Host Memory Buffer (`hmb_mib`, NVMe 1.2): a lookup costs a DMA round trip over the link
//!   (`hmb_latency_us`); the page moves up to SRAM, SRAM's least recent page moves down to the
//!   HMB (a posted DMA write, not waited for).
//!
//! A lookup that misses both reads the translation page from NAND: a page read on the die that
//! holds it (translation page `t` lives on die `t mod dies`), before the data read it serves.
//! A page never written back has no NAND copy (DFTL's global translation directory knows it), so
//! its first use reads nothing. Evicting a dirty page (mapping entries changed since it was last
//! written) programs it back: DFTL's batched write-back, every dirty entry of the page in one
//! program. Updates to pages that are not cached (GC relocations and TRIMs, which need no lookup)
//! are gathered like DFTL's batch update during GC: once a block's worth of such updates is
//! pending, each translation page they touch is read (if it has a NAND copy) and programmed once.
//!
//! Translation pages are programmed out of place into their own blocks, outside the data blocks'
//! accounting: every `pages_per_block` programs on a die cost one block erase there. The
//! translation area's own GC copies are not modelled (a translation block is taken as fully
//! rewritten by the time it is erased); its size (4 bytes per 4 KiB, 0.1 % of the NAND) is not
//! taken from the spare area.
//!
//! Caching whole translation pages rather than single entries (DFTL's CMT) gives the same
//! coverage under random access, `cache bytes / 4 × 4 KiB`, and the same hit ratio (LRU under
//! uniform references: cached share of the span), at a cost per lookup the simulator can afford.

const NONE: u32 = u32::MAX;

/// What a lookup found, for the FTL to book on the timelines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Lookup {
    /// Served from the HMB: the lookup takes a link round trip.
    pub hmb: bool,
    /// Missed both tiers and the page has a NAND copy: read it first.
    pub read: bool,
    /// A dirty page evicted to make room: program it back.
    pub write_back: Option<u32>,
}

/// One LRU list over the translation pages of a tier (intrusive, doubly linked by index).
#[derive(Clone, Debug)]
struct Lru {
    head: u32,
    tail: u32,
    len: u32,
    cap: u32,
}

#[derive(Clone, Debug)]
pub(super) struct MapCache {
    /// log2 of the entries per translation page.
    shift: u32,
    /// Tier of each translation page: 0 not cached, 1 SRAM, 2 HMB.
    tier: Vec<u8>,
    dirty: Vec<bool>,
    /// The page has a copy on NAND (it was written back at least once since the last erase).
    on_nand: Vec<bool>,
    prev: Vec<u32>,
    next: Vec<u32>,
    lists: [Lru; 2],
    /// Pages with updates waiting for a batch (not cached when updated), and the updates.
    pending: Vec<u32>,
    pending_mark: Vec<bool>,
    pending_updates: u32,
    batch: u32,
    pub hmb_ns: u64,
    /// Translation-page programs per die since its last translation-block erase.
    programs_on_die: Vec<u32>,
    pages_per_block: u32,
    pub dies: u32,
}

impl MapCache {
    /// A cache for `user_units` units of 4 KiB with translation pages of `page_bytes`.
    pub fn new(
        cfg: &crate::config::MapCache,
        user_units: u64,
        page_bytes: u32,
        dies: u32,
        pages_per_block: u32,
        batch: u32,
    ) -> MapCache {
        let per_page = (page_bytes / 4).max(1);
        let shift = per_page.ilog2();
        let pages = user_units.div_ceil(1 << shift) as usize;
        let tpage_bytes = u64::from(4u32 << shift);
        let sram = (u64::from(cfg.sram_kib) * 1024 / tpage_bytes).max(1);
        let hmb = u64::from(cfg.hmb_mib) * (1 << 20) / tpage_bytes;
        let lru = |cap: u64| Lru {
            head: NONE,
            tail: NONE,
            len: 0,
            cap: cap.min(u64::from(u32::MAX - 1)) as u32,
        };
        MapCache {
            shift,
            tier: vec![0; pages],
            dirty: vec![false; pages],
            on_nand: vec![false; pages],
            prev: vec![NONE; pages],
            next: vec![NONE; pages],
            lists: [lru(sram), lru(hmb)],
            pending: Vec::new(),
            pending_mark: vec![false; pages],
            pending_updates: 0,
            batch: batch.max(1),
            hmb_ns: (cfg.hmb_latency_us * 1000.0).round() as u64,
            programs_on_die: vec![0; dies as usize],
            pages_per_block: pages_per_block.max(1),
            dies,
        }
    }

    /// The translation page holding `lpn`'s entry.
    #[inline]
    pub fn page_of(&self, lpn: u64) -> u32 {
        (lpn >> self.shift) as u32
    }

    /// Entries per translation page.
    pub fn entries_per_page(&self) -> u64 {
        1 << self.shift
    }

    /// Translation pages the SRAM and the HMB hold.
    pub fn capacity(&self) -> (u32, u32) {
        (self.lists[0].cap, self.lists[1].cap)
    }

    /// The die translation page `t` lives on.
    #[inline]
    pub fn die_of(&self, t: u32) -> u32 {
        t % self.dies
    }

    /// Forgets everything (secure erase: every translation page is gone with the data).
    pub fn clear(&mut self) {
        self.tier.fill(0);
        self.dirty.fill(false);
        self.on_nand.fill(false);
        self.prev.fill(NONE);
        self.next.fill(NONE);
        for l in &mut self.lists {
            (l.head, l.tail, l.len) = (NONE, NONE, 0);
        }
        self.pending.clear();
        self.pending_mark.fill(false);
        self.pending_updates = 0;
        self.programs_on_die.fill(0);
    }

    fn unlink(&mut self, t: u32) {
        let k = self.tier[t as usize] as usize - 1;
        let (p, n) = (self.prev[t as usize], self.next[t as usize]);
        if p == NONE {
            self.lists[k].head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.lists[k].tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.lists[k].len -= 1;
        self.tier[t as usize] = 0;
    }

    fn push_front(&mut self, k: usize, t: u32) {
        let h = self.lists[k].head;
        self.prev[t as usize] = NONE;
        self.next[t as usize] = h;
        if h == NONE {
            self.lists[k].tail = t;
        } else {
            self.prev[h as usize] = t;
        }
        self.lists[k].head = t;
        self.lists[k].len += 1;
        self.tier[t as usize] = k as u8 + 1;
    }

    /// Puts `t` at the front of SRAM, moving SRAM's least recent page to the HMB (or out); returns
    /// a dirty page that left the cache.
    fn insert_sram(&mut self, t: u32) -> Option<u32> {
        let mut out = None;
        if self.lists[0].len >= self.lists[0].cap {
            let v = self.lists[0].tail;
            self.unlink(v);
            if self.lists[1].cap > 0 {
                if self.lists[1].len >= self.lists[1].cap {
                    let w = self.lists[1].tail;
                    self.unlink(w);
                    out = self.evicted(w);
                }
                self.push_front(1, v);
            } else {
                out = self.evicted(v);
            }
        }
        self.push_front(0, t);
        out
    }

    fn evicted(&mut self, t: u32) -> Option<u32> {
        std::mem::take(&mut self.dirty[t as usize]).then_some(t)
    }

    /// Looks up translation page `t` (a host read or write needs its entry); `write` marks it
    /// dirty.
    #[inline]
    pub fn lookup(&mut self, t: u32, write: bool) -> Lookup {
        let mut r = Lookup::default();
        match self.tier[t as usize] {
            1 => {
                if self.lists[0].head != t {
                    self.unlink(t);
                    self.push_front(0, t);
                }
            }
            2 => {
                r.hmb = true;
                self.unlink(t);
                r.write_back = self.insert_sram(t);
            }
            _ => {
                r.read = self.on_nand[t as usize];
                r.write_back = self.insert_sram(t);
            }
        }
        if write {
            self.dirty[t as usize] = true;
        }
        r
    }

    /// An entry of page `t` changed without a lookup (a GC relocation, a TRIM): marks it dirty
    /// if cached, else keeps it for the next batch. Returns true when a batch is due.
    #[inline]
    pub fn update(&mut self, t: u32) -> bool {
        if self.tier[t as usize] != 0 {
            self.dirty[t as usize] = true;
            return false;
        }
        if !std::mem::replace(&mut self.pending_mark[t as usize], true) {
            self.pending.push(t);
        }
        self.pending_updates += 1;
        self.pending_updates >= self.batch
    }

    /// A batch of updates is due.
    #[inline]
    pub fn due(&self) -> bool {
        self.pending_updates >= self.batch
    }

    /// Takes the pending batch: the pages to read-modify-write, each with whether it has a NAND
    /// copy to read (pages cached since are marked dirty instead).
    pub fn take_batch(&mut self, out: &mut Vec<(u32, bool)>) {
        out.clear();
        self.pending_updates = 0;
        let pending = std::mem::take(&mut self.pending);
        for &t in &pending {
            self.pending_mark[t as usize] = false;
            if self.tier[t as usize] != 0 {
                self.dirty[t as usize] = true;
            } else {
                out.push((t, self.on_nand[t as usize]));
            }
        }
        self.pending = pending;
        self.pending.clear();
    }

    /// Page `t` was programmed to NAND; returns true when its die's translation block is full
    /// (an erase is due there).
    pub fn written(&mut self, t: u32) -> bool {
        self.on_nand[t as usize] = true;
        let d = self.die_of(t) as usize;
        self.programs_on_die[d] += 1;
        if self.programs_on_die[d] >= self.pages_per_block {
            self.programs_on_die[d] = 0;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(sram_kib: u32, hmb_mib: u32) -> MapCache {
        let cfg = crate::config::MapCache {
            sram_kib,
            hmb_mib,
            hmb_latency_us: 1.0,
        };
        // 16 KiB translation pages: 4096 entries, 16 MiB of LBAs each.
        MapCache::new(&cfg, 1 << 20, 16384, 4, 8, 4)
    }

    #[test]
    fn lru_in_sram_then_hmb_then_out() {
        let mut c = cache(32, 0); // two pages of SRAM
        assert_eq!(c.capacity(), (2, 0));
        assert_eq!(c.lookup(0, true), Lookup::default()); // never written: no read
        c.lookup(1, false);
        c.lookup(0, false); // 0 is now the most recent
        let r = c.lookup(2, false); // evicts 1 (clean)
        assert_eq!(r.write_back, None);
        let r = c.lookup(3, false); // evicts 0 (dirty)
        assert_eq!(r.write_back, Some(0));
        assert!(!c.written(0));
        assert!(c.lookup(0, false).read, "written back: now read from NAND");

        let mut c = cache(16, 1); // one page of SRAM, 64 of HMB
        assert_eq!(c.capacity(), (1, 64));
        c.lookup(5, true);
        c.lookup(6, false); // 5 moves down to the HMB, still dirty
        let r = c.lookup(5, false);
        assert!(r.hmb && !r.read && r.write_back.is_none());
        assert_eq!(c.tier[6], 2);
    }

    #[test]
    fn updates_of_uncached_pages_go_in_batches() {
        let mut c = cache(16, 0);
        c.lookup(9, false);
        assert!(!c.update(9), "cached: marked dirty");
        assert!(c.dirty[9]);
        assert!(!c.update(1));
        assert!(!c.update(1));
        assert!(c.update(2) || c.update(2));
        let mut out = Vec::new();
        c.take_batch(&mut out);
        assert_eq!(out, vec![(1, false), (2, false)]);
        c.take_batch(&mut out);
        assert!(out.is_empty());
    }
}
