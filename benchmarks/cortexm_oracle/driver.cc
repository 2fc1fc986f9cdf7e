// Oracle driver: runs one .tflite model through TFLM (RecordingMicroInterpreter)
// and prints the allocation report and the outputs' FNV-1a hashes.
//
// Usage: driver.elf MODEL ARENA_BYTES INPUTS [--hex] [INPUT_FILE...]
//   INPUTS: zeros | lcg1 | file
//     zeros: every input byte 0
//     lcg1:  every input byte, inputs in order, from x = x*1103515245 + 12345
//            (mod 2^32, x0 = 1), byte = (x >> 16) & 0xff (first byte from x1)
//     file:  raw bytes; one file fills all inputs in order (sizes must add
//            up), or one file per input tensor.
//   --hex: also print each output tensor's bytes as hex.
//
// Output lines (stdout):
//   ORACLE model_bytes=N arena_bytes=N inputs=N outputs=N resource_vars=N
//   ORACLE status alloc=ok|fail invoke=ok|fail|skipped
//   ORACLE output <i> type=<TfLiteType> bytes=<n> fnv1a=<8 hex>
//   ORACLE hex <i> <hex bytes>
// TFLM's own messages (report lines, errors) go to stderr through DebugLog.
//
// Build variants (compile-time defines):
//   ORACLE_DEBUG_LOG_CALLBACK: the library is TFLM's cortex_m_generic target,
//     whose DebugLog hands each message to a registered callback; the driver
//     registers one that writes to stderr.
//   ORACLE_ETHOS_U: the library is TFLM's Ethos-U build (CO_PROCESSOR=ethos_u);
//     the resolver also gets the `ethos-u` custom operator (AddEthosU).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/micro/recording_micro_allocator.h"
#include "tensorflow/lite/micro/recording_micro_interpreter.h"
#include "tensorflow/lite/schema/schema_generated.h"

#ifdef ORACLE_DEBUG_LOG_CALLBACK
#include "tensorflow/lite/micro/cortex_m_generic/debug_log_callback.h"
#endif

namespace {

constexpr int kMaxOps = 160;
using Resolver = tflite::MicroMutableOpResolver<kMaxOps>;

uint8_t* AlignedAlloc16(size_t bytes) {
  uint8_t* raw = static_cast<uint8_t*>(malloc(bytes + 16));
  if (raw == nullptr) return nullptr;
  uintptr_t p = (reinterpret_cast<uintptr_t>(raw) + 15u) & ~uintptr_t{15};
  return reinterpret_cast<uint8_t*>(p);
}

// Reads a whole file into a 16-byte aligned buffer; returns nullptr on error.
uint8_t* ReadFile(const char* path, size_t* size_out) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return nullptr;
  if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return nullptr; }
  long size = ftell(f);
  if (size < 0) { fclose(f); return nullptr; }
  fseek(f, 0, SEEK_SET);
  uint8_t* buf = AlignedAlloc16(static_cast<size_t>(size) + 1);
  if (buf == nullptr) { fclose(f); return nullptr; }
  size_t got = 0;
  while (got < static_cast<size_t>(size)) {
    size_t n = fread(buf + got, 1, static_cast<size_t>(size) - got, f);
    if (n == 0) break;
    got += n;
  }
  fclose(f);
  if (got != static_cast<size_t>(size)) return nullptr;
  *size_out = got;
  return buf;
}

uint32_t Fnv1a(const uint8_t* data, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 16777619u;
  }
  return h;
}

// Number of distinct VAR_HANDLE shared names over all subgraphs (as the
// tflite-micro Python package counts resource variables).
int CountResourceVariables(const tflite::Model* model) {
  const int kMax = 256;
  const char* names[kMax];
  int count = 0;
  auto* opcodes = model->operator_codes();
  auto* subgraphs = model->subgraphs();
  if (opcodes == nullptr || subgraphs == nullptr) return 0;
  for (unsigned s = 0; s < subgraphs->size(); ++s) {
    auto* ops = subgraphs->Get(s)->operators();
    if (ops == nullptr) continue;
    for (unsigned o = 0; o < ops->size(); ++o) {
      auto* op = ops->Get(o);
      auto* code = opcodes->Get(op->opcode_index());
      // Builtin code: the larger of the deprecated int8 field and the new one.
      int builtin = code->deprecated_builtin_code();
      if (static_cast<int>(code->builtin_code()) > builtin)
        builtin = static_cast<int>(code->builtin_code());
      if (builtin != tflite::BuiltinOperator_VAR_HANDLE) continue;
      const char* name = "";
      auto* opts = op->builtin_options_as_VarHandleOptions();
      if (opts != nullptr && opts->shared_name() != nullptr)
        name = opts->shared_name()->c_str();
      bool seen = false;
      for (int i = 0; i < count; ++i)
        if (strcmp(names[i], name) == 0) seen = true;
      if (!seen && count < kMax) names[count++] = name;
    }
  }
  return count;
}

