"""``micro-runtime eval``: a data set through the model (:mod:`micro_runtime.batched`),
with top-1 accuracy and a confusion summary when labels are given."""
from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from ..errors import InputError

#: classes up to which the text output prints the whole confusion matrix
MAX_MATRIX_CLASSES = 16


def predicted_classes(output: np.ndarray) -> np.ndarray:
    """Top-1 class of every sample: the index of the largest of its values (the first
    one on ties). Quantized outputs with a positive scale rank like their real values."""
    per_sample = output.reshape(output.shape[0], -1)
    if per_sample.shape[1] < 2:
        raise InputError(f"top-1 accuracy needs one score per class, but the output has "
                         f"{per_sample.shape[1]} value(s) per sample")
    return np.argmax(per_sample, axis=1)


def label_classes(labels: np.ndarray, samples: int, classes: int) -> np.ndarray:
    """Class ids from integer labels of shape (samples,) (or (samples, 1)), or from
    one-hot / score rows of shape (samples, classes)."""
    labels = np.asarray(labels)
    if labels.shape[:1] != (samples,):
        raise InputError(f"labels: expected {samples} labels (one per sample), got an array of "
                         f"shape {labels.shape}")
    if labels.ndim == 1 or (labels.ndim == 2 and labels.shape[1] == 1 and classes != 1):
        if labels.dtype.kind not in "iub":
            raise InputError(f"labels: integer class ids expected, got dtype {labels.dtype}")
        ids = labels.reshape(samples).astype(np.int64)
        bad = (ids < 0) | (ids >= classes)
        if bad.any():
            raise InputError(f"labels: class id {int(ids[bad][0])} outside the model's "
                             f"{classes} classes (0..{classes - 1})")
        return ids
    rows = labels.reshape(samples, -1)
    if rows.shape[1] != classes:
        raise InputError(f"labels: rows of {rows.shape[1]} values (one-hot) but the model scores "
                         f"{classes} classes")
    return np.argmax(rows, axis=1)


def classification_summary(output: np.ndarray, labels: np.ndarray) -> Dict:
    """Top-1 accuracy, the confusion matrix (rows: label, columns: predicted) and per-class
    recall / precision of one model output against the labels."""
    samples = output.shape[0]
    predicted = predicted_classes(output)
    classes = int(np.prod(output.shape[1:], dtype=np.int64))
    truth = label_classes(labels, samples, classes)
    confusion = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(confusion, (truth, predicted), 1)
    correct = int(np.trace(confusion))
    per_class = []
    for c in range(classes):
        support, chosen = int(confusion[c].sum()), int(confusion[:, c].sum())
        per_class.append({"class": c, "count": support, "predicted": chosen,
                          "recall": confusion[c, c] / support if support else None,
                          "precision": confusion[c, c] / chosen if chosen else None})
    off = confusion.copy()
    np.fill_diagonal(off, 0)
    pairs = [{"label": int(i), "predicted": int(j), "count": int(off[i, j])}
             for i, j in zip(*np.unravel_index(np.argsort(-off, axis=None), off.shape))
             if off[i, j] > 0][:10]
    return {"samples": samples, "correct": correct, "accuracy": correct / samples if samples else None,
            "classes": classes, "confusion": confusion.tolist(), "per_class": per_class,
            "top_confusions": pairs}


def format_summary(summary: Dict, output_index: int) -> List[str]:
    """Text lines: accuracy, the confusion matrix (or the most confused pairs when there
    are many classes) and per-class recall / precision."""
    n = summary["samples"]
    acc = summary["accuracy"]
    lines = [f"top-1 accuracy (output {output_index} vs labels): "
             + ("n/a (no samples)" if acc is None else f"{100 * acc:.2f}% ({summary['correct']}/{n})")]
    classes = summary["classes"]
    confusion = np.asarray(summary["confusion"])
    if classes <= MAX_MATRIX_CLASSES:
        width = max(5, len(str(int(confusion.max(initial=0)))) + 1)
        lines.append("confusion (rows: label, columns: predicted):")
        lines.append("     " + "".join(f"{c:>{width}}" for c in range(classes)))
        for c in range(classes):
            lines.append(f"  {c:>3}" + "".join(f"{v:>{width}}" for v in confusion[c]))
    elif summary["top_confusions"]:
        lines.append("most frequent confusions (label -> predicted: count):")
        lines.extend(f"  {p['label']} -> {p['predicted']}: {p['count']}" for p in summary["top_confusions"])
    lines.append("per class:  class  count  recall  precision")
    for row in summary["per_class"]:
        if row["count"] == 0 and row["predicted"] == 0:
            continue
        recall = "-" if row["recall"] is None else f"{100 * row['recall']:.1f}%"
        precision = "-" if row["precision"] is None else f"{100 * row['precision']:.1f}%"
        lines.append(f"           {row['class']:>5}  {row['count']:>5}  {recall:>6}  {precision:>9}")
    return lines


