# Stand-in for a reference-kernels eval.py, for tests only: the same command line (MODE CASES_FILE),
# the same POPCORN_FD / POPCORN_SEED protocol and the same key: value lines, with wall-clock timing
# of a pure-Python kernel instead of CUDA events. It records the seed it was given in seed.txt so a
# test can check that the seed arrived without being on any command line.
import os
import re
import sys
import time

from reference import check_implementation, generate_input


def cases(path):
    out = []
    for line in open(path).read().splitlines():
        args = {}
        for part in line.split(";"):
            key, value = re.fullmatch(r"\s*([a-zA-Z]+):\s*([a-zA-Z]+|[+-]?[0-9]+)\s*", part).groups()
            args[key] = int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else value
        out.append((line, args))
    return out


def main():
    fd = os.getenv("POPCORN_FD")
    if not fd:
        return 111
    mode, path = sys.argv[1], sys.argv[2]
    seed = os.getenv("POPCORN_SEED")
    os.unsetenv("POPCORN_SEED")
    with open("seed.txt", "w") as f:
        f.write(seed or "")
    out = os.fdopen(int(fd), "w")

    def log(key, value):
        print(f"{key}: {value}", file=out, flush=True)

    from submission import custom_kernel
    claim = getattr(sys.modules["submission"], "CLAIMED_MEAN_NS", None)
    prefix = "test" if mode == "test" else "benchmark"
    log(f"{prefix}-count", len(cases(path)))
    passed = True
    for i, (spec, args) in enumerate(cases(path)):
        log(f"{prefix}.{i}.spec", spec)
        data = generate_input(**args)
        good, message = check_implementation(data, custom_kernel(list(data)))
        if not good:
            passed = False
            log(f"{prefix}.{i}.status", "fail")
            log(f"{prefix}.{i}.error", message)
            continue
        if mode == "test":
            log(f"{prefix}.{i}.status", "pass")
            continue
        times = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            custom_kernel(data)
            times.append(time.perf_counter_ns() - t0)
        mean = claim if claim is not None else sum(times) / len(times)
        log(f"{prefix}.{i}.runs", len(times))
        log(f"{prefix}.{i}.mean", mean)
        log(f"{prefix}.{i}.std", 0.0)
        log(f"{prefix}.{i}.err", 0.0)
        log(f"{prefix}.{i}.best", min(times) if claim is None else claim)
        log(f"{prefix}.{i}.worst", max(times) if claim is None else claim)
    log("check", "pass" if passed else "fail")
    return 0 if passed else 112


if __name__ == "__main__":
    sys.exit(main())
