"""Tests of the Python judge kit (backends/common/python/autocomp_kit): the verdict writer, the comparison
(NaN where the reference is finite, bit-exact mode), the channel's bounds checks and a judge/worker round
trip through a real memfd and a real isolated worker process, the isolation check, the draws and the
statistics. NumPy is needed for the comparison and the channel (Debian: python3-numpy); without it those
tests skip, saying so.

Run: /usr/bin/python3 -m unittest discover -s tests/unit -p 'test_autocomp_kit.py' -v
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.normpath(os.path.join(HERE, "..", "..", "backends", "common", "python"))
sys.path.insert(0, KIT)

from autocomp_kit import channel, cli, draw, isolation, results, stats  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    np = None
needs_numpy = unittest.skipIf(np is None, "no NumPy in this Python (Debian: python3-numpy)")


class ResultsTest(unittest.TestCase):
    def test_writes_the_verdict_fields(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "result.json")
            results.write_result(path, "incorrect", True, "log text", {"m": 1}, ["fb"], ["flag"])
            with open(path) as f:
                got = json.load(f)
        self.assertEqual(got, {"status": "incorrect", "correct": True, "log": "log text", "metrics": {"m": 1},
                               "feedback": ["fb"], "flags": ["flag"]})

    def test_refuses_an_unknown_status(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ValueError):
                results.write_result(os.path.join(d, "r.json"), "fine", True, "")
            self.assertFalse(os.path.exists(os.path.join(d, "r.json")))

    def test_untrusted_file_is_bounded_and_the_cut_is_said(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "log")
            with open(path, "wb") as f:
                f.write(b"ab\0c" + b"x" * 100 + b"\xff")
            text, note = results.read_untrusted(path, limit=50)
            self.assertEqual(len(text), 49)  # 50 bytes, the NUL dropped
            self.assertTrue(text.startswith("abc"))
            self.assertIn("truncated to its first 50 bytes", note)
            text, note = results.read_untrusted(path)
            self.assertEqual(note, "")
            self.assertTrue(text.endswith("\ufffd"))


@needs_numpy
class CompareTest(unittest.TestCase):
    def test_identical_and_within_tolerance_pass(self):
        from autocomp_kit.compare import compare
        ref = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
        self.assertIsNone(compare([ref], [ref.copy()], 1e-4, 1e-4))
        self.assertIsNone(compare([ref], [ref + 5e-5], 1e-4, 1e-4))

    def test_nan_where_the_reference_is_finite_always_fails(self):
        from autocomp_kit.compare import compare
        ref = np.ones((4, 4), dtype=np.float32)
        got = ref.copy()
        got[2, 3] = np.nan
        why = compare([ref], [got], 1.0, 1.0)
        self.assertIsNotNone(why)
        self.assertIn("1 of 16 elements differ", why)
        self.assertIn("worst at [2, 3]", why)
        self.assertIn("1 NaN or infinite where the reference is finite", why)

    def test_nan_and_infinity_where_the_reference_has_them_pass(self):
        from autocomp_kit.compare import compare
        ref = np.array([np.nan, np.inf, -np.inf, 1.0])
        self.assertIsNone(compare([ref], [ref.copy()], 0.1, 0.1))
        self.assertIsNotNone(compare([ref], [np.array([np.nan, -np.inf, -np.inf, 1.0])], 0.1, 0.1))

    def test_worst_element_is_named(self):
        from autocomp_kit.compare import compare
        ref = np.zeros(10)
        got = ref.copy()
        got[3], got[7] = 0.5, 2.0
        why = compare([ref], [got], 0, 0.1)
        self.assertIn("2 of 10 elements differ", why)
        self.assertIn("worst at [7]: 2, expected 0", why)

    def test_bit_exact_checks_the_dtype_and_every_bit(self):
        from autocomp_kit.compare import compare, difference
        ref = np.arange(6, dtype=np.float32)
        self.assertIsNone(compare([ref], [ref.copy()], 0, 0))
        self.assertIn("dtype float64", compare([ref], [ref.astype(np.float64)], 0, 0))
        nudged = np.nextafter(ref, np.float32(np.inf))
        d = difference(ref, nudged, 0, 0)
        self.assertEqual((d["kind"], d["bad"], d["exact"]), ("values", 6, True))

    def test_shapes_and_counts(self):
        from autocomp_kit.compare import compare
        ref = np.zeros((2, 3))
        self.assertIn("shape (3, 2), expected (2, 3)", compare([ref], [ref.T], 1e-3, 1e-3))
        self.assertIn("2 outputs, expected 1", compare([ref], [ref, ref], 1e-3, 1e-3))

    def test_tolerances(self):
        from autocomp_kit.compare import parse_tolerance, tolerance_for
        self.assertEqual(parse_tolerance("rtol=1e-2, atol=0"), (1e-2, 0.0))
        self.assertEqual(parse_tolerance("atol=5"), (1e-3, 5.0))
        with self.assertRaisesRegex(ValueError, "tolerance item 'rtl=1'"):
            parse_tolerance("rtl=1")
        self.assertEqual(tolerance_for("auto", ["float32"]), (1e-4, 1e-4))
        self.assertEqual(tolerance_for("auto", ["float32", "bfloat16"]), (1e-2, 1e-2))
        self.assertEqual(tolerance_for("rtol=0,atol=0", ["float16"]), (0.0, 0.0))


@needs_numpy
class ChannelTest(unittest.TestCase):
    def setUp(self):
        self.fd, self.mem = channel.new_channel("kit-test")

    def tearDown(self):
        self.mem.close()
        os.close(self.fd)

    def test_arrays_round_trip(self):
        arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([True, False]), np.zeros((0, 5), np.int64)]
        channel.write_area(self.mem, channel.ANS_AREA, {"cmd": "x"}, arrays)
        header, back = channel.read_area(self.mem, channel.ANS_AREA)
        self.assertEqual(header["cmd"], "x")
        self.assertEqual(channel.metadata(header), [("float32", [3, 4]), ("bool", [2]), ("int64", [0, 5])])
        for a, b in zip(arrays, back):
            self.assertEqual(a.dtype, b.dtype)
            self.assertTrue(np.array_equal(a, b))

    def test_a_dtype_the_channel_does_not_carry_is_refused(self):
        with self.assertRaisesRegex(channel.ChannelError, "complex64 cannot be exchanged"):
            channel.write_area(self.mem, channel.REQ_AREA, {}, [np.zeros(2, np.complex64)])

    def _forge(self, entry):
        raw = json.dumps({"arrays": [entry]}).encode()
        self.mem[channel.ANS_AREA:channel.ANS_AREA + 8] = len(raw).to_bytes(8, "little")
        self.mem[channel.ANS_AREA + 8:channel.ANS_AREA + 8 + len(raw)] = raw

    def test_what_a_worker_writes_is_checked_against_the_area(self):
        self._forge({"dtype": "float32", "shape": [4], "offset": channel.AREA_BYTES, "bytes": 16})
        with self.assertRaisesRegex(channel.ChannelError, "outside the channel"):
            channel.read_area(self.mem, channel.ANS_AREA)
        self._forge({"dtype": "float32", "shape": [4], "offset": 0, "bytes": 8})
        with self.assertRaisesRegex(channel.ChannelError, "outside the channel"):
            channel.read_area(self.mem, channel.ANS_AREA)
        self._forge({"dtype": "object", "shape": [4], "offset": 0, "bytes": 32})
        with self.assertRaisesRegex(channel.ChannelError, "bad dtype"):
            channel.read_area(self.mem, channel.ANS_AREA)
        self._forge({"dtype": "float32", "shape": [-1], "offset": 0, "bytes": 4})
        with self.assertRaisesRegex(channel.ChannelError, "bad shape"):
            channel.read_area(self.mem, channel.ANS_AREA)
        self.mem[channel.ANS_AREA:channel.ANS_AREA + 8] = (channel.MAX_HEADER + 1).to_bytes(8, "little")
        with self.assertRaisesRegex(channel.ChannelError, "bad header length"):
            channel.read_header(self.mem, channel.ANS_AREA)

    def test_judge_and_isolated_worker(self):
        """A real worker process (python -I, the kit's Server) answers requests and timed calls; its failure
        reaches the judge with its phase and traceback; it exits when asked."""
        script = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {KIT!r})
            from autocomp_kit import channel, isolation
            isolation.refuse_unsafe()
            server = channel.Server(int(sys.argv[1]))
            state = {{}}
            def handle(cmd, header, arrays):
                if cmd == 'stage':
                    state['x'] = arrays[0]
                    server.answer(0, {{'ok': True}})
                elif cmd == 'timed':
                    server.timed(lambda: [state['x'] * 2])
                elif cmd == 'boom':
                    server.phase = 'first call'
                    raise ValueError('boom-marker')
                else:
                    return False
                return True
            sys.exit(server.serve(handle, idle_timeout_s=60))
            """)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "worker.py")
            with open(path, "w") as f:
                f.write(script)
            proc = subprocess.Popen(isolation.command(path, self.fd), pass_fds=(self.fd,))
            try:
                worker = channel.Worker(self.fd, proc.pid, 60, channel.NUMPY, mem=self.mem)
                x = np.arange(5, dtype=np.float32)
                worker.request({"cmd": "stage"}, [x])
                ms, header, got = worker.timed({"slot": 0}, fetch=True)
                self.assertGreater(ms, 0)
                self.assertEqual(channel.metadata(header), [("float32", [5])])
                self.assertTrue(np.array_equal(got[0], x * 2))
                with self.assertRaises(channel.WorkerError) as caught:
                    worker.request({"cmd": "boom"})
                self.assertEqual(caught.exception.phase, "first call")
                self.assertIn("boom-marker", caught.exception.trace)
                with self.assertRaises(channel.WorkerError) as caught:
                    worker.request({"cmd": "what"})
                self.assertIn("unknown command", str(caught.exception))
                worker.shutdown()
                self.assertEqual(proc.wait(timeout=10), 0)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


