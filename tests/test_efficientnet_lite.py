"""Tests for the EfficientNet-Lite0 -> transformers converter.

The core claim is exactness: a plain-torch Lite0 forward pass written here straight from the
checkpoint's state dict (TF "SAME" padding, BatchNorm eps 1e-3, ReLU6, no squeeze-excite,
residual when shapes allow) must give the same logits as the converted
``EfficientNetForImageClassification``. The reference is deliberately independent of
transformers so that a wrong config knob (activation, padding, SE, pooling) shows up here.
"""

from __future__ import annotations

import math
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image
from transformers import EfficientNetForImageClassification

from graph_agent.tools.model_pack import efficientnet_lite as lite

MAX_LOGIT_DIFF = 1e-5
BN_EPS = 1e-3  # tensorflow/tpu efficientnet batch_norm_epsilon

# EfficientNet-Lite0 blocks in TF block-string notation (tensorflow/tpu lite builder minus SE);
# kept separate from the module's own table so the test does not just echo the implementation.
LITE0_BLOCKS = (
    "r1_k3_s11_e1_i32_o16",
    "r2_k3_s22_e6_i16_o24",
    "r2_k5_s22_e6_i24_o40",
    "r3_k3_s22_e6_i40_o80",
    "r3_k5_s11_e6_i80_o112",
    "r4_k5_s22_e6_i112_o192",
    "r1_k3_s11_e6_i192_o320",
)

# Labels a good ImageNet classifier gives the Grace Hopper portrait (dress uniform, tie, ...).
PLAUSIBLE_HOPPER = (
    "military uniform",
    "suit",
    "bow tie",
    "Windsor tie",
    "academic gown",
    "mortarboard",
    "vestment",
    "pickelhaube",
    "trench coat",
    "cloak",
    "lab coat",
    "bulletproof vest",
    "bearskin",
)


def _decode(block: str) -> dict[str, int]:
    parts = {p[0]: p[1:] for p in block.split("_")}
    return {
        "repeats": int(parts["r"]),
        "kernel": int(parts["k"]),
        "stride": int(parts["s"][0]),
        "expand": int(parts["e"]),
        "cin": int(parts["i"]),
        "cout": int(parts["o"]),
    }


def _lite0_blocks() -> list[dict[str, int]]:
    """Unrolled per-block arguments (16 blocks for Lite0)."""
    blocks = []
    for stage in map(_decode, LITE0_BLOCKS):
        for j in range(stage["repeats"]):
            blocks.append(
                {
                    "kernel": stage["kernel"],
                    "stride": stage["stride"] if j == 0 else 1,
                    "expand": stage["expand"],
                    "cin": stage["cin"] if j == 0 else stage["cout"],
                    "cout": stage["cout"],
                }
            )
    return blocks


# ----------------------------------------------------------------------------- reference model


def _tf_same_pad(x: torch.Tensor, kernel: int, stride: int) -> torch.Tensor:
    """Zero-pad like TensorFlow's padding='SAME' (extra pixel goes right/bottom)."""
    ih, iw = x.shape[-2:]
    pad_h = max((math.ceil(ih / stride) - 1) * stride + kernel - ih, 0)
    pad_w = max((math.ceil(iw / stride) - 1) * stride + kernel - iw, 0)
    return F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])


def _conv_bn(
    x: torch.Tensor,
    sd: dict[str, torch.Tensor],
    conv: str,
    bn: str,
    *,
    stride: int = 1,
    depthwise: bool = False,
    act: bool = True,
) -> torch.Tensor:
    weight = sd[f"{conv}.weight"]
    groups = x.shape[1] if depthwise else 1
    x = F.conv2d(_tf_same_pad(x, weight.shape[-1], stride), weight, stride=stride, groups=groups)
    x = F.batch_norm(
        x,
        sd[f"{bn}.running_mean"],
        sd[f"{bn}.running_var"],
        sd[f"{bn}.weight"],
        sd[f"{bn}.bias"],
        training=False,
        eps=BN_EPS,
    )
    return F.relu6(x) if act else x


