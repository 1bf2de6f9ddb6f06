"""Benchmark results parsed from a card's ``model-index`` front matter.

The ``model-index`` block is the one machine-readable place where Hub cards report scores::

    model-index:
    - name: my-model
      results:
      - task: {type: automatic-speech-recognition}
        dataset: {name: Common Voice 11 (en), type: mozilla-foundation/common_voice_11_0,
                  config: en, split: test}
        metrics:
        - {type: wer, name: Test WER, value: 9.2}

Selection honours "best on dataset X by metric Y", which needs each metric's direction (a lower
WER is better, a higher accuracy is better); :func:`higher_is_better` decides it from the metric's
type and name. Authors write the block by hand, so the parser accepts a dict instead of a list,
numbers as strings ("72%", "0.91 ± 0.01") and missing pieces, and skips what it cannot read
rather than failing the whole card.

Values are kept on the scale the card states, except that a string with "%" is divided by 100.
Hub cards mix 0-1 and 0-100 scales for the same metric, so comparing two cards is only as
consistent as their authors were.
"""

from __future__ import annotations

import math
import re
from typing import Any

from graph_agent.retrieval_index.cards import Benchmark

#: Metric words that mean "lower is better": error rates, losses, distances, perplexity.
LOWER_IS_BETTER_WORDS: frozenset[str] = frozenset(
    {
        "wer", "cer", "mer", "wil", "ter", "der", "eer", "loss",
        "perplexity", "ppl", "mae", "mse", "rmse", "msle", "rmsle", "mape", "smape", "nll",
        "error", "errors", "err", "fid", "kid", "fad", "lpips", "bpc", "bpb", "bits_per_byte",
        "bits_per_character", "latency", "distance", "chamfer", "abs_rel", "sq_rel", "absrel",
        "sqrel", "log_rmse", "epe", "hter", "miss_rate", "brier",
    }
)  # fmt: skip

#: Whole metric strings that contain a lower-is-better word but are not (TER is also a
#: word inside "inter"; "1 - wer" style metrics are rare and left to the words above).
_HIGHER_DESPITE_WORDS: frozenset[str] = frozenset({"accuracy", "error_reduction"})

_NUMBER = re.compile(
    r"^\s*([-+]?(?:\d+(?:[.,]\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(%)?\s*(?:(?:±|\+/-|\+-|\().*)?$"
)


def _words(text: str) -> set[str]:
    """Lowercase tokens of a metric type or name, split on anything but letters and digits."""
    lowered = text.lower()
    tokens = set(re.split(r"[^a-z0-9]+", lowered)) - {""}
    return tokens | {re.sub(r"[^a-z0-9]+", "_", lowered).strip("_")}


def higher_is_better(metric: str, name: str | None = None) -> bool:
    """Whether a larger value of this metric means a better model.

    Lower is better for error rates (WER, CER, TER ...), losses, perplexity, regression
    errors (MAE, MSE, RMSE), image-generation distances (FID, KID, LPIPS) and latency;
    everything else (accuracy, F1, BLEU, ROUGE, mAP, recall@k ...) is higher-is-better.
    """
    words = _words(metric) | (_words(name) if name else set())
    if words & _HIGHER_DESPITE_WORDS and not words & {"wer", "cer", "loss"}:
        return True
    return not (words & LOWER_IS_BETTER_WORDS)


def parse_value(value: Any) -> float | None:
    """A metric value as a float, or None when it is not a finite number.

    Accepts numbers and strings such as "0.91", "91.2%", "12,5", "0.91 ± 0.01" and
    "12.3 (test)". A bool is not a number here, though YAML and Python treat it as one.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        m = _NUMBER.match(value)
        if not m:
            return None
        number = float(m.group(1).replace(",", "."))
        if m.group(2):
            number /= 100.0
    else:
        return None
    return number if math.isfinite(number) else None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def parse_model_index(model_index: Any) -> list[Benchmark]:
    """Every readable (dataset, metric, value) in a ``model-index`` block.

    A result without a dataset, a metric without a type or name, and a value that is not a
    number are skipped; the rest of the card still counts. Duplicates (the same dataset,
    config, split, metric and name) keep the first value.
    """
    out: list[Benchmark] = []
    seen: set[tuple[Any, ...]] = set()
    for entry in _as_list(model_index):
        if not isinstance(entry, dict):
            continue
        for result in _as_list(entry.get("results")):
            if not isinstance(result, dict):
                continue
            dataset = result.get("dataset") if isinstance(result.get("dataset"), dict) else {}
            dataset_id = _text(dataset.get("type"))
            dataset_name = _text(dataset.get("name")) or dataset_id
            if not dataset_name:
                continue
            task_info = result.get("task") if isinstance(result.get("task"), dict) else {}
            task = _text(task_info.get("type"))
            for metric in _as_list(result.get("metrics")):
                if not isinstance(metric, dict):
                    continue
                mtype = _text(metric.get("type"))
                mname = _text(metric.get("name"))
                value = parse_value(metric.get("value"))
                if not (mtype or mname) or value is None:
                    continue
                metric_id = (mtype or mname or "").lower()
                bench = Benchmark(
                    dataset=dataset_name,
                    metric=metric_id,
                    value=value,
                    higher_is_better=higher_is_better(metric_id, mname),
                    name=mname,
                    dataset_id=dataset_id,
                    config=_text(dataset.get("config")),
                    split=_text(dataset.get("split")),
                    task=task,
                )
                key = (bench.dataset, bench.config, bench.split, bench.metric, bench.name)
                if key not in seen:
                    seen.add(key)
                    out.append(bench)
    return out
