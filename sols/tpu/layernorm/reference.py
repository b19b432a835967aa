"""layernorm over the last axis with a learned scale and shift, eps = 1e-5 (the judge's trusted
reference and input maker). Rows have a large common offset, so a one-pass E[x^2] - E[x]^2 variance
loses the digits that matter in float32."""
import jax.numpy as jnp

EPS = 1e-5


def make_inputs(shape, rng):
    rows, cols = shape['rows'], shape['cols']
    x = rng.standard_normal((rows, cols), dtype='float32') * 2.0 + rng.uniform(-50.0, 50.0, (rows, 1)).astype('float32')
    gamma = rng.uniform(0.5, 1.5, (cols,)).astype('float32')
    beta = rng.uniform(-0.5, 0.5, (cols,)).astype('float32')
    return x, gamma, beta


def reference(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = jnp.mean(centered * centered, axis=-1, keepdims=True)
    return centered * jnp.reciprocal(jnp.sqrt(var + EPS)) * gamma + beta
