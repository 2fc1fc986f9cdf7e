"""Target profiles: the size and alignment of every TFLM struct that lands in the arena.

TFLM's arena figures depend on the build: pointers, ``size_t``, the alignment of 64-bit
types, the size of enums and TFLM's compile-time options change struct sizes, and the
kernel library (``OPTIMIZED_KERNEL_DIR``) changes what each kernel allocates. A profile
lists, for one build of TFLM, each struct's ``sizeof`` / ``alignof`` with a one-line
derivation (fields in order, ``NxS`` = N fields of S bytes, ``hole`` / ``pad`` = padding
bytes), and says which kernels it runs.

* ``host64`` — TFLM's 64-bit host build with TF_LITE_STATIC_MEMORY and
  USE_TFLM_COMPRESSION: what the ``tflite-micro`` PyPI package (0.dev20261023182759) is.
* ``mcu32`` — the same TFLM (source of 2026-08-20, commit 90b983c2) built for a generic
  32-bit machine: 4-byte pointers and ``size_t``, 64-bit types 8-byte aligned, 4-byte
  enums, USE_TFLM_COMPRESSION on (a 32-bit x86 build). Not a Cortex-M firmware.
* ``cortex-m0`` ... ``cortex-m55``, each also ``+cmsis-nn`` — TFLM 90b983c2 built by its
  own Makefile for that core (``TARGET=cortex_m_qemu TARGET_ARCH=<core>``, optionally
  ``OPTIMIZED_KERNEL_DIR=cmsis_nn``) with arm-none-eabi-gcc 12.2: 32-bit pointers, 64-bit
  types 8-byte aligned, AAPCS short enums (an enum whose values fit in a byte is one byte:
  a TfLiteType member is 1 byte, TfLiteTensor 32 bytes), USE_TFLM_COMPRESSION off (the
  Makefile enables it only for the linux and xtensa targets). The ``+cmsis-nn`` profiles
  run CMSIS-NN's kernels (:mod:`kernels.cmsis_nn`) whose OpData sizes come from
  :mod:`micro_runtime.cmsis_nn_structs`, with the code paths CMSIS-NN compiles for the
  core (``dsp``: ARM_MATH_DSP, ``mve``: ARM_MATH_MVEI).

Kernel OpData structs are keyed ``"<kernel>.<Struct>"``; builtin option structs
(allocated by TFLM's flatbuffer parsers) by their C name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Mapping, Optional, Tuple

from .cmsis_nn_structs import CMSIS_NN_STRUCTS


class MissingStructError(RuntimeError):
    """Internal error: a kernel asked a target for a struct its table does not list (a
    micro-runtime bug, not a problem with the model). Not a ``KeyError`` on purpose: the
    interpreter turns a kernel's ``KeyError`` into a kernel failure; this one must stop."""


@dataclass(frozen=True)
class StructSize:
    """``size`` and ``align`` in bytes, and how the size comes about."""

    size: int
    align: int
    derivation: str


@dataclass(frozen=True)
class Target:
    """One TFLM build: pointer width and the struct table."""

    name: str
    description: str
    pointer_bytes: int
    structs: Mapping[str, StructSize]
    #: byte ranges (offset, length) of the fields TFLM reads back from a temporary
    #: struct before releasing it (pointers; see arena.arena)
    critical_fields: Optional[Mapping[str, Tuple[Tuple[int, int], ...]]] = None
    #: built with USE_TFLM_COMPRESSION: the allocator reads COMPRESSION_METADATA and the
    #: kernels that support it decompress LUT tensors (TFLM's Makefile turns it on only
    #: for the linux and xtensa targets; DECODE operators work either way)
    compression: bool = True
    #: the Arm core the build is compiled for (``-mcpu``), None for host / generic builds
    core: Optional[str] = None
    #: TFLM's ``OPTIMIZED_KERNEL_DIR``: ``"reference"`` or ``"cmsis-nn"``
    kernel_library: str = "reference"
    #: the core has the DSP extension (CMSIS-NN's ARM_MATH_DSP code paths)
    dsp: bool = False
    #: the core has MVE / Helium integer vectors (CMSIS-NN's ARM_MATH_MVEI code paths)
    mve: bool = False
    #: the build computes the requantization multipliers of LEAKY_RELU, SUB and DIV as
    #: float32 expressions widened to double, e.g. ``(double)(input_scale * alpha /
    #: output_scale)``, as TFLM 90b983c2's source does (arm-none-eabi-gcc rounds every
    #: float operation to float: measured under QEMU on int16 LEAKY_RELU and SUB models
    #: whose scales make the two differ); the tflite-micro package computes them in
    #: double. mcu32 keeps the package's arithmetic (its recorded figures hold no outputs
    #: on non-zero inputs to tell)
    float32_expressions: bool = False
    #: the C library whose float functions TFLM's float kernels call (``std::exp``):
    #: ``"glibc"`` (host builds, glibc 2.36's x86-64 expf), ``"newlib"`` (arm-none-eabi
    #: soft-float builds: newlib 3.3.0's fdlibm float functions), ``"newlib-hard"``
    #: (hard-float Cortex-M55 builds: newlib's double-precision-FPU multilib) or ``"rv32"``
    #: (RV32 builds: the same fdlibm values, RISC-V's canonical NaN);
    #: :func:`kernels.internal.float_math.math_for` picks the library's expf / expm1f /
    #: tanhf / logf / sinf / cosf and NaN rules
    libm: str = "glibc"
    #: the ESP-NN function set an ESP-IDF build calls (``kernel_library`` ``"esp-nn"``):
    #: ``"opt"`` (ESP-NN's generic optimised C), ``"ansi"`` (CONFIG_NN_ANSI_C), ``"esp32s3"``
    #: or ``"esp32p4"`` (the chip's own routines); None for other builds
    esp_nn: Optional[str] = None
    #: the Espressif chip the profile is for (``"esp32-c3"`` ...), None for other builds
    chip: Optional[str] = None
    #: the build keeps TFLM's TFLITE_DCHECK debug checks (no NDEBUG: ESP-IDF's default,
    #: TFLM's default BUILD_TYPE): a failing one aborts. Kernels whose debug checks the
    #: models reach consult it (so far: FULLY_CONNECTED's weights zero point)
    debug_checks: bool = False

    #: the build has a hardware FPU and gcc contracts the float kernels' ``total +=
    #: a * b`` loops into fused multiply-adds (``vfma.f32``; -mfloat-abi=hard or softfp:
    #: TFLM's cortex_m_generic / corstone_300 Cortex-M55 builds): one rounding per step
    #: instead of two (:func:`kernels.internal.matmul.float32_fma`)
    float_fma: bool = False
    #: TFLM's ``CO_PROCESSOR``: ``"ethos-u"`` for the Ethos-U builds (its kernel runs the
    #: ``ethos-u`` custom operator of Vela-compiled models), None otherwise
    co_processor: Optional[str] = None
    #: the NPU configuration the profile names (Vela's ``--accelerator-config``, e.g.
    #: ``"ethos-u55-128"``), None without a co-processor
    npu: Optional[str] = None

    @property
    def cpu(self) -> str:
        """The CPU the build runs on, for what C leaves undefined in the requantisation
        routines at extreme scales (see :data:`kernels.internal.quantization.CPUS`):
        "arm" for the Cortex-M builds, "riscv" for the RV32 ones (riscv32 and the RISC-V
        ESP chips: C3, C6, H2 soft-float, P4 with its single-precision FPU; measured on the
        RV32 builds, tests/data/rv32_extremes.json), "x86" for the host ones (the
        tflite-micro package, mcu32) and, unmeasured, for the Xtensa chips (ESP32, S2, S3:
        no runtime to measure them on)."""
        if self.core:
            return "arm"
        if self.name == "riscv32" or (self.chip in ESP_CHIPS
                                      and ESP_CHIPS[self.chip][1].startswith("RISC-V")):
            return "riscv"
        return "x86"

    def critical(self, struct: str) -> Tuple[Tuple[int, int], ...]:
        """(offset, length) ranges of ``struct``'s critical fields (empty if none)."""
        return (self.critical_fields or {}).get(struct, ())

    def _lookup(self, struct: str) -> StructSize:
        try:
            return self.structs[struct]
        except KeyError:
            hint = (" (CMSIS-NN OpData sizes live in micro_runtime/cmsis_nn_structs.py)"
                    if struct.startswith("cmsis_nn.") else
                    " (ESP-NN kernels' OpData sizes live in micro_runtime/targets.py's "
                    "ESP_NN_STRUCTS)" if struct.startswith("esp_nn.") else "")
            raise MissingStructError(
                f"micro-runtime internal error: target '{self.name}' has no size for struct "
                f"{struct!r}{hint}; add it to the target's struct table") from None

    def sizeof(self, struct: str) -> int:
        """Bytes of ``struct`` on this target."""
        return self._lookup(struct).size

    def alignof(self, struct: str) -> int:
        """Alignment of ``struct`` on this target, in bytes."""
        return self._lookup(struct).align

    def struct(self, struct: str) -> Tuple[int, int]:
        """(size, alignment) of ``struct`` on this target, in bytes."""
        s = self._lookup(struct)
        return s.size, s.align


