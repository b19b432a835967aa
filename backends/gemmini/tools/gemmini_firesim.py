#!/usr/bin/env python3
"""Runs one built harness on FireSim and copies its uartlog out (the gemmini target's optional
`firesim` step; it runs only where the setting firesim_dir names a FireSim checkout).

    gemmini_firesim.py --firesim-dir DIR --binary FILE --name NAME --out FILE [--timeout S]

It writes a one-job workload (deploy/workloads/<NAME>.json, the binary as the job's boot binary and
`uartlog` as its output), a copy of deploy/config_runtime.yaml that names that workload, then runs
`firesim infrasetup` and `firesim runworkload` with that runtime config and copies the job's uartlog
to --out. The judge's report reads the last `Generated implementation latency: N cycles` from it.
FireSim's manager writes its deploy directory and reaches the simulation hosts: this step needs
`evaluation.sandbox: off` on the manager host.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--firesim-dir", required=True)
    p.add_argument("--binary", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=int, default=3000)
    a = p.parse_args()
    deploy = os.path.join(a.firesim_dir, "deploy")
    name = "autocomp-" + re.sub(r"[^A-Za-z0-9_-]", "_", a.name)
    workload_dir = os.path.join(deploy, "workloads", name)
    os.makedirs(workload_dir, exist_ok=True)
    shutil.copy(a.binary, os.path.join(workload_dir, "test-baremetal"))
    with open(os.path.join(deploy, "workloads", name + ".json"), "w") as f:
        json.dump({"benchmark_name": name, "common_simulation_outputs": ["uartlog"],
                   "workloads": [{"name": "run", "bootbinary": "test-baremetal", "outputs": []}]}, f, indent=2)
    with open(os.path.join(deploy, "config_runtime.yaml")) as f:
        runtime = f.read()
    runtime, count = re.subn(r"(?m)^(\s*workload_name:\s*).*$", lambda m: m.group(1) + name + ".json", runtime)
    if count != 1:
        print("gemmini_firesim: deploy/config_runtime.yaml has no single 'workload_name:' line to point at the workload", file=sys.stderr)
        return 2
    config = os.path.join(deploy, name + "-runtime.yaml")
    with open(config, "w") as f:
        f.write(runtime)
    for verb in ("infrasetup", "runworkload"):
        step = subprocess.run(["firesim", verb, "-c", config], cwd=deploy, timeout=a.timeout)
        if step.returncode != 0:
            print(f"gemmini_firesim: 'firesim {verb}' exited with {step.returncode}", file=sys.stderr)
            return 1
    logs = sorted(glob.glob(os.path.join(deploy, "results-workload", f"*{name}", "*", "uartlog")), key=os.path.getmtime)
    if not logs:
        print(f"gemmini_firesim: no uartlog under deploy/results-workload/*{name}/", file=sys.stderr)
        return 1
    shutil.copy(logs[-1], a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
