/* sdkconfig.h of the oracle build 'esp32-s3': the ESP-IDF configuration values that
 * esp-tflite-micro and ESP-NN read (everything else left out). */
#pragma once
#define CONFIG_IDF_TARGET "esp32s3"
#define CONFIG_IDF_TARGET_ESP32S3 1
/* CONFIG_IDF_TARGET_ARCH_XTENSA left out: the stand-in is compiled for rv32, and
 * ESP-NN then uses the C forms of its clz / saturate helpers */
#define CONFIG_NN_OPTIMIZED 1
#define CONFIG_NN_OPTIMIZATIONS 1