# (size64, align64, derivation64, size32, align32, derivation32); a single derivation
# string is used for both when the layout is the same.
_S = StructSize
_TABLE: Dict[str, tuple] = {
    # ---- arena allocators, planner, allocator objects (placed in the tail at startup)
    "SingleArenaBufferAllocator": (
        72, 8, "vptr 8, buffer_head_..temp_ 5x8 (uint8_t*), temp_buffer_ptr_check_sum_ 8 (intptr_t), temp_buffer_count_ 4, pad 4",
        36, 4, "vptr 4, buffer_head_..temp_ 5x4, temp_buffer_ptr_check_sum_ 4, temp_buffer_count_ 4"),
    "RecordingSingleArenaBufferAllocator": (
        104, 8, "SingleArenaBufferAllocator 72, requested_head_bytes_..alloc_count_ 4x8 (size_t)",
        52, 4, "SingleArenaBufferAllocator 36, requested_head_bytes_..alloc_count_ 4x4 (size_t)"),
    "GreedyMemoryPlanner": (
        72, 8, "vptr 8, max_buffer_count_..buffer_count_ 2x4, requirements_..buffers_sorted_by_offset_ 4x8 (ptr), next_free_entry_..first_entry_index_ 2x4, buffer_offsets_ 8, need_to_calculate_offsets_ 1, pad 7",
        44, 4, "vptr 4, max_buffer_count_..buffer_count_ 2x4, requirements_..buffers_sorted_by_offset_ 4x4, next_free_entry_..first_entry_index_ 2x4, buffer_offsets_ 4, need_to_calculate_offsets_ 1, pad 3"),
    "LinearMemoryPlanner": (
        8216, 8, "vptr 8, buffer_offsets_[1024] 1024x8 (size_t), current_buffer_count_ 4, pad 4, next_free_offset_ 8 (size_t)",
        4108, 4, "vptr 4, buffer_offsets_[1024] 1024x4 (size_t), current_buffer_count_ 4, next_free_offset_ 4"),
    "MicroAllocator": (
        72, 8, "vptr 8, non_persistent_buffer_allocator_..memory_planner_ 3x8 (ptr), builtin_data_allocator_ 8, model_is_allocating_ 1, hole 7, scratch_buffer_request_count_..max_head_buffer_usage_ 3x8 (size_t/ptr)",
        36, 4, "vptr 4, 3 allocator/planner ptrs 3x4, builtin_data_allocator_ 4, model_is_allocating_ 1, hole 3, scratch_buffer_request_count_..max_head_buffer_usage_ 3x4"),
    "RecordingMicroAllocator": (
        272, 8, "MicroAllocator 72, recording_memory_allocator_ 8, 8 RecordedAllocation records 8x(3x8 size_t) = 192",
        136, 4, "MicroAllocator 36, recording_memory_allocator_ 4, 8 RecordedAllocation records 8x(3x4) = 96"),
    "MicroBuiltinDataAllocator": (
        16, 8, "vptr 8, persistent_allocator_ 8", 8, 4, "vptr 4, persistent_allocator_ 4"),
    "SubgraphAllocations": (
        24, 8, "node_and_registrations 8, tensors 8, compressed.tensors 8 (USE_TFLM_COMPRESSION)",
        12, 4, "node_and_registrations 4, tensors 4, compressed.tensors 4"),
    # ---- per-tensor and per-node structs
    "TfLiteEvalTensor": (24, 8, "data 8, dims 8, type 4, pad 4", 12, 4, "data 4, dims 4, type 4"),
    "TfLiteTensor": (
        64, 8, "quantization {type 4, pad 4, params 8} 16, params {scale 4, zero_point 4} 8, data 8, dims 8, bytes 8 (size_t), type 4, allocation_type 4, is_variable 1, pad 7 (TF_LITE_STATIC_MEMORY layout)",
        40, 4, "quantization {type 4, params 4} 8, params {scale 4, zero_point 4} 8, data 4, dims 4, bytes 4, type 4, allocation_type 4, is_variable 1, pad 3"),
    "NodeAndRegistration": (
        64, 8, "TfLiteNode {inputs, outputs, intermediates, user_data, builtin_data, custom_initial_data 6x8, custom_initial_data_size 4, pad 4} 56, registration 8",
        32, 4, "TfLiteNode {6 ptrs 6x4, custom_initial_data_size 4} 28, registration 4"),
    "TfLiteAffineQuantization": (24, 8, "scale 8, zero_point 8, quantized_dimension 4, pad 4",
                                 12, 4, "scale 4, zero_point 4, quantized_dimension 4"),
    "TfLiteIntArray": (4, 4, "size 4, then size x int32 data (flexible array)"),
    "ScratchBufferRequest": (16, 8, "bytes 8 (size_t), node_idx 4, subgraph_idx 4",
                             12, 4, "bytes 4 (size_t), node_idx 4, subgraph_idx 4"),
    "ScratchBufferHandle": (8, 8, "data 8 (uint8_t*)", 4, 4, "data 4 (uint8_t*)"),
    "AllocationInfo": (
        32, 8, "bytes 8 (size_t), output_ptr 8, first_created..offline_offset 3x4, needs_allocating 1, pad 3",
        24, 4, "bytes 4, output_ptr 4, first_created..offline_offset 3x4, needs_allocating 1, pad 3"),
    "size_t": (8, 8, "size_t", 4, 4, "size_t"),
    "pointer": (8, 8, "T*", 4, 4, "T*"),
    "MicroResourceVariables": (
        16, 8, "resource_variables_ 8 (ptr), max_variable_count_ 4, num_resource_variables_ 4",
        12, 4, "resource_variables_ 4, max_variable_count_ 4, num_resource_variables_ 4"),
    "MicroResourceVariable": (
        40, 8, "container, shared_name, resource_buffer 3x8 (ptr), bytes 8 (size_t), default_value 1, pad 7",
        20, 4, "container, shared_name, resource_buffer 3x4, bytes 4, default_value 1, pad 3"),
    # ---- builtin option structs written by TFLM's flatbuffer parsers (tail, uncategorised)
    "TfLiteAddParams": (8, 4, "activation 4, pot_scale_int16 1, pad 3"),
    "TfLiteSubParams": (8, 4, "activation 4, pot_scale_int16 1, pad 3"),
    "TfLiteMulParams": (4, 4, "activation 4"),
    "TfLiteDivParams": (4, 4, "activation 4"),
    "TfLiteArgMaxParams": (4, 4, "output_type 4"),
    "TfLiteArgMinParams": (4, 4, "output_type 4"),
    "TfLiteBatchMatMulParams": (3, 1, "adj_x, adj_y, asymmetric_quantize_inputs 3x1 (bool)"),
    "TfLiteCallOnceParams": (4, 4, "init_subgraph_index 4"),
    "TfLiteCastParams": (8, 4, "in_data_type 4, out_data_type 4"),
    "TfLiteConcatenationParams": (8, 4, "axis 4, activation 4"),
    "TfLiteConvParams": (28, 4, "padding, stride_width, stride_height, activation, dilation_width_factor, dilation_height_factor, quantized_bias_type 7x4"),
    "TfLiteDepthwiseConvParams": (28, 4, "padding, stride_width, stride_height, depth_multiplier, activation, dilation_width_factor, dilation_height_factor 7x4"),
    "TfLiteCumsumParams": (2, 1, "exclusive, reverse 2x1 (bool)"),
    "TfLiteDepthToSpaceParams": (4, 4, "block_size 4"),
    "TfLiteSpaceToDepthParams": (4, 4, "block_size 4"),
    "TfLiteFullyConnectedParams": (
        32, 8, "activation 4, weights_format 4, keep_num_dims 1, asymmetric_quantize_inputs 1, pad 2, quantized_bias_type 4, then the quant-spec fields of the 2026-10 schema: 16 bytes more than the 2026-08 source (measured on the package), pad to 8",
        16, 4, "activation 4, weights_format 4, keep_num_dims 1, asymmetric_quantize_inputs 1, pad 2, quantized_bias_type 4"),
    "TfLiteGatherParams": (8, 4, "axis 4, batch_dims 4"),
    "TfLiteIfParams": (8, 4, "then_subgraph_index 4, else_subgraph_index 4"),
    "TfLiteWhileParams": (8, 4, "cond_subgraph_index 4, body_subgraph_index 4"),
    "TfLiteL2NormParams": (4, 4, "activation 4"),
    "TfLiteLeakyReluParams": (4, 4, "alpha 4 (float)"),
    "TfLiteLSTMParams": (20, 4, "activation 4, cell_clip 4, proj_clip 4, kernel_type 4, asymmetric_quantize_inputs 1, pad 3"),
    "TfLiteUnidirectionalSequenceLSTMParams": (16, 4, "activation 4, cell_clip 4, proj_clip 4, time_major 1, asymmetric_quantize_inputs 1, diagonal_recurrent_tensors 1, pad 1"),
    "TfLiteMirrorPaddingParams": (4, 4, "mode 4"),
    "TfLitePackParams": (8, 4, "values_count 4, axis 4"),
    "TfLiteUnpackParams": (8, 4, "num 4, axis 4"),
    "TfLitePoolParams": (40, 4, "padding 4, stride_width..filter_height 4x4, activation 4, computed.padding {width, height, width_offset, height_offset} 4x4"),
    "TfLiteReducerParams": (1, 1, "keep_dims 1 (bool)"),
    "TfLiteReshapeParams": (36, 4, "shape[8] 8x4, num_dimensions 4"),
    "TfLiteSqueezeParams": (36, 4, "squeeze_dims[8] 8x4, num_squeeze_dims 4"),
    "TfLiteResizeBilinearParams": (2, 1, "align_corners, half_pixel_centers 2x1 (bool)"),
    "TfLiteResizeNearestNeighborParams": (2, 1, "align_corners, half_pixel_centers 2x1 (bool)"),
    "TfLiteShapeParams": (4, 4, "out_type 4"),
    "TfLiteSoftmaxParams": (4, 4, "beta 4 (float)"),
    "TfLiteSplitParams": (4, 4, "num_splits 4"),
    "TfLiteSplitVParams": (4, 4, "num_splits 4"),
    "TfLiteStridedSliceParams": (24, 4, "begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask 5x4, offset 1, pad 3"),
    "TfLiteSVDFParams": (12, 4, "rank 4, activation 4, asymmetric_quantize_inputs 1, pad 3"),
    "TfLiteTransposeConvParams": (20, 4, "padding, stride_width, stride_height, activation, quantized_bias_type 5x4"),
    "TfLiteVarHandleParams": (16, 8, "container 8 (char*), shared_name 8 (char*)", 8, 4, "container 4, shared_name 4"),
    # ---- kernel OpData (allocated by each kernel's init as a persistent buffer)
    "fully_connected.OpDataFullyConnected": (
        72, 8, "output_multiplier..filter_buffer_index 9x4, hole 4, per_channel_output_multiplier/shift 2x8, is_per_channel 1, hole 3, weights/bias_scratch_index 2x4, pad 4",
        56, 4, "output_multiplier..filter_buffer_index 9x4, per_channel_output_multiplier/shift 2x4, is_per_channel 1, hole 3, weights/bias_scratch_index 2x4"),
    "conv.OpDataConv": (
        80, 8, "padding {width, height, width_offset, height_offset} 16, input_zero_point..output_shift 5x4, hole 4, per_channel_output_multiplier/shift 2x8, output_activation_min..bias_scratch_index 5x4, pad 4",
        64, 4, "padding 16, input_zero_point..output_shift 5x4, per_channel_output_multiplier/shift 2x4, output_activation_min..bias_scratch_index 5x4"),
    "add.OpDataAdd": (60, 4, "requires_broadcast 1, hole 3, input1_shift..output_activation_max_f32 14x4"),
    "sub.OpDataSub": (52, 4, "requires_broadcast 1, hole 3, input1_shift..output_offset 12x4"),
    "mul.OpDataMul": (36, 4, "input1_zero_point..output_activation_max_f32 9x4"),
    "div.OpDataDiv": (28, 4, "input1_zero_point..output_activation_max_f32 7x4"),
    "pooling.OpDataPooling": (32, 4, "padding 16, activation_min..activation_max_f32 4x4"),
    "softmax.SoftmaxParams": (
        80, 8, "beta 8 (double), input_multiplier..scale 7x4, hole 4, table, exp_lut, one_over_one_plus_x_lut, uint8_table1, uint8_table2 5x8",
        56, 8, "beta 8 (double), input_multiplier..scale 7x4, table..uint8_table2 5x4"),
    "quantize.OpDataQuantizeReference": (32, 8, "quantization_params {zero_point 4, pad 4, scale 8 (double)} 16, requantize_output_multiplier..input_zero_point 3x4, pad 4"),
    "dequantize.DequantizeOpData": (32, 8, "quantization_params {scale 8 (double), zero_point 4, pad 4} 16, output_multiplier..output_zero_point 3x4, pad 4"),
    "svdf.OpDataSvdf": (36, 4, "effective_scale_1_a..activation_state_zero_point 9x4"),
    "unidirectional_sequence_lstm.OpDataLSTM": (688, 8, "size_info {time_major 1, pad 3, 4x4} 20, cell_state_info {cell_clip 4, quantized_cell_clip 2, pad 2, scale_power 4} 12, cell_gate_nonlinear_type 4, 4 GateParameters 4x(2 FullyConnectedParams {9x4, 2 bools, weights_format 1, pad 1} = 80), hole 4, InterGateParameters 3 ArithmeticParams {category 1, pad 3, 14x4, pad 4, 2x8 int64, 2x2 int16, broadcast_shape 5x4} = 312, buffer_indices[4] 16"),
    "pad.OpData": (56, 4, "PadParams {left_padding_count 1, pad 3, left_padding[5] 20, right_padding_count 1, pad 3, right_padding[5] 20, resizing_category 4} 52, output_zero_point 4"),
    "reduce.OpDataReduce": (44, 4, "multiplier..num_axis 11x4"),
    "logistic.OpDataLogistic": (16, 4, "input_zero_point, input_range_radius, input_multiplier, input_left_shift 4x4"),
    "tanh.OpData": (16, 4, "input_zero_point, input_range_radius, input_multiplier, input_left_shift 4x4"),
    "activations.ReluOpData": (28, 4, "ReluParams {activation_type, quantized_activation_min/max, input_offset, output_offset, output_multiplier, output_shift} 7x4"),
    "activations.Relu6OpData": (8, 4, "six, zero 2x4 (int32)"),
    "leaky_relu.LeakyReluOpData": (24, 4, "output_multiplier_alpha..output_zero_point 6x4"),
    "hard_swish.HardSwishParams": (20, 4, "input_zero_point, output_zero_point, reluish_multiplier_fixedpoint_int16 3x2, hole 2, reluish_multiplier_exponent 4, output_multiplier_fixedpoint_int16 2, hole 2, output_multiplier_exponent 4"),
    "concatenation.OpData": (
        80, 8, "ConcatenationParams {axis 4, hole 4, input_zeropoint 8, input_scale 8, inputs_count 4, output_zeropoint 4, output_scale 4, pad 4} 40, scratch_indices[10] 40 (USE_TFLM_COMPRESSION)",
        64, 4, "ConcatenationParams {axis, input_zeropoint, input_scale, inputs_count, output_zeropoint, output_scale 6x4} 24, scratch_indices[10] 40"),
    "strided_slice.StridedSliceParams": (84, 4, "start_indices_count 1, hole 3, start_indices[5] 20, stop_indices_count 1, hole 3, stop_indices[5] 20, strides_count 1, hole 3, strides[5] 20, begin_mask..shrink_axis_mask 5x2 (int16), pad 2"),
    "transpose_conv.OpData": (
        88, 8, "ConvParams {padding_type 1, hole 1, padding_values 4x2, stride/dilation 4x2, hole 2, 7x4 int32, 2x4 float} 56, scratch_buffer_index, filter/bias_scratch_index, bias_converted_buffer_index 4x4, per_channel_output_multiplier/shift 2x8",
        80, 4, "ConvParams 56, scratch_buffer_index, filter/bias_scratch_index, bias_converted_buffer_index 4x4, per_channel_output_multiplier/shift 2x4"),
    "l2norm.L2NormalizationParams": (4, 4, "input_zero_point 4"),
    "prelu.PreluParams": (28, 4, "input_offset..output_shift_2 7x4"),
    "mirror_pad.OpDataMirrorPad": (20, 4, "input_dims, output_size, offset, output_dims_num_elements_buffer_index, input_dims_num_elements_buffer_index 5x4"),
    "batch_matmul.OpDataBatchMatmul": (32, 8, "quantization 8, lhs/rhs_transposed_tensor 2x8, rhs_is_transposed, lhs/rhs_is_constant_tensor 3x1, pad 5",
                                       16, 4, "quantization 4, lhs/rhs_transposed_tensor 2x4, 3x1 bools, pad 1"),
    "batch_matmul.QuantizationOpDataBatchMatmul": (28, 4, "output_multiplier, output_shift, output_activation_min/max, lhs/rhs/output_zero_point 7x4"),
    "space_to_batch_nd.SpaceToBatchParams": (4, 4, "output_offset 4"),
    "squared_difference.OpData": (112, 8, "requires_broadcast 1, hole 7, ArithmeticParams (int32/int64 quantization, float and int64 activation bounds, broadcast shape) 104"),
    "elementwise.OpDataAbsRsqrt": (28, 4, "multiplier, shift, input_offset, output_offset 4x4, needs_rescale 1, hole 3, input_quantization_type 4, input_type 4"),
    "log_softmax.LogSoftmaxOpData": (40, 8, "input_multiplier..diff_min 5x4, hole 4, outer_size..depth 2x8 (size_t)",
                                     28, 4, "input_multiplier..diff_min 5x4, outer_size..depth 2x4 (size_t)"),
    "add_n.OpData": (40, 4, "output_activation_min..scratch_index 10x4"),
    "comparisons.OpData": (32, 4, "ComparisonParams {left_shift..input2_shift 7x4, is_broadcast 1, pad 3} 32"),
    "cumsum.OpData": (36, 4, "output_activation_min..left_shift 9x4"),
    "if.OpData": (8, 4, "then_subgraph_index, else_subgraph_index 2x4"),
    "while.OpData": (8, 4, "cond_subgraph_index, body_subgraph_index 2x4"),
    "call_once.OpData": (8, 4, "init_subgraph_index 4, has_run 1, pad 3"),
    "var_handle.OpData": (4, 4, "resource_id 4"),
    "assign_variable.OpData": (4, 4, "scratch_index 4"),
    "embedding_lookup.OpData": (16, 8, "scale 4 (float), hole 4, num_columns 8 (size_t)", 8, 4, "scale 4, num_columns 4 (size_t)"),
    "circular_buffer.OpDataCircularBuffer": (8, 4, "cycles_until_run, cycles_max 2x4"),
    "detection_postprocess.OpData": (112, 4, "max_detections..num_classes 6x4 (2 floats), use_regular_non_max_suppression 1, pad 3, scale_values 4x4 (float), 11 scratch indices 11x4, 3 TfLiteQuantizationParams {scale 4, zero_point 4} 3x8"),
    "elu.OpData": (256, 1, "table[256] 256x1 (int8 lookup table)"),
    "select.OpData": (1, 1, "requires_broadcast 1"),
    # ---- TFLM signal library (signal/micro/kernels, signal/src, kissfft v130)
    "signal_window.TFLMSignalWindowParams": (8, 4, "shift, input_size 2x4 (int32)"),
    "signal_energy.TFLMSignalEnergyParams": (8, 4, "end_index, start_index 2x4 (int32)"),
    "signal_pcan.TfLitePcanParams": (4, 4, "snr_shift 4"),
    "signal_filter_bank_log.TFLMSignalLogParams": (8, 4, "input_correction_bits, output_scale 2x4"),
    "signal_rfft.TfLiteAudioFrontendRfftParams": (
        48, 8, "fft_length..output_length 4x4, fft_type 4 (enum), hole 4, work_area 8, scratch_buffer_index 4, hole 4, state 8",
        32, 4, "fft_length..output_length 4x4, fft_type 4, work_area 4, scratch_buffer_index 4, state 4"),
    "signal_irfft.TfLiteAudioFrontendIrfftParams": (
        32, 8, "fft_length..output_length 4x4, fft_type 4 (enum), hole 4, state 8",
        24, 4, "fft_length..output_length 4x4, fft_type 4, state 4"),
    "signal_irfft.IrfftFloatState": (16, 8, "fft_length 4, hole 4, cfg 8 (ptr)", 8, 4, "fft_length 4, cfg 4"),
    "kiss_fft.kiss_fftr_state": (24, 8, "substate, tmpbuf, super_twiddles 3x8 (ptr)", 12, 4, "substate, tmpbuf, super_twiddles 3x4"),
    "kiss_fft.kiss_fft_state_int16": (268, 4, "nfft, inverse 2x4, factors[2*MAXFACTORS=64] 256, twiddles[1] 4 (int16 r,i)"),
    "kiss_fft.kiss_fft_state_int32": (272, 4, "nfft, inverse 2x4, factors[64] 256, twiddles[1] 8 (int32 or float r,i)"),
    "signal_filter_bank.TFLMSignalFilterBankParams": (
        64, 8, "FilterbankConfig {num_channels 4, hole 4, 5 int16 ptrs 5x8, output_scale, input_correction_bits 2x4} 56, work_area 8",
        36, 4, "FilterbankConfig {num_channels 4, 5 ptrs 5x4, output_scale, input_correction_bits 2x4} 32, work_area 4"),
    "signal_filter_bank_spectral_subtraction.TFLMSignalSpectralSubtractionParams": (
        56, 8, "SpectralSubtractionConfig {num_channels..spectral_subtraction_bits 8x4, clamping 1, pad 3} 36, hole 4, noise_estimate 8, noise_estimate_size 8 (size_t)",
        44, 4, "SpectralSubtractionConfig 36, noise_estimate 4, noise_estimate_size 4 (size_t)"),
    "signal_framer.TFLMSignalFramerParams": (
        40, 8, "frame_size..n_frames 4x4, prefill 1, hole 7, state_buffers, circular_buffers 2x8",
        28, 4, "frame_size..n_frames 4x4, prefill 1, hole 3, state_buffers, circular_buffers 2x4"),
    "signal_stacker.TFLMSignalStackerParams": (
        56, 8, "num_channels..stacker_step 4x4, buffer_size, step_size 2x8 (size_t), stacker_has_first_frame 1, hole 7, state, circular_buffer 2x8",
        36, 4, "num_channels..stacker_step 4x4, buffer_size, step_size 2x4, stacker_has_first_frame 1, hole 3, state, circular_buffer 2x4"),
    "signal_delay.TFLMSignalFrontendDelayParams": (
        32, 8, "frame_size, delay_length, outer_dims 3x4, hole 4, state_buffers, circular_buffers 2x8",
        20, 4, "frame_size, delay_length, outer_dims 3x4, state_buffers, circular_buffers 2x4"),
    "signal_overlap_add.TFLMSignalOverlapAddParams": (
        32, 8, "frame_size..n_frames 4x4, type 4 (enum), hole 4, state_buffers 8",
        24, 4, "frame_size..n_frames 4x4, type 4, state_buffers 4"),
    # ---- TFLM compression (USE_TFLM_COMPRESSION metadata path, and the DECODE operator)
    "CompressionTensorData": (16, 8, "scheme 1 (enum uint8), hole 7, data {lut_data 8 (ptr)}",
                              8, 4, "scheme 1, hole 3, data {lut_data 4}"),
    "LookupTableData": (16, 8, "value_table 8 (ptr), value_table_channel_stride 1, bit-fields {compressed_bit_width:3, is_per_channel_quantized:1, use_alternate_axis:1, reserved:3} 1, pad 6",
                        8, 4, "value_table 4, value_table_channel_stride 1, bit-fields 1, pad 2"),
    "decode.DecodeStateLut": (
        72, 8, "vptr 8, context_, micro_profiler_ 2x8, compressed_indices_ 8, count_indices_, num_channels_, elements_per_channel_ 3x8 (size_t), value_table_ 8, value_table_channel_stride_, compressed_bit_width_, use_alternate_axis_ 3x1, pad 5",
        36, 4, "vptr 4, context_, micro_profiler_ 2x4, compressed_indices_ 4, count_indices_..elements_per_channel_ 3x4, value_table_ 4, 3x1, pad 1"),
    "decode.DecodeStatePrune": (
        80, 8, "vptr 8, context_, micro_profiler_ 2x8, compressed_indices_ 8, count_indices_, num_channels_, elements_per_channel_ 3x8 (size_t), value_table_ 8, zero_points_ 8, single_zero_point_ 1, use_alternate_axis_ 1, pad 6",
        40, 4, "vptr 4, context_, micro_profiler_ 2x4, compressed_indices_ 4, 3x4 (size_t), value_table_ 4, zero_points_ 4, 2x1, pad 2"),
    "decode.DecodeStateHuffman": (
        56, 8, "vptr 8, context_, micro_profiler_ 2x8, compressed_codewords_ 8, count_codewords_ 8 (size_t), huffman_tables_ 8, use_32bit_table_ 1, initial_table_size_ 1, pad 6",
        28, 4, "vptr 4, context_, micro_profiler_ 2x4, compressed_codewords_ 4, count_codewords_ 4, huffman_tables_ 4, 2x1, pad 2"),
    "circular_buffer.CircularBuffer": (
        40, 8, "capacity, read, write 3x8 (size_t), empty, buffer_size 2x4, buffer 8",
        24, 4, "capacity, read, write 3x4 (size_t), empty, buffer_size 2x4, buffer 4"),
}