void Check(TfLiteStatus s, const char* what) {
  if (s != kTfLiteOk) printf("ORACLE warning: could not register %s\n", what);
}

void RegisterAll(Resolver& r) {
  Check(r.AddAbs(), "ABS");
  Check(r.AddAdd(), "ADD");
  Check(r.AddAddN(), "ADD_N");
  Check(r.AddArgMax(), "ARG_MAX");
  Check(r.AddArgMin(), "ARG_MIN");
  Check(r.AddAssignVariable(), "ASSIGN_VARIABLE");
  Check(r.AddAveragePool2D(), "AVERAGE_POOL_2D");
  Check(r.AddBatchMatMul(), "BATCH_MATMUL");
  Check(r.AddBatchToSpaceNd(), "BATCH_TO_SPACE_ND");
  Check(r.AddBroadcastArgs(), "BROADCAST_ARGS");
  Check(r.AddBroadcastTo(), "BROADCAST_TO");
  Check(r.AddCallOnce(), "CALL_ONCE");
  Check(r.AddCast(), "CAST");
  Check(r.AddCeil(), "CEIL");
  Check(r.AddCircularBuffer(), "CIRCULAR_BUFFER");
  Check(r.AddConcatenation(), "CONCATENATION");
  Check(r.AddConv2D(), "CONV_2D");
  Check(r.AddCos(), "COS");
  Check(r.AddCumSum(), "CUMSUM");
  Check(r.AddDecode(), "TFLM_DECODE");
  Check(r.AddDelay(), "SignalDelay");
  Check(r.AddDepthToSpace(), "DEPTH_TO_SPACE");
  Check(r.AddDepthwiseConv2D(), "DEPTHWISE_CONV_2D");
  Check(r.AddDequantize(), "DEQUANTIZE");
  Check(r.AddDetectionPostprocess(), "TFLite_Detection_PostProcess");
  Check(r.AddDiv(), "DIV");
  Check(r.AddDynamicUpdateSlice(), "DYNAMIC_UPDATE_SLICE");
  Check(r.AddEmbeddingLookup(), "EMBEDDING_LOOKUP");
  Check(r.AddEnergy(), "SignalEnergy");
  Check(r.AddElu(), "ELU");
  Check(r.AddEqual(), "EQUAL");
  Check(r.AddExp(), "EXP");
  Check(r.AddExpandDims(), "EXPAND_DIMS");
  Check(r.AddFftAutoScale(), "SignalFftAutoScale");
  Check(r.AddFill(), "FILL");
  Check(r.AddFilterBank(), "SignalFilterBank");
  Check(r.AddFilterBankLog(), "SignalFilterBankLog");
  Check(r.AddFilterBankSquareRoot(), "SignalFilterBankSquareRoot");
  Check(r.AddFilterBankSpectralSubtraction(),
        "SignalFilterBankSpectralSubtraction");
  Check(r.AddFloor(), "FLOOR");
  Check(r.AddFloorDiv(), "FLOOR_DIV");
  Check(r.AddFloorMod(), "FLOOR_MOD");
  Check(r.AddFramer(), "SignalFramer");
  Check(r.AddFullyConnected(), "FULLY_CONNECTED");
  Check(r.AddGather(), "GATHER");
  Check(r.AddGatherNd(), "GATHER_ND");
  Check(r.AddGreater(), "GREATER");
  Check(r.AddGreaterEqual(), "GREATER_EQUAL");
  Check(r.AddHardSwish(), "HARD_SWISH");
  Check(r.AddIf(), "IF");
  Check(r.AddIrfft(), "SignalIrfft");
  Check(r.AddL2Normalization(), "L2_NORMALIZATION");
  Check(r.AddL2Pool2D(), "L2_POOL_2D");
  Check(r.AddLeakyRelu(), "LEAKY_RELU");
  Check(r.AddLess(), "LESS");
  Check(r.AddLessEqual(), "LESS_EQUAL");
  Check(r.AddLog(), "LOG");
  Check(r.AddLogicalAnd(), "LOGICAL_AND");
  Check(r.AddLogicalNot(), "LOGICAL_NOT");
  Check(r.AddLogicalOr(), "LOGICAL_OR");
  Check(r.AddLogistic(), "LOGISTIC");
  Check(r.AddLogSoftmax(), "LOG_SOFTMAX");
  Check(r.AddMaximum(), "MAXIMUM");
  Check(r.AddMaxPool2D(), "MAX_POOL_2D");
  Check(r.AddMirrorPad(), "MIRROR_PAD");
  Check(r.AddMean(), "MEAN");
  Check(r.AddMinimum(), "MINIMUM");
  Check(r.AddMul(), "MUL");
  Check(r.AddNeg(), "NEG");
  Check(r.AddNotEqual(), "NOT_EQUAL");
  Check(r.AddOverlapAdd(), "SignalOverlapAdd");
  Check(r.AddPack(), "PACK");
  Check(r.AddPad(), "PAD");
  Check(r.AddPadV2(), "PADV2");
  Check(r.AddPCAN(), "SignalPCAN");
  Check(r.AddPrelu(), "PRELU");
  Check(r.AddQuantize(), "QUANTIZE");
  Check(r.AddReadVariable(), "READ_VARIABLE");
  Check(r.AddReduceAll(), "REDUCE_ALL");
  Check(r.AddReduceMax(), "REDUCE_MAX");
  Check(r.AddReduceMin(), "REDUCE_MIN");
  Check(r.AddRelu(), "RELU");
  Check(r.AddRelu6(), "RELU6");
  Check(r.AddReshape(), "RESHAPE");
  Check(r.AddResizeBilinear(), "RESIZE_BILINEAR");
  Check(r.AddResizeNearestNeighbor(), "RESIZE_NEAREST_NEIGHBOR");
  Check(r.AddReverseV2(), "REVERSE_V2");
  Check(r.AddRfft(), "SignalRfft");
  Check(r.AddRound(), "ROUND");
  Check(r.AddRsqrt(), "RSQRT");
  Check(r.AddSelectV2(), "SELECT_V2");
  Check(r.AddShape(), "SHAPE");
  Check(r.AddSin(), "SIN");
  Check(r.AddSlice(), "SLICE");
  Check(r.AddSoftmax(), "SOFTMAX");
  Check(r.AddSpaceToBatchNd(), "SPACE_TO_BATCH_ND");
  Check(r.AddSpaceToDepth(), "SPACE_TO_DEPTH");
  Check(r.AddSplit(), "SPLIT");
  Check(r.AddSplitV(), "SPLIT_V");
  Check(r.AddSqueeze(), "SQUEEZE");
  Check(r.AddSqrt(), "SQRT");
  Check(r.AddSquare(), "SQUARE");
  Check(r.AddSquaredDifference(), "SQUARED_DIFFERENCE");
  Check(r.AddStridedSlice(), "STRIDED_SLICE");
  Check(r.AddStacker(), "SignalStacker");
  Check(r.AddSub(), "SUB");
  Check(r.AddSum(), "SUM");
  Check(r.AddSvdf(), "SVDF");
  Check(r.AddTanh(), "TANH");
  Check(r.AddTransposeConv(), "TRANSPOSE_CONV");
  Check(r.AddTranspose(), "TRANSPOSE");
  Check(r.AddUnpack(), "UNPACK");
  Check(r.AddUnidirectionalSequenceLSTM(), "UNIDIRECTIONAL_SEQUENCE_LSTM");
  Check(r.AddVarHandle(), "VAR_HANDLE");
  Check(r.AddWhile(), "WHILE");
  Check(r.AddWindow(), "SignalWindow");
  Check(r.AddZerosLike(), "ZEROS_LIKE");
#ifdef ORACLE_ETHOS_U
  Check(r.AddEthosU(), "ethos-u");
#endif
}

