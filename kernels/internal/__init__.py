"""Shared kernel math (TFLM's ``kernels/internal`` and ``kernel_util``): requantization,
lookup tables, padding, broadcasting, libm / glibc float emulation, kiss FFT, tensor
helpers. Nothing here registers a kernel."""
