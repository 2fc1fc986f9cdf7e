"""TFLM's Ethos-U co-processor kernel (``tensorflow/lite/micro/kernels/ethos_u/``): what a
build with ``CO_PROCESSOR=ethos_u`` registers for the ``ethos-u`` custom operator of
Vela-compiled models, registered with :func:`kernels.base.register_variant` for
``"ethos-u"`` (the co-processor of the ``cortex-m55+ethos-u*`` target profiles)."""
