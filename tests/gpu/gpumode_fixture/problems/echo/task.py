# Types of the echo test double.
input_t = list
output_t = list
