"""Hardened readers: every malformed reproducer gives a clear UsageError (exit 2 on the CLI), and a
seeded mutator over every input format gives rows or a UsageError, never another exception, never a hang."""

import json
import random
import sys
import time
from pathlib import Path

import pytest

from collperf import api, cli
from collperf.diagnose import diagnose
from collperf.errors import UsageError
from collperf.fit import fit
from collperf.ingest import parse, Row, Table

FIXTURES = Path(__file__).parent / "fixtures"
MALFORMED = FIXTURES / "malformed"
SAMPLES = Path(__file__).resolve().parents[1] / "examples"  # public nccl-tests logs, each with its source
BOUND_S = 2.0  # per input: a hang check (the quadratic regex took 40 s), not a speed assertion

# what each reproducer must say (a piece of the message), or None where it is in fact readable
EXPECTED = {
    "01_wrong_inf.log": "#wrong 'inf' is not a whole number",
    "02_wrong_nan.log": "#wrong 'nan' is not a whole number",
    "03_nthread_4301_digits.log": "nThread",
    "04_device_rank_4301_digits.log": "device line rank",
    "05_out_of_bounds_4301_digits.log": "Out of bounds values",
    "06_root_4301_digits.log": "root",
    "07_json_int_4301_digits.log": "unreadable JSON",
    "08_csv_short_row_int.log": "the CSV header lacks",
    "09_csv_short_row_float.log": "line 2: 8 fields, expected 12",
    "10_csv_field_over_128KiB.log": "the CSV header lacks",
    "11_collperf_json_result_not_object.log": "JSON $: the key 'collective' is missing",
    "12_collperf_json_no_algorithm.log": "JSON $: the key 'collective' is missing",
    "13_collperf_json_no_time.log": "$.results[0].out_of_place: the key 'time' is missing",
    "14_collperf_json_placement_number.log": "$.results[0].out_of_place: expected an object",
    "15_collperf_json_size_infinity.log": "$.results[0].size: expected a number, got the number inf",
    "16_collperf_json_time_empty.log": "$.results[0].out_of_place.time: expected a number, got the string ''",
    "17_nccl_json_config_number.log": "JSON $.config: expected an object",
    "18_nccl_json_device_number.log": "JSON $.config.devices[0]: expected an object",
    "19_nccl_json_device_rank_object.log": "$.config.devices[0].rank: expected a whole number",
    "20_nccl_json_device_host_object.log": "$.config.devices[0].hostname: expected a string or a number",
    "21_nccl_json_result_number.log": "$.results[0]: expected an object",
    "22_nccl_json_placement_string.log": "$.results[0].out_of_place: expected an object",
    "23_nccl_json_size_infinity.log": "$.results[0].size: expected a number, got the number inf",
    "24_nccl_json_nwrong_infinity.log": "$.results[0].out_of_place.nwrong",
    "25_osu_size_400_digits.log": "size '1000",
    "26_busbw_inf_nan_n_half_diagnose.log": "a fit needs at least 3 sizes",
    "27_busbw_inf_nan_n_half_cli_fit.log": "a fit needs at least 3 sizes",
    "28_size_400_digits_fit.log": "a fit needs at least 3 sizes",
    "29_time_1e-300_nnls_nonfinite.log": None,
    "30_collperf_json_busbw_string.log": "a fit needs at least 3 sizes",
    "31_hang_redos_number_regex_30000_digits.log": "no nccl-tests result rows found",
}