def _build(bits: int) -> Dict[str, StructSize]:
    table = {}
    for name, row in _TABLE.items():
        if len(row) == 3:
            size, align, text = row
            table[name] = _S(size, align, text)
        elif bits == 64:
            table[name] = _S(row[0], row[1], row[2])
        else:
            table[name] = _S(row[3], row[4], row[5])
    return table


# Fields of temporary structs that TFLM reads back after a kernel's persistent writes:
# DeallocateTempTfLiteTensor reads a quantized tensor's quantization {type, params} and
# its TfLiteAffineQuantization's zero_point array pointer, then releases what they point
# to (a clobbered one breaks the temp allocator's checksum: TFLM aborts).
_CRITICAL_64 = {
    "TfLiteTensor.quantized": ((0, 4), (8, 8)),      # quantization.type, quantization.params
    "TfLiteAffineQuantization": ((8, 8),),           # zero_point
}
# 32-bit layouts (mcu32 and Cortex-M alike: TfLiteQuantizationType is an int-based enum,
# so quantization.type stays 4 bytes under short enums; offsets probed with
# arm-none-eabi-g++ for the Cortex-M layout)
_CRITICAL_32 = {
    "TfLiteTensor.quantized": ((0, 4), (4, 4)),
    "TfLiteAffineQuantization": ((4, 4),),
}

