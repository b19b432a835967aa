# Reference of the echo test double: inputs from the seed, the expected output, the check.
import random


def generate_input(size, seed):
    rng = random.Random(seed)
    return [rng.randint(0, 1000) for _ in range(size)]


def ref_kernel(data):
    return list(reversed(data))


def check_implementation(data, output):
    expected = ref_kernel(data)
    if output != expected:
        return False, f"mismatch: first elements {output[:3]} instead of {expected[:3]}"
    return True, ""