def test_every_reproducer_is_covered():
    assert sorted(p.name for p in MALFORMED.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_reproducer_gives_a_clear_error(name):
    path = MALFORMED / name
    message = EXPECTED[name]
    for call in (api.fit_logs, api.diagnose_logs):
        started = time.perf_counter()
        if message is None:
            assert call(path)
        elif call is api.diagnose_logs and message == "a fit needs at least 3 sizes":
            # diagnose judges a table too short for a fit against the model alone and says so
            (d,) = call(path)
            assert d.fit is None and "not-fitted" in {f.kind for f in d.findings}
        else:
            with pytest.raises(UsageError, match=None) as info:
                call(path)
            assert message in str(info.value), str(info.value)
            assert str(path) in str(info.value)  # the file is named
        assert time.perf_counter() - started < BOUND_S


@pytest.mark.parametrize("name", ["29_time_1e-300_nnls_nonfinite.log", "26_busbw_inf_nan_n_half_diagnose.log"])
def test_bad_rows_are_reported_and_skipped(name):
    (t,) = api.read_logs(MALFORMED / name)
    assert t.skipped and ("out of range" in t.skipped[0] or "not a finite number" in t.skipped[0])
    if name.startswith("29"):  # 4 good rows fit; the skipped one is a finding
        d = api.diagnose_logs(MALFORMED / name)[0]
        assert "skipped-lines" in {f.kind for f in d.findings}


@pytest.mark.parametrize("command", ["fit", "diagnose"])
@pytest.mark.parametrize(
    "name",
    [
        "01_wrong_inf.log",
        "10_csv_field_over_128KiB.log",
        "19_nccl_json_device_rank_object.log",
        "27_busbw_inf_nan_n_half_cli_fit.log",
        "31_hang_redos_number_regex_30000_digits.log",
    ],
)
def test_cli_exits_2_with_error_line(command, name, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["collperf", command, str(MALFORMED / name)])
    with pytest.raises(SystemExit) as info:
        cli.main()
    captured = capsys.readouterr()
    if command == "diagnose" and name.startswith("27_"):
        # two usable sizes: fit refuses, diagnose judges them without a fit and says so
        assert info.value.code == 0 and "not-fitted" in captured.out and "Traceback" not in captured.err
        return
    assert info.value.code == 2 and "error:" in captured.err and "Traceback" not in captured.err


def test_the_quadratic_input_is_refused_quickly():
    digits = "9" * 200_000  # 40 s at 30,000 digits with the old number regex
    text = "#  size count type redop root time algbw busbw #wrong\n" + digits + " " + digits + "x\n"
    started = time.perf_counter()
    with pytest.raises(UsageError):
        parse(text, "long.txt")
    assert time.perf_counter() - started < BOUND_S


# --- the seeded mutator ---------------------------------------------------------------------------

SEEDS = 2000
NASTY_NUMBERS = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e308",
    "1e999",
    "1e-300",
    "-5",
    "0",
    "0.5",
    "-0",
    "",
    "9" * 5000,
    "1" * 400,
    "0x10",
    "1_000",
    "\u0661\u0662",
    "²",
    "1e",
    ".",
    "-",
    "N/A",
]
ODD_UNICODE = [
    "\xa0",
    "\t",
    "\u2028",
    "\u200b",
    "\ufeff",
    "\u202e",
    "e\u0301",
    "\U0001f600",
    "\x00",
    "\r",
    "\x0c",
    "\u3000",
    "\ud800",
]


def _formats() -> list[tuple[str, str]]:
    inputs = [(p.name, p.read_text(errors="replace")) for p in sorted(FIXTURES.iterdir()) if p.is_file()]
    inputs += [
        (p.name, p.read_text(errors="replace")) for p in sorted(MALFORMED.glob("*.log")) if p.stat().st_size < 10_000
    ]
    inputs += [(p.name, p.read_text(errors="replace")) for p in sorted(SAMPLES.glob("*.txt"))]
    return inputs


