"""``micro-runtime drift``: how far do a model's outputs move on a float accelerator?

The model runs twice on the same inputs: on the integer reference kernels (what TFLM
computes on the MCU) and with :class:`~micro_runtime.delegates.float_delegate.FloatDelegate`
(every op it can take runs in float32, or with float16 storage, between a dequantize
and a quantize). Per output it reports the largest and the mean absolute difference —
in quantized steps for a quantized output (in real units for a float output) — the
fraction of identical elements, and, for outputs that are class probabilities (written
by SOFTMAX or LOG_SOFTMAX, possibly through RESHAPE / SQUEEZE / QUANTIZE / DEQUANTIZE,
last dimension > 1), how often the top-1 class agrees; for other outputs (feature maps,
regressions, masks) top-1 agreement means nothing and is not given. With ``clamp`` every float op's output
is clamped to the range of its quantized tensor, which separates saturation (values
outside the int8 range, as random inputs produce) from precision.

Inputs are seeded random tensors (int types: uniform over the type's whole range;
float32: standard normal; seed ``s`` draws sample ``s``) or the given arrays. Every
sample starts from a reset interpreter.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from ..errors import InputError
from ..model import Model, load_model
from ..op_resolver import OpResolver
from ..targets import DEFAULT_TARGET

#: ``--json`` keys of ``drift`` (stable).
#: the most samples one drift run takes (input files or --seeds): each runs through two
#: interpreters one at a time
MAX_DRIFT_SAMPLES = 10000

DRIFT_KEYS = ("model", "target", "interpreter", "precision", "clamp", "samples", "input_source", "seeds",
              "total_nodes", "delegated_nodes", "delegate_subsets", "rejected_nodes", "outputs")
#: keys of each entry of ``outputs``.
OUTPUT_KEYS = ("index", "name", "shape", "dtype", "unit", "max_abs_diff", "mean_abs_diff",
               "exact_fraction", "top1_agreement")


@dataclass
class OutputDrift:
    index: int
    name: str
    shape: List[int]
    dtype: str
    unit: str                       #: "quantized steps", "real" (float output) or "integer"
    max_abs_diff: float
    mean_abs_diff: float
    exact_fraction: float           #: fraction of elements identical in both runs
    top1_agreement: Optional[float]  #: fraction of rows whose argmax agrees (None: not class probabilities)


@dataclass
class DriftReport:
    model: str
    target: str
    interpreter: str                #: "recording" or "micro" (the class both runs use)
    precision: str
    clamp: bool                     #: float outputs clamped to their int range (diagnostic)
    samples: int
    input_source: str               #: "random" or "files"
    seeds: Optional[List[int]]
    total_nodes: int
    delegated_nodes: int
    delegate_subsets: int
    rejected_nodes: Dict[int, str]
    outputs: List[OutputDrift] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["rejected_nodes"] = {str(k): v for k, v in self.rejected_nodes.items()}
        return d


def allocated_interpreter(model: Model, target: str, op_resolver: Optional[OpResolver] = None,
                          recording: bool = False, max_loop_iterations: Optional[int] = None):
    """A MicroInterpreter for ``model``, allocated in a nominal arena of 2^40 bytes
    (which takes host memory only for the bytes the model uses). Errors are raised, not
    printed. ``max_loop_iterations``: see :class:`MicroInterpreter`."""
    from arena.arena import PROBE_ARENA_BYTES
    from ..api import count_resource_variables
    from ..interpreter import MicroInterpreter
    it = MicroInterpreter(model, op_resolver, PROBE_ARENA_BYTES, target=target, recording=recording,
                          num_resource_variables=count_resource_variables(model),
                          error_reporter=lambda m: None, max_loop_iterations=max_loop_iterations)
    it.allocate_tensors()
    return it


#: ops that pass a tensor through without changing which element is largest
_PASS_THROUGH = ("RESHAPE", "SQUEEZE", "QUANTIZE", "DEQUANTIZE")
#: ops whose output is a vector of class probabilities
_CLASS_PROBABILITIES = ("SOFTMAX", "LOG_SOFTMAX")


def is_class_scores(subgraph, tensor: int) -> bool:
    """True when ``tensor`` holds class probabilities: last dimension > 1, written by
    SOFTMAX / LOG_SOFTMAX (through reshapes and (de)quantization)."""
    shape = subgraph.tensors[tensor].shape
    if len(shape) < 1 or shape[-1] < 2:
        return False
    producer = {t: op for op in subgraph.operators for t in op.outputs}
    seen = set()
    op = producer.get(tensor)
    while op is not None and op.index not in seen:
        seen.add(op.index)
        if op.name in _CLASS_PROBABILITIES:
            return True
        if op.name not in _PASS_THROUGH or not op.inputs or op.inputs[0] < 0:
            return False
        op = producer.get(op.inputs[0])
    return False


def random_inputs(specs, seed: int) -> List[np.ndarray]:
    """One seeded random sample per model input: int types uniform over the whole
    range, float32 standard normal, bool fair coin."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        dtype = spec.dtype
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, size=spec.shape).astype(np.bool_))
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, size=spec.shape, dtype=dtype))
        elif np.issubdtype(dtype, np.floating):
            out.append(rng.standard_normal(spec.shape).astype(dtype))
        else:
            raise InputError(f"cannot draw random values for input {spec.describe()} of type "
                             f"{spec.type_name}; give --input files")
    return out


