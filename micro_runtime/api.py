"""A drop-in for ``tflite_micro.runtime.Interpreter``.

The package is used as ``from tflite_micro import runtime`` then ``runtime.Interpreter``;
switching is one line::

    # from tflite_micro import runtime
    import micro_runtime as runtime

(``runtime.Interpreter`` and ``runtime.InterpreterConfig`` exist under the same names.)

Same constructors, defaults, methods and dictionary keys as the tflite_micro package
(which is TFLM's 64-bit host build, so the default target here is ``host64``).
Differences: errors are :class:`~micro_runtime.errors.MicroRuntimeError` subclasses
(which are also the ``ValueError`` / ``RuntimeError`` / ``IndexError`` the package
raises), custom ops are
Python kernels rather than names of C++ registerer functions, and ``target=`` selects
another TFLM build (``"mcu32"``, ``"cortex-m4+cmsis-nn"``, ...; see
:mod:`micro_runtime.targets`).
"""
from __future__ import annotations

import enum
import os
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from . import schema
from .errors import InputError, InterpreterStateError
from .interpreter import MicroInterpreter
from .model import Model, load_model
from .op_resolver import OpResolver, default_op_resolver

#: tensor types the package exchanges with numpy in no direction (set_input, get_output)
_NOT_NUMPY_TYPES = frozenset({schema.TensorType.STRING, schema.TensorType.RESOURCE,
                              schema.TensorType.VARIANT})


class InterpreterConfig(enum.Enum):
    """As in tflite_micro: record allocations (greedy planner), or keep every tensor
    readable after invoke (linear planner, enables :meth:`Interpreter.GetTensor`)."""

    kAllocationRecording = 0
    kPreserveAllTensors = 1


def count_resource_variables(model: Model) -> int:
    """Distinct VAR_HANDLE shared names, as the tflite_micro package counts them."""
    names = set()
    code = schema.BUILTIN_OP_CODES["VAR_HANDLE"]
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.builtin_code == code:
                names.add(op.params.get("shared_name", ""))
    return len(names)


