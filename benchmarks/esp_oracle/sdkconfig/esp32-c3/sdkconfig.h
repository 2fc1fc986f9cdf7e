/* sdkconfig.h of the oracle build 'esp32-c3': the ESP-IDF configuration values that
 * esp-tflite-micro and ESP-NN read (everything else left out). */
#pragma once
#define CONFIG_IDF_TARGET "esp32c3"
#define CONFIG_IDF_TARGET_ESP32C3 1
#define CONFIG_IDF_TARGET_ARCH_RISCV 1
#define CONFIG_IDF_TARGET_ARCH "riscv"
#define CONFIG_NN_OPTIMIZED 1
#define CONFIG_NN_OPTIMIZATIONS 1
