"""fio's ``startdelay``, as fio 3.33 reads and draws it.

``startdelay=LOW-HIGH`` (or ``LOW:HIGH``, ``LOW,HIGH``; parse.c's ``handle_option`` splits on
the first ``,``, else ``:``, else ``-``): the first part is the low end, the last part the high
end, and one value is both. fio's ``fixup_options`` (init.c) draws the job's delay with
``rand_between(&td->delay_state, low, high)`` in microseconds, both ends included, from the job's
own generator: seeded by ``setup_random_seeds`` from ``randseed`` (default 0x89) and the job's
thread number (1 for the file's first job; each ``numjobs`` clone its own number, right after
its job's), ``td->rand_seeds[FIO_RAND_START_DELAY]``, with fio's Tausworthe generators (lib/rand.c,
lib/rand.h; ``random_generator=tausworthe64`` the 64-bit one). With ``randrepeat=1`` (fio's
default) that is the delay fio itself draws; with ``randrepeat=0`` fio draws from the OS, and
ssdlab keeps the repeatable draw so runs stay deterministic.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

__all__ = ["draw_us", "split_range"]

_M32 = 0xFFFF_FFFF
_M64 = 0xFFFF_FFFF_FFFF_FFFF
_GOLDEN = 0x9E37_0001  # setup_random_seeds' multiplier
FIO_RANDSEED = 0xB189_9BED  # init.c: allrandrepeat's seed
FIO_RAND_START_DELAY = 13  # fio.h: the start delay's place among a job's seeds
_FIO_RAND_NR_OFFS = 20
DEFAULT_RANDSEED = 0x89


def split_range(value: str) -> Tuple[str, str]:
    """The low and high parts of a start delay as fio's ``handle_option`` splits them."""
    parts: List[str] = []
    rest = value
    while True:
        cut = rest.find(",")
        if cut >= 0 and cut == len(rest) - 1:  # a trailing comma is dropped
            rest, cut = rest[:-1], -1
        if cut < 0:
            cut = rest.find(":")
        if cut < 0:
            cut = rest.find("-")
        if cut < 0:
            parts.append(rest)
            break
        parts.append(rest[:cut])
        rest = rest[cut + 1:]
    return parts[0], parts[-1]


class _Taus88:
    """fio's 32-bit generator (``struct taus88_state``)."""

    def __init__(self, seed: int) -> None:
        seed &= _M32

        def lcg(x: int) -> int:
            return ((x * 69069) & _M32) ^ seed

        def floor(x: int, m: int) -> int:
            return (x + m if x < m else x) & _M32

        # ((2^31) + (2^17) + (2^7)) in C is (29 + 19 + 5): ^ is XOR
        self.s1 = floor(lcg(53), 1)
        self.s2 = floor(lcg(self.s1), 7)
        self.s3 = floor(lcg(self.s2), 15)
        for _ in range(6):
            self.next()

    def next(self) -> int:
        def taus(s: int, a: int, b: int, c: int, d: int) -> int:
            return (((s & c) << d) & _M32) ^ ((((s << a) & _M32) ^ s) >> b)

        self.s1 = taus(self.s1, 13, 19, 4294967294, 12)
        self.s2 = taus(self.s2, 2, 25, 4294967288, 4)
        self.s3 = taus(self.s3, 3, 11, 4294967280, 17)
        return self.s1 ^ self.s2 ^ self.s3

    def upto(self, end: int) -> int:  # rand32_upto
        r = self.next()
        end = ((end & _M32) + 1) & _M32
        return int(float(end) * (r / float(1 << 32)))


class _Taus258:
    """fio's 64-bit generator (``struct taus258_state``)."""

    def __init__(self, seed: int) -> None:
        seed &= _M64

        def lcg(x: int) -> int:
            return ((x * 6906969069) & _M64) ^ seed

        def floor(x: int, m: int) -> int:
            return (x + m if x < m else x) & _M64

        s = [floor(lcg(53), 1)]
        for m in (7, 15, 33, 49):
            s.append(floor(lcg(s[-1]), m))
        self.s = s
        for _ in range(6):
            self.next()

    def next(self) -> int:
        s1, s2, s3, s4, s5 = self.s
        x = (((s1 << 1) & _M64) ^ s1) >> 53
        s1 = (((s1 & 18446744073709551614) << 10) & _M64) ^ x
        x = (((s2 << 24) & _M64) ^ s2) >> 50
        s2 = (((s2 & 18446744073709551104) << 5) & _M64) ^ x
        x = (((s3 << 3) & _M64) ^ s3) >> 23
        s3 = (((s3 & 18446744073709547520) << 29) & _M64) ^ x
        x = (((s4 << 5) & _M64) ^ s4) >> 24
        s4 = (((s4 & 18446744073709420544) << 23) & _M64) ^ x
        x = (((s5 << 3) & _M64) ^ s5) >> 33
        s5 = (((s5 & 18446744073701163008) << 8) & _M64) ^ x
        self.s = [s1, s2, s3, s4, s5]
        return s1 ^ s2 ^ s3 ^ s4 ^ s5

    def upto(self, end: int) -> int:  # rand64_upto
        r = self.next()
        end = (end + 1) & _M64
        return int(float(end) * (r / (float(1 << 32) * float(1 << 32)))) & _M64


def _start_delay_seed(thread_number: int, randseed: Optional[int], allrandrepeat: bool) -> int:
    """``td->rand_seeds[FIO_RAND_START_DELAY]`` (init.c ``setup_random_seeds``,
    ``td_fill_rand_seeds``)."""
    if allrandrepeat:
        return (FIO_RANDSEED * thread_number + FIO_RAND_START_DELAY) & _M64
    seed = (DEFAULT_RANDSEED if randseed is None else randseed) & _M64
    for _ in range(4):
        seed = (seed * _GOLDEN) & _M64
    for i in range(FIO_RAND_START_DELAY + 1):
        if i == FIO_RAND_START_DELAY:
            return (seed * thread_number + i) & _M64
        seed = (seed * _GOLDEN) & _M64
    raise AssertionError("unreachable")


def draw_us(low_us: int, high_us: int, thread_number: int, *, randseed: Optional[int] = None,
            allrandrepeat: bool = False, use64: bool = False) -> int:
    """The start delay fio draws for job `thread_number` (1-based) from ``startdelay=LOW-HIGH``,
    in microseconds (``rand_between``: both ends included)."""
    seed = _start_delay_seed(thread_number, randseed, allrandrepeat)
    gen = _Taus258(seed) if use64 else _Taus88(seed)
    return low_us + gen.upto(high_us - low_us)