def load_inputs(sources: Sequence[Union[str, np.ndarray]], specs) -> List[List[np.ndarray]]:
    """Samples from one array (or .npy path) per model input, shaped by the rule of
    :mod:`micro_runtime.samples` (one sample, or several on a leading axis)."""
    if len(sources) != len(specs):
        raise InputError(f"the model has {len(specs)} input(s); got {len(sources)} --input file(s)")
    columns = []
    for k, (src, spec) in enumerate(zip(sources, specs)):
        if isinstance(src, np.ndarray):
            value = src
        else:
            from .arrays import load_npy, sample_file_limit
            value = load_npy(src, f"input {k}", sample_file_limit(spec, MAX_DRIFT_SAMPLES))
        if value.dtype != spec.dtype:
            raise InputError(f"input {k}: expected dtype {spec.dtype} but got {value.dtype} "
                             "(values are not cast)")
        from ..samples import as_samples
        samples, _ = as_samples(value, spec.shape, f"input {k}")
        if samples.shape[0] == 0:
            raise InputError(f"input {k}: no samples (shape {tuple(value.shape)})")
        if samples.shape[0] > MAX_DRIFT_SAMPLES:
            raise InputError(f"input {k} holds {samples.shape[0]} samples; drift takes at most "
                             f"{MAX_DRIFT_SAMPLES} (each runs through the float delegate on its own)")
        columns.append(list(samples))
    counts = {len(c) for c in columns}
    if len(counts) > 1:
        raise InputError(f"the input files hold different numbers of samples: {sorted(counts)}")
    return [list(sample) for sample in zip(*columns)]


