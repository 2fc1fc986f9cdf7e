"""TFLM's signal-library custom ops (``signal/micro/kernels``): window, FFTs, filter banks,
PCAN, framing and stacking. One module per op, as in :mod:`kernels`."""
