"""vector_add: out = x + y, float32, rows x cols (the judge's trusted reference and input maker)."""
import jax.numpy as jnp


def make_inputs(shape, rng):
    rows, cols = shape['rows'], shape['cols']
    x = rng.standard_normal((rows, cols), dtype='float32')
    y = rng.standard_normal((rows, cols), dtype='float32')
    return x, y


def reference(x, y):
    return jnp.add(x, y)