HOST64 = Target(
    name="host64",
    description="TFLM 64-bit host build (TF_LITE_STATIC_MEMORY, USE_TFLM_COMPRESSION): "
                "the tflite-micro 0.dev20261023182759 package",
    pointer_bytes=8,
    structs=_build(64),
    critical_fields=_CRITICAL_64,
)

MCU32 = Target(
    name="mcu32",
    description="TFLM (2026-08-20, 90b983c2) built for a generic 32-bit machine: 4-byte "
                "pointers and enums, 64-bit types 8-byte aligned, USE_TFLM_COMPRESSION on "
                "(a 32-bit x86 build; not a Cortex-M firmware: see the cortex-m profiles)",
    pointer_bytes=4,
    structs=_build(32),
    critical_fields=_CRITICAL_32,
)

# ---- Cortex-M (arm-none-eabi-gcc 12.2, TFLM's Makefile): the 32-bit table with AAPCS
# short enums and without USE_TFLM_COMPRESSION. Every size was checked by compiling
# sizeof / alignof / offsetof probes against TFLM 90b983c2's headers and kernel sources
# with arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb -mfloat-abi=soft and the Makefile's
# defines; -mcpu=cortex-m0 and cortex-m55 give the same 123 sizes, alignments and offsets
# (AAPCS does not depend on the core).
# Structs not listed here have the mcu32 layout (no enum, no compression field).
_CORTEX_M_OVERRIDES: Dict[str, Tuple[int, int, str]] = {
    "RecordingMicroAllocator": (124, 4, "MicroAllocator 36, recording_memory_allocator_ 4, 7 RecordedAllocation records 7x(3x4) = 84 (no compression record)"),
    "SubgraphAllocations": (8, 4, "node_and_registrations 4, tensors 4 (no compressed.tensors)"),
    "TfLiteEvalTensor": (12, 4, "data 4, dims 4, type 1 (short enum), pad 3"),
    "TfLiteTensor": (32, 4, "quantization {type 4 (int-based enum), params 4} 8, params {scale 4, zero_point 4} 8, data 4, dims 4, bytes 4, type 1, allocation_type 1 (short enums), is_variable 1, pad 1"),
    "TfLiteAddParams": (2, 1, "activation 1 (short enum), pot_scale_int16 1"),
    "TfLiteSubParams": (2, 1, "activation 1 (short enum), pot_scale_int16 1"),
    "TfLiteMulParams": (1, 1, "activation 1 (short enum)"),
    "TfLiteDivParams": (1, 1, "activation 1 (short enum)"),
    "TfLiteArgMaxParams": (1, 1, "output_type 1 (short enum)"),
    "TfLiteArgMinParams": (1, 1, "output_type 1 (short enum)"),
    "TfLiteCastParams": (2, 1, "in_data_type, out_data_type 2x1 (short enums)"),
    "TfLiteConcatenationParams": (8, 4, "axis 4, activation 1 (short enum), pad 3"),
    "TfLiteConvParams": (28, 4, "padding 1 (short enum), hole 3, stride_width, stride_height 2x4, activation 1, hole 3, dilation_width_factor, dilation_height_factor 2x4, quantized_bias_type 1, pad 3"),
    "TfLiteDepthwiseConvParams": (28, 4, "padding 1 (short enum), hole 3, stride_width, stride_height, depth_multiplier 3x4, activation 1, hole 3, dilation_width_factor, dilation_height_factor 2x4"),
    "TfLiteFullyConnectedParams": (5, 1, "activation 1, weights_format 1 (short enums), keep_num_dims 1, asymmetric_quantize_inputs 1, quantized_bias_type 1 (short enum)"),
    "TfLiteL2NormParams": (1, 1, "activation 1 (short enum)"),
    "TfLiteLSTMParams": (16, 4, "activation 1 (short enum), hole 3, cell_clip, proj_clip 2x4 (float), kernel_type 1 (short enum), asymmetric_quantize_inputs 1, pad 2"),
    "TfLiteUnidirectionalSequenceLSTMParams": (16, 4, "activation 1 (short enum), hole 3, cell_clip, proj_clip 2x4 (float), time_major, asymmetric_quantize_inputs, diagonal_recurrent_tensors 3x1, pad 1"),
    "TfLiteMirrorPaddingParams": (1, 1, "mode 1 (short enum)"),
    "TfLitePoolParams": (40, 4, "padding 1 (short enum), hole 3, stride_width..filter_height 4x4, activation 1, hole 3, computed.padding {width, height, width_offset, height_offset} 4x4"),
    "TfLiteShapeParams": (1, 1, "out_type 1 (short enum)"),
    "TfLiteSVDFParams": (8, 4, "rank 4, activation 1 (short enum), asymmetric_quantize_inputs 1, pad 2"),
    "TfLiteTransposeConvParams": (16, 4, "padding 1 (short enum), hole 3, stride_width, stride_height 2x4, activation 1, quantized_bias_type 1 (short enums), pad 2"),
    "fully_connected.OpDataFullyConnected": (48, 4, "output_multiplier..filter_buffer_index 9x4, per_channel_output_multiplier/shift 2x4, is_per_channel 1, pad 3 (no weights/bias_scratch_index)"),
    "conv.OpDataConv": (56, 4, "padding 16, input_zero_point..output_shift 5x4, per_channel_output_multiplier/shift 2x4, output_activation_min, output_activation_max, buffer_idx 3x4 (no weights/bias_scratch_index)"),
    "concatenation.OpData": (24, 4, "ConcatenationParams {axis, input_zeropoint, input_scale, inputs_count, output_zeropoint, output_scale 6x4} 24 (no scratch_indices)"),
    "transpose_conv.OpData": (72, 4, "ConvParams {padding_type 1, hole 1, padding_values 4x2, stride/dilation 4x2, hole 2, input/weights/output_offset, output_multiplier, output_shift, quantized_activation_min/max 7x4, float_activation_min/max 2x4} 56, scratch_buffer_index, bias_converted_buffer_index 2x4 (no filter/bias_scratch_index), per_channel_output_multiplier/shift 2x4"),
    "unidirectional_sequence_lstm.OpDataLSTM": (688, 8, "size_info {time_major 1, pad 3, 4x4} 20, cell_state_info {cell_clip 4, quantized_cell_clip 2, pad 2, scale_power 4} 12, cell_gate_nonlinear_type 1 (short enum), hole 3, 4 GateParameters 4x(2 FullyConnectedParams {9x4, 2 bools, weights_format 1, pad 1} = 80), hole 4, InterGateParameters 3 ArithmeticParams {category 1, pad 3, 14x4, pad 4, 2x8 int64, 2x2 int16, broadcast_shape 5x4} = 312, buffer_indices[4] 16"),
    "elementwise.OpDataAbsRsqrt": (28, 4, "multiplier, shift, input_offset, output_offset 4x4, needs_rescale 1, hole 3, input_quantization_type 4 (int-based enum), input_type 1 (short enum), pad 3"),
    "signal_rfft.TfLiteAudioFrontendRfftParams": (32, 4, "fft_length..output_length 4x4, fft_type 1 (short enum), hole 3, work_area 4, scratch_buffer_index 4, state 4"),
    "signal_overlap_add.TFLMSignalOverlapAddParams": (24, 4, "frame_size..n_frames 4x4, type 1 (short enum), hole 3, state_buffers 4"),
}
#: structs that exist only with USE_TFLM_COMPRESSION (asking for them on a Cortex-M
#: target is a micro-runtime bug: the allocator and kernels check Target.compression)
_COMPRESSION_ONLY = ("CompressionTensorData", "LookupTableData", "assign_variable.OpData")


