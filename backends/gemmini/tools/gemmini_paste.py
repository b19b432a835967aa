#!/usr/bin/env python3
"""Pastes a candidate into a problem's harness between `// SUBSTITUTE HERE` and `// SUBSTITUTE END`
and writes the shape header the harness includes (autocomp_shape.h: one macro per shape key, the
shape as text, and the data key).

    gemmini_paste.py --harness H --shape M=64,N=64,K=64 --key KEY --out-dir DIR [--candidate FILE]

Without --candidate only the header is written (the judge's host build needs no candidate).
"""
import argparse
import os
import re
import sys

BEGIN, END = "// SUBSTITUTE HERE", "// SUBSTITUTE END"


def shape_header(shape, key):
    pairs = []
    for item in shape.split(","):
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not re.fullmatch(r"-?\d+", value):
            raise ValueError(f"shape: '{item}' is not NAME=INTEGER (in '{shape}')")
        pairs.append((name, int(value)))
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
        raise ValueError(f"key: '{key}' must be letters, digits, '_', '.', '-'")
    lines = ["// Written by gemmini_paste.py for one evaluation.", "#pragma once"]
    lines += [f"#define {n} {v}" for n, v in pairs]
    lines += [f'#define AUTOCOMP_SHAPE_TEXT "{",".join(f"{n}={v}" for n, v in pairs)}"', f'#define AUTOCOMP_KEY "{key}"', ""]
    return "\n".join(lines)


def paste(harness_text, candidate_text, harness_name="harness.c"):
    begin = harness_text.find(BEGIN)
    end = harness_text.find(END)
    if begin < 0 or end < 0 or end < begin:
        raise ValueError(f"{harness_name}: needs '{BEGIN}' followed by '{END}'")
    if harness_text.find(BEGIN, begin + 1) >= 0 or harness_text.find(END, end + 1) >= 0:
        raise ValueError(f"{harness_name}: the SUBSTITUTE markers must appear once each")
    head = harness_text[: begin + len(BEGIN)]
    tail = harness_text[end:]
    resume = harness_text[:end].count("\n") + 1  # compiler messages keep naming the harness's own lines
    name = os.path.basename(harness_name)
    return f"{head}\n#line 1 \"candidate.c\"\n{candidate_text.rstrip()}\n#line {resume} \"{name}\"\n{tail}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--harness", required=True)
    p.add_argument("--candidate")
    p.add_argument("--shape", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--out-dir", required=True)
    a = p.parse_args()
    try:
        header = shape_header(a.shape, a.key)
        os.makedirs(a.out_dir, exist_ok=True)
        with open(os.path.join(a.out_dir, "autocomp_shape.h"), "w") as f:
            f.write(header)
        if a.candidate:
            with open(a.harness) as f:
                harness = f.read()
            with open(a.candidate) as f:
                candidate = f.read()
            with open(os.path.join(a.out_dir, "test.c"), "w") as f:
                f.write(paste(harness, candidate, a.harness))
    except (OSError, ValueError) as e:
        print(f"gemmini_paste: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
