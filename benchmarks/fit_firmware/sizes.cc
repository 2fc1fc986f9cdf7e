// Compile-time probe of the TFLM objects a firmware declares outside the arena,
// compiled (not linked) with the library's flags for one core. The runner reads
// fit_sizes[] from the object's .rodata: sizeof / alignof of MicroInterpreter and of
// MicroMutableOpResolver<N> for several N (the resolver's size is linear in N).

#include <cstdint>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"

extern "C" {
extern const uint32_t fit_sizes[];
const uint32_t fit_sizes[] = {
    0x46495431u,  // "FIT1": marks the start of the table
    sizeof(tflite::MicroInterpreter),
    alignof(tflite::MicroInterpreter),
    sizeof(tflite::MicroMutableOpResolver<1>),
    sizeof(tflite::MicroMutableOpResolver<2>),
    sizeof(tflite::MicroMutableOpResolver<3>),
    sizeof(tflite::MicroMutableOpResolver<8>),
    sizeof(tflite::MicroMutableOpResolver<32>),
    sizeof(tflite::MicroMutableOpResolver<128>),
    alignof(tflite::MicroMutableOpResolver<8>),
    sizeof(TFLMRegistration),
};
}