def classifier_classes(shape: Sequence[int]) -> Optional[int]:
    """The number of classes of an output of ``shape`` (per sample) when it is one vector
    of scores (one axis of 2 or more, the others 1: ``(1, C)``, ``(C,)``), else None (a
    feature map, an image, a single value: top-1 accuracy means nothing there)."""
    long_axes = [int(d) for d in shape if int(d) != 1]
    return long_axes[0] if len(long_axes) == 1 and long_axes[0] >= 2 else None


#: operators that give class scores, and those an output may pass through after them
SCORE_OPS = ("SOFTMAX", "LOG_SOFTMAX")
PASS_THROUGH_OPS = ("QUANTIZE", "DEQUANTIZE", "RESHAPE", "SQUEEZE", "CAST")


def score_producer(model, output_index: int) -> Optional[str]:
    """The SOFTMAX / LOG_SOFTMAX that produces model output ``output_index`` (through
    QUANTIZE, DEQUANTIZE, RESHAPE, SQUEEZE, CAST), as ``"#k OP"``; None when another
    operator computes it (an autoencoder's FULLY_CONNECTED, a mask's LOGISTIC ...)."""
    main = model.main
    producers = {t: op for op in main.operators for t in op.outputs if t >= 0}
    tensor = main.outputs[output_index]
    for _ in range(len(main.operators) + 1):
        op = producers.get(tensor)
        if op is None:
            return None
        if op.name in SCORE_OPS:
            return f"#{op.index} {op.name}"
        if op.name not in PASS_THROUGH_OPS or not op.inputs or op.inputs[0] < 0:
            return None
        tensor = op.inputs[0]
    return None


def check_classifier(model, output_index: int, forced: bool = False) -> int:
    """The number of classes of model output ``output_index``, which ``--labels`` scores:
    one vector of scores per sample, computed by SOFTMAX / LOG_SOFTMAX (or ``forced``:
    the user says the values are scores, e.g. logits). :class:`InputError` otherwise,
    pointing at ``--targets`` for regression metrics."""
    spec = model.main.tensors[model.main.outputs[output_index]]
    classes = classifier_classes(spec.shape)
    shape = tuple(spec.shape)
    if classes is None:
        raise InputError(
            f"--labels: output {output_index} ({spec.describe()}) of shape {shape} is not one "
            "vector of class scores per sample, so top-1 accuracy means nothing there; give the "
            "expected outputs with --targets FILE for regression metrics")
    if not forced and score_producer(model, output_index) is None:
        raise InputError(
            f"--labels: output {output_index} ({spec.describe()}, shape {shape}) is not computed by "
            f"{' or '.join(SCORE_OPS)}, so it may not be class scores (an autoencoder, a mask, a "
            "feature vector); add --classifier if it is (logits), or give the expected outputs "
            "with --targets FILE for regression metrics")
    return classes


def _per_tensor(spec):
    q = spec.quantization
    if q is None or q.scales.size != 1 or not np.issubdtype(spec.dtype, np.integer):
        return None
    return float(q.scales[0]), int(q.zero_points[0])


def regression_summary(output: np.ndarray, targets: np.ndarray, spec, output_index: int = 0) -> Dict:
    """MSE, max abs error and SNR of one model output ``(samples, *shape)`` against
    ``targets``, in real units and (for a per-tensor quantized output) in quantized
    units (steps of the output's scale). ``targets``: real values (floating point), or
    quantized values of the output's own dtype; shaped by the sample rule of
    :mod:`micro_runtime.samples`. SNR (dB) = 10 log10(sum target^2 / sum error^2), the
    same in both units (``inf``: no error; None: the targets are all zero)."""
    from ..samples import as_samples
    samples = output.shape[0]
    wanted, _ = as_samples(targets, spec.shape, "targets")
    if wanted.shape[0] != samples:
        raise InputError(f"targets: {wanted.shape[0]} samples, the outputs have {samples}")
    params = _per_tensor(spec)
    if np.issubdtype(wanted.dtype, np.floating):
        real_targets = wanted.astype(np.float64)
    elif wanted.dtype == output.dtype:
        real_targets = wanted.astype(np.float64)
        if params is not None:
            real_targets = params[0] * (real_targets - params[1])
    else:
        raise InputError(f"targets: real values (floating point) or values of the output's type "
                         f"{output.dtype} expected, got {wanted.dtype}")
    real_out = output.astype(np.float64)
    if params is not None:
        real_out = params[0] * (real_out - params[1])
    error = real_out - real_targets
    energy, noise = float(np.sum(real_targets ** 2)), float(np.sum(error ** 2))
    mse = noise / error.size if error.size else None
    max_abs = float(np.max(np.abs(error))) if error.size else None
    snr = None if energy == 0 else (float("inf") if noise == 0 else 10.0 * float(np.log10(energy / noise)))
    quantized = None
    if params is not None and error.size:
        scale = params[0]
        quantized = {"mse": mse / scale ** 2, "max_abs_error": max_abs / scale,
                     "scale": scale, "zero_point": params[1]}
    return {"output_index": output_index, "samples": samples,
            "values_per_sample": int(np.prod(spec.shape, dtype=np.int64)),
            "real": {"mse": mse, "max_abs_error": max_abs}, "snr_db": snr, "quantized": quantized}


