# A correct submission for the echo test double.
def custom_kernel(data):
    return data[::-1]
