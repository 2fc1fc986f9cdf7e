// Fit firmware: the firmware a TFLM user writes to run one model, used to measure
// what TFLM costs on a board (flash kept by the linker, static RAM, stack).
//
// It declares, as TFLM's own examples do, a MicroMutableOpResolver<N> with exactly
// the model's N distinct operators (namespace-scope static) and a function-local
// static MicroInterpreter over a 16-byte aligned arena of ARENA_BYTES, then runs
// AllocateTensors() and Invoke() on zero inputs. It is linked per operator set with
// -ffunction-sections -fdata-sections -Wl,--gc-sections, so the linker map tells
// which bytes of the TFLM library this operator set keeps.
//
// Usage: fit.elf MODEL ARENA_BYTES
//
// Stack: before AllocateTensors() and again before Invoke() the stack below the
// caller's stack pointer is painted with kPaint (FIT_PAINT_BYTES bytes); after each
// call the lowest byte that no longer holds kPaint gives the high-water mark (bytes
// below the caller's sp). qemu-arm user mode lets a program write below its sp; in
// system mode (qemu-system-arm, qemu-system-riscv32) nothing else runs on this stack.
//
// With -DFIT_PROBE the firmware also replaces each registered operator's init,
// prepare and invoke by wrappers that paint and measure around the kernel's own call
// and record the depth at which TFLM calls it (per-kernel stack tables).
//
// Compiled once per resolver size N (-DFIT_OP_COUNT=N). The operators are chosen at
// link time: adds.cc (compiled with the same N) defines one fit_add_<OP>(resolver)
// function per operator TFLM's MicroMutableOpResolver can register, each calling that
// operator's Add method; a small generated C file (the selector) defines
// fit_add_ops(resolver), calling the chosen fit_add_<OP> functions, and
// fit_probe_keys[] ({builtin code, custom name} per chosen operator, for FIT_PROBE).
// With --gc-sections only the chosen Add functions, and what they reach, are kept.
//
// Output lines (stdout):
//   FIT model_bytes=N arena_bytes=N ops=N
//   FIT alloc=ok|fail stack=N arena_used=N
//   FIT invoke=ok|fail stack=N
//   FIT probe op=K phase=init|prepare|invoke node=I usage=N below=N   (FIT_PROBE)
//   FIT status=ok

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

#ifndef FIT_OP_COUNT
#error "compile with -DFIT_OP_COUNT=N (the resolver's size)"
#endif

struct FitProbeKey {
  int builtin;
  const char* custom;
};

extern "C" {
// defined by the generated selector
void fit_add_ops(void* resolver);
extern const FitProbeKey fit_probe_keys[];
extern const int fit_op_count;
}

#ifndef FIT_PAINT_BYTES
#define FIT_PAINT_BYTES (192 * 1024)
#endif

namespace {

constexpr uint8_t kPaint = 0xC5;

tflite::MicroMutableOpResolver<FIT_OP_COUNT> resolver;

inline uintptr_t StackPointer() {
  uintptr_t sp;
#if defined(__riscv)
  asm volatile("mv %0, sp" : "=r"(sp));
#else
  asm volatile("mov %0, sp" : "=r"(sp));
#endif
  return sp;
}

// Fills [sp - bytes, sp) with kPaint. Inline: the caller's frame is above sp, and
// nothing runs below sp while the loop does (no interrupts in qemu-arm user mode).
inline __attribute__((always_inline)) void Paint(uintptr_t sp, size_t bytes) {
  volatile uint8_t* p = reinterpret_cast<volatile uint8_t*>(sp - bytes);
  for (size_t i = 0; i < bytes; ++i) p[i] = kPaint;
}

// Bytes below sp that were written since Paint(sp, bytes): sp minus the lowest
// address that no longer holds kPaint (0 if none).
inline __attribute__((always_inline)) size_t Used(uintptr_t sp, size_t bytes) {
  const volatile uint8_t* p = reinterpret_cast<const volatile uint8_t*>(sp - bytes);
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != kPaint) return bytes - i;
  }
  return 0;
}

