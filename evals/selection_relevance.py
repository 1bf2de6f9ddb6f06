"""Top-1 relevance of model selection over HuggingGPT's 673 p0 cards.

The labelled queries below are ours: each names a need and the catalog models that meet it
(read off the p0 catalog by hand). A query scores when the selector's first choice is one of
them. Run:

    python -m graph_agent.evals.selection_relevance [--cards FILE.jsonl] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

WHISPER_MULTI = {
    f"openai/whisper-{s}" for s in ("tiny", "base", "small", "medium", "large", "large-v2")
}
NLLB = {
    "facebook/nllb-200-distilled-600M",
    "facebook/nllb-200-distilled-1.3B",
    "facebook/nllb-200-3.3B",
}

#: (task, query, models that satisfy it)
QUERIES: list[tuple[str, str, set[str]]] = [
    (
        "text-classification",
        "financial sentiment of news headlines",
        {
            "ProsusAI/finbert",
            "yiyanghkust/finbert-tone",
            "mrm8488/distilroberta-finetuned-financial-news-sentiment-analysis",
        },
    ),
    ("text-classification", "flag toxic and abusive comments", {"unitary/toxic-bert"}),
    (
        "text-classification",
        "which language is this text written in",
        {"papluca/xlm-roberta-base-language-detection"},
    ),
    (
        "text-classification",
        "detect the emotion expressed in a tweet",
        {
            "cardiffnlp/twitter-roberta-base-emotion",
            "j-hartmann/emotion-english-distilroberta-base",
            "bhadresh-savani/distilbert-base-uncased-emotion",
            "arpanghoshal/EmoRoBERTa",
            "joeddav/distilbert-base-uncased-go-emotions-student",
            "bhadresh-savani/bert-base-go-emotion",
        },
    ),
    (
        "token-classification",
        "tag diseases and drugs in clinical notes",
        {
            "d4data/biomedical-ner-all",
            "samrawal/bert-base-uncased_clinical-ner",
            "StanfordAIMI/stanford-deidentifier-base",
        },
    ),
    (
        "token-classification",
        "restore missing punctuation in a transcript",
        {"oliverguhr/fullstop-punctuation-multilang-large", "felflare/bert-restore-punctuation"},
    ),
    (
        "token-classification",
        "named entities in French text",
        {
            "Jean-Baptiste/camembert-ner",
            "Jean-Baptiste/camembert-ner-with-dates",
            "cmarkea/distilcamembert-base-ner",
        },
    ),
    (
        "token-classification",
        "extract keyphrases from an abstract",
        {"ml6team/keyphrase-extraction-kbir-inspec", "yanekyuk/bert-uncased-keyword-extractor"},
    ),
    (
        "translation",
        "translate English into German",
        {
            "Helsinki-NLP/opus-mt-en-de",
            "facebook/wmt21-dense-24-wide-en-x",
            *NLLB,
            "t5-small",
            "t5-base",
            "t5-large",
            "t5-3b",
            "t5-11b",
        },
    ),
    (
        "translation",
        "translate Japanese into English",
        {"Helsinki-NLP/opus-mt-ja-en", "staka/fugumt-ja-en", "K024/mt5-zh-ja-en-trimmed", *NLLB},
    ),
    (
        "summarization",
        "summarize a meeting dialogue",
        {
            "knkarthick/MEETING_SUMMARY",
            "philschmid/bart-large-cnn-samsum",
            "lidiya/bart-large-xsum-samsum",
            "linydub/bart-large-samsum",
        },
    ),
    (
        "summarization",
        "summarize a Chinese news article",
        {
            "IDEA-CCNL/Randeng-Pegasus-238M-Summary-Chinese",
            "IDEA-CCNL/Randeng-Pegasus-523M-Summary-Chinese",
            "csebuetnlp/mT5_multilingual_XLSum",
        },
    ),
    (
        "summarization",
        "summarize a whole book chapter by chapter",
        {
            "pszemraj/long-t5-tglobal-base-16384-book-summary",
            "pszemraj/led-large-book-summary",
            "pszemraj/pegasus-x-large-book-summary",
        },
    ),
    (
        "summarization",
        "summarize scientific papers",
        {"google/bigbird-pegasus-large-arxiv", "google/bigbird-pegasus-large-pubmed"},
    ),
    (
        "automatic-speech-recognition",
        "transcribe Spanish speech",
        {
            "jonatasgrosman/wav2vec2-large-xlsr-53-spanish",
            "voidful/wav2vec2-xlsr-multilingual-56",
            *WHISPER_MULTI,
        },
    ),
    (
        "automatic-speech-recognition",
        "who spoke when: speaker diarization",
        {"pyannote/speaker-diarization"},
    ),
    (
        "automatic-speech-recognition",
        "recognize Mandarin Chinese speech",
        {
            "jonatasgrosman/wav2vec2-large-xlsr-53-chinese-zh-cn",
            "ydshieh/wav2vec2-large-xlsr-53-chinese-zh-cn-gpt",
            *WHISPER_MULTI,
        },
    ),
    ("image-classification", "what dish of food is in the photo", {"nateraw/food"}),
    (
        "image-classification",
        "estimate a person's age from a face photo",
        {"nateraw/vit-age-classifier"},
    ),
    (
        "image-classification",
        "is this picture generated by AI",
        {"umm-maybe/AI-image-detector", "saltacc/anime-ai-detect"},
    ),
    (
        "object-detection",
        "detect tables in a scanned document",
        {
            "microsoft/table-transformer-detection",
            "TahaDouaji/detr-doc-table-detection",
            "nielsr/detr-table-detection",
            "keremberke/yolov8s-table-extraction",
            "keremberke/yolov8m-table-extraction",
        },
    ),
    (
        "object-detection",
        "find car license plates",
        {
            "keremberke/yolov5m-license-plate",
            "nickmuchi/yolos-small-finetuned-license-plate-detection",
            "keremberke/yolov5n-license-plate",
            "keremberke/yolov5s-license-plate",
            "nickmuchi/yolos-small-rego-plates-detection",
        },
    ),
    (
        "image-to-text",
        "read handwritten text in an image",
        {
            "microsoft/trocr-base-handwritten",
            "microsoft/trocr-large-handwritten",
            "microsoft/trocr-small-handwritten",
        },
    ),
    (
        "text-to-speech",
        "speak Chinese text aloud",
        {
            "facebook/tts_transformer-zh-cv7_css10",
            "tensorspeech/tts-mb_melgan-baker-ch",
            "tensorspeech/tts-tacotron2-baker-ch",
        },
    ),
    (
        "question-answering",
        "answer questions about a German document",
        {
            "deepset/gelectra-large-germanquad",
            "deepset/gelectra-base-germanquad",
            "deutsche-telekom/bert-multi-english-german-squad2",
        },
    ),
    (
        "audio-classification",
        "recognize the emotion in a speaker's voice",
        {
            "ehcalabres/wav2vec2-lg-xlsr-en-speech-emotion-recognition",
            "speechbrain/emotion-recognition-wav2vec2-IEMOCAP",
            "harshit345/xlsr-wav2vec-speech-emotion-recognition",
            "audeering/wav2vec2-large-robust-12-ft-emotion-msp-dim",
            "superb/hubert-base-superb-er",
            "superb/hubert-large-superb-er",
            "superb/wav2vec2-base-superb-er",
            "Aniemore/wav2vec2-xlsr-53-russian-emotion-recognition",
            "Talha/urdu-audio-emotions",
        },
    ),
    (
        "audio-classification",
        "identify which language is spoken",
        {
            "TalTechNLP/voxlingua107-epaca-tdnn",
            "speechbrain/lang-id-voxlingua107-ecapa",
            "speechbrain/lang-id-commonlanguage_ecapa",
            "anton-l/wav2vec2-base-lang-id",
            "sahita/language-identification",
            "TalTechNLP/voxlingua107-epaca-tdnn-ce",
        },
    ),
    (
        "image-segmentation",
        "segment the clothes a person wears",
        {"mattmdjaga/segformer_b2_clothes"},
    ),
    (
        "image-segmentation",
        "find potholes in road photos",
        {
            "keremberke/yolov8n-pothole-segmentation",
            "keremberke/yolov8s-pothole-segmentation",
            "keremberke/yolov8m-pothole-segmentation",
        },
    ),
]

DEFAULT_CARDS = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "benchmarks"
    / "hugginggpt"
    / "p0_models.jsonl"
)


def open_p0_index(cards: Path, where: Path, models_dir: Path):
    """A catalog + index of ``cards`` in ``where`` (built once, reused while unchanged)."""
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.embedder import Embedder
    from graph_agent.retrieval_index.index import CardIndex
    from graph_agent.retrieval_index.ingest import ingest_jsonl

    catalog = Catalog.in_models_dir(where)
    ingest_jsonl(cards, catalog)
    index = CardIndex(where, catalog, Embedder(models_dir))
    index.ensure()
    return index


def evaluate(index) -> dict[str, Any]:
    """Top-1 and top-3 hit rates over ``QUERIES``, plus the task-purity check."""
    from graph_agent.retrieval_index.search import Constraints, select

    anywhere = Constraints(runnable_only=False)
    rows = []
    for task, query, good in QUERIES:
        ranked = [c.id for c in select(index, task, query, anywhere).candidates]
        rows.append(
            {
                "task": task,
                "query": query,
                "top1": ranked[0] if ranked else None,
                "hit1": bool(ranked) and ranked[0] in good,
                "hit3": bool(set(ranked[:3]) & good),
            }
        )
    wrong_task = []
    for task in index.catalog.tasks():
        for c in select(index, task, f"a model for {task}", anywhere).candidates:
            if task not in index.catalog.get(c.id).tasks:
                wrong_task.append((task, c.id))
    n = len(rows)
    return {
        "queries": n,
        "top1": round(sum(r["hit1"] for r in rows) / n, 3),
        "top3": round(sum(r["hit3"] for r in rows) / n, 3),
        "selections_of_wrong_task": wrong_task,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    from graph_agent.context import default_models_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=Path, default=DEFAULT_CARDS)
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        result = evaluate(
            open_p0_index(args.cards, Path(tmp), args.models_dir or default_models_dir())
        )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for r in result["rows"]:
            print(
                f"{'ok ' if r['hit1'] else 'MISS'} {r['task']:<30} {r['query']:<50} -> {r['top1']}"
            )
        print(
            f"top-1 {result['top1']:.3f}, top-3 {result['top3']:.3f} over {result['queries']} "
            f"queries; wrong-task selections: {len(result['selections_of_wrong_task'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
