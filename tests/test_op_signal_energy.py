"""SignalEnergy (TFLM signal custom op) against TFLM: |bin|^2 of complex int16 bins in
[start_index, end_index) as uint32 (int32 overflow wraps). Bins outside the range are not
written by TFLM (undefined), so only the range is compared."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


@given(st.data())
def test_energy_matches_tflm(oracle, data):
    draw = data.draw
    bins = draw(st.integers(1, 300))
    out_n = draw(st.integers(1, bins))
    start = draw(st.integers(0, out_n))
    end = draw(st.integers(start, out_n))
    rng = rng_of(draw)
    model = single_op_model("SignalEnergy", [TensorDef((2 * bins,), "INT16")],
                            [TensorDef((out_n,), "UINT32")],
                            custom_options=options(end_index=end, start_index=start))
    runs = [[int_array(rng, (2 * bins,), np.int16, edge_fraction=0.3)] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"energy {bins} [{start},{end})",
                    output_slices={0: slice(start, end)})
