"""The tpu target's timing report: the text the bench step prints, and its parser.

The format is the one Autocomp's TPU harness prints for a candidate (one line each, the value then the
unit): per-trial lines the judge adds, then the median as `Latency:` and, where a peak is known,
`Utilization:`:

    Trial 1: 0.4123 ms
    ...
    Trial 10: 0.4098 ms
    Latency: 0.4101 ms
    Utilization: 37.5%

  tpu_output.py parse FILE      prints the parsed report as JSON; exit 1 with the line at fault
"""
import json
import re
import sys

_UNITS = {'s': 1e3, 'ms': 1.0, 'us': 1e-3, 'µs': 1e-3, 'ns': 1e-6}
_NUMBER = r'([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)'
_TIME = re.compile(r'^(Latency|Trial (\d+)):\s*' + _NUMBER + r'\s*(s|ms|us|µs|ns)\s*(?:\(.*\))?$')
_UTILIZATION = re.compile(r'^Utilization:\s*' + _NUMBER + r'\s*%$')


class ReportError(ValueError):
    pass


def format_report(trials_ms, utilization_pct=None):
    """The report for these trial times (milliseconds): per-trial lines, the median, the utilization."""
    lines = [f"Trial {i + 1}: {t:.6g} ms" for i, t in enumerate(trials_ms)]
    lines.append(f"Latency: {median(trials_ms):.6g} ms")
    if utilization_pct is not None:
        lines.append(f"Utilization: {utilization_pct:.3g}%")
    return '\n'.join(lines) + '\n'


def median(values):
    s = sorted(values)
    n = len(s)
    if n == 0:
        raise ReportError("no trials")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def parse_report(text):
    """{'latency_ms': float, 'trials_ms': [...], 'utilization_pct': float or None}. Lines that start with
    one of the report's keys must be well formed; other lines (the harness's notes) are ignored."""
    latency, utilization, trials = None, None, {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line.startswith(('Latency', 'Trial ', 'Utilization')):
            continue
        m = _TIME.match(line)
        if m:
            value = float(m.group(3)) * _UNITS[m.group(4)]
            if m.group(2) is None:
                if latency is not None:
                    raise ReportError(f"line {number}: a second Latency line ('{line}')")
                latency = value
            else:
                index = int(m.group(2))
                if index in trials:
                    raise ReportError(f"line {number}: trial {index} reported twice")
                trials[index] = value
            continue
        m = _UTILIZATION.match(line)
        if m:
            utilization = float(m.group(1))
            continue
        raise ReportError(f"line {number}: not a '<key>: <number> <unit>' line: '{line}'")
    if latency is None:
        raise ReportError("no 'Latency: X ms' line")
    ordered = [trials[i] for i in sorted(trials)]
    if trials and sorted(trials) != list(range(1, len(trials) + 1)):
        raise ReportError(f"trials {sorted(trials)} are not numbered 1..{len(trials)}")
    if ordered and abs(median(ordered) - latency) > 1e-6 * max(1.0, latency) + 5e-4 * latency:
        raise ReportError(f"Latency {latency:g} ms is not the median of the {len(ordered)} trials ({median(ordered):g} ms)")
    return {'latency_ms': latency, 'trials_ms': ordered, 'utilization_pct': utilization}


def main():
    if len(sys.argv) != 3 or sys.argv[1] != 'parse':
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    with open(sys.argv[2], encoding='utf-8', errors='replace') as f:
        text = f.read()
    try:
        print(json.dumps(parse_report(text)))
    except ReportError as e:
        print(f"{sys.argv[2]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
