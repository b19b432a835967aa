"""Shared by the tpu judge and worker: the problem's shapes. The channel between them is the kit's
(autocomp_kit.channel with its NUMPY codec: one memfd per worker, fd 3 in the worker)."""


def parse_shapes(text):
    """`M=512,N=256;M=128,N=128` -> [{'M': 512, 'N': 256}, {'M': 128, 'N': 128}]."""
    shapes = []
    for part in (text or '').split(';'):
        part = part.strip()
        if not part:
            continue
        shape = {}
        for item in part.split(','):
            key, _, value = item.partition('=')
            shape[key.strip()] = int(value)
        shapes.append(shape)
    return shapes
