"""softmax over the last axis of a rows x cols float32 array (the judge's trusted reference and input maker).
Rows are offset by up to +-60, so exp() of the raw values overflows in float32: only a max-subtracted
softmax passes."""
import jax.numpy as jnp


def make_inputs(shape, rng):
    rows, cols = shape['rows'], shape['cols']
    x = rng.uniform(-4.0, 4.0, (rows, cols)).astype('float32')
    offsets = rng.uniform(-60.0, 100.0, (rows, 1)).astype('float32')
    offsets[rows // 2] = 95.0  # exp(95) overflows float32: every input set has a row that needs the max
    x += offsets
    return (x,)


def reference(x):
    shifted = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=-1, keepdims=True)
