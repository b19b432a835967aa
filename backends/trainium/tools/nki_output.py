"""Parsers for the timing reports of the Neuron tools (stdlib only: used by the judge and the tests).

- `neuron-profile view -n X.neff -s X_exec_N.ntff --output-format=summary-json` prints one JSON
  object per line, keyed by the profiled graph's name, whose `total_time` is the device time of the
  profiled execution in seconds: `{"<name>": {"total_time": 0.000123, ...}}`. The score is that
  time in milliseconds.
- The fallback: a harness around `nki.benchmark(warmup=2, iters=10)` prints the 99th percentile of
  its latencies as `Latency: X ms (P99)`; the last such line counts.
"""
import json
import math
import re


class ParseError(ValueError):
    pass


def parse_profile_summary(text):
    """total_time (s) of neuron-profile's summary-json, in ms, and the whole summary object."""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise ParseError(f"summary-json line {number}: not JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(data, dict) or len(data) != 1:
            raise ParseError(f"summary-json line {number}: expected one object keyed by the graph's name, got {len(data) if isinstance(data, dict) else type(data).__name__} keys")
        name, summary = next(iter(data.items()))
        if not isinstance(summary, dict):
            raise ParseError(f"summary-json line {number}: '{name}' is not an object")
        if "total_time" not in summary:
            raise ParseError(f"summary-json line {number}: '{name}' has no field 'total_time'")
        seconds = summary["total_time"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
            raise ParseError(f"summary-json line {number}: '{name}'.total_time is {seconds!r}, not a positive number of seconds")
        return seconds * 1000.0, name, summary
    raise ParseError("summary-json: no JSON object in neuron-profile's output")


_LATENCY = re.compile(r"^Latency: ([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?) ms \(P99\)$")


def parse_benchmark_latency(text):
    """The last `Latency: X ms (P99)` line, in ms."""
    found = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line.startswith("Latency:"):
            continue
        m = _LATENCY.match(line)
        if not m:
            raise ParseError(f"benchmark line {number}: malformed latency (want 'Latency: <ms> ms (P99)'): {line!r}")
        value = float(m.group(1))
        if not value > 0:
            raise ParseError(f"benchmark line {number}: latency {value} ms is not positive")
        found = value
    if found is None:
        raise ParseError("benchmark: no 'Latency: <ms> ms (P99)' line")
    return found