def _build_cortex_m(cmsis_nn: bool) -> Dict[str, StructSize]:
    table = {k: v for k, v in _build(32).items() if k not in _COMPRESSION_ONLY}
    for name, (size, align, text) in _CORTEX_M_OVERRIDES.items():
        table[name] = _S(size, align, text)
    if cmsis_nn:
        for name, (size, align, text) in CMSIS_NN_STRUCTS.items():
            table[name] = _S(size, align, text)
    return table


#: core -> (DSP extension compiled in (ARM_MATH_DSP), MVE compiled in (ARM_MATH_MVEI),
#: what the profile models, other cores with the same CMSIS-NN code paths and layout)
CORTEX_M_CORES: Dict[str, Tuple[bool, bool, str, Tuple[str, ...]]] = {
    "cortex-m0": (False, False, "Armv6-M, no DSP (RP2040, STM32F0/G0/L0, nRF51, SAMD21)",
                  ("cortex-m0plus", "cortex-m1", "cortex-m23")),
    "cortex-m3": (False, False, "Armv7-M, no DSP (STM32F1/F2/L1, LPC17xx, SAM3)", ()),
    "cortex-m4": (True, False, "Armv7E-M with DSP (nRF52840 / Arduino Nano 33 BLE, STM32F4/L4/G4, "
                  "Apollo3)", ()),
    "cortex-m7": (True, False, "Armv7E-M with DSP (STM32F7/H7, i.MX RT10xx, SAME70)", ()),
    "cortex-m33": (True, False, "Armv8-M Mainline with DSP (nRF5340, nRF9160, STM32L5/U5/H5, RP2350)",
                   ("cortex-m35p",)),
    "cortex-m55": (True, True, "Armv8.1-M with DSP and MVE/Helium (Alif Ensemble, Corstone-300), "
                   "hard or softfp float ABI", ("cortex-m85", "cortex-m52")),
}