class Interpreter:
    """Runs a model like ``tflite_micro.runtime.Interpreter`` (allocation happens in the
    constructor, as there)."""

    def __init__(self, model_data: Union[bytes, Model], custom_op_registerers: Sequence = (),
                 arena_size: Optional[int] = None,
                 intrepreter_config: InterpreterConfig = InterpreterConfig.kAllocationRecording,
                 alt_decompression_memory_size: int = 0, *, target: str = "host64",
                 op_resolver: Optional[OpResolver] = None, error_reporter=None):
        if model_data is None:
            raise InputError("Model must not be None")
        if isinstance(custom_op_registerers, (str, bytes)) or not isinstance(custom_op_registerers, Iterable):
            raise InputError("Custom ops registerers must be a list")
        model = model_data if isinstance(model_data, Model) else load_model(model_data)
        resolver = op_resolver if op_resolver is not None else default_op_resolver(target)
        for kernel in custom_op_registerers:
            if isinstance(kernel, str):
                raise InputError(f"custom op registerer {kernel!r}: registerers named by string are "
                                 "C++ functions of the TFLM package; pass a Python kernel object "
                                 "(see kernels.base.Kernel) instead")
            resolver.add(kernel)
        if not isinstance(intrepreter_config, InterpreterConfig):
            raise InputError(f"intrepreter_config must be an InterpreterConfig, not {intrepreter_config!r}")
        self._config = intrepreter_config
        preserve = intrepreter_config == InterpreterConfig.kPreserveAllTensors
        self._interpreter = MicroInterpreter(
            model, resolver, arena_size, target=target,
            planner="linear" if preserve else "greedy", recording=not preserve,
            num_resource_variables=count_resource_variables(model), error_reporter=error_reporter,
            alt_decompression_memory_size=alt_decompression_memory_size)
        self._interpreter.allocate_tensors()

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_file(cls, model_path, custom_op_registerers: Sequence = (), arena_size: Optional[int] = None,
                  intrepreter_config: InterpreterConfig = InterpreterConfig.kAllocationRecording,
                  alt_decompression_memory_size: int = 0, **kwargs) -> "Interpreter":
        """An interpreter for the .tflite file at ``model_path``."""
        if model_path is None or not os.path.isfile(model_path):
            raise InputError(f"Invalid model file path: {model_path!r}")
        return cls(load_model(model_path), custom_op_registerers, arena_size, intrepreter_config,
                   alt_decompression_memory_size, **kwargs)

    @classmethod
    def from_bytes(cls, model_data, custom_op_registerers: Sequence = (), arena_size: Optional[int] = None,
                   intrepreter_config: InterpreterConfig = InterpreterConfig.kAllocationRecording,
                   alt_decompression_memory_size: int = 0, **kwargs) -> "Interpreter":
        """An interpreter for a model given as bytes."""
        return cls(model_data, custom_op_registerers, arena_size, intrepreter_config,
                   alt_decompression_memory_size, **kwargs)

    # ----------------------------------------------------------------- running
    @property
    def micro_interpreter(self) -> MicroInterpreter:
        """The underlying :class:`MicroInterpreter` (arena figures, views, plan)."""
        return self._interpreter

    def print_allocations(self) -> None:
        """Print TFLM's RecordingMicroAllocator report to stderr."""
        if self._config != InterpreterConfig.kAllocationRecording:
            raise InterpreterStateError("Cannot print allocations as they were not recorded")
        self._interpreter.print_allocations()

    def invoke(self) -> int:
        """Run one inference; returns 0 (kTfLiteOk), or 15 (kTfLiteAbort) when a kernel
        ended the run early, as the package does."""
        return self._interpreter.invoke()

    def reset(self) -> int:
        """Reset variable tensors and kernel state; returns 0."""
        self._interpreter.reset()
        return 0

    def set_input(self, input_data, index: int) -> None:
        """Copy ``input_data`` (numpy array of the input's exact dtype and shape) into
        input ``index``."""
        if input_data is None:
            raise InputError("Input data must not be None")
        _check_index(index)
        self._check_io_type(self._interpreter.model.subgraphs[0].inputs, index)
        self._interpreter.set_input(input_data, index)

    def get_output(self, index: int) -> np.ndarray:
        """A copy of output ``index`` after the last invoke."""
        _check_index(index)
        self._check_io_type(self._interpreter.model.subgraphs[0].outputs, index)
        return np.array(self._interpreter.output(index), copy=True)

    def _check_io_type(self, tensor_indices, index: int) -> None:
        """The package exchanges no string, resource or variant tensor with numpy (it
        refuses them with these words, on inputs too)."""
        if 0 <= index < len(tensor_indices):
            spec = self._interpreter.model.subgraphs[0].tensors[tensor_indices[index]]
            if spec.type in _NOT_NUMPY_TYPES:
                raise InputError("TFLM doesn't support strings, resource variables, or variants "
                                 f"as outputs. (tensor {spec.name!r} has type {schema.tensor_type_name(spec.type)})")

    def GetTensor(self, tensor_index: int, subgraph_index: int = 0) -> dict:
        """dtype, shape and a copy of any tensor's data (kPreserveAllTensors only)."""
        if self._config != InterpreterConfig.kPreserveAllTensors:
            raise InterpreterStateError(
                "TFLM only supports GetTensor() when using a python interpreter with the "
                "InterpreterConfig.kPeserverAllTensors interpreter_config")
        data = self._interpreter.tensor(tensor_index, subgraph_index)
        spec = self._interpreter.model.subgraphs[subgraph_index].tensors[tensor_index]
        return {"dtype": spec.dtype.type, "shape": np.array(spec.shape, dtype=np.int32),
                "tensor_data": None if data is None else np.array(data, copy=True)}

    def get_input_details(self, index: int) -> dict:
        """``shape``, ``dtype`` and ``quantization_parameters`` of input ``index``."""
        _check_index(index)
        it = self._interpreter
        it.check_io_index("Input", index)
        return _details(it.model.subgraphs[0].tensors[it.model.subgraphs[0].inputs[index]])

    def get_output_details(self, index: int) -> dict:
        """``shape``, ``dtype`` and ``quantization_parameters`` of output ``index``."""
        _check_index(index)
        it = self._interpreter
        it.check_io_index("Output", index)
        return _details(it.model.subgraphs[0].tensors[it.model.subgraphs[0].outputs[index]])

    # ------------------------------------------------ names, details, resize
    def get_input_index(self, name: str) -> int:
        """Position of the model input whose tensor is called ``name`` (InputError,
        listing the input names, for an unknown name)."""
        return self._interpreter.get_input_index(name)

    def get_output_index(self, name: str) -> int:
        """Position of the model output whose tensor is called ``name``."""
        return self._interpreter.get_output_index(name)

    def get_tensor_details(self) -> list:
        """One dict per tensor of the main subgraph: ``index``, ``name``, ``shape``,
        ``dtype``, ``quantization_parameters``, ``bytes``, ``location`` ("constant",
        "arena" or "none"), ``arena_offset``, ``is_variable``."""
        return self._interpreter.get_tensor_details()

    def resize_input_tensor(self, index: int, shape) -> int:
        """Give input ``index`` a new ``shape`` and re-allocate at once (TFLite's
        ``ResizeInputTensor`` followed by ``AllocateTensors``).

        *Emulator extension*: TFLM cannot resize. Downstream shapes are inferred per op
        and the arena is planned afresh; returns the new minimum arena in bytes. If the
        new plan does not fit ``arena_size``, raises :class:`ArenaTooSmallError` (its
        ``min_arena_bytes`` is the size needed) and the interpreter keeps its old shapes.
        """
        _check_index(index)
        needed = self._interpreter.resize_input_tensor(index, shape)
        self._interpreter.allocate_tensors()
        return needed


def _check_index(index) -> None:
    if index is None or isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise InputError("Index must be a non-negative integer")


def _details(spec) -> dict:
    q = spec.quantization
    if q is not None:
        channels = q.scales.size
        zps = q.zero_points if q.zero_points.size == channels else np.repeat(q.zero_points[:1], channels)
        quant = {"scales": q.scales.astype(np.float32).copy(),
                 "zero_points": zps.astype(np.int32), "quantized_dimension": int(q.quantized_dimension)}
    else:
        quant = {"scales": np.zeros(0, np.float32), "zero_points": np.zeros(0, np.int32),
                 "quantized_dimension": 0}
    return {"dtype": spec.dtype.type, "shape": np.array(spec.shape, dtype=np.int32),
            "quantization_parameters": quant}