class IsolationTest(unittest.TestCase):
    def run_check(self, *flags):
        code = f"import sys; sys.path.insert(0, {KIT!r}); from autocomp_kit import isolation; print(isolation.problems())"
        return subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=60)

    def test_an_isolated_python_is_accepted(self):
        out = self.run_check("-I")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("not isolated", out.stdout)

    def test_a_python_that_is_not_isolated_is_refused(self):
        out = self.run_check()
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("not isolated (run it with -I)", out.stdout)

    def test_worker_command_is_isolated(self):
        self.assertEqual(isolation.command("w.py", "serve", 3, python="py"), ["py", "-I", "w.py", "serve", "3"])


class DrawAndStatsTest(unittest.TestCase):
    def test_picks_are_the_seeds_and_include_the_last_call(self):
        a, b = draw.Draw(7), draw.Draw(7)
        picks = a.picks(3, 103, 3)
        self.assertEqual(picks, b.picks(3, 103, 3))
        self.assertIn(102, picks)
        self.assertTrue(all(3 <= p < 103 for p in picks))
        self.assertIn(len(picks), (3, 4))
        self.assertNotEqual([draw.Draw(7, 1).subseed() for _ in range(3)], [draw.Draw(7).subseed() for _ in range(3)])
        self.assertEqual([draw.slot(i) for i in range(6)], [0, 1, 2, 3, 0, 1])

    def test_summary_and_paired_speedup(self):
        s = stats.summary([3.0, 1.0, 2.0])
        self.assertEqual((s["mean"], s["median"], s["min"], s["max"], s["n"]), (2.0, 2.0, 1.0, 3.0, 3))
        base = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0]
        point, low, high = stats.paired_speedup(base, [b / 2 for b in base])
        self.assertAlmostEqual(point, 2.0)
        self.assertAlmostEqual(low, 2.0)
        self.assertAlmostEqual(high, 2.0)
        point, low, high = stats.paired_speedup(base, [5.0, 6.0, 4.0, 5.0, 5.5, 4.5])
        self.assertLessEqual(low, point)
        self.assertLessEqual(point, high)
        self.assertLess(low, high)
        with self.assertRaises(ValueError):
            stats.summary([])

    def test_paired_ratio_matches_the_cpp_kit(self):
        # The ranks of stats.h's median_interval: 25 ratios 0.76, 0.78, ..., 1.24 give 1.0 in [r[6], r[18]].
        ratios = [0.76 + 0.02 * i for i in range(25)]
        value, low, high = stats.median_interval(ratios)
        self.assertAlmostEqual(value, 1.0)
        self.assertAlmostEqual(low, ratios[6])
        self.assertAlmostEqual(high, ratios[18])
        # result.json's paired_ratio: candidate over baseline per pair, a candidate twice as fast is 0.5.
        base = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0]
        r = stats.paired_ratio([b / 2 for b in base], base)
        self.assertEqual(set(r), {'value', 'ci_low', 'ci_high', 'pairs'})
        self.assertAlmostEqual(r['value'], 0.5)
        self.assertEqual(r['pairs'], 6)
        self.assertLessEqual(r['ci_low'], r['value'])
        self.assertLessEqual(r['value'], r['ci_high'])
        with self.assertRaises(ValueError):
            stats.paired_ratio([], [])

    def test_shapes_parse_and_print(self):
        from autocomp_kit import shapes
        self.assertEqual(shapes.parse_shapes("M=512,N=256;M=128,N=128"), [{'M': 512, 'N': 256}, {'M': 128, 'N': 128}])
        self.assertEqual(list(shapes.parse_shapes("N=3,M=1")[0]), ['N', 'M'])
        self.assertEqual(shapes.parse_shapes(""), [])
        self.assertEqual(shapes.shape_text({'rows': 8, 'cols': 128}), "rows=8,cols=128")
        with self.assertRaisesRegex(ValueError, "'M=x'"):
            shapes.parse_shapes("M=x")
        with self.assertRaisesRegex(ValueError, "KEY=VALUE"):
            shapes.parse_shapes("M512")

    def test_cli_first_int(self):
        self.assertEqual(cli.first_int("5,6"), 5)
        self.assertEqual(cli.first_int(""), 0)


if __name__ == "__main__":
    unittest.main()
