/* Run-time pieces the oracle builds need besides TFLM and ESP-NN.
 *
 * esp_timer_get_time: stand-in for ESP-IDF's timer (see include/esp_timer.h);
 * returns 0, so the kernels' time sums stay 0 and nothing else depends on it. */
#include <stdint.h>

int64_t esp_timer_get_time(void) { return 0; }