def reference_lite0_forward(sd: dict[str, torch.Tensor], pixels: torch.Tensor) -> torch.Tensor:
    """EfficientNet-Lite0 inference straight from a lukemelas-style state dict."""
    x = _conv_bn(pixels, sd, "_conv_stem", "_bn0", stride=2)
    for i, blk in enumerate(_lite0_blocks()):
        p = f"_blocks.{i}"
        inputs = x
        if blk["expand"] != 1:
            x = _conv_bn(x, sd, f"{p}._expand_conv", f"{p}._bn0")
        x = _conv_bn(
            x, sd, f"{p}._depthwise_conv", f"{p}._bn1", stride=blk["stride"], depthwise=True
        )
        x = _conv_bn(x, sd, f"{p}._project_conv", f"{p}._bn2", act=False)
        if blk["stride"] == 1 and blk["cin"] == blk["cout"]:
            x = x + inputs
    x = _conv_bn(x, sd, "_conv_head", "_bn1")
    return F.linear(x.mean(dim=(2, 3)), sd["_fc.weight"], sd["_fc.bias"])


def random_lite0_state_dict(num_classes: int = 1000, seed: int = 0) -> dict[str, torch.Tensor]:
    """A Lite0-shaped state dict with random weights and non-trivial BatchNorm statistics."""
    gen = torch.Generator().manual_seed(seed)
    sd: dict[str, torch.Tensor] = {}

    def conv(name: str, cout: int, cin_per_group: int, k: int) -> None:
        fan_in = cin_per_group * k * k
        sd[f"{name}.weight"] = (
            torch.randn(cout, cin_per_group, k, k, generator=gen) * (2.0 / fan_in) ** 0.5
        )

    def bn(name: str, c: int) -> None:
        sd[f"{name}.weight"] = 0.5 + torch.rand(c, generator=gen)
        sd[f"{name}.bias"] = 0.1 * torch.randn(c, generator=gen)
        sd[f"{name}.running_mean"] = 0.1 * torch.randn(c, generator=gen)
        sd[f"{name}.running_var"] = 0.5 + torch.rand(c, generator=gen)
        sd[f"{name}.num_batches_tracked"] = torch.tensor(0, dtype=torch.int64)

    conv("_conv_stem", 32, 3, 3)
    bn("_bn0", 32)
    for i, blk in enumerate(_lite0_blocks()):
        p = f"_blocks.{i}"
        hidden = blk["cin"] * blk["expand"]
        if blk["expand"] != 1:
            conv(f"{p}._expand_conv", hidden, blk["cin"], 1)
            bn(f"{p}._bn0", hidden)
        conv(f"{p}._depthwise_conv", hidden, 1, blk["kernel"])
        bn(f"{p}._bn1", hidden)
        conv(f"{p}._project_conv", blk["cout"], hidden, 1)
        bn(f"{p}._bn2", blk["cout"])
    conv("_conv_head", 1280, 320, 1)
    bn("_bn1", 1280)
    sd["_fc.weight"] = 0.05 * torch.randn(num_classes, 1280, generator=gen)
    sd["_fc.bias"] = 0.01 * torch.randn(num_classes, generator=gen)
    return sd


def _fake_labels(n: int = 1000) -> list[str]:
    return [f"class {i}" for i in range(n)]


@pytest.fixture(scope="module")
def random_sd() -> dict[str, torch.Tensor]:
    return random_lite0_state_dict()


@pytest.fixture(scope="module")
def converted_random(
    tmp_path_factory: pytest.TempPathFactory, random_sd: dict[str, torch.Tensor]
) -> Path:
    """The random state dict saved as .pth and run through the public converter."""
    root = tmp_path_factory.mktemp("lite0_random")
    pth = root / "lite0.pth"
    torch.save(random_sd, pth)
    out = root / "model"
    out.mkdir()
    lite.convert_efficientnet_lite0(pth, _fake_labels(), out)
    return out


# ----------------------------------------------------------------------------- exactness


def test_reference_forward_is_well_conditioned(random_sd: dict[str, torch.Tensor]) -> None:
    """Guard the exactness test against a degenerate input (all-zero or exploding logits)."""
    x = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = reference_lite0_forward(random_sd, x)
    assert logits.shape == (2, 1000)
    assert torch.isfinite(logits).all()
    assert 0.05 < logits.std().item() < 1e3