#ifdef ORACLE_DEBUG_LOG_CALLBACK
void DebugLogToStderr(const char* s) { fputs(s, stderr); }
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef ORACLE_DEBUG_LOG_CALLBACK
  RegisterDebugLogCallback(DebugLogToStderr);
#endif
  if (argc < 4) {
    printf("ORACLE usage: driver MODEL ARENA_BYTES zeros|lcg1|file [--hex] "
           "[FILES...]\n");
    return 2;
  }
  const char* model_path = argv[1];
  size_t arena_bytes = static_cast<size_t>(strtoul(argv[2], nullptr, 10));
  const char* mode = argv[3];
  bool hex = false;
  const char* files[64];
  int nfiles = 0;
  for (int i = 4; i < argc; ++i) {
    if (strcmp(argv[i], "--hex") == 0) hex = true;
    else if (nfiles < 64) files[nfiles++] = argv[i];
  }

  size_t model_size = 0;
  uint8_t* model_data = ReadFile(model_path, &model_size);
  if (model_data == nullptr) {
    printf("ORACLE status error=cannot_read_model\n");
    return 3;
  }
  const tflite::Model* model = tflite::GetModel(model_data);

  static Resolver resolver;
  RegisterAll(resolver);

  uint8_t* arena = AlignedAlloc16(arena_bytes);
  if (arena == nullptr) {
    printf("ORACLE status error=cannot_allocate_arena\n");
    return 3;
  }

  tflite::RecordingMicroAllocator* allocator =
      tflite::RecordingMicroAllocator::Create(arena, arena_bytes);
  if (allocator == nullptr) {
    printf("ORACLE status alloc=fail invoke=skipped stage=allocator_create\n");
    return 1;
  }
  int num_vars = CountResourceVariables(model);
  tflite::MicroResourceVariables* vars = nullptr;
  if (num_vars > 0) {
    vars = tflite::MicroResourceVariables::Create(allocator, num_vars);
    if (vars == nullptr) {
      printf("ORACLE status alloc=fail invoke=skipped "
             "stage=resource_variables_create\n");
      return 1;
    }
  }
  tflite::RecordingMicroInterpreter interpreter(model, resolver, allocator,
                                                vars);
  printf("ORACLE model_bytes=%u arena_bytes=%u resource_vars=%d\n",
         static_cast<unsigned>(model_size), static_cast<unsigned>(arena_bytes),
         num_vars);
  fflush(stdout);

  if (interpreter.AllocateTensors() != kTfLiteOk) {
    fflush(stderr);
    printf("ORACLE status alloc=fail invoke=skipped\n");
    return 1;
  }

  const size_t n_in = interpreter.inputs_size();
  const size_t n_out = interpreter.outputs_size();
  printf("ORACLE inputs=%u outputs=%u\n", static_cast<unsigned>(n_in),
         static_cast<unsigned>(n_out));

  uint32_t x = 1;
  size_t total_in = 0;
  for (size_t i = 0; i < n_in; ++i) total_in += interpreter.input(i)->bytes;
  if (strcmp(mode, "zeros") == 0) {
    for (size_t i = 0; i < n_in; ++i) {
      TfLiteTensor* t = interpreter.input(i);
      memset(t->data.raw, 0, t->bytes);
    }
  } else if (strcmp(mode, "lcg1") == 0) {
    for (size_t i = 0; i < n_in; ++i) {
      TfLiteTensor* t = interpreter.input(i);
      uint8_t* p = reinterpret_cast<uint8_t*>(t->data.raw);
      for (size_t b = 0; b < t->bytes; ++b) {
        x = x * 1103515245u + 12345u;
        p[b] = static_cast<uint8_t>((x >> 16) & 0xffu);
      }
    }
  } else if (strcmp(mode, "file") == 0) {
    if (nfiles == 1) {
      size_t sz = 0;
      uint8_t* data = ReadFile(files[0], &sz);
      if (data == nullptr || sz != total_in) {
        printf("ORACLE status alloc=ok invoke=skipped error=input_size "
               "file_bytes=%u expected=%u\n",
               static_cast<unsigned>(sz), static_cast<unsigned>(total_in));
        return 4;
      }
      size_t off = 0;
      for (size_t i = 0; i < n_in; ++i) {
        TfLiteTensor* t = interpreter.input(i);
        memcpy(t->data.raw, data + off, t->bytes);
        off += t->bytes;
      }
    } else if (static_cast<size_t>(nfiles) == n_in) {
      for (size_t i = 0; i < n_in; ++i) {
        TfLiteTensor* t = interpreter.input(i);
        size_t sz = 0;
        uint8_t* data = ReadFile(files[i], &sz);
        if (data == nullptr || sz != t->bytes) {
          printf("ORACLE status alloc=ok invoke=skipped error=input_size "
                 "input=%u file_bytes=%u expected=%u\n",
                 static_cast<unsigned>(i), static_cast<unsigned>(sz),
                 static_cast<unsigned>(t->bytes));
          return 4;
        }
        memcpy(t->data.raw, data, sz);
      }
    } else {
      printf("ORACLE status alloc=ok invoke=skipped error=input_file_count "
             "files=%d inputs=%u\n", nfiles, static_cast<unsigned>(n_in));
      return 4;
    }
  } else {
    printf("ORACLE status error=bad_input_mode\n");
    return 2;
  }

  fflush(stdout);
  if (interpreter.Invoke() != kTfLiteOk) {
    fflush(stderr);
    printf("ORACLE status alloc=ok invoke=fail\n");
    return 1;
  }
  fflush(stdout);
  interpreter.GetMicroAllocator().PrintAllocations();
  fflush(stderr);

  for (size_t i = 0; i < n_out; ++i) {
    TfLiteTensor* t = interpreter.output(i);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(t->data.raw);
    printf("ORACLE output %u type=%d bytes=%u fnv1a=%08lx\n",
           static_cast<unsigned>(i), static_cast<int>(t->type),
           static_cast<unsigned>(t->bytes),
           static_cast<unsigned long>(Fnv1a(p, t->bytes)));
    if (hex) {
      printf("ORACLE hex %u ", static_cast<unsigned>(i));
      for (size_t b = 0; b < t->bytes; ++b) printf("%02x", p[b]);
      printf("\n");
    }
  }
  printf("ORACLE status alloc=ok invoke=ok\n");
  fflush(stdout);
  return 0;
}
