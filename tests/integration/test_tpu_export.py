"""The tpu target's exported program, without a TPU: the judge's inspection of what a worker exports
(tpu_judge.inspect_export) and the worker that runs an exported program and nothing of the candidate's
(tpu_worker.py run-exported).

Run by ctest (tst_tpu_export) in the tpu target's Python environment (AUTOCOMP_TPU_PYTHON, else the default
{data_home}/venvs/tpu); exit status 77 (skipped) where there is none. On a CPU the runner is given a program
exported for the CPU: the same code path a TPU's bench takes, on another platform.
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
TOOLS = os.path.join(ROOT, 'backends', 'tpu', 'tools')
sys.path[:0] = [TOOLS, os.path.join(ROOT, 'backends', 'common', 'python')]

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import export
    from jax.experimental import pallas as pl
except ImportError as e:  # pragma: no cover - the ctest wrapper skips before this
    print(f"skipped: no jax in {sys.executable} ({e})")
    sys.exit(77)

import tpu_judge  # noqa: E402
from autocomp_kit import channel  # noqa: E402


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def doubled(x):
    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def for_tpu(f, *arrays):
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    return bytes(export.export(jax.jit(f), platforms=['tpu'])(*specs).serialize())


class InspectTest(unittest.TestCase):
    def setUp(self):
        self.x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)

    def test_a_kernel_with_layout_around_it_passes(self):
        def f(x):
            return doubled(x.reshape(16, 64).reshape(8, 128)).astype(jnp.float32)
        work, others, kernels = tpu_judge.inspect_export(for_tpu(f, self.x), [self.x], [self.x])
        self.assertEqual((work, others, kernels), ([], [], 1))

    def test_work_outside_the_kernel_is_named(self):
        def f(x):
            y = doubled(x)
            return jnp.exp(y - jnp.max(y, axis=-1, keepdims=True))
        work, others, kernels = tpu_judge.inspect_export(for_tpu(f, self.x), [self.x], [self.x])
        self.assertEqual(kernels, 1)
        self.assertIn('exponential', work)
        self.assertIn('reduce(maximum)', work)
        self.assertEqual(others, [])

    def test_no_kernel_at_all(self):
        work, _, kernels = tpu_judge.inspect_export(for_tpu(lambda x: x * 2.0, self.x), [self.x], [self.x])
        self.assertEqual(kernels, 0)
        self.assertIn('multiply', work)

    def test_a_host_callback_never_passes(self):
        # Lowered for the TPU on a CPU, a host callback cannot be exported at all (the worker's export fails and the
        # judge refuses the candidate); where it can be exported, it is a custom call other than a kernel, or work.
        def f(x):
            return jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), doubled(x))
        try:
            data = for_tpu(f, self.x)
        except Exception as e:  # noqa: BLE001
            self.assertIn('callback', ''.join(__import__('traceback').format_exception(e)))
            return
        work, others, _ = tpu_judge.inspect_export(data, [self.x], [self.x])
        self.assertTrue(work or others)

    def test_what_the_judge_did_not_ask_for_is_refused(self):
        data = for_tpu(doubled, self.x)
        small = self.x[:4]
        with self.assertRaisesRegex(tpu_judge.BadProgram, 'exported for inputs'):
            tpu_judge.inspect_export(data, [small], [small])
        cpu = bytes(export.export(jax.jit(lambda x: x * 2.0), platforms=['cpu'])(
            jax.ShapeDtypeStruct(self.x.shape, self.x.dtype)).serialize())
        with self.assertRaisesRegex(tpu_judge.BadProgram, 'expected the TPU'):
            tpu_judge.inspect_export(cpu, [self.x], [self.x])
        with self.assertRaisesRegex(tpu_judge.BadProgram, 'not a jax.export artifact'):
            tpu_judge.inspect_export(b'\x00' * 64, [self.x], [self.x])
        with self.assertRaisesRegex(tpu_judge.BadProgram, 'at most'):
            tpu_judge.inspect_export(b'\x00' * (tpu_judge.MAX_EXPORT_BYTES + 1), [self.x], [self.x])


class RunExportedTest(unittest.TestCase):
    """tpu_worker.py run-exported, a real process (python -I) over the kit's channel."""

    def test_runs_the_program_it_is_handed(self):
        x = np.random.default_rng(1).standard_normal((8, 128)).astype(np.float32)
        y = np.random.default_rng(2).standard_normal((8, 128)).astype(np.float32)

        def f(a, b):
            return jnp.tanh(a) + b
        data = np.frombuffer(bytes(export.export(jax.jit(f), platforms=['cpu'])(
            jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(y.shape, y.dtype)).serialize()), dtype=np.uint8)
        fd, mem = channel.new_channel('tpu-export-test')
        proc = subprocess.Popen([sys.executable, '-I', os.path.join(TOOLS, 'tpu_worker.py'), 'run-exported',
                                 '--channel-fd', str(fd)], pass_fds=(fd,))
        worker = channel.Worker(fd, proc.pid, 120, channel.NUMPY, mem=mem)
        try:
            info, _ = worker.request({'cmd': 'load'}, [data], timeout_s=120)
            self.assertEqual(info['platforms'], ['cpu'])
            answer, arrays = worker.request({'cmd': 'check'}, [x, y])
            self.assertEqual(answer['outputs'], 1)
            np.testing.assert_allclose(arrays[0], np.tanh(x) + y, rtol=1e-6, atol=1e-6)
            worker.request({'cmd': 'stage', 'slot': 1}, [y, x])
            ms, header, got = worker.timed({'slot': 1}, fetch=True)
            self.assertGreater(ms, 0.0)
            np.testing.assert_allclose(got[0], np.tanh(y) + x, rtol=1e-6, atol=1e-6)
        finally:
            worker.shutdown()
            proc.wait(timeout=30)
        self.assertEqual(proc.returncode, 0)

    def test_nothing_runs_before_a_program_is_loaded(self):
        fd, mem = channel.new_channel('tpu-export-test')
        proc = subprocess.Popen([sys.executable, '-I', os.path.join(TOOLS, 'tpu_worker.py'), 'run-exported',
                                 '--channel-fd', str(fd)], pass_fds=(fd,))
        worker = channel.Worker(fd, proc.pid, 60, channel.NUMPY, mem=mem)
        try:
            with self.assertRaisesRegex(channel.WorkerError, 'no program loaded'):
                worker.request({'cmd': 'check'}, [np.zeros(4, np.float32)])
        finally:
            worker.shutdown()
            proc.wait(timeout=30)


if __name__ == '__main__':
    unittest.main()
