"""Tiny random models for testing tool wrappers offline.

Each ``build_tiny_<task>(out_dir)`` builds a randomly initialised model a few layers deep
(hidden size 16-32) with the tokenizer / image processor its pipeline needs, saves it into
``out_dir`` and returns ``out_dir``, so ``transformers.pipeline(<loader>, model=out_dir)``
loads it with no network. Nothing is downloaded: vocabularies are written here, and image
processors use the PIL backends (no torchvision, no timm). Outputs are gibberish by design;
these models test the wrappers' contracts, not their answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

#: Small word-level vocabulary shared by the text tokenizers; BERT specials come first.
_VOCAB_TEXT = """
a an the is are was of in on at to and or what how many where who which color colour
picture image photo shows there dog cat person car tree red blue green sky
john smith paris london lives works visited went met yesterday today describe this
one two three sentence words yes no hello world read aloud please
"""
_WORDS = _VOCAB_TEXT.split()
_BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_PUNCT = list(".,?!'\":;-")
_NER_LABELS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")


def _seed() -> None:
    """Fixed weights, so a failing test fails the same way every run."""
    torch.manual_seed(0)


def _bert_tokenizer(out_dir: Path, model_max_length: int = 64):
    """A fast BERT WordPiece tokenizer over a small vocabulary written into ``out_dir``."""
    from transformers import BertTokenizerFast

    out_dir.mkdir(parents=True, exist_ok=True)
    vocab = out_dir / "vocab.txt"
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces = [f"##{c}" for c in letters]
    tokens = _BERT_SPECIALS + _PUNCT + letters + pieces + _WORDS
    vocab.write_text("\n".join(dict.fromkeys(tokens)) + "\n", encoding="utf-8")
    return BertTokenizerFast(
        vocab_file=str(vocab), do_lower_case=True, model_max_length=model_max_length
    )


def build_tiny_token_classification(out_dir: Path) -> Path:
    """BERT with a five-tag NER head (O, B/I-PER, B/I-LOC)."""
    from transformers import BertConfig, BertForTokenClassification

    _seed()
    tokenizer = _bert_tokenizer(out_dir)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        id2label=dict(enumerate(_NER_LABELS)),
        label2id={label: i for i, label in enumerate(_NER_LABELS)},
    )
    BertForTokenClassification(config).eval().save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def build_tiny_object_detection(out_dir: Path) -> Path:
    """YOLOS: a plain ViT with detection tokens, so no backbone library is needed."""
    from transformers import YolosConfig, YolosForObjectDetection
    from transformers.models.yolos.image_processing_pil_yolos import YolosImageProcessorPil

    _seed()
    labels = ("person", "dog", "cat")
    config = YolosConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        image_size=[64, 64],
        patch_size=16,
        num_detection_tokens=8,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    YolosForObjectDetection(config).eval().save_pretrained(out_dir)
    YolosImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 64}).save_pretrained(out_dir)
    return out_dir


def build_tiny_depth_estimation(out_dir: Path) -> Path:
    """DPT on its own ViT encoder (not the hybrid BiT one, which would need a backbone)."""
    from transformers import DPTConfig, DPTForDepthEstimation
    from transformers.models.dpt.image_processing_pil_dpt import DPTImageProcessorPil

    _seed()
    config = DPTConfig(
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=37,
        image_size=64,
        patch_size=16,
        is_hybrid=False,
        backbone_out_indices=[0, 1, 2, 3],
        neck_hidden_sizes=[16, 16, 16, 16],
        fusion_hidden_size=16,
        reassemble_factors=[4, 2, 1, 0.5],
        head_in_index=-1,
    )
    DPTForDepthEstimation(config).eval().save_pretrained(out_dir)
    DPTImageProcessorPil(size={"height": 64, "width": 64}).save_pretrained(out_dir)
    return out_dir


def build_tiny_visual_question_answering(out_dir: Path) -> Path:
    """ViLT with a small answer vocabulary as its classification head."""
    from transformers import ViltConfig, ViltForQuestionAnswering, ViltProcessor
    from transformers.models.vilt.image_processing_pil_vilt import ViltImageProcessorPil

    _seed()
    tokenizer = _bert_tokenizer(out_dir, model_max_length=40)
    answers = ("yes", "no", "dog", "cat", "two")
    config = ViltConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        image_size=64,
        patch_size=16,
        max_position_embeddings=40,
        max_image_length=-1,
        num_labels=len(answers),
        id2label=dict(enumerate(answers)),
        label2id={a: i for i, a in enumerate(answers)},
    )
    ViltForQuestionAnswering(config).eval().save_pretrained(out_dir)
    image_processor = ViltImageProcessorPil(size={"shortest_edge": 64}, size_divisor=32)
    ViltProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)
    return out_dir


#: A minimal chat template: images become the processor's ``<image>`` placeholder.
_CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: "
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image> {% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _word_level_tokenizer(extra_specials: list[str]):
    """A fast word-level tokenizer (``tokenizers`` library) for a decoder-only LM."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<s>", "</s>", *extra_specials]
    words = [*specials, *dict.fromkeys([*_WORDS, *_PUNCT, "user", "assistant", "system"])]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    backend.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        extra_special_tokens={"image_token": "<image>"},
        chat_template=_CHAT_TEMPLATE,
    )


def build_tiny_image_to_text(out_dir: Path) -> Path:
    """LLaVA: a tiny CLIP vision tower projected into a tiny Llama, with a chat template."""
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    _seed()
    tokenizer = _word_level_tokenizer(["<image>"])
    image_token_id = tokenizer.convert_tokens_to_ids("<image>")
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=32,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=image_token_id,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(out_dir)
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=_CHAT_TEMPLATE,
    )
    processor.save_pretrained(out_dir)
    return out_dir


def build_tiny_text_to_speech(out_dir: Path) -> Path:
    """VITS (a forward-only TTS model) with a character vocabulary and no phonemizer."""
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    _seed()
    out_dir.mkdir(parents=True, exist_ok=True)
    chars = ["<pad>", "<unk>", " ", *_PUNCT, *(chr(c) for c in range(ord("a"), ord("z") + 1))]
    vocab = out_dir / "vocab.json"
    vocab.write_text(json.dumps({c: i for i, c in enumerate(chars)}), encoding="utf-8")
    tokenizer = VitsTokenizer(vocab_file=str(vocab), phonemize=False, add_blank=True)
    config = VitsConfig(
        vocab_size=len(chars),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        ffn_dim=16,
        flow_size=16,
        spectrogram_bins=17,
        upsample_initial_channel=16,
        upsample_rates=[4, 4],
        upsample_kernel_sizes=[8, 8],
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 3]],
        duration_predictor_filter_channels=16,
        duration_predictor_num_flows=2,
        prior_encoder_num_flows=2,
        prior_encoder_num_wavenet_layers=2,
        posterior_encoder_num_wavenet_layers=2,
        depth_separable_num_layers=2,
        sampling_rate=16_000,
        pad_token_id=0,
    )
    VitsModel(config).eval().save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


BUILDERS = {
    "object-detection": build_tiny_object_detection,
    "image-to-text": build_tiny_image_to_text,
    "visual-question-answering": build_tiny_visual_question_answering,
    "depth-estimation": build_tiny_depth_estimation,
    "token-classification": build_tiny_token_classification,
    "text-to-speech": build_tiny_text_to_speech,
}
