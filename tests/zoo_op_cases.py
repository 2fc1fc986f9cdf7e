"""One-op models cut out of the zoo models: every operator of a given type, with its
tensors' shapes, types, quantization and its options exactly as in the model, and
random inputs. Lets a kernel be checked against TFLM on real-model parameters before
every operator of those models exists."""
from typing import Iterator, Tuple

import numpy as np

from micro_runtime import load_model
from tests.helpers import TensorDef, model_path, single_op_model

ZOO = ["hello_world_int8", "hello_world_float", "simple_add_model", "ad01_int8",
       "micro_speech_quantized", "person_detect", "keyword_scrambled_8bit", "kws_ref_model",
       "trained_lstm_int8", "vww_96_int8", "pretrainedResnet_quant"]


def _tensor_def(spec) -> TensorDef:
    q = spec.quantization
    quant = None if q is None else (q.scales.tolist(), q.zero_points.tolist(), q.quantized_dimension)
    return TensorDef(spec.shape, spec.type, quant, data=spec.data if spec.is_constant else None)


def _random(spec, rng) -> np.ndarray:
    if spec.dtype == np.float32:
        return rng.uniform(-4, 4, size=spec.shape).astype(np.float32)
    info = np.iinfo(spec.dtype)
    return rng.integers(info.min, info.max, size=spec.shape, endpoint=True).astype(spec.dtype)


def zoo_op_cases(op_name: str, seed: int = 0) -> Iterator[Tuple[str, bytes, list]]:
    """(label, one-op model, inputs) for every ``op_name`` operator in the zoo."""
    rng = np.random.default_rng(seed)
    for name in ZOO:
        graph = load_model(model_path(name)).main
        for op in graph.operators:
            if op.name != op_name:
                continue
            ins = [None if i < 0 else graph.tensors[i] for i in op.inputs]
            outs = [graph.tensors[i] for i in op.outputs]
            options = op.params.as_dict() if op.params.present else {}
            model = single_op_model(op_name, [None if t is None else _tensor_def(t) for t in ins],
                                    [_tensor_def(t) for t in outs], **options)
            inputs = [_random(t, rng) for t in ins if t is not None and not t.is_constant]
            yield f"{name} op {op.index}", model, inputs
