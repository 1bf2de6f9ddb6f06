"""The Hub source over real HTTP: ``huggingface_hub`` talks to a fake Hub on 127.0.0.1.

The fake serves what the client asks for: ``GET /api/models`` (two pages, linked by a
``Link: rel="next"`` header as the Hub paginates) and ``HEAD``/``GET
/{repo}/resolve/{revision}/README.md`` with the headers ``hf_hub_download`` needs.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.ingest import (
    CardSourceError,
    ImportReport,
    NetworkDisabledError,
    hub_cards,
    ingest_hub,
)

SHA = "f" * 40
MODELS = [
    {
        "id": "nvidia/parakeet-rnnt-1.1b",
        "pipeline_tag": "automatic-speech-recognition",
        "downloads": 1000,
        "likes": 50,
        "library_name": "nemo",
        "sha": SHA,
        "tags": ["nemo", "license:cc-by-4.0", "en", "region:us"],
        "safetensors": {"parameters": {"F32": 1_100_000_000}, "total": 1_100_000_000},
        "cardData": {"license": "cc-by-4.0", "language": ["en"]},
    },
    {
        "id": "dslim/bert-base-NER",
        "pipeline_tag": "token-classification",
        "downloads": 900,
        "likes": 40,
        "sha": SHA,
        "tags": ["transformers", "license:mit"],
        "cardData": {"license": "mit", "datasets": ["conll2003"]},
    },
    {"id": "someone/no-task", "sha": SHA, "tags": []},
]
READMES = {
    "nvidia/parakeet-rnnt-1.1b": """---
license: cc-by-4.0
language: [en]
model-index:
- name: parakeet-rnnt-1.1b
  results:
  - task: {type: automatic-speech-recognition}
    dataset: {name: common-voice-7-0-6.0, type: mozilla-foundation/common_voice_7_0, config: en}
    metrics:
    - {type: wer, name: Test WER, value: 5.8}
---
# Parakeet RNNT 1.1B

An English speech recogniser.
""",
}


class FakeHub(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str]]] = []

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, head=False):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _handle(self, head: bool) -> None:
        url = urlparse(self.path)
        FakeHub.requests.append((self.command, self.path))
        if url.path == "/api/models":
            query = parse_qs(url.query)
            page = int(query.get("page", ["1"])[0])
            items = MODELS[:2] if page == 1 else MODELS[2:]
            headers = {"Content-Type": "application/json"}
            if page == 1:
                host = self.headers["Host"]
                headers["Link"] = f'<http://{host}/api/models?page=2>; rel="next"'
            return self._send(200, json.dumps(items).encode(), headers, head)
        parts = url.path.strip("/").split("/")
        if len(parts) >= 5 and parts[2] == "resolve" and parts[-1] == "README.md":
            repo = "/".join(parts[:2])
            if repo not in READMES:
                return self._send(404, b"Entry not found", {"X-Error-Code": "EntryNotFound"}, head)
            body = READMES[repo].encode()
            etag = hashlib.sha1(body).hexdigest()
            return self._send(200, body, {"X-Repo-Commit": SHA, "ETag": f'"{etag}"'}, head)
        self._send(404, b"not found", head=head)

    def do_GET(self):
        self._handle(head=False)

    def do_HEAD(self):
        self._handle(head=True)


@pytest.fixture()
def fake_hub(monkeypatch):
    import huggingface_hub.constants as constants

    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)  # port 0: a free port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeHub.requests = []
    # The test session runs with HF_HUB_OFFLINE=1; only this fake Hub may be reached.
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_cards_come_from_the_hub_api_and_readmes(fake_hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", fake_hub)  # the endpoint setting, read at call time
    report = ImportReport(source="hub")
    weights = tmp_path / "parakeet"
    weights.mkdir()
    cards = {
        c.id: c
        for c in hub_cards(
            allow_network=True,
            pipeline_tag=None,
            limit=None,
            cache_dir=tmp_path / "hf-cache",
            local_models={"nvidia/parakeet-rnnt-1.1b": weights},
            report=report,
        )
    }
    assert set(cards) == {"nvidia/parakeet-rnnt-1.1b", "dslim/bert-base-NER"}
    assert (report.read, report.imported, report.skipped) == (3, 2, 1)
    assert any("someone/no-task: no pipeline tag" in p for p in report.problems)
    assert any("dslim/bert-base-NER: README not read" in p for p in report.problems)

    parakeet = cards["nvidia/parakeet-rnnt-1.1b"]
    assert parakeet.license == "cc-by-4.0" and parakeet.parameters == 1_100_000_000
    assert parakeet.likes == 50 and parakeet.downloads == 1000 and parakeet.library == "nemo"
    assert parakeet.description == "An English speech recogniser."
    assert parakeet.source == "hub" and parakeet.runnable
    (wer,) = parakeet.benchmarks
    assert (wer.metric, wer.value, wer.higher_is_better, wer.config) == ("wer", 5.8, False, "en")
    assert "region:us" not in parakeet.tags and "license:cc-by-4.0" not in parakeet.tags
    ner = cards["dslim/bert-base-NER"]
    assert ner.license == "mit" and ner.datasets == ["conll2003"] and not ner.runnable

    listing = [p for m, p in FakeHub.requests if p.startswith("/api/models")]
    assert len(listing) == 2  # followed the Link header to page 2
    query = parse_qs(urlparse(listing[0]).query)
    assert "cardData" in query["expand"] and "safetensors" in query["expand"]
    assert ("HEAD", f"/nvidia/parakeet-rnnt-1.1b/resolve/{SHA}/README.md") in FakeHub.requests


def test_endpoint_argument_and_catalog(fake_hub, tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    report = ingest_hub(
        catalog, allow_network=True, endpoint=fake_hub, fetch_readme=False, limit=10
    )
    assert report.imported == 2
    assert [c.id for c in catalog.by_task("token-classification")] == ["dslim/bert-base-NER"]
    assert not any(p.endswith("README.md") for _, p in FakeHub.requests)


def test_network_is_opt_in_and_offline_mode_wins(monkeypatch):
    import huggingface_hub.constants as constants

    with pytest.raises(NetworkDisabledError, match="allow_network=True"):
        list(hub_cards())
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NetworkDisabledError, match="HF_HUB_OFFLINE"):
        list(hub_cards(allow_network=True))


def test_unreachable_hub_is_a_clear_error(monkeypatch):
    import socket

    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CardSourceError, match=r"Could not list models from http://127\.0\.0\.1"):
        list(hub_cards(allow_network=True, endpoint=f"http://127.0.0.1:{port}", limit=1))