uint8_t* AlignedAlloc16(size_t bytes) {
  uint8_t* raw = static_cast<uint8_t*>(malloc(bytes + 16));
  if (raw == nullptr) return nullptr;
  uintptr_t p = (reinterpret_cast<uintptr_t>(raw) + 15u) & ~uintptr_t{15};
  return reinterpret_cast<uint8_t*>(p);
}

uint8_t* ReadFile(const char* path, size_t* size_out) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return nullptr;
  if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return nullptr; }
  long size = ftell(f);
  if (size < 0) { fclose(f); return nullptr; }
  fseek(f, 0, SEEK_SET);
  uint8_t* buf = AlignedAlloc16(static_cast<size_t>(size) + 1);
  if (buf == nullptr) { fclose(f); return nullptr; }
  size_t got = fread(buf, 1, static_cast<size_t>(size), f);
  fclose(f);
  if (got != static_cast<size_t>(size)) return nullptr;
  *size_out = got;
  return buf;
}

#ifdef FIT_PROBE
// ---- per-kernel stack probe -------------------------------------------------
constexpr size_t kProbeBytes = 96 * 1024;
constexpr int kMaxWrapped = 48;
static_assert(FIT_OP_COUNT <= kMaxWrapped, "too many operators for the probe");

enum Phase { kInit = 0, kPrepare = 1, kInvoke = 2 };
const char* const kPhaseNames[] = {"init", "prepare", "invoke"};

TFLMRegistration original[kMaxWrapped];
uintptr_t main_sp = 0;
int calls[kMaxWrapped][3];

// The wrappers below call these; each prints the kernel's own stack use (bytes
// below the sp it calls the kernel with, this function's sp) and main_sp minus that
// sp ("below"). The runner subtracts this function's and the wrapper's frames (from
// -fstack-usage) to get the depth at which TFLM itself calls the kernel.

__attribute__((noinline)) TfLiteStatus MeasureStatus(
    int k, int phase, TfLiteStatus (*fn)(TfLiteContext*, TfLiteNode*),
    TfLiteContext* context, TfLiteNode* node) {
  uintptr_t sp = StackPointer();
  Paint(sp, kProbeBytes);
  TfLiteStatus status = fn(context, node);
  size_t used = Used(sp, kProbeBytes);
  printf("FIT probe op=%d phase=%s node=%d usage=%u below=%u\n", k,
         kPhaseNames[phase], calls[k][phase]++, static_cast<unsigned>(used),
         static_cast<unsigned>(main_sp - sp));
  return status;
}

__attribute__((noinline)) void* MeasureInit(int k, TfLiteContext* context,
                                            const char* buffer, size_t length) {
  uintptr_t sp = StackPointer();
  Paint(sp, kProbeBytes);
  void* data = original[k].init(context, buffer, length);
  size_t used = Used(sp, kProbeBytes);
  printf("FIT probe op=%d phase=init node=%d usage=%u below=%u\n", k,
         calls[k][kInit]++, static_cast<unsigned>(used),
         static_cast<unsigned>(main_sp - sp));
  return data;
}

template <int K>
void* WrapInit(TfLiteContext* c, const char* b, size_t n) {
  return MeasureInit(K, c, b, n);
}
template <int K>
TfLiteStatus WrapPrepare(TfLiteContext* c, TfLiteNode* n) {
  return MeasureStatus(K, kPrepare, original[K].prepare, c, n);
}
template <int K>
TfLiteStatus WrapInvoke(TfLiteContext* c, TfLiteNode* n) {
  return MeasureStatus(K, kInvoke, original[K].invoke, c, n);
}

struct Wrappers {
  void* (*init)(TfLiteContext*, const char*, size_t);
  TfLiteStatus (*prepare)(TfLiteContext*, TfLiteNode*);
  TfLiteStatus (*invoke)(TfLiteContext*, TfLiteNode*);
};

