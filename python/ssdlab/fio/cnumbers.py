"""C's and fio's number readers, as glibc and fio 3.33 do them: ``strtoll`` and ``strtoul`` with
their base and end, ``atoi``, ``sscanf("%lf")``, fio's ``get_mult_bytes``/``get_mult_time`` and
``str_to_decimal`` (parse.c), and the percent and zone encodings of option values. `ssdlab.fio.fioread`
reads every option value through these, so each number reads as fio reads it (tests/test_fio_parity.py
compares them with the installed fio).
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

U64 = 2**64
LLONG_MAX = 2**63 - 1
UINT_MAX = 2**32 - 1
ZONE_BASE_VAL = 2**63
SPACE = " \t\n\v\f\r"


# -- C's number readers, as glibc does them ----------------------------------------------------------

def s64(n: int) -> int:
    """`n` wrapped to a signed 64-bit number (C's long long arithmetic)."""
    n %= U64
    return n - U64 if n >= 2**63 else n


def s32(n: int) -> int:
    n %= 2**32
    return n - 2**32 if n >= 2**31 else n


def c_lstrip(s: str) -> str:
    i = 0
    while i < len(s) and s[i] in SPACE:
        i += 1
    return s[i:]


def _digits(s: str, i: int, base: int) -> int:
    """Index just past the run of base-`base` digits (ASCII) starting at `i`."""
    ok = "0123456789" if base == 10 else "0123456789abcdefABCDEF"
    while i < len(s) and s[i] in ok:
        i += 1
    return i


def strtoll(s: str, base: int) -> Tuple[int, int, bool]:
    """C's strtoll: ``(value, characters read, overflowed)``; nothing read is ``(0, 0, False)``."""
    i = len(s) - len(c_lstrip(s))
    neg = False
    if i < len(s) and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    if base == 16 and s[i:i + 2].lower() == "0x" and _digits(s, i + 2, 16) > i + 2:
        i += 2
    end = _digits(s, i, base)
    if end == i:
        return 0, 0, False
    n = int(s[i:end], base)
    if neg:
        if n > 2**63:
            return -(2**63), end, True
        return -n, end, False
    if n > LLONG_MAX:
        return LLONG_MAX, end, True
    return n, end, False


def strtoul_end(s: str, base: int) -> Tuple[int, int, bool]:
    """C's strtoul: ``(value, characters read, overflowed)``."""
    i = len(s) - len(c_lstrip(s))
    neg = False
    if i < len(s) and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    end = _digits(s, i, base)
    if end == i:
        return 0, 0, False
    n = int(s[i:end], base)
    if n >= U64:
        return U64 - 1, end, True
    return ((-n) % U64 if neg else n), end, False


def strtoul(s: str, base: int) -> Optional[int]:
    """sscanf's %u / %x (glibc's strtoul, with an optional 0x before hex digits): None when no digits."""
    if base == 16:
        t = c_lstrip(s)
        sign = t[:1] if t[:1] in "+-" else ""
        body = t[len(sign):]
        if body[:2].lower() == "0x" and _digits(body, 2, 16) > 2:
            s = sign + body[2:]
    n, end, _ = strtoul_end(s, base)
    return None if end == 0 else n


def atoi(s: str) -> int:
    """C's atoi: (int) strtol(s, NULL, 10)."""
    n, _, over = strtoll(s, 10)
    return s32(n)


def scan_float(s: str) -> Optional[float]:
    """``sscanf(s, "%lf")`` as glibc does it: the number at the start of `s`, None when there is
    none. An exponent without digits is left out (``1e`` is 1), a partial ``infinity`` is no number."""
    t = c_lstrip(s)
    neg = t[:1] == "-"
    if t[:1] in "+-" and t:
        t = t[1:]
    low = t.lower()
    if low.startswith("inf"):
        rest = low[3:]
        if rest[:1] == "i" and not rest.startswith("inity"):
            return None
        return float("-inf") if neg else float("inf")
    if low.startswith("nan"):
        return -float("nan") if neg else float("nan")
    m = re.match(r"0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?", t)
    if m:
        whole, frac = m.group(1), m.group(2) or ""
        if not whole and not frac:
            if m.group(2) is None:
                return None  # "0x" alone is no number to glibc, "0x." is 0
            return -0.0 if neg else 0.0
        e = re.match(r"[pP]([+-]?[0-9]+)", t[m.end():])
        value = float.fromhex(f"0x{whole or '0'}.{frac or '0'}p{e.group(1) if e else 0}") \
            if not e or abs(int(e.group(1))) < 100000 else (0.0 if e.group(1).startswith("-") else float("inf"))
        return -value if neg else value
    m = re.match(r"([0-9]*)(?:\.([0-9]*))?", t)
    if not m or not (m.group(1) or m.group(2)):
        return None
    text = f"{m.group(1) or '0'}.{m.group(2) or '0'}"
    e = re.match(r"[eE]([+-]?[0-9]+)", t[m.end():])
    if e:
        text += "e" + e.group(1)
    value = float(text)
    return -value if neg else value


def _mult_bytes(p: Optional[str], kb_base: int) -> Tuple[int, bool]:
    """parse.c ``__get_mult_bytes``: ``(multiplier, is a percentage)``."""
    if p is None:
        return 1, False
    c = p.lower()
    for i, ch in enumerate(c):
        if ch in ":-,/":
            c = c[:i]
            break
    pow_, mult = 0, kb_base
    flip = 1000 if kb_base == 1024 else 1024 if kb_base == 1000 else kb_base
    for n, word in enumerate(("kib", "mib", "gib", "tib", "pib")):
        if c.startswith(word):
            return flip ** (n + 1), False
    for n, letter in enumerate("kmgtp"):
        if c.startswith(letter):
            pow_ = n + 1
            break
    else:
        if c.startswith("%"):
            return 1, True
    return mult ** pow_, False


def _get_mult_bytes(s: str, kb_base: int) -> Tuple[int, bool]:
    """parse.c ``get_mult_bytes``: the suffix after the leading digits (and signs before them)."""
    if len(s) < 2:
        return _mult_bytes(s, kb_base)
    i, digit_seen = 0, False
    while i < len(s):
        ch = s[i]
        if not ch.isdigit() or not ch.isascii():
            if ch not in "+-" or digit_seen:
                break
        digit_seen |= ch.isdigit()
        i += 1
    rest = s[i:]
    if not rest or not (rest[0].isascii() and rest[0].isalpha()) and rest[0] != "%":
        return 1, False
    return _mult_bytes(rest, kb_base)


def _get_mult_time(s: str, is_seconds: bool) -> int:
    """parse.c ``get_mult_time``: microseconds per unit of the word after the number."""
    i = 0
    while i < len(s) and ((s[i].isascii() and s[i].isdigit()) or s[i] in "+-"):
        i += 1
    rest = s[i:]
    if not rest or not (rest[0].isascii() and rest[0].isalpha()):
        return 1_000_000 if is_seconds else 1
    c = rest.lower()
    if c.startswith("us"):
        return 1
    if c.startswith("ms"):
        return 1000
    return {"s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}.get(c, 1)


def str_to_decimal(s: str, kilo: bool, kb_base: int = 1024, is_seconds: bool = False) -> Optional[int]:
    """parse.c ``str_to_decimal`` (fio built without arithmetic): the value as a signed 64-bit
    number, None when fio fails to read it."""
    if not s:
        return None
    base = 16 if ("0x" in s or "0X" in s) else 10
    val, end, over = strtoll(s, base)
    if val == 0 and end == 0:
        return None
    if val == LLONG_MAX and over:
        return None
    if kilo:
        mult, perc = _get_mult_bytes(s, kb_base)
        return s64(-1 - val) if perc else s64(val * mult)
    return s64(val * _get_mult_time(s, is_seconds))


def is_percent(v: int) -> bool:
    """parse.h ``parse_is_percent``: a size read from ``N%`` (N at most 100)."""
    return v % U64 >= U64 - 101


def percent_of(v: int) -> int:
    return (-1 - v) % U64


def is_zone(v: int) -> bool:
    return ((v % U64) - ZONE_BASE_VAL) % U64 <= UINT_MAX
