"""popcorn_output.py — reading what GPU MODE's harness reports (trusted parser of untrusted text).

Two formats, both produced from the same measurements:

* the `key: value` lines that a reference-kernels `eval.py` writes to the file descriptor named by
  $POPCORN_FD, e.g.

      benchmark-count: 2
      benchmark.0.spec: size: 1024; seed: 31232
      benchmark.0.runs: 100
      benchmark.0.mean: 10520.3          (nanoseconds)
      benchmark.0.std / .err / .best / .worst
      benchmark.1.status: fail
      benchmark.1.error: mismatch at ...
      test-count: 5, test.0.spec, test.0.status: pass|fail, test.0.error
      check: pass|fail

* the human report that GPU MODE's service (and so `popcorn-cli submit`) prints per case: the spec
  on one line, then ` ⏱ 10.5 ± 0.50 µs` (mean ± standard error, unit ns, µs or ms; without `± err`
  when the error is zero) and optionally ` ⚡ best 🐌 worst`; a failed case is `❌ SPEC failed
  testing:` followed by the error.

The score is the geometric mean of the cases' mean times, in microseconds, as GPU MODE ranks
leaderboards (it reports the same geometric mean in seconds).
"""
import math
import re

UNITS_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
MAX_TEXT = 4 << 20
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*): ?(.*)$")
_TIMER = re.compile(r"^\s*⏱\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(?:±\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*)?(ns|us|µs|μs|ms|s)\s*$")
_HARNESS_KEY = re.compile(r"^(?:(?:benchmark|test)(?:-count|\.[0-9]+\.[a-z]+)|check)$")
_FAILED = re.compile(r"^\s*❌\s*(.*?)\s*failed testing:?\s*$")


class ParseError(ValueError):
    pass


def parse_key_values(text):
    """The `key: value` lines, in order; other lines are ignored. A key given twice keeps the first
    value and is reported by `duplicates`."""
    values, duplicates = {}, []
    for line in text[:MAX_TEXT].splitlines():
        m = _KEY.match(line.rstrip("\r"))
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if key in values:
            # Only the harness's own keys count: report lines such as "size: 1024; seed: 7" repeat.
            if _HARNESS_KEY.match(key):
                duplicates.append(key)
            continue
        values[key] = value
    return values, duplicates


def _number(values, key):
    text = values.get(key)
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise ParseError(f"{key}: '{text[:80]}' is not a number")
    if not math.isfinite(v) or v < 0:
        raise ParseError(f"{key}: {text[:80]} is not a non-negative finite number")
    return v


def cases_from_key_values(values, prefix="benchmark"):
    """[{index, spec, mean_ns, err_ns, best_ns, worst_ns, runs, status, error}] from the lines."""
    count_text = values.get(f"{prefix}-count")
    if count_text is None:
        return None
    try:
        count = int(count_text)
    except ValueError:
        raise ParseError(f"{prefix}-count: '{count_text[:80]}' is not an integer")
    if count < 0 or count > 10000:
        raise ParseError(f"{prefix}-count: {count} is out of range")
    cases = []
    for i in range(count):
        base = f"{prefix}.{i}"
        case = {"index": i, "spec": values.get(f"{base}.spec", ""), "status": values.get(f"{base}.status", ""),
                "error": values.get(f"{base}.error", "")}
        for field in ("mean", "err", "std", "best", "worst", "runs"):
            case[field] = _number(values, f"{base}.{field}")
        if case["status"] not in ("", "pass", "fail"):
            raise ParseError(f"{base}.status: '{case['status'][:40]}' is neither pass nor fail")
        cases.append(case)
    return cases


def cases_from_report(text):
    """The same cases from the ⏱ report (popcorn-cli's output): spec line, then its timer line."""
    cases, previous = [], ""
    lines = text[:MAX_TEXT].splitlines()
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        failed = _FAILED.match(line)
        if failed:
            error = lines[i + 1].strip() if i + 1 < len(lines) else ""
            cases.append({"index": len(cases), "spec": failed.group(1), "status": "fail", "error": error, "mean": None,
                          "err": None, "std": None, "best": None, "worst": None, "runs": None})
            continue
        timer = _TIMER.match(line)
        if timer:
            scale = UNITS_NS[timer.group(3)]
            mean = float(timer.group(1)) * scale
            err = float(timer.group(2)) * scale if timer.group(2) else 0.0
            cases.append({"index": len(cases), "spec": previous.strip(), "status": "", "error": "", "mean": mean, "err": err,
                          "std": None, "best": None, "worst": None, "runs": None})
        elif line.strip():
            previous = line
    return cases


