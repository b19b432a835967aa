"""Tests of the gpumode target's tools (backends/gpumode/tools): the parsers against output in the
exact formats of GPU MODE's eval.py (POPCORN_FD key: value lines) and of its service's report
(popcorn-cli's ⏱ lines), task.yml reading, and the judge/worker plumbing with a stand-in eval.py
(tests/gpu/gpumode_fixture), which needs neither torch nor a GPU.

Run: python3 -m unittest discover -s tests/gpu -p 'test_gpumode_tools.py'
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "backends", "gpumode", "tools")
FIXTURE = os.path.join(HERE, "gpumode_fixture", "problems", "echo")
sys.path.insert(0, TOOLS)

import gpumode_task  # noqa: E402
import popcorn_output  # noqa: E402

# eval.py's lines for two passing benchmark cases (means in nanoseconds).
KEY_VALUES = """benchmark-count: 2
benchmark.0.spec: size: 1024; seed: 31232
benchmark.0.runs: 100
benchmark.0.mean: 10520.5
benchmark.0.std: 140.25
benchmark.0.err: 14.025
benchmark.0.best: 10300.0
benchmark.0.worst: 11200.0
benchmark.1.spec: size: 2048; seed: 4052
benchmark.1.runs: 37
benchmark.1.mean: 40100.0
benchmark.1.std: 320.0
benchmark.1.err: 52.6
benchmark.1.best: 39700.0
benchmark.1.worst: 41000.0
check: pass
"""

# The service's report of three cases in ns, µs and ms, one without an error term, as popcorn-cli
# prints it (format_time: "10.5 ± 0.50 ns", "2.15 ± 0.000 µs", "3.75 ± 0.024 ms", "51.2 µs").
REPORT = """Running on:
* GPU: `NVIDIA H100 80GB HBM3`

