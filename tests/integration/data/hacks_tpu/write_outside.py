# Writes a file outside its work directory from the candidate's process.
import jax
import numpy as np
from jax.experimental import pallas as pl

np.zeros(4).tofile('AUTOCOMP_HACK_TARGET')


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def solution(x):
    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
