/* Stand-in for ESP-IDF's esp_timer.h, for the oracle builds under QEMU.
 *
 * esp-tflite-micro's ESP-NN kernels and its micro_time.cc include this header
 * only for esp_timer_get_time(), which they use to add up per-kernel times.
 * Like ESP-IDF's header it includes sdkconfig.h, which is where the kernels
 * see CONFIG_IDF_TARGET_* and CONFIG_NN_* (read by esp_nn.h). */
#pragma once

#include <stdint.h>
#include "sdkconfig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Microseconds since boot on the chip; always 0 here (no timer). */
int64_t esp_timer_get_time(void);

#ifdef __cplusplus
}
#endif
