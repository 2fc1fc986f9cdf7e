"""Shared hypothesis cases for the AVERAGE_POOL_2D / MAX_POOL_2D / L2_POOL_2D differential tests."""
from hypothesis import strategies as st

from kernels.internal.padding import SAME, VALID, compute_padding_height_width
from tests.helpers import TensorDef, single_op_model
from tests.strategies import activations, arrays, scales

SCHEMA_PADDING = {"SAME": 0, "VALID": 1}


@st.composite
def pool_case(draw, op, dtypes=("float32", "int8", "int16")):
    dtype = draw(st.sampled_from(dtypes))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    batches = draw(st.integers(1, 3))
    in_h, in_w = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    depth = draw(st.integers(1, 8))
    stride_h, stride_w = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    if padding == "VALID":
        filter_h, filter_w = draw(st.integers(1, in_h)), draw(st.integers(1, in_w))
    else:
        filter_h, filter_w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    act = draw(activations)
    _, out_h, out_w = compute_padding_height_width(
        stride_h, stride_w, 1, 1, in_h, in_w, filter_h, filter_w, SAME if padding == "SAME" else VALID)
    in_shape, out_shape = (batches, in_h, in_w, depth), (batches, out_h, out_w, depth)
    if dtype == "float32":
        quant = None
        x = arrays(draw, in_shape, "float32", -8.0, 8.0)
    else:
        zp = draw(st.integers(-128, 127) if dtype == "int8" else st.integers(-1000, 1000))
        quant = (draw(scales(1e-3, 0.5)), zp)
        x = arrays(draw, in_shape, dtype)
    tt = dtype.upper()
    model = single_op_model(op, [TensorDef(in_shape, tt, quant)], [TensorDef(out_shape, tt, quant)],
                            padding=SCHEMA_PADDING[padding], stride_h=stride_h, stride_w=stride_w,
                            filter_height=filter_h, filter_width=filter_w, fused_activation_function=act)
    return model, [x]


def pool_model(op, in_shape, out_shape, dtype="FLOAT32", quant=None, out_quant=None, out_dtype=None,
               padding=1, stride=(1, 1), filter_size=(2, 2), act=0):
    """A one-op pooling model for the deterministic error tests."""
    out_quant = quant if out_quant is None else out_quant
    return single_op_model(op, [TensorDef(in_shape, dtype, quant)],
                           [TensorDef(out_shape, out_dtype or dtype, out_quant)],
                           padding=padding, stride_h=stride[0], stride_w=stride[1],
                           filter_height=filter_size[0], filter_width=filter_size[1],
                           fused_activation_function=act)