def _cortex_m_target(core: str, cmsis_nn: bool) -> Target:
    dsp, mve, models, _ = CORTEX_M_CORES[core]
    library = "CMSIS-NN kernels (OPTIMIZED_KERNEL_DIR=cmsis_nn)" if cmsis_nn else "reference kernels"
    return Target(
        name=core + ("+cmsis-nn" if cmsis_nn else ""),
        description=(f"TFLM (90b983c2) for {core}: {models}; {library}; arm-none-eabi-gcc, "
                     "short enums, no USE_TFLM_COMPRESSION"),
        pointer_bytes=4,
        structs=_build_cortex_m(cmsis_nn),
        critical_fields=_CRITICAL_32,
        compression=False,
        core=core,
        kernel_library="cmsis-nn" if cmsis_nn else "reference",
        dsp=dsp,
        mve=mve,
        float32_expressions=True,
        libm="newlib-hard" if mve else "newlib",
        float_fma=mve,
    )


CORTEX_M_TARGETS = tuple(_cortex_m_target(core, cmsis_nn)
                         for core in CORTEX_M_CORES for cmsis_nn in (False, True))

#: the Ethos-U configurations Vela compiles for (``--accelerator-config``): NPU -> what
#: it is found in
ETHOS_U_NPUS: Dict[str, str] = {
    "ethos-u55-32": "Ethos-U55, 32 MACs/cycle",
    "ethos-u55-64": "Ethos-U55, 64 MACs/cycle (Alif Ensemble E3 high-efficiency core)",
    "ethos-u55-128": "Ethos-U55, 128 MACs/cycle (Corstone-300 / -310 FVPs, Alif Ensemble)",
    "ethos-u55-256": "Ethos-U55, 256 MACs/cycle (Alif Ensemble E3 high-performance core)",
    "ethos-u65-256": "Ethos-U65, 256 MACs/cycle",
    "ethos-u65-512": "Ethos-U65, 512 MACs/cycle (NXP i.MX 93)",
    "ethos-u85-128": "Ethos-U85, 128 MACs/cycle",
    "ethos-u85-256": "Ethos-U85, 256 MACs/cycle (Corstone-320)",
    "ethos-u85-512": "Ethos-U85, 512 MACs/cycle",
    "ethos-u85-1024": "Ethos-U85, 1024 MACs/cycle",
    "ethos-u85-2048": "Ethos-U85, 2048 MACs/cycle",
}
#: the ethos-u kernel's OpData: command-stream bytes and two scratch-buffer indices
_ETHOS_U_STRUCTS = {"ethos_u.OpData": _S(12, 4, "cms_data_size, base_addr_idx, base_addr_size_idx 3x4")}


