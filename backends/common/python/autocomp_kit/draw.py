"""What the judge draws from its secret seed (the evaluation's {seed}: a candidate never sees it).

Every input a candidate is called with is drawn here, in the judge: fresh values for every call, written
into one of SLOTS input buffers in turn (so no two consecutive calls share an input buffer, and a cache
keyed on a buffer's address or contents never serves a call), and the calls whose outputs are compared
are picked at random from the same seed, so a candidate cannot tell a checked call from another.
"""
import random

SLOTS = 4


class Draw:
    def __init__(self, seed, stream=0):
        self.rng = random.Random((int(seed) << 8) ^ stream)

    def subseed(self, bits=31):
        """A fresh seed for one set of inputs (torch.manual_seed / numpy.random.default_rng)."""
        return self.rng.randrange(1 << bits)

    def picks(self, first, total, count, last=True):
        """`count` call indices in [first, total) picked at random, and the last call when `last`."""
        span = range(first, total)
        chosen = set(self.rng.sample(span, min(count, len(span)))) if len(span) else set()
        if last and len(span):
            chosen.add(total - 1)
        return chosen

    def sample(self, population, count):
        return self.rng.sample(population, count)


def slot(call):
    """The input buffer of timed call number `call`."""
    return call % SLOTS
