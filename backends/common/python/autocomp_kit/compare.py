"""Comparing a candidate's outputs with the reference's (NumPy arrays; torch tensors through .numpy()).

compare() is allclose on float64 copies with two rules beyond NumPy's: a NaN or infinity where the reference
has a finite number is always a difference (a kernel that never wrote an element, or wrote garbage, fails
whatever the tolerance), and rtol = atol = 0 is a bit-exact comparison of values of the same dtype.
"""


def parse_tolerance(text, rtol=1e-3, atol=1e-3):
    """`rtol=1e-4,atol=1e-5` -> (1e-4, 1e-5); a key left out keeps its default. A malformed item is a ValueError
    naming it."""
    values = {'rtol': rtol, 'atol': atol}
    for item in (text or '').split(','):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition('=')
        if not sep or key.strip() not in values:
            raise ValueError(f"tolerance item {item!r}: expected rtol=X or atol=X")
        values[key.strip()] = float(value)
    return values['rtol'], values['atol']


def tolerance_for(spec, dtype_names):
    """The tolerance a problem asks for (`spec`: 'rtol=..,atol=..'), or with 'auto' KernelBench's rule for the
    outputs' dtypes: 1e-2 when any is 16-bit floating point, else 1e-4."""
    if spec and spec != 'auto':
        return parse_tolerance(spec)
    low = any(d in ('float16', 'bfloat16', 'half') for d in dtype_names)
    return (1e-2, 1e-2) if low else (1e-4, 1e-4)


def difference(ref, got, rtol, atol):
    """None when array `got` matches `ref`, else a dict saying how it differs: kind 'shape' (got_shape,
    shape), 'dtype' (got_dtype, dtype; bit-exact comparisons only) or 'values' (bad: how many elements, size,
    where: the worst element's index, got and expected there, garbage: NaN or infinite where the reference is
    finite, exact: whether the comparison was bit-exact)."""
    import numpy as np
    ref, got = np.asarray(ref), np.asarray(got)
    if tuple(ref.shape) != tuple(got.shape):
        return {'kind': 'shape', 'got_shape': tuple(got.shape), 'shape': tuple(ref.shape)}
    exact = rtol == 0 and atol == 0
    if exact and got.dtype != ref.dtype:
        return {'kind': 'dtype', 'got_dtype': str(got.dtype), 'dtype': str(ref.dtype)}
    if exact:
        same = got == ref
        if got.dtype.kind in 'fc':
            same |= np.isnan(got) & np.isnan(ref)
        bad = ~same
        score = bad.astype(np.float64)
        r, g = ref, got
    else:
        r, g = ref.astype(np.float64), got.astype(np.float64)
        with np.errstate(invalid='ignore', over='ignore'):
            diff = np.abs(g - r)
            within = (diff <= atol + rtol * np.abs(r)) & np.isfinite(r)
        bad = ~(within | (np.isnan(r) & np.isnan(g)) | (np.isinf(r) & (g == r)))
        score = np.where(bad, np.where(np.isnan(diff), np.inf, diff), -1.0)
    if not bad.any():
        return None
    where = np.unravel_index(int(np.argmax(score)), r.shape) if r.size else ()
    garbage = 0 if got.dtype.kind not in 'fc' else int((~np.isfinite(g) & np.isfinite(r)).sum())
    return {'kind': 'values', 'bad': int(bad.sum()), 'size': int(r.size), 'where': [int(i) for i in where],
            'got': g[where], 'expected': r[where], 'garbage': garbage, 'exact': exact}


def describe(d, label, rtol, atol):
    """One line for a difference() result."""
    if d['kind'] == 'shape':
        return f"{label}: shape {d['got_shape']}, expected {d['shape']}"
    if d['kind'] == 'dtype':
        return f"{label}: dtype {d['got_dtype']}, expected {d['dtype']} (bit-exact comparison)"
    if d['exact']:
        return (f"{label}: {d['bad']} of {d['size']} elements differ (bit-exact comparison); at {d['where']}: "
                f"{d['got']!r}, expected {d['expected']!r}")
    return (f"{label}: {d['bad']} of {d['size']} elements differ beyond rtol={rtol:g}, atol={atol:g}; worst at "
            f"{d['where']}: {d['got']:.6g}, expected {d['expected']:.6g}"
            + (f"; {d['garbage']} NaN or infinite where the reference is finite" if d['garbage'] else ""))


def compare_one(ref, got, rtol, atol, label='output'):
    """None when array `got` matches `ref`, else one line that says how it differs."""
    d = difference(ref, got, rtol, atol)
    return None if d is None else describe(d, label, rtol, atol)


def compare(ref, got, rtol, atol, what='output'):
    """None when every array of `got` matches `ref` (lists of the same length), else why not."""
    if len(ref) != len(got):
        return f"{len(got)} {what}s, expected {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        why = compare_one(r, g, rtol, atol, f"{what} {i}")
        if why:
            return why
    return None