def _ethos_u_target(npu: str) -> Target:
    """TFLM built for Cortex-M55 with CMSIS-NN kernels and the Ethos-U co-processor
    kernel (``OPTIMIZED_KERNEL_DIR=cmsis_nn CO_PROCESSOR=ethos_u``): the CPU runs what
    Vela left on it with CMSIS-NN's MVE code; the ``ethos-u`` operator is sized, not run.
    TFLM's library is the same for every NPU configuration (only the NPU driver differs);
    the profile names the NPU the model was compiled for."""
    base = _cortex_m_target("cortex-m55", True)
    return replace(
        base, name=f"cortex-m55+{npu}",
        description=(f"TFLM (90b983c2) for cortex-m55 with an {ETHOS_U_NPUS[npu]}: "
                     "CMSIS-NN kernels on the CPU, Vela-compiled ethos-u operators sized (the "
                     "NPU is not emulated); arm-none-eabi-gcc, short enums, no "
                     "USE_TFLM_COMPRESSION"),
        structs={**base.structs, **_ETHOS_U_STRUCTS}, co_processor="ethos-u", npu=npu)


ETHOS_U_TARGETS = tuple(_ethos_u_target(npu) for npu in ETHOS_U_NPUS)
# ---- ESP32 family (ESP-IDF builds of esp-tflite-micro with ESP-NN) and TFLM's riscv32
#: espressif/esp-tflite-micro (the ESP-IDF component, version 1.4.0) and the ESP-NN it is
#: built with; its TFLM copy was synced from upstream in 2026-07 and differs from 90b983c2
#: in nothing that allocates (micro_allocator, the recording allocator, the kernels'
#: OpData, the builtin option structs and flatbuffer_conversions' allocations, the
#: resolver's op list are the same files)
ESP_TFLITE_MICRO_COMMIT = "99f49e1498b0"
ESP_NN_COMMIT = "d45b843ca5f8"
#: tensorflow/tflite-micro, the upstream commit of the cortex-m and riscv32 profiles
TFLM_COMMIT = "90b983c2"

# ILP32 builds without USE_TFLM_COMPRESSION and with 4-byte enums (ESP-IDF's and TFLM's
# riscv32_generic flags have no -fshort-enums): the mcu32 table less what compression adds.
# Every size, alignment and the critical offsets were probed by compiling sizeof / alignof
# / offsetof files against esp-tflite-micro 99f49e1's and TFLM 90b983c2's sources with
# riscv64-unknown-elf-g++ 12.2 -march=rv32imc -mabi=ilp32 and with xtensa-lx106-elf-g++
# 12.2 (the Xtensa ABI of ESP32 / S2 / S3): both give these values
# (benchmarks/esp_layout/probe.py; recorded in tests/data/esp_layout_probes.json).
_ILP32_NO_COMPRESSION: Dict[str, Tuple[int, int, str]] = {
    "RecordingMicroAllocator": (124, 4, "MicroAllocator 36, recording_memory_allocator_ 4, 7 RecordedAllocation records 7x(3x4) = 84 (no compression record)"),
    "SubgraphAllocations": (8, 4, "node_and_registrations 4, tensors 4 (no compressed.tensors)"),
    "fully_connected.OpDataFullyConnected": (48, 4, "output_multiplier..filter_buffer_index 9x4, per_channel_output_multiplier/shift 2x4, is_per_channel 1, pad 3 (no weights/bias_scratch_index)"),
    "conv.OpDataConv": (56, 4, "padding 16, input_zero_point..output_shift 5x4, per_channel_output_multiplier/shift 2x4, output_activation_min, output_activation_max, filter_buffer_index 3x4 (no weights/bias_scratch_index)"),
    "concatenation.OpData": (24, 4, "ConcatenationParams {axis, input_zeropoint, input_scale, inputs_count, output_zeropoint, output_scale 6x4} 24 (no scratch_indices)"),
    "transpose_conv.OpData": (72, 4, "ConvParams {padding_type 1, hole 1, padding_values 4x2, stride/dilation 4x2, hole 2, input/weights/output_offset, output_multiplier, output_shift, quantized_activation_min/max 7x4, float_activation_min/max 2x4} 56, scratch_buffer_index, bias_converted_buffer_index 2x4 (no filter/bias_scratch_index), per_channel_output_multiplier/shift 2x4"),
}
#: OpData of esp-tflite-micro's ESP-NN kernels (tensorflow/lite/micro/kernels/esp_nn/*.cc)
#: that differ from the reference kernels' (add, mul, pooling and fully_connected allocate
#: the reference OpDataAdd / OpDataMul / OpDataPooling / OpDataFullyConnected)
ESP_NN_STRUCTS: Dict[str, Tuple[int, int, str]] = {
    "esp_nn.conv.NodeData": (60, 4, "op_data OpDataConv (no compression) 56, buffer_idx 4"),
    "esp_nn.depthwise_conv.NodeData": (60, 4, "op_data OpDataConv (no compression) 56, buffer_idx 4"),
    "esp_nn.softmax.NodeData": (64, 8, "op_data SoftmaxParams {beta 8 (double), input_multiplier..scale 7x4, table..uint8_table2 5x4} 56, buffer_idx 4, pad 4 (SoftmaxParams' 8-byte alignment)"),
}


def _build_ilp32(esp_nn: bool) -> Dict[str, StructSize]:
    table = {k: v for k, v in _build(32).items() if k not in _COMPRESSION_ONLY}
    for name, (size, align, text) in _ILP32_NO_COMPRESSION.items():
        table[name] = _S(size, align, text)
    if esp_nn:
        for name, (size, align, text) in ESP_NN_STRUCTS.items():
            table[name] = _S(size, align, text)
    return table


#: one struct table for every ESP profile (the layout does not depend on the chip or the
#: ESP-NN function set), one for riscv32
_ESP_STRUCTS = _build_ilp32(esp_nn=True)
_RISCV32_STRUCTS = _build_ilp32(esp_nn=False)