def measure_drift(model: Union[Model, str, os.PathLike, bytes], precision: str = "fp32",
                  inputs: Optional[Sequence[Union[str, np.ndarray]]] = None, seeds: int = 8,
                  target: str = DEFAULT_TARGET, op_resolver: Optional[OpResolver] = None,
                  clamp: bool = False, interpreter: str = "recording",
                  on_progress: Optional[Callable[[int, int], None]] = None,
                  max_loop_iterations: Optional[int] = None) -> DriftReport:
    """Outputs of the integer reference vs. the float delegate (see the module doc);
    ``clamp``: see :class:`~micro_runtime.delegates.float_delegate.FloatDelegate`;
    ``interpreter``: "recording" (RecordingMicroInterpreter) or "micro" (the outputs do
    not depend on it); ``on_progress(done, total)`` after each sample."""
    from ..delegates.float_delegate import FloatDelegate
    model = model if isinstance(model, Model) else load_model(model)
    delegate = FloatDelegate(precision, op_resolver, clamp=clamp)   # validates precision
    if (isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer))
            or not 1 <= seeds <= MAX_DRIFT_SAMPLES):
        raise InputError(f"seeds must be a number of samples from 1 to {MAX_DRIFT_SAMPLES}, "
                         f"not {seeds!r}")
    if interpreter not in ("recording", "micro"):
        raise InputError(f"interpreter must be 'recording' or 'micro', not {interpreter!r}")
    recording = interpreter == "recording"
    accelerated = allocated_interpreter(model, target, op_resolver, recording, max_loop_iterations)
    accelerated.modify_graph_with_delegate(delegate)

    sg = model.main
    in_specs = [sg.tensors[t] for t in sg.inputs]
    if inputs:
        samples = load_inputs(inputs, in_specs)
        seed_list = None
    else:
        seed_list = list(range(int(seeds)))
        samples = [random_inputs(in_specs, s) for s in seed_list]

    # the integer reference: every sample from the reset state in batched blocks (the
    # outputs of per-sample invokes, tests/test_batched.py); the delegate one by one
    from ..batched import Evaluator
    evaluator = Evaluator(model, target=target, op_resolver=op_resolver, samples=len(samples),
                          max_loop_iterations=max_loop_iterations)
    outs_ref = evaluator.run([np.stack([sample[i] for sample in samples]) for i in range(len(in_specs))])
    outs_acc: List[List[np.ndarray]] = [[] for _ in sg.outputs]
    for done, sample in enumerate(samples, 1):
        accelerated.reset()
        for i, x in enumerate(sample):
            accelerated.set_input(x, i)
        accelerated.invoke()
        for k in range(len(sg.outputs)):
            outs_acc[k].append(np.array(accelerated.output(k)))
        if on_progress is not None:
            on_progress(done, len(samples))

    outputs = []
    for k, t in enumerate(sg.outputs):
        spec = sg.tensors[t]
        a = outs_ref[k].reshape((len(samples),) + tuple(spec.shape))
        b = np.stack(outs_acc[k])
        if np.issubdtype(a.dtype, np.floating):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            unit = "real"
        else:
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64)).astype(np.float64)
            unit = "quantized steps" if spec.quantization is not None else "integer"
        top1 = None
        if is_class_scores(sg, t):
            top1 = float(np.mean(np.argmax(a, axis=-1) == np.argmax(b, axis=-1)))
        outputs.append(OutputDrift(
            index=k, name=spec.name, shape=list(spec.shape), dtype=str(spec.dtype), unit=unit,
            max_abs_diff=float(diff.max()) if diff.size else 0.0,
            mean_abs_diff=float(diff.mean()) if diff.size else 0.0,
            exact_fraction=float(np.mean(a == b)) if a.size else 1.0,
            top1_agreement=top1))
    subsets = sum(1 for op in accelerated.model.main.operators
                  if op.custom_code and op.custom_code.startswith(f"DELEGATE_{delegate.name}_"))
    return DriftReport(
        model=os.path.basename(model.source) if model.source != "<bytes>" else "<bytes>",
        target=accelerated.target.name, interpreter=interpreter, precision=delegate.precision,
        clamp=delegate.clamp,
        samples=len(samples),
        input_source="files" if inputs else "random", seeds=seed_list,
        total_nodes=len(sg.operators), delegated_nodes=len(delegate.claimed),
        delegate_subsets=subsets, rejected_nodes=dict(delegate.rejected), outputs=outputs)


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e9:
        return str(int(v))
    return f"{v:.4g}"


def format_drift(report: DriftReport) -> List[str]:
    """The human-readable table of ``micro-runtime drift``."""
    source = (f"{report.samples} random input(s) (seeds {report.seeds[0]}..{report.seeds[-1]})"
              if report.input_source == "random" else f"{report.samples} input sample(s) from files")
    lines = [
        f"{report.model}: integer reference vs float delegate ({report.precision}"
        f"{', outputs clamped to their int range' if report.clamp else ''}) on target {report.target}, "
        f"{'RecordingMicroInterpreter' if report.interpreter == 'recording' else 'MicroInterpreter'}",
        f"  {report.delegated_nodes} of {report.total_nodes} operators delegated "
        f"({report.delegate_subsets} subset{'s' if report.delegate_subsets != 1 else ''}); {source}",
    ]
    for node, reason in sorted(report.rejected_nodes.items()):
        lines.append(f"  not delegated: node {node}: {reason}")
    header = f"  {'out':>3}  {'name':<28} {'shape':<14} {'unit':<16} {'max diff':>9} {'mean diff':>10} {'exact':>7} {'top-1 agree':>12}"
    lines += ["", header]
    for o in report.outputs:
        name = o.name if len(o.name) <= 28 else "…" + o.name[-27:]
        top1 = "-" if o.top1_agreement is None else f"{100 * o.top1_agreement:.1f}%"
        lines.append(f"  {o.index:>3}  {name:<28} {str(o.shape):<14} {o.unit:<16} {_fmt(o.max_abs_diff):>9} "
                     f"{o.mean_abs_diff:>10.4g} {100 * o.exact_fraction:>6.1f}% {top1:>12}")
    return lines


__all__ = ["measure_drift", "format_drift", "DriftReport", "OutputDrift", "random_inputs", "is_class_scores",
           "load_inputs", "allocated_interpreter", "DRIFT_KEYS", "OUTPUT_KEYS"]
