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


def load_inputs(paths: Sequence[str]) -> List[np.ndarray]:
    """One ``.npy`` array per model input (samples on the first axis)."""
    from .arrays import load_npy
    return [load_npy(path, f"input {k}") for k, path in enumerate(paths)]


def run_evaluation(model, input_paths: Sequence[str], *, target: str, batch: Optional[int],
                   stream: bool, labels_path: Optional[str] = None, output_index: int = 0,
                   progress: Optional[Callable[[int, int], None]] = None, jobs: int = 1,
                   max_loop_iterations: Optional[int] = None) -> Dict:
    """Everything ``micro-runtime eval`` reports, as a dictionary (the output arrays
    themselves under ``arrays``). ``progress(done, total)`` follows the samples;
    ``jobs``: worker processes (0: one per processor)."""
    from ..batched import Evaluator, samples_per_job
    inputs = load_inputs(input_paths)
    samples = inputs[0].shape[0] if inputs and inputs[0].ndim else None
    evaluator = Evaluator(model, target=target, batch=batch, stream=stream,
                          samples=samples_per_job(samples, jobs),
                          max_loop_iterations=max_loop_iterations)
    if len(inputs) != len(evaluator.input_specs):
        raise InputError(f"the model has {len(evaluator.input_specs)} input(s); got {len(inputs)} "
                         "--inputs file(s)")
    labels = None
    if labels_path is not None:
        from .arrays import load_npy
        labels = load_npy(labels_path, "labels")
        if not 0 <= output_index < len(evaluator.output_specs):
            raise InputError(f"--output-index {output_index}: the model has "
                             f"{len(evaluator.output_specs)} output(s)")
    start = time.perf_counter()
    outputs = evaluator.run(inputs, progress=progress, jobs=jobs)
    seconds = time.perf_counter() - start
    samples = outputs[0].shape[0] if outputs else 0
    result = {
        "samples": samples, "batch": evaluator.batch, "jobs": evaluator.jobs_used, "stream": stream,
        "seconds": seconds,
        "samples_per_s": samples / seconds if seconds > 0 else None,
        "whole_model_per_sample": evaluator.sequential_reason,
        "operators": evaluator.describe(),
        "outputs": [{"index": k, "shape": list(o.shape), "dtype": str(o.dtype)}
                    for k, o in enumerate(outputs)],
        "arrays": outputs,
        "labels": None,
    }
    if labels is not None:
        result["labels"] = {"output_index": output_index,
                            **classification_summary(outputs[output_index], labels)}
    return result