#: chip -> (ESP-NN function set with CONFIG_NN_OPTIMIZED, CPU, what the profile models,
#: ESP-IDF's spelling). ESP-NN's esp_nn.h selects the esp32s3 / esp32p4 files for those two
#: chips and its generic optimised C (esp_nn_generic_opt.h) for every other chip.
ESP_CHIPS: Dict[str, Tuple[str, str, str, str]] = {
    "esp32-s3": ("esp32s3", "Xtensa LX7", "ESP-NN's esp32s3 routines", "esp32s3"),
    "esp32-p4": ("esp32p4", "RISC-V RV32IMAFC with the PIE vector extension", "ESP-NN's esp32p4 routines", "esp32p4"),
    "esp32": ("opt", "Xtensa LX6", "ESP-NN's generic optimised C", "esp32"),
    "esp32-s2": ("opt", "Xtensa LX7", "ESP-NN's generic optimised C", "esp32s2"),
    "esp32-c3": ("opt", "RISC-V RV32IMC", "ESP-NN's generic optimised C", "esp32c3"),
    "esp32-c6": ("opt", "RISC-V RV32IMAC", "ESP-NN's generic optimised C", "esp32c6"),
    "esp32-h2": ("opt", "RISC-V RV32IMAC", "ESP-NN's generic optimised C", "esp32h2"),
}
#: the chips whose builds are the same for sizing and outputs (same ESP-NN functions,
#: same struct layout): one model, several names
_SAME_BUILD = {chip for chip, row in ESP_CHIPS.items() if row[0] == "opt"}


def _esp_target(chip: str, ansi: bool) -> Target:
    function_set, cpu, functions, _ = ESP_CHIPS[chip]
    if ansi:
        function_set, functions = "ansi", "ESP-NN's plain C (CONFIG_NN_ANSI_C)"
    if ansi:
        same = sorted(set(ESP_CHIPS) - {chip})            # plain C: one build for every chip
    else:
        same = sorted(_SAME_BUILD - {chip}) if function_set == "opt" else []
    also = (f"; for sizing and integer outputs the same build as "
            f"{', '.join(c + ('+ansi' if ansi else '') for c in same)}" if same else "")
    outputs = (" (outputs of the assembly routines modelled by ESP-NN's C arithmetic; sizes exact)"
               if function_set in ("esp32s3", "esp32p4") else "")
    return Target(
        name=chip + ("+ansi" if ansi else ""),
        description=(f"{chip} ({cpu}): esp-tflite-micro {ESP_TFLITE_MICRO_COMMIT} (ESP-IDF component "
                     f"1.4.0) with ESP-NN {ESP_NN_COMMIT}, {functions}{outputs}; 32-bit, 4-byte "
                     f"enums, no USE_TFLM_COMPRESSION{also}"),
        pointer_bytes=4,
        structs=_ESP_STRUCTS,
        critical_fields=_CRITICAL_32,
        compression=False,
        kernel_library="esp-nn",
        float32_expressions=True,
        libm="rv32",
        esp_nn=function_set,
        chip=chip,
        debug_checks=True,
    )


ESP_TARGETS = tuple(_esp_target(chip, ansi) for chip in ESP_CHIPS for ansi in (False, True))

RISCV32 = Target(
    name="riscv32",
    description=(f"TFLM ({TFLM_COMMIT}) built by its Makefile for TARGET=riscv32_generic "
                 "(rv32imc, ilp32): reference kernels, 32-bit, 4-byte enums, no "
                 "USE_TFLM_COMPRESSION"),
    pointer_bytes=4,
    structs=_RISCV32_STRUCTS,
    critical_fields=_CRITICAL_32,
    compression=False,
    float32_expressions=True,
    libm="rv32",
    debug_checks=True,
)

TARGETS: Dict[str, Target] = {t.name: t for t in (HOST64, MCU32) + CORTEX_M_TARGETS
                              + ETHOS_U_TARGETS + ESP_TARGETS + (RISCV32,)}

#: other cores' names -> the profile core with the same layout and CMSIS-NN code paths;
#: ESP-IDF's chip names (esp32s3 ...) -> the profile's
TARGET_ALIASES: Dict[str, str] = {
    **{alias: core for core, (_, _, _, aliases) in CORTEX_M_CORES.items() for alias in aliases},
    **{idf: chip for chip, (_, _, _, idf) in ESP_CHIPS.items() if idf != chip},
}

#: The default target: where users deploy (nRF52840, STM32F4/L4 with CMSIS-NN, as the
#: Arduino library and most Cortex-M ports build TFLM).
DEFAULT_TARGET = "cortex-m4+cmsis-nn"


def targets_help() -> str:
    """One line per target profile: its name and what it models (``--help``, README)."""
    lines = ["host64               TFLM's 64-bit host build: what the tflite-micro PyPI package is",
             "mcu32                TFLM built for a generic 32-bit machine (4-byte pointers and "
             "enums, USE_TFLM_COMPRESSION on): not a Cortex-M firmware"]
    for core, (dsp, mve, models, aliases) in CORTEX_M_CORES.items():
        also = f"; also {', '.join(aliases)}" if aliases else ""
        lines.append(f"{core:<21}TFLM {TFLM_COMMIT}'s Makefile build for {core}, reference kernels: "
                     f"{models}{also}")
        features = "MVE" if mve else "DSP" if dsp else "no DSP"
        lines.append(f"{core + '+cmsis-nn':<21}the same with CMSIS-NN kernels ({features} code paths)")
    lines.append(f"{'riscv32':<21}TFLM {TFLM_COMMIT}'s Makefile build for riscv32_generic (rv32imc), "
                 "reference kernels")
    for chip, (function_set, cpu, functions, idf) in ESP_CHIPS.items():
        same = (f" (for sizing the same build as {', '.join(sorted(_SAME_BUILD - {chip}))})"
                if chip in _SAME_BUILD else "")
        also = ", ".join(([idf] if idf != chip else []) + [f"{chip}+esp-nn"])
        lines.append(f"{chip:<21}esp-tflite-micro {ESP_TFLITE_MICRO_COMMIT} + ESP-NN {ESP_NN_COMMIT}, "
                     f"{cpu}: {functions}{same}; also {also}")
    lines.append(f"{'<esp chip>+ansi':<21}the same with ESP-NN's plain C (CONFIG_NN_ANSI_C): "
                 "one build for every chip")
    lines.append(f"{'cortex-m55+<npu>':<21}cortex-m55+cmsis-nn with TFLM's Ethos-U kernel for "
                 "Vela-compiled models (sized, the NPU not run); <npu> as Vela's "
                 "--accelerator-config: " + ", ".join(ETHOS_U_NPUS))
    return "\n".join(lines)


def canonical_target_name(name: str) -> str:
    """``name`` with a core alias replaced by its profile's core
    (``"cortex-m0plus+cmsis-nn"`` -> ``"cortex-m0+cmsis-nn"``), an ESP-IDF chip name by the
    profile's (``"ESP32S3"`` -> ``"esp32-s3"``) and ``+esp-nn`` dropped (ESP-IDF builds
    always have ESP-NN); other names unchanged."""
    core, plus, library = str(name).strip().lower().partition("+")
    core = TARGET_ALIASES.get(core, core)
    if core in ESP_CHIPS and library == "esp-nn":
        plus = library = ""
    return core + plus + library


def get_target(target) -> Target:
    """A :class:`Target` from a name (``"host64"``, ``"mcu32"``, ``"cortex-m4"``,
    ``"cortex-m4+cmsis-nn"``, ``"esp32-s3"``, ``"esp32c3+ansi"``, ``"riscv32"``, a core alias
    such as ``"cortex-m0plus"``) or a Target."""
    if isinstance(target, Target):
        return target
    try:
        return TARGETS[canonical_target_name(target)]
    except KeyError:
        from .errors import InputError
        aliases = ", ".join(f"{a} -> {c}" for a, c in TARGET_ALIASES.items())
        raise InputError(f"unknown target {target!r}; known targets: {', '.join(TARGETS)} "
                         f"(each ESP chip also as <chip>+esp-nn; aliases: {aliases})") from None
