/* sdkconfig.h of the oracle build 'esp32-c6': the ESP-IDF configuration values that
 * esp-tflite-micro and ESP-NN read (everything else left out). */
#pragma once
#define CONFIG_IDF_TARGET "esp32c6"
#define CONFIG_IDF_TARGET_ESP32C6 1
#define CONFIG_IDF_TARGET_ARCH_RISCV 1
#define CONFIG_IDF_TARGET_ARCH "riscv"
#define CONFIG_NN_OPTIMIZED 1
#define CONFIG_NN_OPTIMIZATIONS 1
