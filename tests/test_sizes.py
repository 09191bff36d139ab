"""Size parsing and formatting (fio-style suffixes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssdlab import SsdlabError
from ssdlab.sizes import MAX_SIZE, format_size, parse_size

KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4096", 4096),
        ("0", 0),
        ("4k", 4 * KIB),
        ("4K", 4 * KIB),
        ("512m", 512 * MIB),
        ("8g", 8 * GIB),
        ("1t", TIB),
        ("8GiB", 8 * GIB),
        ("512MiB", 512 * MIB),
        ("4kib", 4 * KIB),
        ("256GB", 256 * 10**9),
        ("256gb", 256 * 10**9),
        ("1KB", 1000),
        ("2TB", 2 * 10**12),
        ("10B", 10),
        (" 8 GiB ", 8 * GIB),
        ("1.5k", 1536),
        ("1.5GB", 1_500_000_000),
        (".5MiB", MIB // 2),
        ("2.", 2),
        (4096, 4096),
    ],
)
def test_examples(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["", "abc", "-4k", "- 4k", "4 k b", "4kk", "4xB", "1e9", "4 KiBs", "0x10", "4,096", "1_000", "inf", "nan"]
)
def test_unparsable_sizes_raise_one_line(text: str) -> None:
    with pytest.raises(SsdlabError) as err:
        parse_size(text, what="capacity")
    assert "capacity" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value", [-1, True, 1.5, None, [4096]])
def test_non_sizes_raise(value: object) -> None:
    with pytest.raises(SsdlabError):
        parse_size(value)  # type: ignore[arg-type]


def test_too_large() -> None:
    assert parse_size(str(MAX_SIZE)) == MAX_SIZE
    with pytest.raises(SsdlabError, match="too large"):
        parse_size("16EiB")
    with pytest.raises(SsdlabError, match="too large"):
        parse_size("99999PB")


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (999, "999 B"), (1000, "1 KB"), (1023, "1023 B"), (4096, "4 KiB"), (1536, "1.5 KiB"),
     (2 * GIB, "2 GiB"), (256 * 10**9, "256 GB"), (256 * GIB, "256 GiB"), (2306867200, "2.15 GiB"), (4096000, "3.91 MiB")],
)
def test_format_examples(n: int, text: str) -> None:
    assert format_size(n) == text


@given(st.integers(min_value=0, max_value=MAX_SIZE))
def test_plain_integers_round_trip(n: int) -> None:
    assert parse_size(str(n)) == n


@given(
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from(
        [("k", KIB), ("m", MIB), ("g", GIB), ("KiB", KIB), ("MiB", MIB), ("GiB", GIB), ("TiB", TIB),
         ("KB", 10**3), ("MB", 10**6), ("GB", 10**9), ("TB", 10**12), ("B", 1), ("", 1)]
    ),
    st.booleans(),
)
def test_suffixes_multiply(k: int, suffix: tuple[str, int], space: bool) -> None:
    text, mult = suffix
    assert parse_size(f"{k}{' ' if space else ''}{text}") == k * mult


@given(st.integers(min_value=0, max_value=2**62))
def test_format_then_parse_is_close(n: int) -> None:
    back = parse_size(format_size(n))
    assert abs(back - n) <= max(n * 0.005, 0)


@given(st.integers(min_value=1, max_value=999), st.sampled_from([KIB, MIB, GIB, TIB, 10**3, 10**6, 10**9]))
def test_exact_multiples_format_exactly(k: int, unit: int) -> None:
    assert parse_size(format_size(k * unit)) == k * unit
