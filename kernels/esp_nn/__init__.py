"""esp-tflite-micro's ESP-NN kernels (``tensorflow/lite/micro/kernels/esp_nn/`` of
espressif/esp-tflite-micro 99f49e1498b0, with espressif/esp-nn d45b843ca5f8): what an
ESP-IDF build runs instead of TFLM's reference ADD, CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, MUL, AVERAGE_POOL_2D / MAX_POOL_2D and SOFTMAX, one module per op, each
registered with :func:`kernels.base.register_variant` for ``"esp-nn"``. Their OpData and
scratch requests follow ESP-NN's functions for the target's function set
(``ctx.target.esp_nn``: ``"opt"``, ``"ansi"``, ``"esp32s3"`` or ``"esp32p4"``; scratch sizes
in :mod:`kernels.esp_nn.internal.scratch_sizes`)."""
