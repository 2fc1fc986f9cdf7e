"""TFLM's CMSIS-NN kernels (``tensorflow/lite/micro/kernels/cmsis_nn/``): what a build with
``OPTIMIZED_KERNEL_DIR=cmsis_nn`` runs instead of the reference kernels, one module per op,
each registered with :func:`kernels.base.register_variant` for ``"cmsis-nn"``. Their
OpData, persistent buffers and scratch requests follow CMSIS-NN's ``*_get_buffer_size``
functions for the target's core (``ctx.target.dsp`` / ``ctx.target.mve``); shared CMSIS-NN
arithmetic lives in :mod:`kernels.cmsis_nn.internal`."""
