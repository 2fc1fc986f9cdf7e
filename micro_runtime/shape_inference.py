"""Shape inference for ``resize_input_tensor`` (an emulator extension: TFLM cannot resize).

TFLM takes every shape from the flatbuffer; TFLite's ``ResizeInputTensor`` re-runs each
op's Prepare to find the new output shapes. Here one rule per op family computes an
operator's output shapes from its input shapes, constant inputs and options, walking
the plan in order; :func:`resize_inputs` returns a copy of the model whose tensor
shapes are replaced (constant data, quantization and everything else are unchanged),
which the interpreter then plans and allocates from scratch.

Only operators with at least one changed input are re-inferred, so an op without a
rule fails only when a new shape actually reaches it; the error is an
:class:`~micro_runtime.errors.InputError` naming the op, its index and the reason.

Rule families: elementwise unary (activations, QUANTIZE / DEQUANTIZE / CAST, SOFTMAX ...),
broadcasting binary (ADD, MUL, comparisons ...), CONV_2D / DEPTHWISE_CONV_2D /
TRANSPOSE_CONV, pooling, FULLY_CONNECTED (``keep_num_dims``), RESHAPE (shape tensor or
``new_shape``, one ``-1``), CONCATENATION, PAD / PADV2 / MIRROR_PAD, reductions (MEAN,
SUM, REDUCE_*), SQUEEZE / EXPAND_DIMS, TRANSPOSE, SLICE / STRIDED_SLICE, SPLIT /
SPLIT_V, PACK / UNPACK, BATCH_MATMUL, GATHER / GATHER_ND, EMBEDDING_LOOKUP, ARG_MAX /
ARG_MIN, SHAPE, RESIZE_*, SPACE_TO_DEPTH / DEPTH_TO_SPACE, BATCH_TO_SPACE_ND /
SPACE_TO_BATCH_ND, DYNAMIC_UPDATE_SLICE (the operand's shape).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import InputError
from .model import Model, OperatorSpec, check_shape_span

Shape = Tuple[int, ...]

SAME, VALID = 0, 1   # tflite Padding


class ShapeRuleError(Exception):
    """Raised inside a rule; turned into an InputError naming the operator."""


@dataclasses.dataclass
class OpShapes:
    """What a rule sees: the operator, its input shapes (None for an absent input),
    constant input data (None when not constant) and its current output shapes."""

    op: OperatorSpec
    inputs: List[Optional[Shape]]
    data: List[Optional[np.ndarray]]
    outputs: List[Shape]

    @property
    def params(self):
        return self.op.params

    def shape(self, i: int) -> Shape:
        if i >= len(self.inputs) or self.inputs[i] is None:
            raise ShapeRuleError(f"input {i} is missing")
        return self.inputs[i]

    def const(self, i: int, what: str) -> np.ndarray:
        """Constant input ``i`` (its values decide the output shape)."""
        if i >= len(self.data) or self.data[i] is None:
            raise ShapeRuleError(f"its {what} (input {i}) is computed at run time, so the output "
                                 "shape cannot be inferred; only a constant " + what + " is supported")
        return np.asarray(self.data[i]).astype(np.int64)


def _prod(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def _axis(axis: int, rank: int, what: str = "axis") -> int:
    a = int(axis)
    if a < 0:
        a += rank
    if not 0 <= a < rank:
        raise ShapeRuleError(f"{what} {axis} is out of range for rank {rank}")
    return a


def _out_size(size: int, filt: int, stride: int, dilation: int, padding: int, what: str) -> int:
    if stride < 1 or dilation < 1:
        raise ShapeRuleError(f"stride ({stride}) and dilation ({dilation}) must be >= 1")
    effective = (filt - 1) * dilation + 1
    if padding == SAME:
        out = (size + stride - 1) // stride
    elif padding == VALID:
        out = (size + stride - effective) // stride
    else:
        raise ShapeRuleError(f"unknown padding {padding}")
    if out < 1:
        raise ShapeRuleError(f"{what} {size} is smaller than the window ({effective}) with VALID padding")
    return out


def _need_rank(shape: Shape, rank: int, what: str) -> None:
    if len(shape) != rank:
        raise ShapeRuleError(f"{what} must have {rank} dimensions, got shape {shape}")


# --------------------------------------------------------------------- rules
def rule_unary(s: OpShapes) -> List[Shape]:
    return [s.shape(0)] * max(1, len(s.outputs))


def rule_binary(s: OpShapes) -> List[Shape]:
    a, b = s.shape(0), s.shape(1)
    try:
        out = tuple(int(d) for d in np.broadcast_shapes(a, b))
    except ValueError:
        raise ShapeRuleError(f"input shapes {a} and {b} do not broadcast") from None
    return [out]


def rule_add_n(s: OpShapes) -> List[Shape]:
    shapes = [x for x in s.inputs if x is not None]
    if any(x != shapes[0] for x in shapes):
        raise ShapeRuleError(f"all inputs must have the same shape, got {shapes}")
    return [shapes[0]]


def rule_select(s: OpShapes) -> List[Shape]:
    try:
        out = np.broadcast_shapes(s.shape(0), s.shape(1), s.shape(2))
    except ValueError:
        raise ShapeRuleError(f"input shapes {s.inputs[:3]} do not broadcast") from None
    return [tuple(int(d) for d in out)]


def rule_conv2d(s: OpShapes) -> List[Shape]:
    x, w = s.shape(0), s.shape(1)
    _need_rank(x, 4, "input")
    _need_rank(w, 4, "filter")
    p = s.params
    if x[3] % w[3]:
        raise ShapeRuleError(f"input depth {x[3]} is not a multiple of the filter depth {w[3]}")
    oh = _out_size(x[1], w[1], p.stride_h, p.dilation_h_factor or 1, p.padding, "input height")
    ow = _out_size(x[2], w[2], p.stride_w, p.dilation_w_factor or 1, p.padding, "input width")
    return [(x[0], oh, ow, w[0])]


def rule_depthwise(s: OpShapes) -> List[Shape]:
    x, w = s.shape(0), s.shape(1)
    _need_rank(x, 4, "input")
    _need_rank(w, 4, "filter")
    p = s.params
    if w[3] % x[3]:
        raise ShapeRuleError(f"filter channels {w[3]} are not a multiple of the input depth {x[3]}")
    oh = _out_size(x[1], w[1], p.stride_h, p.dilation_h_factor or 1, p.padding, "input height")
    ow = _out_size(x[2], w[2], p.stride_w, p.dilation_w_factor or 1, p.padding, "input width")
    return [(x[0], oh, ow, w[3])]


def rule_transpose_conv(s: OpShapes) -> List[Shape]:
    w, x = s.shape(1), s.shape(2)
    _need_rank(x, 4, "input")
    _need_rank(w, 4, "filter")
    out = tuple(int(v) for v in s.const(0, "output_shape tensor").reshape(-1))
    p = s.params
    if len(out) != 4:
        raise ShapeRuleError(f"output_shape tensor {out} must have 4 values")
    # the forward convolution of the output must give the (new) input back
    fh = _out_size(out[1], w[1], p.stride_h, 1, p.padding, "output height")
    fw = _out_size(out[2], w[2], p.stride_w, 1, p.padding, "output width")
    if (out[0], fh, fw) != (x[0], x[1], x[2]):
        raise ShapeRuleError(f"its output_shape tensor is the constant {list(out)}, which does not "
                             f"match the new input shape {x}; a constant output shape cannot "
                             "follow a resized input")
    return [out]


def rule_pool(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    _need_rank(x, 4, "input")
    p = s.params
    oh = _out_size(x[1], p.filter_height, p.stride_h, 1, p.padding, "input height")
    ow = _out_size(x[2], p.filter_width, p.stride_w, 1, p.padding, "input width")
    return [(x[0], oh, ow, x[3])]


def rule_fully_connected(s: OpShapes) -> List[Shape]:
    x, w = s.shape(0), s.shape(1)
    if len(w) != 2:
        raise ShapeRuleError(f"weights must have 2 dimensions, got {w}")
    units, depth = w
    if s.params.get("keep_num_dims", False):
        if not x or x[-1] != depth:
            raise ShapeRuleError(f"with keep_num_dims the input's last dimension must be the "
                                 f"weights' depth {depth}, got input shape {x}")
        return [tuple(x[:-1]) + (units,)]
    total = _prod(x)
    if total % depth:
        raise ShapeRuleError(f"the input has {total} values, not a multiple of the weights' depth {depth}")
    return [(total // depth, units)]


def rule_reshape(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    total = _prod(x)
    if len(s.inputs) > 1 and s.inputs[1] is not None and len(s.inputs[1]) == 1:
        if s.data[1] is None:
            raise ShapeRuleError("its shape tensor is computed at run time, so the output shape "
                                 "cannot be inferred")
        target = [int(v) for v in np.asarray(s.data[1]).reshape(-1)]
        source = "shape tensor"
    elif s.params.present and len(s.params.get("new_shape", ())):
        target = [int(v) for v in s.params.new_shape]
        source = "new_shape option"
    else:
        target = list(s.outputs[0])
        source = "stored output shape"
    if target == [0] and total == 1:
        return [()]
    if target.count(-1) > 1:
        raise ShapeRuleError(f"its {source} {target} has more than one -1")
    known = _prod([d for d in target if d != -1])
    if -1 in target:
        if known == 0 or total % known:
            raise ShapeRuleError(f"its {source} {target} cannot hold the input's {total} values")
        target[target.index(-1)] = total // known
    elif known != total:
        raise ShapeRuleError(
            f"its {source} is the constant {target} ({known} values) but the input now has "
            f"{total} values (shape {x}); a constant reshape target cannot follow a resized "
            "batch (the model needs -1 in its shape, as converters write for a dynamic batch)")
    return [tuple(target)]


def rule_concatenation(s: OpShapes) -> List[Shape]:
    shapes = [x for x in s.inputs if x is not None]
    rank = len(shapes[0])
    axis = _axis(s.params.axis, rank)
    for x in shapes:
        if len(x) != rank or any(a != b for k, (a, b) in enumerate(zip(x, shapes[0])) if k != axis):
            raise ShapeRuleError(f"input shapes {shapes} differ outside axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(x[axis] for x in shapes)
    return [tuple(out)]


def rule_pad(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    pads = s.const(1, "paddings tensor").reshape(-1, 2)
    if pads.shape[0] != len(x):
        raise ShapeRuleError(f"paddings have {pads.shape[0]} rows for an input of rank {len(x)}")
    return [tuple(int(d) for d in np.asarray(x, np.int64) + pads.sum(axis=1))]


def rule_reduce(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    axes = sorted({_axis(a, len(x)) for a in s.const(1, "axis tensor").reshape(-1)})
    if s.params.get("keep_dims", False):
        return [tuple(1 if k in axes else d for k, d in enumerate(x))]
    return [tuple(d for k, d in enumerate(x) if k not in axes)]


def rule_squeeze(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    dims = s.params.get("squeeze_dims", ()) or ()
    if not dims:
        return [tuple(d for d in x if d != 1)]
    axes = {_axis(a, len(x), "squeeze_dims entry") for a in dims}
    bad = [a for a in axes if x[a] != 1]
    if bad:
        raise ShapeRuleError(f"squeeze_dims {list(dims)} name dimension(s) {bad} of shape {x}, "
                             "which are not 1")
    return [tuple(d for k, d in enumerate(x) if k not in axes)]


def rule_expand_dims(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    axis = int(s.const(1, "axis tensor").reshape(-1)[0])
    if axis < 0:
        axis += len(x) + 1
    if not 0 <= axis <= len(x):
        raise ShapeRuleError(f"axis {axis} is out of range for rank {len(x)}")
    return [tuple(x[:axis]) + (1,) + tuple(x[axis:])]


def rule_transpose(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    perm = [int(p) for p in s.const(1, "perm tensor").reshape(-1)]
    if sorted(perm) != list(range(len(x))):
        raise ShapeRuleError(f"perm {perm} is not a permutation of rank {len(x)}")
    return [tuple(x[p] for p in perm)]


def rule_slice(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    begin = s.const(1, "begin tensor").reshape(-1)
    size = s.const(2, "size tensor").reshape(-1)
    if len(begin) != len(x) or len(size) != len(x):
        raise ShapeRuleError(f"begin {begin.tolist()} / size {size.tolist()} do not match rank {len(x)}")
    dims = np.asarray(x, np.int64)
    out = np.where(size == -1, dims - begin, size)
    if np.any(begin < 0) or np.any(out < 0) or np.any(begin + out > dims):
        raise ShapeRuleError(f"begin {begin.tolist()} / size {size.tolist()} fall outside shape {x}")
    return [tuple(int(d) for d in out)]


def rule_strided_slice(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    p = s.params
    if p.get("ellipsis_mask", 0) or p.get("new_axis_mask", 0):
        raise ShapeRuleError("ellipsis_mask / new_axis_mask are not supported")
    begin = s.const(1, "begin tensor").reshape(-1)
    end = s.const(2, "end tensor").reshape(-1)
    strides = s.const(3, "strides tensor").reshape(-1) if len(s.inputs) > 3 else np.ones_like(begin)
    n = len(begin)
    if len(end) != n or len(strides) != n or n > len(x):
        raise ShapeRuleError(f"begin/end/strides lengths ({n}, {len(end)}, {len(strides)}) do not "
                             f"fit rank {len(x)}")
    out = []
    for k, dim in enumerate(x):          # loop over the (few) dimensions
        if k >= n:
            out.append(dim)
            continue
        stride = int(strides[k])
        if stride == 0:
            raise ShapeRuleError("a stride is 0")
        b = None if (p.get("begin_mask", 0) >> k) & 1 else int(begin[k])
        e = None if (p.get("end_mask", 0) >> k) & 1 else int(end[k])
        if p.get("offset", False) and b is not None and e is not None:
            e = b + e
        if (p.get("shrink_axis_mask", 0) >> k) & 1:
            start = int(begin[k]) + (dim if int(begin[k]) < 0 else 0)
            if not 0 <= start < dim:
                raise ShapeRuleError(f"shrunk axis {k}: index {int(begin[k])} outside size {dim}")
            continue
        out.append(len(range(*slice(b, e, stride).indices(dim))))
    return [tuple(out)]


def rule_split(s: OpShapes) -> List[Shape]:
    axis_t, x = s.const(0, "axis tensor"), s.shape(1)
    axis = _axis(int(axis_t.reshape(-1)[0]), len(x))
    n = len(s.outputs)
    if x[axis] % n:
        raise ShapeRuleError(f"dimension {axis} of {x} does not split into {n} equal parts")
    out = list(x)
    out[axis] = x[axis] // n
    return [tuple(out)] * n


def rule_split_v(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    sizes = [int(v) for v in s.const(1, "size_splits tensor").reshape(-1)]
    axis = _axis(int(s.const(2, "axis tensor").reshape(-1)[0]), len(x))
    if sizes.count(-1) > 1:
        raise ShapeRuleError("size_splits has more than one -1")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x[axis] - sum(v for v in sizes if v != -1)
    if sum(sizes) != x[axis] or min(sizes) < 0:
        raise ShapeRuleError(f"size_splits {sizes} do not add up to dimension {axis} of {x}")
    outs = []
    for v in sizes:
        o = list(x)
        o[axis] = v
        outs.append(tuple(o))
    return outs


def rule_pack(s: OpShapes) -> List[Shape]:
    shapes = [x for x in s.inputs if x is not None]
    if any(x != shapes[0] for x in shapes):
        raise ShapeRuleError(f"all inputs must have the same shape, got {shapes}")
    x = shapes[0]
    axis = int(s.params.axis)
    if axis < 0:
        axis += len(x) + 1
    if not 0 <= axis <= len(x):
        raise ShapeRuleError(f"axis {s.params.axis} is out of range")
    return [tuple(x[:axis]) + (len(shapes),) + tuple(x[axis:])]


def rule_unpack(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    axis = _axis(s.params.axis, len(x))
    if x[axis] != len(s.outputs):
        raise ShapeRuleError(f"dimension {axis} of {x} is not the {len(s.outputs)} outputs")
    return [tuple(d for k, d in enumerate(x) if k != axis)] * len(s.outputs)


def rule_batch_matmul(s: OpShapes) -> List[Shape]:
    a, b = s.shape(0), s.shape(1)
    if len(a) < 2 or len(b) < 2:
        raise ShapeRuleError(f"inputs need 2+ dimensions, got {a} and {b}")
    m, ka = (a[-1], a[-2]) if s.params.get("adj_x", False) else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if s.params.get("adj_y", False) else (b[-2], b[-1])
    if ka != kb:
        raise ShapeRuleError(f"inner dimensions differ: {a} x {b}")
    try:
        batch = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise ShapeRuleError(f"batch dimensions of {a} and {b} do not broadcast") from None
    return [tuple(int(d) for d in batch) + (m, n)]


def rule_gather(s: OpShapes) -> List[Shape]:
    x, idx = s.shape(0), s.shape(1)
    axis = _axis(s.params.get("axis", 0), len(x))
    batch_dims = int(s.params.get("batch_dims", 0))
    if batch_dims < 0:
        batch_dims += len(idx)
    return [tuple(x[:axis]) + tuple(idx[batch_dims:]) + tuple(x[axis + 1:])]


def rule_arg(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    axis = _axis(int(s.const(1, "axis tensor").reshape(-1)[0]), len(x))
    return [tuple(d for k, d in enumerate(x) if k != axis)]


def rule_shape(s: OpShapes) -> List[Shape]:
    return [(len(s.shape(0)),)]


def rule_broadcast_to(s: OpShapes) -> List[Shape]:
    target = tuple(int(d) for d in s.const(1, "shape tensor").reshape(-1))
    x = s.shape(0)
    if len(x) > len(target) or any(d != 1 and d != t for d, t in zip(x, target[len(target) - len(x):])):
        raise ShapeRuleError(f"input shape {x} does not broadcast to {target}")
    return [target]


def rule_broadcast_args(s: OpShapes) -> List[Shape]:
    return [(max(_prod(s.shape(0)), _prod(s.shape(1))),)]


def rule_resize(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    _need_rank(x, 4, "input")
    size = s.const(1, "size tensor").reshape(-1)
    if len(size) != 2:
        raise ShapeRuleError(f"size tensor must hold 2 values, got {size.tolist()}")
    return [(x[0], int(size[0]), int(size[1]), x[3])]


def rule_space_to_depth(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    _need_rank(x, 4, "input")
    b = int(s.params.block_size)
    if b < 1 or x[1] % b or x[2] % b:
        raise ShapeRuleError(f"height and width of {x} are not multiples of block_size {b}")
    return [(x[0], x[1] // b, x[2] // b, x[3] * b * b)]


def rule_depth_to_space(s: OpShapes) -> List[Shape]:
    x = s.shape(0)
    _need_rank(x, 4, "input")
    b = int(s.params.block_size)
    if b < 1 or x[3] % (b * b):
        raise ShapeRuleError(f"depth of {x} is not a multiple of block_size^2 = {b * b}")
    return [(x[0], x[1] * b, x[2] * b, x[3] // (b * b))]


def _block_and_pairs(s: OpShapes, what: str):
    """Input shape (3-D or 4-D), block sizes and (before, after) pairs of the
    BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND family."""
    x = s.shape(0)
    if len(x) not in (3, 4):
        raise ShapeRuleError(f"input must have 3 or 4 dimensions, got shape {x}")
    spatial = len(x) - 2
    block = s.const(1, "block shape tensor").reshape(-1)
    pairs = s.const(2, f"{what} tensor").reshape(-1, 2)
    if len(block) != spatial or len(pairs) != spatial:
        raise ShapeRuleError(f"block shape {block.tolist()} / {what} {pairs.tolist()} do not match "
                             f"the {spatial} spatial dimension(s) of {x}")
    if np.any(block < 1):
        raise ShapeRuleError(f"block shape {block.tolist()} must be >= 1")
    return x, [int(b) for b in block], pairs


def rule_batch_to_space(s: OpShapes) -> List[Shape]:
    x, block, crops = _block_and_pairs(s, "crops")
    step = _prod(block)
    if x[0] % step:
        raise ShapeRuleError(f"batch {x[0]} is not a multiple of the block size product {step}")
    spatial = [d * b - int(c.sum()) for d, b, c in zip(x[1:-1], block, crops)]
    if np.any(crops < 0) or min(spatial) < 1:
        raise ShapeRuleError(f"crops {crops.tolist()} do not fit the input {x}")
    return [(x[0] // step,) + tuple(spatial) + (x[-1],)]


def rule_space_to_batch(s: OpShapes) -> List[Shape]:
    x, block, pads = _block_and_pairs(s, "paddings")
    spatial = []
    for d, b, p in zip(x[1:-1], block, pads):
        padded = d + int(p.sum())
        if padded < 1 or padded % b:
            raise ShapeRuleError(f"padded size {padded} is not a positive multiple of block {b}")
        spatial.append(padded // b)
    return [(x[0] * _prod(block),) + tuple(spatial) + (x[-1],)]


def rule_embedding_lookup(s: OpShapes) -> List[Shape]:
    ids, table = s.shape(0), s.shape(1)
    if len(ids) != 1 or len(table) < 2:
        raise ShapeRuleError(f"ids must be 1-D and the table 2-D or more, got {ids} and {table}")
    return [(ids[0],) + tuple(table[1:])]


def rule_gather_nd(s: OpShapes) -> List[Shape]:
    params, idx = s.shape(0), s.shape(1)
    if not params or not idx or idx[-1] > len(params):
        raise ShapeRuleError(f"indices {idx} do not index params {params}")
    return [tuple(idx[:-1]) + tuple(params[idx[-1]:])]


UNARY_OPS = (
    "ABS", "CEIL", "COS", "EXP", "FLOOR", "LOG", "LOGISTIC", "NEG", "RELU", "RELU6",
    "RELU_N1_TO_1", "RELU_0_TO_1", "RSQRT", "SIN", "SQRT", "SQUARE", "TANH", "HARD_SWISH",
    "LEAKY_RELU", "ELU", "GELU", "ROUND", "SIGN", "LOGICAL_NOT", "QUANTIZE", "DEQUANTIZE",
    "CAST", "SOFTMAX", "LOG_SOFTMAX", "L2_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION",
    "ZEROS_LIKE", "REVERSE_V2", "CUMSUM", "FAKE_QUANT")
BINARY_OPS = (
    "ADD", "SUB", "MUL", "DIV", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM", "POW",
    "FLOOR_DIV", "FLOOR_MOD", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
    "NOT_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "PRELU", "ATAN2", "RIGHT_SHIFT", "BITWISE_XOR")

#: op name -> rule(OpShapes) -> output shapes
RULES: Dict[str, Callable[[OpShapes], List[Shape]]] = {
    **{op: rule_unary for op in UNARY_OPS},
    **{op: rule_binary for op in BINARY_OPS},
    "ADD_N": rule_add_n, "SELECT": rule_select, "SELECT_V2": rule_select,
    "CONV_2D": rule_conv2d, "DEPTHWISE_CONV_2D": rule_depthwise,
    "TRANSPOSE_CONV": rule_transpose_conv,
    "AVERAGE_POOL_2D": rule_pool, "MAX_POOL_2D": rule_pool, "L2_POOL_2D": rule_pool,
    "FULLY_CONNECTED": rule_fully_connected, "RESHAPE": rule_reshape,
    "CONCATENATION": rule_concatenation,
    "PAD": rule_pad, "PADV2": rule_pad, "MIRROR_PAD": rule_pad,
    **{op: rule_reduce for op in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",
                                  "REDUCE_ANY", "REDUCE_ALL")},
    "SQUEEZE": rule_squeeze, "EXPAND_DIMS": rule_expand_dims, "TRANSPOSE": rule_transpose,
    "SLICE": rule_slice, "STRIDED_SLICE": rule_strided_slice,
    "SPLIT": rule_split, "SPLIT_V": rule_split_v, "PACK": rule_pack, "UNPACK": rule_unpack,
    "BATCH_MATMUL": rule_batch_matmul, "GATHER": rule_gather,
    "ARG_MAX": rule_arg, "ARG_MIN": rule_arg, "SHAPE": rule_shape,
    "BROADCAST_TO": rule_broadcast_to, "BROADCAST_ARGS": rule_broadcast_args,
    "RESIZE_BILINEAR": rule_resize, "RESIZE_NEAREST_NEIGHBOR": rule_resize,
    "SPACE_TO_DEPTH": rule_space_to_depth, "DEPTH_TO_SPACE": rule_depth_to_space,
    "BATCH_TO_SPACE_ND": rule_batch_to_space, "SPACE_TO_BATCH_ND": rule_space_to_batch,
    "DYNAMIC_UPDATE_SLICE": rule_unary, "EMBEDDING_LOOKUP": rule_embedding_lookup,
    "GATHER_ND": rule_gather_nd,
}


def check_shape(shape, what: str = "shape") -> Shape:
    """A shape given by the caller, as a tuple of positive ints (InputError otherwise)."""
    try:
        values = list(np.asarray(shape).reshape(-1).tolist()) if not isinstance(shape, (list, tuple)) \
            else list(shape)
    except Exception:  # noqa: BLE001 - anything not array-like
        raise InputError(f"{what} must be a sequence of positive integers, not {shape!r}") from None
    out = []
    for d in values:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or int(d) < 1:
            raise InputError(f"{what} must be a sequence of positive integers, not {shape!r}")
        out.append(int(d))
    return tuple(out)


def infer_shapes(model: Model, new_shapes: Dict[int, Shape]) -> Dict[int, Shape]:
    """Shapes of every tensor of the main subgraph after giving the tensors in
    ``new_shapes`` (tensor index -> shape) their new shapes. Returns only the tensors
    whose shape changes."""
    sg = model.main
    shapes: List[Shape] = [tuple(t.shape) for t in sg.tensors]
    changed: Dict[int, Shape] = {}
    for t, shape in new_shapes.items():
        if tuple(shape) != shapes[t]:
            shapes[t] = tuple(shape)
            changed[t] = tuple(shape)
    for op in sg.operators:
        if not any(t in changed for t in op.inputs if t >= 0):
            continue
        rule = RULES.get(op.name)
        if rule is None:
            raise InputError(f"cannot resize: {op.describe()} has no shape-inference rule, so the "
                             f"new input shape cannot be carried through it (rules exist for "
                             f"{len(RULES)} builtin ops; see micro_runtime.shape_inference)")
        view = OpShapes(op, [shapes[t] if t >= 0 else None for t in op.inputs],
                        [sg.tensors[t].data if t >= 0 else None for t in op.inputs],
                        [shapes[t] for t in op.outputs])
        try:
            outs = rule(view)
        except ShapeRuleError as e:
            raise InputError(f"cannot resize: {op.describe()}: {e}") from None
        except (AttributeError, IndexError, TypeError, ValueError) as e:
            raise InputError(f"cannot resize: {op.describe()}: malformed operator "
                             f"({type(e).__name__}: {e})") from None
        for t, shape in zip(op.outputs, outs):
            if t < 0:
                continue
            shape = tuple(int(d) for d in shape)
            if any(d < 0 for d in shape):
                raise InputError(f"cannot resize: {op.describe()}: output shape {shape} is negative")
            if shape != shapes[t]:
                if sg.tensors[t].data is not None:
                    raise InputError(f"cannot resize: {op.describe()} writes the constant "
                                     f"{sg.tensors[t].describe()}")
                shapes[t] = shape
                changed[t] = shape
    return changed


def resize_inputs(model: Model, new_input_shapes: Dict[int, Sequence[int]]) -> Model:
    """A copy of ``model`` in which input ``k`` (position among the model inputs) has
    shape ``new_input_shapes[k]`` and every downstream tensor its inferred shape."""
    sg = model.main
    if len(model.subgraphs) != 1:
        raise InputError("resize_input_tensor supports single-subgraph models only "
                         f"(this model has {len(model.subgraphs)} subgraphs)")
    by_tensor: Dict[int, Shape] = {}
    for k, shape in new_input_shapes.items():
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(sg.inputs):
            raise InputError(f"Input index {k} out of range (length is {len(sg.inputs)})")
        by_tensor[sg.inputs[int(k)]] = check_shape(shape, f"the new shape of input {k}")
    changed = infer_shapes(model, by_tensor)
    if not changed:
        return model
    for t, shape in changed.items():
        spec = sg.tensors[t]
        problem = check_shape_span(shape, spec.dtype.itemsize, f"{spec.describe()}: the new")
        if problem:
            raise InputError(f"resize_input_tensor: {problem}")
    tensors = [dataclasses.replace(t, shape=changed[t.index]) if t.index in changed else t
               for t in sg.tensors]
    return dataclasses.replace(model, subgraphs=[dataclasses.replace(sg, tensors=tensors)])


__all__ = ["RULES", "OpShapes", "ShapeRuleError", "infer_shapes", "resize_inputs", "check_shape"]
