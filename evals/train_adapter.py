"""Fine-tune the planner's encoder for task detection: a low-rank adapter on MiniLM.

    python -m graph_agent.evals.train_adapter --export FILE      # clauses and labels (CPU)
    python evals/train_adapter.py --train FILE --base DIR --human-weight 1 --epochs 12 \
        --out graph_agent/planning/data/task_adapter.npz

The task detector (``planning/task_detector.py``) reads a request with a MiniLM pass. With
the encoder frozen, a linear classifier over its vectors fits TaskBench's train part well
(node F1 89) but generalises less (held-out 78): what the pass says about a clause was
learned for sentence similarity, not for "which tool does this ask for". Fine-tuning the
encoder itself on the same labelled clauses moves that. The stored adapter (trained on
2026-11-27 with ``human_requests_train2.jsonl`` among the human sets, ``--human-weight 1
--epochs 12``) is read beside the base encoder by default (``task_detector.ADAPTER_ENV``
switches it off); figures in the CHANGELOG.

A low-rank adapter (LoRA: ``W + (alpha / r) * B @ A`` on every attention and feed-forward
projection of the six layers) rather than a full copy, so what the repository stores is
small (``ADAPTER``: about 1.5 MB with its head) and the model pack's MiniLM stays the one
base: ``planning/adapted_encoder.py`` merges the adapter into it once and exports the result
to ONNX next to the base export.

Two steps, so the second can run on a machine with a GPU and nothing else of this project:

1. ``--export`` (needs the model pack and TaskBench's data): every training clause as the
   planner cuts and masks it, labelled by aligning it to a gold step with the detector as
   installed (``train_planner.align``), plus the seed phrases and TaskBench's step texts,
   each with its hashed words (``task_detector.lexical``) in sparse form. Only TaskBench's
   *train* part and the human training sets (``train_planner.HUMAN_TRAINING``).
2. ``--train`` (needs torch, transformers and numpy only): fine-tunes the adapter and a
   linear head (span vector, request vector, hashed words -> task) with a fixed seed; on a
   CPU it takes long (hours on two cores), on one GPU about a minute. The stored adapter was
   trained on an H200 from a copy of the base weights in half precision (the device's
   upload limit), so a rerun here gives close, not identical, numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

#: Adapter rank, scale numerator and dropout; the projections it adapts in each layer.
RANK, ALPHA, LORA_DROPOUT = 8, 16, 0.1
#: ("output.dense" is both the attention output and the feed-forward output.)
TARGETS = ("query", "key", "value", "dense")
#: Optimiser settings (AdamW, linear warm-up over a tenth of the steps, then linear decay).
EPOCHS, BATCH, LR_ADAPTER, LR_HEAD, SEED = 8, 32, 5e-4, 2e-3, 0
#: Example weights: as ``train_planner`` weighs them.
SEED_WEIGHT, STEP_WEIGHT, CLAUSE_WEIGHT = 2.0, 0.5, 1.0
#: A clause of a request people wrote counts this many TaskBench clauses: with weight 1
#: the adapter learned TaskBench's long generated requests and lost short ones people type
#: ("who painted the Mona Lisa?" became text-to-image, "tldr pls" entity recognition).
HUMAN_WEIGHT = 3.0


def export(path: Path, data: str | None = None) -> None:
    """Write the training clauses (see the module docstring, step 1) to ``path``."""
    import torch

    from graph_agent.context import default_models_dir
    from graph_agent.evals import taskbench
    from graph_agent.evals import train_planner as tp
    from graph_agent.planning import task_detector as td
    from graph_agent.planning.clauses import split_clauses
    from graph_agent.planning.result_nouns import mask_result_nouns
    from graph_agent.planning.vocabulary import canonical

    torch.set_num_threads(1)
    enc = td.encoder(str(Path(default_models_dir()).expanduser()))
    W, b, labels = td.load_weights()
    records = taskbench.select(taskbench.load_records(data), "train")

    def sparse(text: str) -> list[list[float]]:
        vec = td.lexical(text)
        nz = np.flatnonzero(vec)
        return [nz.tolist(), vec[nz].round(6).tolist()]

    examples: list[dict[str, Any]] = []
    tagged = [(r, CLAUSE_WEIGHT, "taskbench") for r in records]
    tagged += [(r, HUMAN_WEIGHT, "human") for r in tp.human_records(enc)]
    for r, weight, source in tagged:
        nodes = taskbench.parse_nodes(r.get("task_nodes"))
        clauses = split_clauses(r["instruction"])
        if nodes is None or not clauses:
            continue
        gold = [c for n in nodes if (c := canonical(n["task"]))]
        spans = [(c.start, c.end) for c in clauses]
        text = mask_result_nouns(r["instruction"], clauses)
        aligned = tp.align(tp._predict(td.clause_features(enc, text, spans), W, b), gold)
        keep = [i for i, label in enumerate(aligned) if label is not None]
        if keep:
            plain = td.neutral_files(text)
            examples.append(
                {
                    "text": plain,
                    "spans": [spans[i] for i in keep],
                    "labels": [aligned[i] for i in keep],
                    "weights": [weight] * len(keep),
                    "source": source,
                    "lexical": [sparse(plain[spans[i][0] : spans[i][1]]) for i in keep],
                }
            )
    fixed = [(t, label, SEED_WEIGHT) for t, label in tp.seed_examples(data)]
    fixed += [(t, label, STEP_WEIGHT) for t, label in tp.step_examples(records)]
    for text, label, weight in fixed:
        plain = td.neutral_files(text)
        examples.append(
            {
                "text": plain,
                "spans": [(0, len(plain))],
                "labels": [label],
                "weights": [weight],
                "lexical": [sparse(plain)],
            }
        )
    path.write_text(json.dumps({"labels": list(labels), "examples": examples}))
    print(f"{len(examples)} examples -> {path}", file=sys.stderr)


def lora_modules(model: Any) -> dict[str, Any]:
    """The adapted linear layers of a ``BertModel``, by name."""
    import torch

    return {
        name: module
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear)
        and ".layer." in name
        and any(name.endswith(t) for t in TARGETS)
    }


def train(
    data: Path,
    base: Path,
    out: Path,
    device: str | None = None,
    human_weight: float | None = None,
    epochs: int = EPOCHS,
) -> None:
    """Fine-tune the adapter and head on ``data`` (``export``'s file) over the MiniLM in
    ``base``; write them to ``out`` (npz: ``A.<module>``, ``B.<module>``, head, labels).

    ``human_weight`` replaces the exported weight of the clauses of people's requests
    (``HUMAN_WEIGHT``), so one export serves a comparison of weights."""
    import torch
    from torch import nn
    from transformers import AutoTokenizer, BertModel

    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    raw = json.loads(data.read_text())
    labels: list[str] = raw["labels"]
    index = {label: i for i, label in enumerate(labels)}
    examples = raw["examples"]
    if human_weight is not None:
        for ex in examples:
            if ex.get("source") == "human":
                ex["weights"] = [human_weight] * len(ex["weights"])
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = BertModel.from_pretrained(base, add_pooling_layer=False, attn_implementation="eager")
    model = model.to(device).float()
    for p in model.parameters():
        p.requires_grad = False

    class LoRA(nn.Module):
        """``linear(x) + (ALPHA / RANK) * B(A(dropout(x)))``; B starts at zero."""

        def __init__(self, linear: nn.Linear) -> None:
            super().__init__()
            self.linear = linear
            # As peft starts LoRA (kaiming-uniform, a = sqrt(5)): a start 7x larger
            # (normal, std 1/sqrt(RANK)) fitted the train part closer and generalised
            # worse (held-out node F1 76.98 against 79.10 with the head alone, on an
            # encoder with the adapter merged and the linear classifier retrained on it).
            bound = 1 / math.sqrt(linear.in_features)
            self.A = nn.Parameter(torch.empty(RANK, linear.in_features).uniform_(-bound, bound))
            self.B = nn.Parameter(torch.zeros(linear.out_features, RANK))
            self.drop = nn.Dropout(LORA_DROPOUT)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x) + (ALPHA / RANK) * (self.drop(x) @ self.A.T @ self.B.T)

    adapters: dict[str, LoRA] = {}
    for name, linear in lora_modules(model).items():
        parent, _, attr = name.rpartition(".")
        adapters[name] = LoRA(linear)
        setattr(model.get_submodule(parent), attr, adapters[name])
    model.to(device)
    width = model.config.hidden_size
    k = len(labels)
    head = nn.ModuleDict(
        {"dense": nn.Linear(2 * width, k), "lexical": nn.Linear(LEXICAL_DIM, k, bias=False)}
    ).to(device)
    drop = nn.Dropout(0.1)
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for a in adapters.values() for p in (a.A, a.B)], "lr": LR_ADAPTER},
            {"params": head.parameters(), "lr": LR_HEAD, "weight_decay": 1e-4},
        ],
        weight_decay=0.01,
    )
    steps = epochs * math.ceil(len(examples) / BATCH)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda i: min(1.0, (i + 1) / (0.1 * steps)) * max(0.0, (steps - i) / steps)
    )

    def lexical_rows(batch: list[dict[str, Any]]) -> torch.Tensor:
        rows = [lex for ex in batch for lex in ex["lexical"]]
        dense = torch.zeros(len(rows), LEXICAL_DIM)
        for i, (idx, val) in enumerate(rows):
            dense[i, idx] = torch.tensor(val)
        return dense.to(device)

    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        head.train()
        total = 0.0
        order = rng.permutation(len(examples))
        for start in range(0, len(order), BATCH):
            batch = [examples[j] for j in order[start : start + BATCH]]
            vectors = span_vectors(model, tokenizer, batch, device)
            logits = head["dense"](drop(vectors)) + head["lexical"](lexical_rows(batch))
            y = torch.tensor([index[lab] for ex in batch for lab in ex["labels"]], device=device)
            w = torch.tensor([x for ex in batch for x in ex["weights"]], device=device)
            loss = (nn.functional.cross_entropy(logits, y, reduction="none") * w).sum() / w.sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        print(f"epoch {epoch} loss {total:.2f} ({time.perf_counter() - t0:.0f} s)", flush=True)
    arrays: dict[str, np.ndarray] = {"labels": np.array(labels)}
    for name, a in adapters.items():
        arrays[f"A.{name}"] = a.A.detach().cpu().numpy().astype(np.float32)
        arrays[f"B.{name}"] = a.B.detach().cpu().numpy().astype(np.float32)
    arrays["head_W"] = head["dense"].weight.detach().cpu().numpy().T.astype(np.float32)
    arrays["head_b"] = head["dense"].bias.detach().cpu().numpy().astype(np.float32)
    arrays["head_lexical"] = head["lexical"].weight.detach().cpu().numpy().T.astype(np.float32)
    arrays["scale"] = np.float32(ALPHA / RANK)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"adapter for {len(adapters)} projections -> {out}", flush=True)


#: Width of the hashed-word features (``task_detector.LEXICAL_DIM``; repeated here so this
#: file runs where graph-agent is not installed, and checked equal by the tests).
LEXICAL_DIM = 2048


def span_vectors(model: Any, tokenizer: Any, batch: list[dict[str, Any]], device: str) -> Any:
    """Per span: the mean of its tokens' last-layer vectors beside half the mean over the
    whole text's tokens ([CLS] and [SEP] left out), as ``task_detector`` computes them."""
    import torch

    enc = tokenizer(
        [ex["text"] for ex in batch],
        padding=True,
        truncation=True,
        max_length=512,
        return_offsets_mapping=True,
        return_tensors="pt",
    )
    offsets = enc.pop("offset_mapping")
    hidden = model(**{k: v.to(device) for k, v in enc.items()}).last_hidden_state
    real = (offsets[..., 1] > offsets[..., 0]).to(device)
    rows = []
    for b, ex in enumerate(batch):
        whole = real[b].float()
        request = (hidden[b] * whole[:, None]).sum(0) / whole.sum().clamp(min=1)
        for s, e in ex["spans"]:
            inside = ((offsets[b, :, 0] < e) & (offsets[b, :, 1] > s)).to(device) & real[b]
            m = inside.float() if bool(inside.any()) else whole
            rows.append(torch.cat([(hidden[b] * m[:, None]).sum(0) / m.sum(), 0.5 * request]))
    return torch.stack(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--export", type=Path, help="write the training clauses here")
    ap.add_argument("--data", default=None, help="TaskBench dir (default ../shared/...)")
    ap.add_argument("--train", type=Path, help="train on this exported file")
    ap.add_argument("--base", type=Path, help="the base MiniLM directory")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument(
        "--human-weight", type=float, default=None, help="override HUMAN_WEIGHT at training"
    )
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    args = ap.parse_args(argv)
    if args.export:
        export(args.export, args.data)
    if args.train:
        if not args.base or not args.out:
            ap.error("--train needs --base and --out")
        train(args.train, args.base, args.out, args.device, args.human_weight, args.epochs)
    if not (args.export or args.train):
        ap.error("give --export FILE, --train FILE, or both")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
