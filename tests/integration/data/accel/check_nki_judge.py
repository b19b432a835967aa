"""Checks of the trainium judge's NumPy side, run by tst_accel_packs with a Python that has NumPy:
a problem's reference.py (inputs and reference), the judge's comparison and the channel's archive
format. Prints one line per check; exits 1 at the first failure, naming it.

    check_nki_judge.py DATA_DIR PROBLEM SHAPE RTOL ATOL
"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
data_dir, problem, shape_text, rtol, atol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
sys.path.insert(0, os.path.join(data_dir, "backends", "trainium", "tools"))
import numpy as np  # noqa: E402
import nki_channel  # noqa: E402
import nki_judge  # noqa: E402


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)
    print(f"ok: {what}")


spec = importlib.util.spec_from_file_location("ref", os.path.join(data_dir, "sols", "trainium", problem, "reference.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
shape = nki_judge.parse_pairs(shape_text, int)
inputs = ref.make_inputs(shape, np.random.default_rng([7, 0]))
again = ref.make_inputs(shape, np.random.default_rng([7, 0]))
other = ref.make_inputs(shape, np.random.default_rng([7, 1]))
check(all(np.array_equal(a, b) for a, b in zip(inputs, again)), "the same seed and round give the same inputs")
check(not any(np.array_equal(a, b) for a, b in zip(inputs, other)), "another round gives other inputs")
copies = [x.copy() for x in inputs]
expected = np.asarray(ref.reference(*copies))
check(all(np.array_equal(a, b) for a, b in zip(inputs, copies)), "the reference leaves its inputs alone")
check(expected.dtype == np.float32 and np.all(np.isfinite(expected)), f"the reference gives finite float32, shape {expected.shape}")
check(nki_judge.compare(expected, expected.copy(), rtol, atol) is None, "an identical output passes")

nudged = np.nextafter(expected, np.float32(np.inf))  # one ulp off everywhere
verdict = nki_judge.compare(expected, nudged, rtol, atol)
if rtol == 0 and atol == 0:
    check(verdict is not None and "bit-exact" in verdict, f"one ulp off fails the bit-exact comparison: {verdict}")
else:
    check(verdict is None, "one ulp off passes allclose")
    wrong = expected.copy()
    wrong.flat[wrong.size // 2] += 10 * (atol + rtol * abs(wrong.flat[wrong.size // 2])) + 1
    verdict = nki_judge.compare(expected, wrong, rtol, atol)
    check(verdict is not None and "1 element(s) outside" in verdict, f"one element outside the tolerance fails: {verdict}")
nan = expected.copy()
nan.flat[0] = np.nan
verdict = nki_judge.compare(expected, nan, rtol, atol) or ""
check("non-finite" in verdict or "differ" in verdict, f"a NaN fails: {verdict}")
check("dtype float16" in (nki_judge.compare(expected, expected.astype(np.float16), 0, 0) or ""), "another dtype fails the bit-exact comparison")
check("shape" in (nki_judge.compare(expected, expected[:1], rtol, atol) or ""), "another shape fails")

archive = nki_channel.pack_arrays(inputs)
back = nki_channel.unpack_arrays(archive)
check(len(back) == len(inputs) and all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(inputs, back)),
      "inputs cross the channel unchanged")
try:
    nki_channel.unpack_arrays(nki_channel.pack_arrays([np.array([{"x": 1}], dtype=object)]))
    check(False, "an object array is refused")
except ValueError:
    check(True, "an object array is refused (no pickles)")
