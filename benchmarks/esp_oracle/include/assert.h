/* Stand-in for ESP-IDF's wrapper of the C library's assert.h, which includes the
 * build's sdkconfig.h before the library's own assert.h.  Through it the CONFIG_*
 * values reach every file that includes <cassert> / <assert.h>: esp-tflite-micro's
 * fully_connected.cc, mul.cc and pooling.cc include <esp_nn.h> (which reads
 * CONFIG_NN_OPTIMIZED and CONFIG_IDF_TARGET_*) before <esp_timer.h>, after
 * TFLM headers that include <cassert>. */
#pragma once
#include "sdkconfig.h"
#include_next <assert.h>
