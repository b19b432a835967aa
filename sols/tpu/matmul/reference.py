"""matmul: C = A @ B in float32 (the judge's trusted reference and input maker)."""
import jax
import jax.numpy as jnp


def make_inputs(shape, rng):
    a = rng.standard_normal((shape['M'], shape['K']), dtype='float32')
    b = rng.standard_normal((shape['K'], shape['N']), dtype='float32')
    return a, b


def reference(a, b):
    return jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
