"""SQUARED_DIFFERENCE against TFLM: float32 (NaN / infinities / overflow to inf), int32
(full range: int32 wrap of the difference and of the square), int8 and int16 (rescaled
difference, requantized square, independent scales and zero points), broadcasting up to
6-D, constant operands; the OpData allocation; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import broadcast_shapes, draw_const
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values
from tests.strategies import scales, zero_points

pytestmark = pytest.mark.oracle
OP = "SQUARED_DIFFERENCE"


@given(data=st.data())
def test_squared_difference_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["float32", "int32", "int8", "int16"]))
    s1, s2, out = data.draw(broadcast_shapes())
    x1, x2 = values(data.draw, s1, dtype), values(data.draw, s2, dtype)
    q = [None, None, None]
    if dtype in ("int8", "int16"):
        q = [(data.draw(scales(1e-3, 2.0)), data.draw(zero_points(dtype))) for _ in range(3)]
        if data.draw(st.integers(0, 3)) == 0:
            q[1] = q[0]
    const = draw_const(data.draw)
    defs = [operand(s1, dtype, x1, q[0], const[0]), operand(s2, dtype, x2, q[1], const[1])]
    model = single_op_model(OP, defs, [TensorDef(out, dtype.upper(), q[2])])
    compare_with_tflm(oracle, model, runtime_inputs(defs, [x1, x2]), context=OP)


@pytest.mark.parametrize("dtype, q", [("int8", [(0.0371, 5), (0.0123, -17), (0.02, -128)]),
                                      ("int16", [(0.0005, 0), (0.00031, 0), (0.0007, 0)])])
def test_squared_difference_quantized_grid(oracle, dtype, q):
    """A grid over the whole input range under different quantizations."""
    lo, hi = (-128, 127) if dtype == "int8" else (-32768, 32767)
    v = np.linspace(lo, hi, 256).round().astype(dtype)
    a, b = np.meshgrid(v, v)
    model = single_op_model(OP, [TensorDef((256, 256), dtype.upper(), q[0]),
                                 TensorDef((256, 256), dtype.upper(), q[1])],
                            [TensorDef((256, 256), dtype.upper(), q[2])])
    compare_with_tflm(oracle, model, [a, b], context=OP)


@pytest.mark.parametrize("types, shapes_, quants, message", [
    (("INT8", "INT16", "INT16"), ((2, 3),) * 3, (None,) * 3, "must match"),
    (("INT8", "INT8", "FLOAT32"), ((2, 3),) * 3, (None,) * 3, "output type"),
    (("INT64", "INT64", "INT64"), ((2, 3),) * 3, (None,) * 3, "only supports"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3),) * 3, (None,) * 3, "only supports"),
    (("FLOAT32",) * 3, ((2, 3), (3, 2), (2, 3)), (None,) * 3, "do not broadcast"),
    (("FLOAT32",) * 3, ((2, 3), (1, 3), (3, 2)), (None,) * 3, "output has shape"),
    (("INT8",) * 3, ((2, 3),) * 3, (None,) * 3, "positive scale"),
    (("INT16",) * 3, ((2, 3),) * 3, ((0.5, 0), (0.5, 3), (0.5, 0)), "zero points 0"),
])
def test_squared_difference_rejects_bad_models(types, shapes_, quants, message):
    model = single_op_model(OP, [TensorDef(shapes_[0], types[0], quants[0]),
                                 TensorDef(shapes_[1], types[1], quants[1])],
                            [TensorDef(shapes_[2], types[2], quants[2])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)


def test_squared_difference_tiny_output_scale_as_tflm(oracle):
    """An output scale so small that the requantisation shifts left by far more than 31
    bits: TFLM has no check and shifts as its CPU does; so do we."""
    v = np.arange(-128, 128, dtype=np.int8)
    a, b = np.meshgrid(v, v)
    model = single_op_model(OP, [TensorDef((256, 256), "INT8", (0.5, 0)), TensorDef((256, 256), "INT8", (0.5, 0))],
                            [TensorDef((256, 256), "INT8", (1e-20, 0))])
    compare_with_tflm(oracle, model, [a, b], context=OP)


def test_squared_difference_nan_signs(oracle):
    """Which NaN comes out when both operands are NaNs of different signs."""
    nan = np.float32(np.nan)
    a = np.array([nan, -nan, nan, -nan, np.inf, 1.0], np.float32)
    b = np.array([-nan, nan, nan, -nan, np.inf, -nan], np.float32)
    a, b = np.tile(a, 16), np.tile(b, 16)      # long enough for numpy's SIMD loops
    model = single_op_model(OP, [TensorDef(a.shape, "FLOAT32"), TensorDef(b.shape, "FLOAT32")],
                            [TensorDef(a.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [a, b], context=OP)
