"""Patch-based rewriting of the high-resolution stage, for stock TFLM (MCUNetV2-style).

In MobileNet-like models the first layers hold the largest activations. This module
rewrites a *stage* of the graph -- a run of spatial operators from the stage input to a
small *exit* tensor -- so that it runs one spatial patch at a time and the
full-resolution tensors never exist: for each patch of the exit tensor, SLICE the part
of the stage input its receptive field needs, run a copy of every stage operator on
the patch, and CONCATENATE the patch outputs into the exit tensor. The result is an
ordinary .tflite model that unmodified TFLM runs.

Why the outputs are bit-identical (every output pixel sees the same inputs, weights and
requantization as in the original):

* A convolution (CONV_2D, DEPTHWISE_CONV_2D) with implicit padding skips the taps that
  fall outside the image; each skipped tap would have added ``filter * (x - zp_in)``.
  An explicit PAD of the input with the input zero point (PAD's int8 pad value is its
  output zero point, and the padded tensor keeps the input's quantization) adds
  ``filter * (zp_in - zp_in) = 0`` at those taps: the same sum, so the same output (for
  float32 the added terms are +-0.0, which never change a sum that starts at +0.0; for
  int16 the zero point is 0 and PAD pads 0).
* MAX_POOL_2D skips outside taps and starts from the type's lowest value; an explicit
  PADV2 with that lowest value cannot change a maximum.
* AVERAGE_POOL_2D (and L2_POOL_2D) divide by the number of taps inside the image: an
  explicit pad would be counted, so these never get one. Their patch copies keep an
  implicit padding that lands exactly on the image border, or need none; a grid where
  that is impossible is refused.
* A patch operator may also keep SAME padding on the patch when TFLM's SAME arithmetic
  on the patch shape puts the padding exactly where the image border is; where it puts
  padding inside the image, the affected output pixels are wrong ("garbage") and the
  planner only allows that when no pixel the rest of the stage needs depends on them.
  Exactness is tracked per tensor as a box of exact pixels, interval by interval.
* Element-wise operators (ADD, MUL, activations, QUANTIZE, ...) and channel
  CONCATENATION compute each pixel from the same pixel of their inputs; a constant
  operand is only allowed when it does not vary over height and width.
* All patch outputs carry the exit tensor's quantization, so the CONCATENATION that
  assembles them is a pure copy (TFLM's kernel does not requantize int8 anyway).

What the rewrite costs is counted exactly by running the rewritten model through our
allocator (:mod:`micro_runtime.tools.sizing`): every new operator's NodeAndRegistration,
builtin options and OpData (a convolution copy re-allocates its per-channel multipliers
and shifts), every new tensor's TfLiteEvalTensor, and the slices', pads' and patch
tensors' buffers in the plan. The search minimises the minimum arena after the
offline-plan optimizer (:mod:`micro_runtime.tools.optimizer`) has planned the result.

The parts, bottom up: :mod:`.geometry` (which operators form a stage, the pixels a
patch needs, how a window operator's patch copy covers an axis), :mod:`.program`
(the operators and tensors replacing a stage), :mod:`.writing` (the .tflite model),
:mod:`.estimates` (tail and live-memory head without writing), :mod:`.searching`
(stages, grids and policies searched) and :mod:`.driver` (``optimize --patches``).
"""
from .geometry import (BINARY_OPS, COMPRESSED_REFUSAL, MAX_CONCAT_INPUTS, UNARY_OPS, WINDOW_OPS, AxisChoice,
                       AxisGeometry, Box, PatchError, Stage, StageOp, analyse_stage, axis_choices, needed_boxes,
                       split_axis)
from .program import POLICIES, SEARCH_POLICIES, PatchProgram, PatchReport, hoisted, model_macs, plan_rewrite
from .writing import build_model, rewrite_stage, slot_base
from .estimates import Estimate, ModelProfile, estimate, live_by_step
from .searching import Candidate, SearchResult, plan_offline, search
from .driver import PatchResult, optimize_with_patches, parse_grid, run_outputs, seeded_inputs

__all__ = [
    "BINARY_OPS", "COMPRESSED_REFUSAL", "MAX_CONCAT_INPUTS", "UNARY_OPS", "WINDOW_OPS", "AxisChoice",
    "AxisGeometry", "Box", "PatchError", "Stage", "StageOp", "analyse_stage", "axis_choices", "needed_boxes",
    "split_axis", "POLICIES", "SEARCH_POLICIES", "PatchProgram", "PatchReport", "hoisted", "model_macs",
    "plan_rewrite", "build_model", "rewrite_stage", "slot_base", "Estimate", "ModelProfile", "estimate",
    "live_by_step", "Candidate", "SearchResult", "plan_offline", "search", "PatchResult",
    "optimize_with_patches", "parse_grid", "run_outputs", "seeded_inputs",
]