def test_converted_logits_match_reference(
    converted_random: Path, random_sd: dict[str, torch.Tensor]
) -> None:
    model = EfficientNetForImageClassification.from_pretrained(converted_random).eval()
    x = torch.randn(3, 3, 224, 224, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = reference_lite0_forward(random_sd, x)
        actual = model(pixel_values=x).logits
    diff = (actual - expected).abs().max().item()
    print(f"max |logit diff| (random Lite0 weights): {diff:.3e}")
    assert diff <= MAX_LOGIT_DIFF


def test_squeeze_excite_is_exact_identity(converted_random: Path) -> None:
    """transformers always builds SE; the converter must make every one a bit-exact no-op."""
    model = EfficientNetForImageClassification.from_pretrained(converted_random).eval()
    blocks = model.efficientnet.encoder.blocks
    assert len(blocks) == 16
    gen = torch.Generator().manual_seed(3)
    for block in blocks:
        se = block.squeeze_excite
        assert se.expand.out_channels == se.reduce.in_channels
        x = torch.randn(2, se.reduce.in_channels, 7, 7, generator=gen) * 10
        with torch.no_grad():
            assert torch.equal(se(x), x)


def test_config_and_preprocessor(converted_random: Path) -> None:
    model = EfficientNetForImageClassification.from_pretrained(converted_random)
    cfg = model.config
    assert cfg.hidden_act == "relu6"
    assert cfg.hidden_dim == 1280
    assert cfg.batch_norm_eps == pytest.approx(1e-3)
    assert cfg.num_labels == 1000
    assert cfg.id2label[7] == "class 7"
    assert cfg.label2id["class 7"] == 7

    from transformers import AutoImageProcessor

    proc = AutoImageProcessor.from_pretrained(converted_random)
    # (x - 127) / 128 on 0..255 pixels, single normalisation (include_top off), 224x224 crop.
    white = Image.new("RGB", (320, 240), (255, 255, 255))
    black = Image.new("RGB", (240, 320), (0, 0, 0))
    pixels = proc(images=[white, black], return_tensors="pt")["pixel_values"]
    assert pixels.shape == (2, 3, 224, 224)
    torch.testing.assert_close(pixels[0], torch.full((3, 224, 224), 1.0))
    torch.testing.assert_close(pixels[1], torch.full((3, 224, 224), -127 / 128))


def test_output_files(converted_random: Path) -> None:
    names = {p.name for p in converted_random.iterdir()}
    assert {"config.json", "model.safetensors", "preprocessor_config.json"} <= names


# ----------------------------------------------------------------------------- errors


def _save(sd: dict[str, torch.Tensor], tmp_path: Path) -> tuple[Path, Path]:
    pth = tmp_path / "ckpt.pth"
    torch.save(sd, pth)
    out = tmp_path / "out"
    out.mkdir()
    return pth, out


def test_unexpected_key_is_named(tmp_path: Path, random_sd: dict[str, torch.Tensor]) -> None:
    sd = dict(random_sd)
    sd["_blocks.0._se_reduce.weight"] = torch.zeros(8, 32, 1, 1)  # an EfficientNet-B0 key
    pth, out = _save(sd, tmp_path)
    with pytest.raises(ValueError, match=r"_blocks\.0\._se_reduce\.weight"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(), out)


def test_missing_key_is_named(tmp_path: Path, random_sd: dict[str, torch.Tensor]) -> None:
    sd = dict(random_sd)
    del sd["_blocks.5._bn1.running_var"]
    pth, out = _save(sd, tmp_path)
    with pytest.raises(ValueError, match=r"_blocks\.5\._bn1\.running_var"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(), out)


def test_shape_mismatch_is_named(tmp_path: Path, random_sd: dict[str, torch.Tensor]) -> None:
    sd = dict(random_sd)
    sd["_blocks.3._depthwise_conv.weight"] = torch.zeros(144, 1, 3, 3)  # Lite0 has k=5 here
    pth, out = _save(sd, tmp_path)
    with pytest.raises(ValueError, match=r"_blocks\.3\._depthwise_conv\.weight"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(), out)


def test_label_count_must_match_classifier(
    tmp_path: Path, random_sd: dict[str, torch.Tensor]
) -> None:
    pth, out = _save(random_sd, tmp_path)
    with pytest.raises(ValueError, match="labels"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(999), out)


def test_duplicate_labels_rejected(tmp_path: Path, random_sd: dict[str, torch.Tensor]) -> None:
    pth, out = _save(random_sd, tmp_path)
    labels = _fake_labels()
    labels[517] = labels[134]
    with pytest.raises(ValueError, match="class 134"):
        lite.convert_efficientnet_lite0(pth, labels, out)


def test_out_dir_must_be_empty(tmp_path: Path, random_sd: dict[str, torch.Tensor]) -> None:
    pth, out = _save(random_sd, tmp_path)
    (out / "leftover.txt").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(), out)


