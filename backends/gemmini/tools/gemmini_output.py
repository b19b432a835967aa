"""Parsers for what a gemmini harness prints under spike and what FireSim's uartlog holds.

The harness's lines (backends/gemmini/include/autocomp_gemmini_io.h):

    autocomp-gemmini: <problem> <shape> key=<key> repeats=<n>
    Generated implementation latency: <n> cycles
    Generated implementation instructions: <n>
    repeat <i>: checksum <16 hex digits>
    Correct result            (or "Incorrect result: ..." lines, then "Incorrect result")

Other lines (spike's own warnings, the library's prints) are ignored. A malformed line of the
harness's kinds is an error that names its line number and the field.
"""
import re


class ParseError(ValueError):
    pass


_HEADER = re.compile(r"^autocomp-gemmini: (\S+) (\S+) key=(\S+) repeats=(\d+)$")
_LATENCY_PREFIX = "Generated implementation latency:"
_LATENCY = re.compile(r"^Generated implementation latency: (\d+) cycles$")
_INSTR_PREFIX = "Generated implementation instructions:"
_INSTR = re.compile(r"^Generated implementation instructions: (\d+)$")
_CHECKSUM_PREFIX = re.compile(r"^repeat \S+:")
_CHECKSUM = re.compile(r"^repeat (\d+): checksum ([0-9a-f]{16})$")


def _lines(text):
    # uartlogs and some spike builds end lines with \r\n
    return [line.rstrip("\r") for line in text.split("\n")]


def parse_harness(text, expect_measurements=True):
    """The harness's report: {problem, shape, key, repeats, checksums, latencies, instructions,
    verdict ('correct' | 'incorrect'), failures}."""
    out = {"problem": None, "shape": None, "key": None, "repeats": None, "checksums": [], "latencies": [],
           "instructions": [], "verdict": None, "failures": []}
    for number, raw in enumerate(_lines(text), 1):
        line = raw.strip()
        if line.startswith("autocomp-gemmini:"):
            m = _HEADER.match(line)
            if not m:
                raise ParseError(f"line {number}: malformed header (want 'autocomp-gemmini: <problem> <shape> key=<key> repeats=<n>'): {line!r}")
            if out["problem"] is not None:
                raise ParseError(f"line {number}: a second header: the program ran twice or printed a header itself")
            out["problem"], out["shape"], out["key"], out["repeats"] = m.group(1), m.group(2), m.group(3), int(m.group(4))
        elif line.startswith(_LATENCY_PREFIX):
            m = _LATENCY.match(line)
            if not m:
                raise ParseError(f"line {number}: malformed latency (want 'Generated implementation latency: <n> cycles'): {line!r}")
            out["latencies"].append(int(m.group(1)))
        elif line.startswith(_INSTR_PREFIX):
            m = _INSTR.match(line)
            if not m:
                raise ParseError(f"line {number}: malformed instruction count (want 'Generated implementation instructions: <n>'): {line!r}")
            out["instructions"].append(int(m.group(1)))
        elif _CHECKSUM_PREFIX.match(line):
            m = _CHECKSUM.match(line)
            if not m:
                raise ParseError(f"line {number}: malformed checksum (want 'repeat <i>: checksum <16 hex digits>'): {line!r}")
            if int(m.group(1)) != len(out["checksums"]):
                raise ParseError(f"line {number}: checksum of repeat {m.group(1)} where repeat {len(out['checksums'])} was due")
            out["checksums"].append(m.group(2))
        elif line.startswith("Incorrect result"):
            if line == "Incorrect result":
                out["verdict"] = "incorrect"
            else:
                out["failures"].append(line[len("Incorrect result:"):].strip())
        elif line == "Correct result":
            out["verdict"] = "correct"
    if out["problem"] is None:
        raise ParseError("no 'autocomp-gemmini:' header: the harness did not start (see the log)")
    if out["verdict"] is None:
        raise ParseError("neither 'Correct result' nor 'Incorrect result': the run stopped before its verdict")
    if len(out["checksums"]) != out["repeats"]:
        raise ParseError(f"{len(out['checksums'])} checksum line(s) for {out['repeats']} repeats")
    if expect_measurements:
        for field, name in (("latencies", "Generated implementation latency"), ("instructions", "Generated implementation instructions")):
            if len(out[field]) != out["repeats"]:
                raise ParseError(f"{len(out[field])} '{name}' line(s) for {out['repeats']} repeats")
    return out


def parse_firesim_latency(text):
    """The last 'Generated implementation latency: N cycles' of a FireSim uartlog, as Autocomp reads it."""
    found = None
    for number, raw in enumerate(_lines(text), 1):
        line = raw.strip()
        if _LATENCY_PREFIX in line:
            m = re.search(r"Generated implementation latency: (\d+) cycles\s*$", line)
            if not m:
                raise ParseError(f"uartlog line {number}: malformed latency (want 'Generated implementation latency: <n> cycles'): {line!r}")
            found = int(m.group(1))
    if found is None:
        raise ParseError("uartlog: no 'Generated implementation latency: <n> cycles' line")
    return found
