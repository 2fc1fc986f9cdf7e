"""CUMSUM against TFLM: float32 (sequential float sum from +0.0, NaN of both signs,
infinities, signed zeros) and int8 (the offset-seeded accumulator, int32 wrap along long
axes, independent input / output quantization), every axis (negative too), exclusive and
reverse, constant and run-time axis, ranks 1-6; int8's OpData; the invalid-axis eval
error; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import values
from tests.strategies import scales, shapes, zero_points

pytestmark = pytest.mark.oracle


@given(data=st.data())
def test_cumsum_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    shape = list(data.draw(shapes(1, 6, 1, 6)))
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    if data.draw(st.integers(0, 3)) == 0:
        shape[axis] = data.draw(st.integers(16, 40))        # long scans: int32 wrap for int8
        while int(np.prod(shape)) > 4096:
            k = max((i for i in range(rank) if i != axis % rank), key=lambda i: shape[i], default=None)
            if k is None or shape[k] == 1:
                break
            shape[k] //= 2
    shape = tuple(shape)
    x = values(data.draw, shape, dtype)
    q_in = q_out = None
    if dtype == "int8":
        q_in = (data.draw(scales(1e-3, 2.0)), data.draw(zero_points("int8")))
        q_out = q_in if data.draw(st.integers(0, 3)) == 0 else (
            data.draw(scales(1e-3, 16.0)), data.draw(zero_points("int8")))
    axis_data = np.array(axis, np.int32).reshape(data.draw(st.sampled_from([(), (1,)])))
    const_axis = data.draw(st.booleans())
    options = {}
    if data.draw(st.integers(0, 4)):
        options = dict(exclusive=data.draw(st.booleans()), reverse=data.draw(st.booleans()))
    model = single_op_model("CUMSUM", [TensorDef(shape, dtype.upper(), q_in),
                                       TensorDef(axis_data.shape, "INT32",
                                                 data=axis_data if const_axis else None)],
                            [TensorDef(shape, dtype.upper(), q_out)], **options)
    inputs = [x] if const_axis else [x, axis_data]
    compare_with_tflm(oracle, model, inputs, context="CUMSUM")


def test_cumsum_runtime_axis_out_of_range_fails_at_invoke_like_tflm(oracle):
    model = single_op_model("CUMSUM", [TensorDef((2, 3), "FLOAT32"), TensorDef((), "INT32")],
                            [TensorDef((2, 3), "FLOAT32")])
    inputs = [np.ones((2, 3), np.float32), np.array(2, np.int32)]
    theirs = oracle.run(model, inputs)
    assert not theirs.ok and theirs.stage == "invoke" and not theirs.crashed
    with pytest.raises(KernelError, match="Invalid axis") as info:
        run_ours(model, inputs)
    assert "CUMSUM" in str(info.value)


def _model(in_type="FLOAT32", out_type=None, shape=(2, 3), out_shape=None, axis_type="INT32",
           axis_shape=(), axis=0, quant=None):
    axis_data = np.full(axis_shape, axis, dtype=axis_type.lower())
    return single_op_model("CUMSUM", [TensorDef(shape, in_type, quant), TensorDef(axis_shape, axis_type, data=axis_data)],
                           [TensorDef(out_shape or shape, out_type or in_type, quant)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_type="INT32"), "FLOAT32 and INT8"),
    (dict(in_type="INT16"), "FLOAT32 and INT8"),
    (dict(out_type="INT8"), "must match"),
    (dict(out_shape=(3, 2)), "must equal"),
    (dict(axis_type="INT64"), "INT32"),
    (dict(axis_shape=(2,)), "one element"),
    (dict(shape=(), axis_shape=(1,)), "at least one dimension"),
    (dict(axis=2), "Invalid axis"),
    (dict(axis=-3), "Invalid axis"),
    (dict(in_type="INT8"), "positive"),
    (dict(in_type="INT8", quant=(0.0, 0)), "positive"),
])
def test_cumsum_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "CUMSUM" in str(info.value)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("options", [dict(), dict(exclusive=True), dict(reverse=True)])
def test_cumsum_float_signed_zeros_and_nan_signs(oracle, axis, options):
    """A leading -0.0 sums to +0.0; once a NaN, the accumulator keeps that NaN even when
    a NaN of the other sign follows; inf + -inf gives the default NaN."""
    nan = np.float32(np.nan)
    x = np.array([[-0.0, -0.0, nan, -nan, np.inf],
                  [-0.0, -nan, -0.0, nan, -np.inf],
                  [-0.0, nan, -nan, 1.0, nan],
                  [-0.0, -nan, nan, -nan, -nan]], np.float32)
    x = np.tile(x, (4, 16))                    # long enough for numpy's SIMD loops
    model = single_op_model("CUMSUM", [TensorDef(x.shape, "FLOAT32"),
                                       TensorDef((), "INT32", data=np.array(axis, np.int32))],
                            [TensorDef(x.shape, "FLOAT32")], **options)
    compare_with_tflm(oracle, model, [x], context="CUMSUM")