class _CallsOnLoad:
    """Pickles as "call os.getpid() when loaded": stands in for a malicious checkpoint."""

    def __reduce__(self) -> tuple[Callable[[], int], tuple[()]]:
        return (os.getpid, ())


def test_pickled_code_is_refused(tmp_path: Path) -> None:
    """weights_only loading: a checkpoint that would run code on load must be rejected."""
    pth = tmp_path / "evil.pth"
    torch.save({"_conv_stem.weight": _CallsOnLoad()}, pth)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ValueError, match="weights-only"):
        lite.convert_efficientnet_lite0(pth, _fake_labels(), out)


# ----------------------------------------------------------------------------- labels


def _fake_timm_wheel(tmp_path: Path) -> Path:
    synsets = [f"n{i:08d}" for i in range(1000)]
    lemmas = {s: f"thing {i}, thingy" for i, s in enumerate(synsets)}
    lemmas[synsets[134]] = "crane"
    lemmas[synsets[517]] = "crane"
    wheel = tmp_path / "timm-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("timm/data/_info/imagenet_synsets.txt", "\n".join(synsets) + "\n")
        zf.writestr(
            "timm/data/_info/imagenet_synset_to_lemma.txt",
            "n99999999\tunused, extra synset\n"
            + "".join(f"{s}\t{lemmas[s]}\n" for s in reversed(synsets)),
        )
    return wheel


def test_labels_from_timm_wheel(tmp_path: Path) -> None:
    labels = lite.imagenet_labels_from_timm_wheel(_fake_timm_wheel(tmp_path))
    assert len(labels) == 1000
    assert labels[0] == "thing 0, thingy"
    assert labels[999] == "thing 999, thingy"
    assert labels[134] == "crane (n00000134)"
    assert labels[517] == "crane (n00000517)"
    assert len(set(labels)) == 1000


def test_labels_from_non_timm_zip(tmp_path: Path) -> None:
    wheel = tmp_path / "other-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("other/__init__.py", "")
    with pytest.raises(ValueError, match="imagenet"):
        lite.imagenet_labels_from_timm_wheel(wheel)


# ----------------------------------------------------------------------------- real weights


def _state_dict_back_from_hf(model: EfficientNetForImageClassification) -> dict[str, torch.Tensor]:
    """Rebuild the original-style state dict from a converted model (inverse key map)."""
    hf = model.state_dict()
    return {src: hf[dst] for src, dst in lite._key_map().items()}


def test_real_lite0_classifies_grace_hopper(
    pack_model_dir: Callable[[str], Path], sample_photo: Path
) -> None:
    from transformers import pipeline

    model_dir = pack_model_dir("efficientnet-lite0")
    clf = pipeline("image-classification", model=str(model_dir), device="cpu")
    top5 = clf(str(sample_photo), top_k=5)
    labels = [r["label"] for r in top5]
    print("top-5:", [(r["label"], round(r["score"], 4)) for r in top5])

    def plausible(label: str) -> bool:
        names = {part.strip() for part in label.split(",")}
        return any(p in names for p in PLAUSIBLE_HOPPER)

    assert plausible(labels[0]), labels
    assert sum(map(plausible, labels)) >= 3, labels
    assert "military uniform" in labels, labels
    assert clf.model.config.hidden_act == "relu6"

    # Same weights through the independent reference: the pipeline's own model is exact too.
    pixels = clf.image_processor(
        images=Image.open(sample_photo).convert("RGB"), return_tensors="pt"
    )["pixel_values"]
    model = clf.model.eval()
    with torch.no_grad():
        actual = model(pixel_values=pixels).logits
        expected = reference_lite0_forward(_state_dict_back_from_hf(model), pixels)
    diff = (actual - expected).abs().max().item()
    print(f"max |logit diff| (real Lite0 weights, photo): {diff:.3e}")
    assert diff <= MAX_LOGIT_DIFF
    assert model.config.id2label[int(actual.argmax())] == labels[0]