def _json_mutation(text: str, rng: random.Random) -> str:
    """Replace one node of a JSON document with a value of another type."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder (an earlier mutation)
        return text
    replacement = rng.choice(
        [None, True, 1.5, -1, float("inf"), float("nan"), "x", "", [], {}, [1], {"a": 1}, 10**30, "N/A"]
    )
    path, node = [], doc
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if path:
        parent, key = path[-1]
        parent[key] = replacement
    else:
        doc = replacement
    return json.dumps(doc)


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(8)
        if kind == 0 and text:  # byte flips
            chars = list(text)
            for _ in range(rng.randint(1, 8)):
                chars[rng.randrange(len(chars))] = chr(rng.randrange(0, 256))
            text = "".join(chars)
        elif kind == 1:  # truncation
            text = text[: rng.randint(0, len(text))]
        elif kind == 2:  # NaN / inf / huge / odd numbers in place of a number
            tokens = text.split(" ")
            numeric = [i for i, t in enumerate(tokens) if t[:1].isdigit()]
            if numeric:
                tokens[rng.choice(numeric)] = rng.choice(NASTY_NUMBERS)
            text = " ".join(tokens)
        elif kind == 3:  # broken JSON types
            text = _json_mutation(text, rng)
        elif kind == 4:  # a long line
            lines = text.split("\n")
            filler = rng.choice(["9", "x", " ", "1:", "[1,2]<stdout>:", "9.", "e9"]) * rng.randint(1000, 60000)
            lines.insert(rng.randint(0, len(lines)), filler)
            text = "\n".join(lines)
        elif kind == 5 and text:  # odd unicode
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice(ODD_UNICODE) * rng.randint(1, 3) + text[i:]
        elif kind == 6:  # whitespace variants everywhere
            text = text.replace(" ", rng.choice(ODD_UNICODE[:2] + ["  ", "\u3000"]))
        else:  # drop, duplicate or swap lines
            lines = text.split("\n")
            if len(lines) > 2:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                op = rng.randrange(3)
                if op == 0:
                    del lines[i]
                elif op == 1:
                    lines.insert(i, lines[j])
                else:
                    lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


@pytest.mark.parametrize(
    "seeds",
    [
        pytest.param(range(SEEDS // 8), id="core"),
        pytest.param(range(SEEDS // 8, SEEDS), marks=pytest.mark.slow, id="rest"),
    ],
)
def test_mutated_logs_give_rows_or_a_usage_error(seeds):
    """SEEDS seeded mutations over every fixture format (nccl-tests text of every vintage and -J JSON, collperf
    JSON/CSV, OSU, IMB, the malformed reproducers and the sample logs of examples/), in two parts (the core
    runs the first eighth); every 16th parsed input also goes through fit and diagnose. Each keeps its budget."""
    inputs = _formats()
    outcomes = {"rows": 0, "usage-error": 0}
    for seed in seeds:
        rng = random.Random(seed)
        name, original = inputs[seed % len(inputs)]
        text = mutate(original, rng)
        started = time.perf_counter()
        try:
            tables = parse(text, f"{name}#seed{seed}", *(("allreduce", 4) if name.endswith(".csv") else ()))
            for t in tables:
                assert t.rows
                for r in t.rows:
                    assert r.size >= 0 and 0 < r.time_s < float("inf")
            if seed % 16 == 0:
                for t in tables[:1]:
                    try:
                        diagnose(t)
                    except UsageError:
                        pass
            outcomes["rows"] += 1
        except UsageError as e:
            assert str(e)
            outcomes["usage-error"] += 1
        except Exception as e:  # noqa: BLE001 - anything else is the bug this test exists to find
            pytest.fail(f"{name} seed {seed}: {type(e).__name__}: {e}")
        assert time.perf_counter() - started < BOUND_S, f"{name} seed {seed} took too long"
    assert outcomes["rows"] > len(seeds) // 10 and outcomes["usage-error"] > len(seeds) // 10  # both paths


def test_fit_never_raises_anything_but_usage_error_on_unchecked_rows():
    """Rows built through the API skip the reader's checks: the fit still refuses non-finite values cleanly."""
    t = Table("api", "allreduce", 4)
    for k, time_s in zip(range(3, 9), [float("nan"), float("inf"), -1.0, 0.0, 1e-5, 2e-5]):
        t.rows.append(Row(2**k, time_s))
    with pytest.raises(UsageError, match="usable row"):
        fit(t)
