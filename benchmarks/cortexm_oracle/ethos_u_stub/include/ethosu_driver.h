// Stand-in for the Arm Ethos-U core driver, our own code: the three calls
// TFLM's ethos_u kernel (tensorflow/lite/micro/kernels/ethos_u/ethosu.cc)
// makes, so that TFLM's Ethos-U build can run under QEMU, which has no NPU.
// Built with CO_PROCESSOR=ethos_u ETHOSU_DRIVER_PATH=<this directory>.
#ifndef ORACLE_ETHOSU_DRIVER_STUB_H_
#define ORACLE_ETHOSU_DRIVER_STUB_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ethosu_driver;

// Returns the (single) driver instance.
struct ethosu_driver* ethosu_reserve_driver(void);

// Releases what ethosu_reserve_driver returned.
void ethosu_release_driver(struct ethosu_driver* drv);

// "Runs" a command stream: reports its arguments on stdout and returns 0
// (success) without touching any tensor.
int ethosu_invoke_v3(struct ethosu_driver* drv, const void* custom_data_ptr,
                     const int custom_data_size, uint64_t* base_addr,
                     const size_t* base_addr_size, const int num_base_addr,
                     void* user_arg);

#ifdef __cplusplus
}
#endif

#endif  // ORACLE_ETHOSU_DRIVER_STUB_H_