def verdict(text, expected_specs=None):
    """What one run reported: {'status', 'correct', 'cases', 'geomean_us', 'problems', 'log'}.

    `status`: ok when every case passed and has a time; incorrect when the harness said a case or
    the check failed; error when the text is malformed or incomplete (the harness did not finish).
    `expected_specs`: the cases the judge asked for, in order; the report must match them.
    """
    values, duplicates = parse_key_values(text)
    problems = []
    try:
        cases = cases_from_key_values(values)
        if cases is None:
            cases = cases_from_report(text)
            if not cases:
                cases = None
    except ParseError as e:
        return {"status": "error", "correct": False, "cases": [], "geomean_us": None, "problems": [str(e)],
                "log": f"malformed harness output: {e}"}
    if duplicates:
        problems.append("keys reported twice: " + ", ".join(sorted(set(duplicates))[:5]))
    check = values.get("check")
    if cases is None:
        tests = cases_from_key_values(values, "test") if "test-count" in values else None
        failed = [t for t in (tests or []) if t["status"] == "fail"]
        if check == "fail" or failed:
            return {"status": "incorrect", "correct": False, "cases": tests or [], "geomean_us": None, "problems": problems,
                    "log": "\n".join(f"test {t['spec']}: {t['error']}" for t in failed) or "check: fail"}
        if check == "pass" and tests is not None:
            return {"status": "ok", "correct": True, "cases": tests, "geomean_us": None, "problems": problems,
                    "log": f"{len(tests)} tests passed"}
        return {"status": "error", "correct": False, "cases": [], "geomean_us": None, "problems": problems,
                "log": "no benchmark or test results in the harness output (it stopped early or wrote nothing)"}
    failed = [c for c in cases if c["status"] == "fail"]
    if failed or check == "fail":
        return {"status": "incorrect", "correct": False, "cases": cases, "geomean_us": None, "problems": problems,
                "log": "\n".join(f"case {c['spec']}: {c['error'] or 'failed'}" for c in failed) or "check: fail"}
    if expected_specs is not None:
        got = [c["spec"] for c in cases]
        if [s.strip() for s in got] != [s.strip() for s in expected_specs]:
            problems.append("the reported cases are not the ones asked for")
            return {"status": "error", "correct": False, "cases": cases, "geomean_us": None, "problems": problems,
                    "log": "the harness reported cases " + repr(got[:4]) + " for " + repr(list(expected_specs)[:4])}
    for c in cases:
        if c["mean"] is None or c["mean"] <= 0:
            problems.append(f"case {c['index']} ({c['spec']}) has no positive mean time")
        elif c["best"] is not None and c["worst"] is not None and not (c["best"] <= c["mean"] * (1 + 1e-9) and c["mean"] <= c["worst"] * (1 + 1e-9)):
            problems.append(f"case {c['index']} ({c['spec']}): mean {c['mean']} ns outside [best {c['best']}, worst {c['worst']}]")
    if problems:
        return {"status": "error", "correct": False, "cases": cases, "geomean_us": None, "problems": problems,
                "log": "inconsistent harness output: " + "; ".join(problems)}
    if check not in (None, "pass"):
        return {"status": "error", "correct": False, "cases": cases, "geomean_us": None, "problems": [f"check: {check}"],
                "log": f"unexpected check value '{check[:40]}'"}
    geomean_ns = math.exp(sum(math.log(c["mean"]) for c in cases) / len(cases))
    return {"status": "ok", "correct": True, "cases": cases, "geomean_us": geomean_ns / 1e3, "problems": [],
            "log": f"{len(cases)} benchmark cases"}


def format_us(ns):
    us = ns / 1e3
    return f"{us:.4g} µs"