## Benchmarks:
```
k: 7168; m: 1024; n: 1536; seed: 8135
 ⏱ 10.5 ± 0.50 ns
 ⚡ 10.1 ns 🐌 11.0 ns

k: 512; m: 4096; n: 512; seed: 873
 ⏱ 2.15 ± 0.000 µs
 ⚡ 2.10 µs 🐌 2.30 µs

k: 2048; m: 6144; n: 7168; seed: 6256
 ⏱ 3.75 ± 0.024 ms
 ⚡ 3.70 ms 🐌 3.90 ms

k: 256; m: 64; n: 64; seed: 1
 ⏱ 51.2 µs
```
"""


class Parsers(unittest.TestCase):
    def test_key_value_lines_give_the_geometric_mean_in_microseconds(self):
        v = popcorn_output.verdict(KEY_VALUES)
        self.assertEqual(v["status"], "ok", v["log"])
        self.assertEqual([c["spec"] for c in v["cases"]], ["size: 1024; seed: 31232", "size: 2048; seed: 4052"])
        self.assertAlmostEqual(v["geomean_us"], math.sqrt(10520.5 * 40100.0) / 1e3, places=9)
        self.assertEqual(v["cases"][1]["runs"], 37)

    def test_report_lines_in_ns_us_and_ms(self):
        v = popcorn_output.verdict(REPORT)
        self.assertEqual(v["status"], "ok", v["log"])
        means = [c["mean"] for c in v["cases"]]
        for got, want in zip(means, [10.5, 2150.0, 3.75e6, 51200.0]):
            self.assertAlmostEqual(got, want, delta=want * 1e-12)
        self.assertEqual(v["cases"][0]["spec"], "k: 7168; m: 1024; n: 1536; seed: 8135")
        self.assertAlmostEqual(v["cases"][2]["err"], 0.024e6, delta=1e-6)
        self.assertEqual(v["cases"][3]["err"], 0.0)
        self.assertAlmostEqual(v["geomean_us"], math.exp(sum(math.log(m) for m in means) / 4) / 1e3, places=9)

    def test_failed_benchmark_case_is_incorrect_with_its_error(self):
        text = KEY_VALUES.replace("benchmark.1.runs: 37\n", "benchmark.1.status: fail\nbenchmark.1.error: mismatch at (3, 7): 1.5 vs 2.0\n")
        text = text.replace("check: pass", "check: fail")
        v = popcorn_output.verdict(text)
        self.assertEqual(v["status"], "incorrect")
        self.assertIn("mismatch at (3, 7)", v["log"])
        self.assertIn("size: 2048; seed: 4052", v["log"])

    def test_failed_case_in_the_report_is_incorrect(self):
        text = "❌ k: 256; m: 64; seed: 1 failed testing:\n\nmismatch found! custom implementation doesn't match reference\n"
        v = popcorn_output.verdict(text)
        self.assertEqual(v["status"], "incorrect")
        self.assertIn("k: 256; m: 64; seed: 1", v["log"])

    def test_test_mode_lines(self):
        text = "test-count: 2\ntest.0.spec: size: 3; seed: 1\ntest.0.status: pass\ntest.1.spec: size: 5; seed: 2\n" \
               "test.1.status: fail\ntest.1.error: got [1, 2] expected [2, 1]\ncheck: fail\n"
        v = popcorn_output.verdict(text)
        self.assertEqual(v["status"], "incorrect")
        self.assertIn("got [1, 2] expected [2, 1]", v["log"])
        passing = "test-count: 1\ntest.0.spec: size: 3; seed: 1\ntest.0.status: pass\ncheck: pass\n"
        self.assertEqual(popcorn_output.verdict(passing)["status"], "ok")

    def test_malformed_or_inconsistent_output_is_an_error(self):
        cases = {
            "truncated": "benchmark-count: 2\nbenchmark.0.spec: size: 1\n",
            "not a number": KEY_VALUES.replace("benchmark.0.mean: 10520.5", "benchmark.0.mean: fast"),
            "mean outside best..worst": KEY_VALUES.replace("benchmark.0.mean: 10520.5", "benchmark.0.mean: 9000"),
            "negative": KEY_VALUES.replace("benchmark.1.mean: 40100.0", "benchmark.1.mean: -4"),
            "nothing": "Traceback (most recent call last):\n  ImportError: no module named torch\n",
            "key twice": KEY_VALUES + "benchmark.0.mean: 1.0\n",
        }
        for name, text in cases.items():
            with self.subTest(name):
                self.assertEqual(popcorn_output.verdict(text)["status"], "error", name)

    def test_reported_cases_must_be_the_ones_asked_for(self):
        asked = ["size: 1024; seed: 31232", "size: 2048; seed: 4052"]
        self.assertEqual(popcorn_output.verdict(KEY_VALUES, asked)["status"], "ok")
        self.assertEqual(popcorn_output.verdict(KEY_VALUES, asked[:1])["status"], "error")
        self.assertEqual(popcorn_output.verdict(KEY_VALUES, [asked[1], asked[0]])["status"], "error")


class Task(unittest.TestCase):
    def test_task_yml_cases_and_files(self):
        task = gpumode_task.load(FIXTURE)
        self.assertEqual([gpumode_task.spec_line(c) for c in task["benchmarks"]], ["size: 1000; seed: 31232", "size: 4000; seed: 4052"])
        self.assertEqual(len(task["tests"]), 2)
        self.assertIn({"name": "eval.py", "source": "../eval.py"}, task["files"])

    def test_assemble_copies_the_listed_files_and_the_submission(self):
        with tempfile.TemporaryDirectory() as tmp:
            sub = os.path.join(tmp, "candidate.py")
            with open(sub, "w") as f:
                f.write("def custom_kernel(data):\n    return data\n")
            run = os.path.join(tmp, "run")
            lines = gpumode_task.assemble(FIXTURE, gpumode_task.load(FIXTURE), sub, run, "test")
            self.assertEqual(sorted(os.listdir(run)), ["cases.txt", "eval.py", "reference.py", "submission.py", "task.py"])
            self.assertEqual(open(os.path.join(run, "submission.py")).read(), open(sub).read())
            self.assertEqual(lines, ["size: 3; seed: 4242", "size: 17; seed: 5236"])

    def test_a_task_without_a_submission_slot_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "task.yml"), "w") as f:
                f.write('files:\n  - {"name": "eval.py", "source": "eval.py"}\nbenchmarks:\n  - {"size": 1}\n')
            with self.assertRaisesRegex(gpumode_task.TaskError, "@SUBMISSION@"):
                gpumode_task.load(tmp)


class Plumbing(unittest.TestCase):
    """The judge and the worker as the workbench's runner starts them (a file stands in for the
    memfd), with the stand-in eval.py."""

    def run_pair(self, submission_text, mode="benchmark", seed="8754321987654321"):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        sub = os.path.join(tmp, "candidate.py")
        with open(sub, "w") as f:
            f.write(submission_text)
        channel = os.path.join(tmp, "channel")
        with open(channel, "wb") as f:
            f.truncate(8 << 20)
        fd = os.open(channel, os.O_RDWR)
        self.addCleanup(os.close, fd)
        run_dir = os.path.join(tmp, "run")
        reference = os.path.join(FIXTURE, "reference.py")
        worker_cmd = [sys.executable, os.path.join(TOOLS, "gpumode_worker.py"), "--channel-fd", str(fd), "--reference", reference,
                      "--submission", sub, "--mode", mode, "--run-dir", run_dir, "--python", sys.executable]
        worker = subprocess.Popen(worker_cmd, pass_fds=(fd,), stderr=subprocess.PIPE, text=True)
        result = os.path.join(tmp, "result.json")
        judge = subprocess.run([sys.executable, os.path.join(TOOLS, "gpumode_judge.py"), "run", "--channels", str(fd), "--worker-pids",
                                str(worker.pid), "--seed", seed, "--reference", reference, "--mode", mode, "--timeout", "60",
                                "--result", result], pass_fds=(fd,), capture_output=True, text=True, timeout=120)
        worker.wait(timeout=60)
        data = json.load(open(result)) if os.path.exists(result) else None
        with open(channel, "rb") as f:
            header = f.read(4096)
        return judge, data, run_dir, header, worker_cmd

    def test_correct_submission_is_scored_and_the_seed_travels_only_through_shared_memory(self):
        seed = "8754321987654321"
        judge, data, run_dir, header, worker_cmd = self.run_pair("def custom_kernel(data):\n    return data[::-1]\n", seed=seed)
        self.assertEqual(judge.returncode, 0, judge.stderr)
        self.assertEqual(data["status"], "ok")
        self.assertTrue(data["correct"])
        self.assertGreater(data["metrics"]["geomean_us"], 0)
        self.assertEqual(data["metrics"]["cases"], 2)
        self.assertIn("size: 4000; seed: 4052", "\n".join(data["feedback"]))
        self.assertEqual(open(os.path.join(run_dir, "seed.txt")).read(), seed)
        self.assertNotIn(seed, " ".join(worker_cmd))
        self.assertNotIn(seed.encode(), header)

    def test_wrong_submission_fails_the_test_run(self):
        judge, data, _, _, _ = self.run_pair("def custom_kernel(data):\n    return data\n", mode="test")
        self.assertEqual(judge.returncode, 1, judge.stderr)
        self.assertEqual(data["status"], "incorrect")
        self.assertIn("mismatch", data["log"])

    def test_correct_submission_passes_the_test_run_without_a_result(self):
        judge, data, _, _, _ = self.run_pair("def custom_kernel(data):\n    return data[::-1]\n", mode="test")
        self.assertEqual(judge.returncode, 0, judge.stderr)
        self.assertIsNone(data)

    def test_times_beyond_the_judges_clock_are_rejected(self):
        # Claims 10 s per run, 5 runs per case, in a run that takes well under a minute.
        judge, data, _, _, _ = self.run_pair("CLAIMED_MEAN_NS = 10e9\ndef custom_kernel(data):\n    return data[::-1]\n")
        self.assertEqual(judge.returncode, 1, judge.stderr)
        self.assertEqual(data["status"], "rejected")
        self.assertIn("judge's clock", data["log"])

    def test_a_crashing_submission_is_a_crash(self):
        judge, data, _, _, _ = self.run_pair("import sys\nsys.exit(3)\n")
        self.assertEqual(judge.returncode, 1, judge.stderr)
        self.assertIn(data["status"], ("crash", "error"))


if __name__ == "__main__":
    unittest.main()
