"""Compile-time layout probes: the sizeof / alignof of every struct a target profile lists,
measured by compiling small C++ files against a TFLM source tree with a cross compiler.

Each probe file includes the header (or, for a kernel's private struct, the kernel's .cc
file) that defines the struct and emits ``extern "C" const unsigned probe_N[] = {sizeof,
alignof}``; the values are read back from the assembly (``-S``), so nothing is linked or
run. Private members (a nested struct of MicroResourceVariables) are reached with
``#define private public`` in the probe file only.

    python benchmarks/esp_layout/probe.py --tree /work/src/esp/esp-tflite-micro \
        --esp-nn /work/src/esp/esp-nn --compiler riscv32 --out /tmp/rv32.json

``--compiler``: ``riscv32`` (riscv64-unknown-elf-g++ -march=rv32imc -mabi=ilp32, the
instruction set of ESP32-C3 and TFLM's riscv32_generic target) or ``xtensa``
(xtensa-lx106-elf-g++: the Xtensa ABI; ESP32 / S2 / S3 lay structs out by the same rules).
C++ headers: newlib's libstdc++ headers (libstdc++-arm-none-eabi-newlib) over picolibc's C
headers; they are only needed to parse TFLM's headers (no struct of the table holds a
standard-library type). Defines: TF_LITE_STATIC_MEMORY and ESP_NN, no USE_TFLM_COMPRESSION
(as esp-tflite-micro's CMakeLists.txt and TFLM's riscv32_generic Makefile build), no
-fshort-enums. The output JSON maps each struct key of micro_runtime/targets.py to
``[size, align]`` and ``offsets`` to the probed field offsets.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

K = "tensorflow/lite/micro/kernels/"
SIG = "signal/micro/kernels/"

#: (struct key, file to include (a header, or a kernel .cc for private structs), C++ type)
PROBES: List[Tuple[str, str, str]] = [
    ("SingleArenaBufferAllocator", "tensorflow/lite/micro/arena_allocator/single_arena_buffer_allocator.h",
     "tflite::SingleArenaBufferAllocator"),
    ("RecordingSingleArenaBufferAllocator",
     "tensorflow/lite/micro/arena_allocator/recording_single_arena_buffer_allocator.h",
     "tflite::RecordingSingleArenaBufferAllocator"),
    ("GreedyMemoryPlanner", "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h",
     "tflite::GreedyMemoryPlanner"),
    ("LinearMemoryPlanner", "tensorflow/lite/micro/memory_planner/linear_memory_planner.h",
     "tflite::LinearMemoryPlanner"),
    ("MicroAllocator", "tensorflow/lite/micro/micro_allocator.h", "tflite::MicroAllocator"),
    ("RecordingMicroAllocator", "tensorflow/lite/micro/recording_micro_allocator.h",
     "tflite::RecordingMicroAllocator"),
    ("MicroBuiltinDataAllocator", "tensorflow/lite/micro/micro_allocator.cc",
     "tflite::MicroBuiltinDataAllocator"),
    ("SubgraphAllocations", "tensorflow/lite/micro/micro_allocator.h", "tflite::SubgraphAllocations"),
    ("TfLiteEvalTensor", "tensorflow/lite/c/common.h", "TfLiteEvalTensor"),
    ("TfLiteTensor", "tensorflow/lite/c/common.h", "TfLiteTensor"),
    ("NodeAndRegistration", "tensorflow/lite/micro/micro_allocator.h", "tflite::NodeAndRegistration"),
    ("TfLiteAffineQuantization", "tensorflow/lite/c/common.h", "TfLiteAffineQuantization"),
    ("TfLiteIntArray", "tensorflow/lite/c/common.h", "TfLiteIntArray"),
    ("ScratchBufferRequest", "tensorflow/lite/micro/micro_allocator.h",
     "tflite::internal::ScratchBufferRequest"),
    ("ScratchBufferHandle", "tensorflow/lite/micro/micro_allocator.h", "tflite::ScratchBufferHandle"),
    ("AllocationInfo", "tensorflow/lite/micro/micro_allocation_info.h", "tflite::AllocationInfo"),
    ("size_t", "tensorflow/lite/c/common.h", "size_t"),
    ("pointer", "tensorflow/lite/c/common.h", "void*"),
    ("MicroResourceVariables", "tensorflow/lite/micro/micro_resource_variable.h",
     "tflite::MicroResourceVariables"),
    ("MicroResourceVariable", "tensorflow/lite/micro/micro_resource_variable.h",
     "tflite::MicroResourceVariables::MicroResourceVariable"),
] + [
    (name, "tensorflow/lite/c/builtin_op_data.h", name) for name in (
        "TfLiteAddParams", "TfLiteSubParams", "TfLiteMulParams", "TfLiteDivParams",
        "TfLiteArgMaxParams", "TfLiteArgMinParams", "TfLiteBatchMatMulParams",
        "TfLiteCallOnceParams", "TfLiteCastParams", "TfLiteConcatenationParams",
        "TfLiteConvParams", "TfLiteDepthwiseConvParams", "TfLiteCumsumParams",
        "TfLiteDepthToSpaceParams", "TfLiteSpaceToDepthParams", "TfLiteFullyConnectedParams",
        "TfLiteGatherParams", "TfLiteIfParams", "TfLiteWhileParams", "TfLiteL2NormParams",
        "TfLiteLeakyReluParams", "TfLiteLSTMParams", "TfLiteUnidirectionalSequenceLSTMParams",
        "TfLiteMirrorPaddingParams", "TfLitePackParams", "TfLiteUnpackParams",
        "TfLitePoolParams", "TfLiteReducerParams", "TfLiteReshapeParams",
        "TfLiteSqueezeParams", "TfLiteResizeBilinearParams",
        "TfLiteResizeNearestNeighborParams", "TfLiteShapeParams", "TfLiteSoftmaxParams",
        "TfLiteSplitParams", "TfLiteSplitVParams", "TfLiteStridedSliceParams",
        "TfLiteSVDFParams", "TfLiteTransposeConvParams", "TfLiteVarHandleParams")
] + [
    ("fully_connected.OpDataFullyConnected", K + "fully_connected.h", "tflite::OpDataFullyConnected"),
    ("conv.OpDataConv", K + "conv.h", "tflite::OpDataConv"),
    ("add.OpDataAdd", K + "add.h", "tflite::OpDataAdd"),
    ("sub.OpDataSub", K + "sub.h", "tflite::OpDataSub"),
    ("mul.OpDataMul", K + "mul.h", "tflite::OpDataMul"),
    ("div.OpDataDiv", K + "div.cc", "tflite::OpDataDiv"),
    ("pooling.OpDataPooling", K + "pooling.h", "tflite::OpDataPooling"),
    ("softmax.SoftmaxParams", K + "softmax.h", "tflite::SoftmaxParams"),
    ("quantize.OpDataQuantizeReference", K + "quantize.h", "tflite::OpDataQuantizeReference"),
    ("dequantize.DequantizeOpData", K + "dequantize.h", "tflite::DequantizeOpData"),
    ("svdf.OpDataSvdf", K + "svdf.h", "tflite::OpDataSvdf"),
    ("unidirectional_sequence_lstm.OpDataLSTM", K + "lstm_eval.h", "tflite::OpDataLSTM"),
    ("pad.OpData", K + "pad.h", "tflite::OpData"),
    ("reduce.OpDataReduce", K + "reduce.h", "tflite::OpDataReduce"),
    ("logistic.OpDataLogistic", K + "logistic.h", "tflite::OpDataLogistic"),
    ("tanh.OpData", K + "tanh.cc", "tflite::OpData"),
    ("activations.ReluOpData", K + "activations.h", "tflite::ReluOpData"),
    ("activations.Relu6OpData", K + "activations.h", "tflite::Relu6OpData"),
    ("leaky_relu.LeakyReluOpData", K + "leaky_relu.h", "tflite::LeakyReluOpData"),
    ("hard_swish.HardSwishParams", "tensorflow/lite/kernels/internal/types.h", "tflite::HardSwishParams"),
    ("concatenation.OpData", K + "concatenation.cc", "tflite::OpData"),
    ("strided_slice.StridedSliceParams", "tensorflow/lite/kernels/internal/types.h",
     "tflite::StridedSliceParams"),
    ("transpose_conv.OpData", K + "transpose_conv.cc", "tflite::OpData"),
    ("l2norm.L2NormalizationParams", K + "l2norm.cc", "tflite::L2NormalizationParams"),
    ("prelu.PreluParams", K + "prelu.h", "tflite::PreluParams"),
    ("mirror_pad.OpDataMirrorPad", K + "mirror_pad.cc", "tflite::OpDataMirrorPad"),
    ("batch_matmul.OpDataBatchMatmul", K + "batch_matmul.h", "tflite::OpDataBatchMatmul"),
    ("batch_matmul.QuantizationOpDataBatchMatmul", K + "batch_matmul.h",
     "tflite::QuantizationOpDataBatchMatmul"),
    ("space_to_batch_nd.SpaceToBatchParams", K + "space_to_batch_nd.cc", "tflite::SpaceToBatchParams"),
    ("squared_difference.OpData", K + "squared_difference.cc", "tflite::OpData"),
    ("elementwise.OpDataAbsRsqrt", K + "elementwise.cc", "tflite::OpDataAbsRsqrt"),
    ("log_softmax.LogSoftmaxOpData", K + "log_softmax.cc", "tflite::LogSoftmaxOpData"),
    ("add_n.OpData", K + "add_n.cc", "tflite::OpData"),
    ("comparisons.OpData", K + "comparisons.cc", "tflite::OpData"),
    ("cumsum.OpData", K + "cumsum.cc", "tflite::OpData"),
    ("if.OpData", K + "if.cc", "tflite::OpData"),
    ("while.OpData", K + "while.cc", "tflite::OpData"),
    ("call_once.OpData", K + "call_once.cc", "tflite::OpData"),
    ("var_handle.OpData", K + "var_handle.cc", "tflite::OpData"),
    ("assign_variable.OpData", K + "assign_variable.cc", "tflite::OpData"),
    ("embedding_lookup.OpData", K + "embedding_lookup.cc", "tflite::OpData"),
    ("circular_buffer.OpDataCircularBuffer", K + "circular_buffer.h", "tflite::OpDataCircularBuffer"),
    ("detection_postprocess.OpData", K + "detection_postprocess.cc", "tflite::OpData"),
    ("elu.OpData", K + "elu.cc", "tflite::OpData"),
    ("select.OpData", K + "select.cc", "tflite::OpData"),
    ("signal_window.TFLMSignalWindowParams", SIG + "window.cc", "tflite::TFLMSignalWindowParams"),
    ("signal_energy.TFLMSignalEnergyParams", SIG + "energy.cc", "tflite::TFLMSignalEnergyParams"),
    ("signal_pcan.TfLitePcanParams", SIG + "pcan.cc", "tflite::tflm_signal::TfLitePcanParams"),
    ("signal_filter_bank_log.TFLMSignalLogParams", SIG + "filter_bank_log.cc",
     "tflite::TFLMSignalLogParams"),
    ("signal_rfft.TfLiteAudioFrontendRfftParams", SIG + "rfft.cc",
     "tflite::TfLiteAudioFrontendRfftParams<int16_t>"),
    ("signal_irfft.TfLiteAudioFrontendIrfftParams", SIG + "irfft.cc",
     "tflite::TfLiteAudioFrontendIrfftParams"),
    ("signal_irfft.IrfftFloatState", "signal/src/irfft_float.cc",
     "tflite::tflm_signal::IrfftFloatState"),
    ("kiss_fft.kiss_fftr_state", "signal/src/kiss_fft_wrappers/kiss_fft_int16.cc",
     "kiss_fft_fixed16::kiss_fftr_state"),
    ("kiss_fft.kiss_fft_state_int16", "signal/src/kiss_fft_wrappers/kiss_fft_int16.cc",
     "kiss_fft_fixed16::kiss_fft_state"),
    ("kiss_fft.kiss_fft_state_int32", "signal/src/kiss_fft_wrappers/kiss_fft_int32.cc",
     "kiss_fft_fixed32::kiss_fft_state"),
    ("signal_filter_bank.TFLMSignalFilterBankParams", SIG + "filter_bank.cc",
     "tflite::TFLMSignalFilterBankParams"),
    ("signal_filter_bank_spectral_subtraction.TFLMSignalSpectralSubtractionParams",
     SIG + "filter_bank_spectral_subtraction.cc", "tflite::TFLMSignalSpectralSubtractionParams"),
    ("signal_framer.TFLMSignalFramerParams", SIG + "framer.cc", "tflite::TFLMSignalFramerParams"),
    ("signal_stacker.TFLMSignalStackerParams", SIG + "stacker.cc", "tflite::TFLMSignalStackerParams"),
    ("signal_delay.TFLMSignalFrontendDelayParams", SIG + "delay.cc",
     "tflite::TFLMSignalFrontendDelayParams"),
    ("signal_overlap_add.TFLMSignalOverlapAddParams", SIG + "overlap_add.cc",
     "tflite::TFLMSignalOverlapAddParams<float>"),
    ("decode.DecodeStateLut", K + "decode_state_lut.h", "tflite::DecodeStateLut"),
    ("decode.DecodeStatePrune", K + "decode_state_prune.h", "tflite::DecodeStatePrune"),
    ("decode.DecodeStateHuffman", K + "decode_state_huffman.h", "tflite::DecodeStateHuffman"),
    ("circular_buffer.CircularBuffer", "signal/src/circular_buffer.h",
     "tflite::tflm_signal::CircularBuffer"),
]

#: esp-tflite-micro's ESP-NN kernels (tensorflow/lite/micro/kernels/esp_nn/*.cc): their
#: private OpData (probed only when the tree has them)
ESP_NN_PROBES: List[Tuple[str, str, str]] = [
    ("esp_nn.conv.NodeData", K + "esp_nn/conv.cc", "tflite::NodeData"),
    ("esp_nn.depthwise_conv.NodeData", K + "esp_nn/depthwise_conv.cc", "tflite::NodeData"),
    ("esp_nn.softmax.NodeData", K + "esp_nn/softmax.cc", "tflite::NodeData"),
]

#: structs that exist only with USE_TFLM_COMPRESSION (their probe fails to compile without it)
COMPRESSION_ONLY = ("assign_variable.OpData", "CompressionTensorData", "LookupTableData")

#: (key, header, C++ type, field): offsets of the fields the emulator treats as critical
OFFSET_PROBES: List[Tuple[str, str, str, str]] = [
    ("TfLiteTensor.quantization.type", "tensorflow/lite/c/common.h", "TfLiteTensor", "quantization.type"),
    ("TfLiteTensor.quantization.params", "tensorflow/lite/c/common.h", "TfLiteTensor", "quantization.params"),
    ("TfLiteTensor.type", "tensorflow/lite/c/common.h", "TfLiteTensor", "type"),
    ("TfLiteAffineQuantization.zero_point", "tensorflow/lite/c/common.h", "TfLiteAffineQuantization",
     "zero_point"),
    ("TfLiteEvalTensor.type", "tensorflow/lite/c/common.h", "TfLiteEvalTensor", "type"),
]

COMPILERS = {
    "riscv32": ["riscv64-unknown-elf-g++", "-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs"],
    "xtensa": ["xtensa-lx106-elf-g++", "-isystem", "/usr/lib/picolibc/riscv64-unknown-elf/include"],
}
CXX_HEADERS = ["-isystem", "/usr/include/newlib/c++/12.2.1",
               "-isystem", "/usr/include/newlib/c++/12.2.1/arm-none-eabi"]
DEFINES = ["-DTF_LITE_STATIC_MEMORY", "-DESP_NN", "-DTF_LITE_DISABLE_X86_NEON",
           "-DCONFIG_NN_OPTIMIZED"]

_STUB_ESP_TIMER = "#pragma once\n#include <stdint.h>\nstatic inline int64_t esp_timer_get_time(void) { return 0; }\n"


def _tu_source(includes: List[str], entries: List[Tuple[int, str]],
               offsets: List[Tuple[int, str, str]]) -> str:
    lines = ["#include <stddef.h>", "#define private public"]
    lines += [f'#include "{include}"' for include in includes] + ["#undef private"]
    for n, expr in entries:
        lines.append(f'extern "C" const unsigned probe_{n}[] = {{sizeof({expr}), alignof({expr})}};')
    for n, expr, field in offsets:
        lines.append(f'extern "C" const unsigned probe_{n}[] = {{offsetof({expr}, {field}), 0}};')
    return "\n".join(lines) + "\n"


def _words(asm: str) -> Dict[int, Tuple[int, int]]:
    """probe number -> its two words, from the assembly."""
    out: Dict[int, Tuple[int, int]] = {}
    for m in re.finditer(r"^probe_(\d+):\s*\n\s*\.word\s+(\d+)\s*\n\s*\.word\s+(\d+)", asm, re.M):
        out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    for m in re.finditer(r"^probe_(\d+):\s*\n\s*\.zero\s+8\b", asm, re.M):     # all-zero
        out[int(m.group(1))] = (0, 0)
    return out


def run(tree: str, esp_nn: Optional[str], compiler: str, third_party: Optional[str] = None) -> dict:
    """{"structs": {key: [size, align]}, "offsets": {key: offset}, "command": ...}."""
    probes = [p for p in PROBES if p[0] not in COMPRESSION_ONLY]
    if os.path.isdir(os.path.join(tree, K, "esp_nn")):
        probes += ESP_NN_PROBES
    by_file: Dict[str, list] = {}
    for n, (key, include, expr) in enumerate(probes):
        if os.path.exists(os.path.join(tree, include)):
            by_file.setdefault(include, [[], []])[0].append((n, expr))
    base = len(probes)
    for n, (key, include, expr, field) in enumerate(OFFSET_PROBES):
        by_file.setdefault(include, [[], []])[1].append((base + n, expr, field))
    tp = third_party or os.path.join(tree, "third_party")
    cmd = COMPILERS[compiler] + ["-std=gnu++17", "-S", "-O0", "-w"] + CXX_HEADERS + DEFINES + [
        "-I", tree, "-I", os.path.join(tp, "flatbuffers/include"), "-I", os.path.join(tp, "gemmlowp"),
        "-I", os.path.join(tp, "ruy"), "-I", os.path.join(tp, "kissfft")]
    results: Dict[int, Tuple[int, int]] = {}
    errors = {}
    with tempfile.TemporaryDirectory() as tmp:
        stub = os.path.join(tmp, "stub")
        os.makedirs(stub)
        with open(os.path.join(stub, "esp_timer.h"), "w") as f:
            f.write(_STUB_ESP_TIMER)
        extra = ["-I", stub] + (["-I", os.path.join(esp_nn, "include")] if esp_nn else [])
        # every header in one file; each kernel .cc (private structs) in a file of its own
        headers = sorted(i for i in by_file if i.endswith(".h"))
        units = [(headers, [e for i in headers for e in by_file[i][0]],
                  [o for i in headers for o in by_file[i][1]])]
        units += [([i], *by_file[i]) for i in sorted(by_file) if not i.endswith(".h")]
        for n, (includes, entries, offsets) in enumerate(units):
            include = " ".join(includes) if len(includes) < 3 else "the headers"
            src = os.path.join(tmp, f"probe{n}.cc")
            with open(src, "w") as f:
                f.write(_tu_source(includes, entries, offsets))
            proc = subprocess.run(cmd + extra + ["-o", "-", src], capture_output=True, text=True)
            if proc.returncode:
                errors[include] = proc.stderr[-2000:]
                continue
            results.update(_words(proc.stdout))
    structs = {key: list(results[n]) for n, (key, _, _) in enumerate(probes) if n in results}
    offs = {key: results[base + n][0] for n, (key, *_r) in enumerate(OFFSET_PROBES) if base + n in results}
    version = subprocess.run([cmd[0], "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"compiler": version, "command": " ".join(COMPILERS[compiler] + ["-std=gnu++17"] + DEFINES),
            "structs": structs, "offsets": offs, "errors": errors}


def merge(out: str, runs: List[str], about: str) -> dict:
    """Several runs' JSON (``NAME=FILE``) into one record: {about, runs: {NAME: run}}."""
    record = {"about": about, "runs": {}}
    for item in runs:
        name, _, path = item.partition("=")
        with open(path) as f:
            record["runs"][name] = json.load(f)
    with open(out, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    return record


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        mp = argparse.ArgumentParser(prog="probe.py merge")
        mp.add_argument("out")
        mp.add_argument("--about", required=True)
        mp.add_argument("--run", action="append", default=[], help="NAME=FILE, repeated")
        m = mp.parse_args(argv[1:])
        merge(m.out, m.run, m.about)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="TFLM source tree (esp-tflite-micro or tflite-micro)")
    ap.add_argument("--esp-nn", help="ESP-NN source tree (its include/ for the esp_nn kernels)")
    ap.add_argument("--compiler", choices=sorted(COMPILERS), default="riscv32")
    ap.add_argument("--third-party", help="where flatbuffers/, gemmlowp/, ruy/, kissfft/ are "
                    "(default: the tree's third_party/; upstream TFLM downloads them)")
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    args = ap.parse_args(argv)
    result = run(args.tree, args.esp_nn, args.compiler, args.third_party)
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    for include, err in result["errors"].items():
        print(f"probe of {include} failed:\n{err}", file=sys.stderr)
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
