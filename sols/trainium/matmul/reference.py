"""matmul: the trusted reference and input generator (NumPy; run by the judge, never by the candidate)."""
import numpy as np


def make_inputs(shape, rng):
    k, m, n = shape["K"], shape["M"], shape["N"]
    lhs_t = rng.standard_normal((k, m), dtype=np.float32).astype(np.float16)
    rhs = rng.standard_normal((k, n), dtype=np.float32).astype(np.float16)
    return [lhs_t, rhs]


def reference(lhs_t, rhs):
    # fp16 products are exact in fp32; the sum is accumulated in float64 and rounded once.
    return (lhs_t.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32)