template <int... K>
struct WrapperTable {
  static constexpr Wrappers kTable[sizeof...(K)] = {
      {&WrapInit<K>, &WrapPrepare<K>, &WrapInvoke<K>}...};
};

#if __cplusplus < 201703L
// before C++17 a static constexpr member that is odr-used needs a definition
template <int... K>
constexpr Wrappers WrapperTable<K...>::kTable[sizeof...(K)];
#endif

template <int N, int... K>
struct MakeTable : MakeTable<N - 1, N - 1, K...> {};
template <int... K>
struct MakeTable<0, K...> {
  using Type = WrapperTable<K...>;
};

void InstallProbe() {
  const FitProbeKey* keys = fit_probe_keys;
  using Table = MakeTable<kMaxWrapped>::Type;
  for (int k = 0; k < fit_op_count; ++k) {
    const TFLMRegistration* found =
        keys[k].custom != nullptr
            ? resolver.FindOp(keys[k].custom)
            : resolver.FindOp(static_cast<tflite::BuiltinOperator>(keys[k].builtin));
    if (found == nullptr) {
      printf("FIT probe error=missing op=%d\n", k);
      continue;
    }
    TFLMRegistration* reg = const_cast<TFLMRegistration*>(found);
    original[k] = *reg;
    if (reg->init != nullptr) reg->init = Table::kTable[k].init;
    if (reg->prepare != nullptr) reg->prepare = Table::kTable[k].prepare;
    if (reg->invoke != nullptr) reg->invoke = Table::kTable[k].invoke;
  }
}
#endif  // FIT_PROBE

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    printf("FIT usage: fit.elf MODEL ARENA_BYTES\n");
    return 2;
  }
  size_t arena_bytes = static_cast<size_t>(strtoul(argv[2], nullptr, 10));
  size_t model_size = 0;
  uint8_t* model_data = ReadFile(argv[1], &model_size);
  uint8_t* arena = AlignedAlloc16(arena_bytes);
  if (model_data == nullptr || arena == nullptr) {
    printf("FIT status=error\n");
    return 3;
  }
  const tflite::Model* model = tflite::GetModel(model_data);
  fit_add_ops(&resolver);
  printf("FIT model_bytes=%u arena_bytes=%u ops=%d\n",
         static_cast<unsigned>(model_size), static_cast<unsigned>(arena_bytes),
         fit_op_count);

  static tflite::MicroInterpreter interpreter(model, resolver, arena, arena_bytes);

  uintptr_t sp = StackPointer();
#ifdef FIT_PROBE
  main_sp = sp;
  InstallProbe();
#endif
  fflush(stdout);
  Paint(sp, FIT_PAINT_BYTES);
  TfLiteStatus alloc = interpreter.AllocateTensors();
  size_t alloc_stack = Used(sp, FIT_PAINT_BYTES);
  printf("FIT alloc=%s stack=%u arena_used=%u\n", alloc == kTfLiteOk ? "ok" : "fail",
         static_cast<unsigned>(alloc_stack),
         static_cast<unsigned>(interpreter.arena_used_bytes()));
  if (alloc != kTfLiteOk) {
    printf("FIT status=alloc_fail\n");
    return 1;
  }
  for (size_t i = 0; i < interpreter.inputs_size(); ++i) {
    TfLiteTensor* t = interpreter.input(i);
    memset(t->data.raw, 0, t->bytes);
  }
  fflush(stdout);
  Paint(sp, FIT_PAINT_BYTES);
  TfLiteStatus invoke = interpreter.Invoke();
  size_t invoke_stack = Used(sp, FIT_PAINT_BYTES);
  printf("FIT invoke=%s stack=%u\n", invoke == kTfLiteOk ? "ok" : "fail",
         static_cast<unsigned>(invoke_stack));
  printf("FIT status=%s\n", invoke == kTfLiteOk ? "ok" : "invoke_fail");
  return invoke == kTfLiteOk ? 0 : 1;
}
