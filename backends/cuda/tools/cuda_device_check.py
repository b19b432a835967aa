#!/usr/bin/env python3
"""cuda_device_check.py [--arch] — is there a usable NVIDIA GPU here?

Asks the driver itself (libcuda.so.1 through ctypes: cuInit, the first device's name and compute
capability, a context and a small allocation), so it needs no toolkit and no build. Exit status 0
with one line per device ("GPU 0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs"), or 1 with the reason as
the last line. With --arch it prints only the first device's architecture ("sm_90").
"""
import ctypes
import sys


def main():
    arch_only = "--arch" in sys.argv[1:]
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print(f"no NVIDIA driver: libcuda.so.1 cannot be loaded ({e})")
        return 1

    def name_of(rc):
        text = ctypes.c_char_p()
        if cuda.cuGetErrorName(rc, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode()
        return f"CUDA driver error {rc}"

    rc = cuda.cuInit(0)
    if rc != 0:
        print(f"the NVIDIA driver has no usable GPU: cuInit failed with {name_of(rc)}")
        return 1
    count = ctypes.c_int(0)
    rc = cuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value == 0:
        print(f"no CUDA device found ({name_of(rc) if rc else 'device count 0'})")
        return 1
    lines = []
    first_arch = None
    for index in range(count.value):
        dev = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(dev), index) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, dev)
        major, minor, sms = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
        cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev)    # MULTIPROCESSOR_COUNT
        arch = f"sm_{major.value}{minor.value}"
        first_arch = first_arch or arch
        lines.append(f"GPU {index}: {name.value.decode(errors='replace')}, {arch}, {sms.value} SMs")
        if index == 0:
            ctx = ctypes.c_void_p()
            rc = cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            if rc == 0:
                rc = cuda.cuCtxSetCurrent(ctx)
            ptr = ctypes.c_uint64(0)
            if rc == 0:
                rc = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20))
            if rc != 0:
                print(f"GPU 0 is present but unusable: creating a context and allocating 1 MiB failed with {name_of(rc)}")
                return 1
            cuda.cuMemFree_v2(ptr)
    if arch_only:
        print(first_arch)
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
