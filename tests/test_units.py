import math

import pytest
from hypothesis import given, settings, strategies as st

from collperf import units
from collperf.errors import UsageError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("8", 8),
        ("8B", 8),
        ("1K", 1024),
        ("1M", 1 << 20),
        ("1G", 1 << 30),
        ("0.5M", 1 << 19),
        ("1KB", 1000),
        ("1MB", 10**6),
        ("1GB", 10**9),
        ("1KiB", 1024),
        ("1MiB", 1 << 20),
        ("1GiB", 1 << 30),
        ("64m", 64 << 20),
        (" 2 G ", 2 << 30),
        (4096, 4096),
    ],
)
def test_sizes(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("5us", 5e-6),
        ("5µs", 5e-6),
        ("1.2ms", 1.2e-3),
        ("0.5s", 0.5),
        ("100ns", 1e-7),
        ("0", 0.0),
        ("2.5 us", 2.5e-6),
    ],
)
def test_times(text, expected):
    assert units.parse_time(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("50GB/s", 50e9),
        ("50GBps", 50e9),
        ("400Gbps", 50e9),
        ("400Gbit/s", 50e9),
        ("400Gb/s", 50e9),
        ("12.5GiB/s", 12.5 * 2**30),
        ("200mbit", 25e6),
        ("100MB/s", 1e8),
        ("inf", math.inf),
    ],
)
def test_bandwidths(text, expected):
    assert units.parse_bandwidth(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "parse, text, fragment",
    [
        (units.parse_size, "12XB", "unknown unit 'XB'"),
        (units.parse_size, "lots", "expected a number and a unit"),
        (units.parse_size, -5, "negative"),
        (units.parse_time, "5", "missing unit"),
        (units.parse_time, "5 parsecs", "unknown or missing unit"),
        (units.parse_bandwidth, "50", "missing unit"),
        (units.parse_bandwidth, "50GB", "unknown or missing unit 'GB'"),
        (units.parse_bandwidth, "0GB/s", "not positive"),
    ],
)
def test_errors_name_the_value_and_the_forms(parse, text, fragment):
    with pytest.raises(UsageError) as info:
        parse(text)
    assert fragment in str(info.value)
    assert str(text) in str(info.value)


@settings(deadline=None)
@given(st.integers(min_value=1, max_value=1023), st.sampled_from([1, 1 << 10, 1 << 20, 1 << 30, 10**3, 10**6, 10**9]))
def test_size_round_trip_for_whole_units(count, unit):
    size = count * unit
    assert units.parse_size(units.format_size(size)) == size


@settings(deadline=None)
@given(st.floats(min_value=1e-9, max_value=100))
def test_time_round_trip_to_four_digits(seconds):
    assert units.parse_time(units.format_time(seconds)) == pytest.approx(seconds, rel=1e-3)


@settings(deadline=None)
@given(st.floats(min_value=1e3, max_value=1e13))
def test_bandwidth_round_trip_to_four_digits(rate):
    assert units.parse_bandwidth(units.format_bandwidth(rate)) == pytest.approx(rate, rel=1e-3)


def test_format_picks_sensible_units():
    assert units.format_size(64 << 20) == "64 MiB"
    assert units.format_size(100 * 10**6) == "100 MB"
    assert units.format_time(2.175e-3) == "2.175 ms"
    assert units.format_bandwidth(50e9) == "50 GB/s"


@pytest.mark.parametrize(
    "text, meant",
    [
        ("1Gb", "write 1GB (or 1GiB, 1G)"),
        ("64Kb", "write 64KB (or 64KiB, 64K)"),
        ("1.5 Mib", "write 1.5MiB (or 1.5MB, 1.5M)"),
        ("2Tb", "write 2TB (or 2TiB, 2T)"),
        ("8Gib", "write 8GiB (or 8GB, 8G)"),
    ],
)
def test_sizes_in_bits_are_refused_with_the_byte_spelling(text, meant):
    # --nic-rate reads Gb as bits (400Gb/s = 50 GB/s): a size written so would be 8x off, never silently read
    with pytest.raises(UsageError) as info:
        units.parse_size(text)
    assert f"cannot read size {text.strip()!r}" in str(info.value) and "sizes are bytes" in str(info.value)
    assert meant in str(info.value)
    with pytest.raises(UsageError, match="sizes are bytes"):
        units.parse_sizes(f"1M,{text}")


@pytest.mark.parametrize(
    "text, expected",
    [
        # what worked before keeps working: one letter is binary as nccl-tests' -b/-e, KB decimal, KiB binary,
        # a small b alone is bytes, and an all-lowercase unit is read as typed casually (bytes)
        ("1k", 1024),
        ("1K", 1024),
        ("128M", 128 << 20),
        ("1G", 1 << 30),
        ("1KB", 1000),
        ("1KiB", 1024),
        ("8b", 8),
        ("1gb", 10**9),
        ("1mib", 1 << 20),
        ("4096", 4096),
    ],
)
def test_byte_spellings_still_read(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize(
    "fraction, sep, text",
    [
        (0.87, " ", "87 %"),
        (1.0, " ", "100 %"),
        (0.005, " ", "0.5 %"),
        (0.0026, "", "0.26%"),
        (0.003, "", "0.3%"),
        (0.0999, "", "10%"),
        (1e-7, " ", "<0.01 %"),
        (0.0, "", "<0.01%"),
    ],
)
def test_percent_keeps_two_digits_below_ten_and_never_shows_zero(fraction, sep, text):
    # a run at 0.3 % of its bound is not "0 %" of it
    assert units.format_percent(fraction, sep) == text


def test_one_binary_unit_per_column():
    """The sizes of one trace table (a public A100 trace printed 8196 KB, 30764 KiB and 9.274 MiB in one column)."""
    column = [8196 * 1000, 30764 * 1024, 9724493]
    unit = units.column_unit(column)
    assert unit == (1 << 20, "MiB")
    assert [units.format_size_in(s, unit) for s in column] == ["7.816 MiB", "30.04 MiB", "9.274 MiB"]
    # a 424-byte broadcast beside them: KiB, not 31502336 B
    unit = units.column_unit(column + [424])
    assert unit == (1024, "KiB")
    assert [units.format_size_in(s, unit) for s in (424, 30764 * 1024)] == ["0.4141 KiB", "30764 KiB"]
    assert units.column_unit([100, None]) == (1, "B") and units.column_unit([]) == (1, "B")
