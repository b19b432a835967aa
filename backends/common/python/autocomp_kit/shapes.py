"""The problem's shapes as the evaluator passes them ({shapes}, {bench_shape}): `M=512,N=256;M=128,N=128`."""


def parse_shapes(text):
    """`M=512,N=256;M=128,N=128` -> [{'M': 512, 'N': 256}, {'M': 128, 'N': 128}], keys in problem.yaml's order.
    A malformed entry raises ValueError naming it."""
    shapes = []
    for part in (text or '').split(';'):
        part = part.strip()
        if not part:
            continue
        shape = {}
        for item in part.split(','):
            key, eq, value = item.partition('=')
            if not eq or not key.strip():
                raise ValueError(f"bad shape entry '{item}' (expected KEY=VALUE)")
            try:
                shape[key.strip()] = int(value)
            except ValueError:
                raise ValueError(f"bad shape entry '{item}': '{value}' is not an integer") from None
        shapes.append(shape)
    return shapes


def shape_text(shape):
    """{'M': 512, 'N': 256} -> `M=512,N=256`, as feedback prints a shape."""
    return ','.join(f"{k}={v}" for k, v in shape.items())