def format_regression(summary: Dict) -> List[str]:
    """Text lines of :func:`regression_summary`."""
    r, q = summary["real"], summary["quantized"]
    snr = summary["snr_db"]
    snr_text = "n/a (targets all zero)" if snr is None else ("inf (no error)" if snr == float("inf")
                                                            else f"{snr:.2f} dB")
    lines = [f"regression (output {summary['output_index']} vs targets, {summary['samples']} samples x "
             f"{summary['values_per_sample']} values): SNR {snr_text}",
             f"  real units:      MSE {r['mse']:.6g}, max abs error {r['max_abs_error']:.6g}"]
    if q is not None:
        lines.append(f"  quantized units: MSE {q['mse']:.6g}, max abs error {q['max_abs_error']:.6g} "
                     f"(steps of scale {q['scale']:.6g}, zero point {q['zero_point']})")
    return lines


def run_evaluation(model, input_paths: Sequence[str], *, target: str, batch: Optional[int],
                   stream: bool, labels_path: Optional[str] = None, output_index: int = 0,
                   progress: Optional[Callable[[int, int], None]] = None, jobs: int = 1,
                   quantize: bool = False, targets_path: Optional[str] = None,
                   classifier: bool = False, max_loop_iterations: Optional[int] = None) -> Dict:
    """Everything ``micro-runtime eval`` reports, as a dictionary (the output arrays
    themselves under ``arrays``). ``progress(done, total)`` follows the samples;
    ``jobs``: worker processes (see :mod:`micro_runtime.workers`); ``quantize``: the
    input files hold real values, quantized with each input's scale and zero point;
    ``labels_path``: class ids for top-1 accuracy (a classifier's output only, see
    :func:`check_classifier`; ``classifier``: the output is class scores anyway);
    ``targets_path``: expected values for regression metrics."""
    from ..batched import Evaluator, samples_per_job
    from ..model import Model, load_model
    from .arrays import load_npy, load_samples
    model = model if isinstance(model, Model) else load_model(model)
    main = model.main
    output_specs = [main.tensors[t] for t in main.outputs]
    if ((labels_path is not None or targets_path is not None or output_index != 0)
            and not 0 <= output_index < len(output_specs)):
        raise InputError(f"--output-index {output_index}: the model has {len(output_specs)} output(s)")
    spec = output_specs[output_index] if 0 <= output_index < len(output_specs) else None
    labels = targets = None
    if labels_path is not None:
        check_classifier(model, output_index, classifier)
        labels = load_npy(labels_path, "labels")
    if targets_path is not None:
        targets = load_npy(targets_path, "targets")
    inputs, _ = load_samples(input_paths, [main.tensors[t] for t in main.inputs], quantize, "--inputs")
    samples = inputs[0].shape[0] if inputs else None
    evaluator = Evaluator(model, target=target, batch=batch, stream=stream,
                          samples=samples_per_job(samples, jobs),
                          max_loop_iterations=max_loop_iterations)
    start = time.perf_counter()
    outputs = evaluator.run(inputs, progress=progress, jobs=jobs)
    seconds = time.perf_counter() - start
    samples = outputs[0].shape[0] if outputs else 0
    result = {
        "samples": samples, "batch": evaluator.batch, "jobs": evaluator.jobs_used, "stream": stream,
        "quantized_inputs": bool(quantize),
        "seconds": seconds,
        "samples_per_s": samples / seconds if seconds > 0 else None,
        "whole_model_per_sample": evaluator.sequential_reason,
        "operators": evaluator.describe(),
        "outputs": [{"index": k, "shape": list(o.shape), "dtype": str(o.dtype)}
                    for k, o in enumerate(outputs)],
        "arrays": outputs,
        "labels": None,
        "regression": None,
    }
    if labels is not None:
        result["labels"] = {"output_index": output_index,
                            **classification_summary(outputs[output_index], labels)}
    if targets is not None:
        result["regression"] = regression_summary(outputs[output_index], targets, spec, output_index)
    return result
