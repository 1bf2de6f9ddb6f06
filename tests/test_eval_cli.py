"""``graph-agent eval``: the LangSmith runner offline, dataset sync, the CLI, the exit time.

Everything the online path runs is covered except constructing a real ``Client()``: the
offline run goes through ``langsmith.evaluate`` exactly as an upload would (only
``upload_results`` differs), and :func:`sync_dataset` runs against a stand-in client.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import types
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langsmith.schemas import Example

from graph_agent.cli import main
from graph_agent.evals import langsmith_runner as runner
from graph_agent.evals import taskbench

ASR, SUM, TTS = "Automatic Speech Recognition", "Summarization", "Text-to-Speech"
NETWORK_WORDS = ("connect", "refused", "127.0.0.1:9", "failed to", "retry", "traceback")


def _n(task, *args):
    return {"task": task, "arguments": list(args)}


CHAIN = [_n(ASR, "meeting.wav"), _n(SUM, "<node-0>")]
RECORDS = [
    {
        "id": "c1",
        "type": "chain",
        "instruction": "transcribe meeting.wav and summarize it",
        "task_nodes": CHAIN,
    },
    {
        "id": "s1",
        "type": "single",
        "instruction": "read 'hello' aloud",
        "task_nodes": [_n(TTS, "hello")],
    },
    {
        "id": "bad",
        "type": "dag",
        "instruction": "x",
        "task_nodes": {"step_1": {"task": TTS}},  # unparsable gold: skipped
    },
]
PREDICTED = {
    "c1": CHAIN,
    "s1": [_n(TTS, "hello"), _n(SUM, "hello")],
    "bad": [],
}


@pytest.fixture
def no_network(monkeypatch):
    """Every socket connection attempt is recorded and refused."""
    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args[1:] or kwargs)
        raise OSError("network use in a test that must stay offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def _fake_predict(request, inputs):
    return {"task_nodes": PREDICTED[inputs["id"]]}


def test_offline_run_scores_through_langsmith_with_no_network_and_no_output(
    no_network, capsys, recwarn, monkeypatch
):
    monkeypatch.setenv("TQDM_DISABLE", "1")  # LangSmith's bar; the CLI sets the same
    before = {t for t in threading.enumerate() if not t.daemon}
    seen: list[tuple[int, int]] = []
    report = runner.run_taskbench(
        RECORDS, _fake_predict, progress=lambda done, total, row: seen.append((done, total))
    )
    assert no_network == []
    assert {t for t in threading.enumerate() if not t.daemon} <= before  # nothing left running
    captured = capsys.readouterr()
    assert captured.out == ""
    assert not any(w in captured.err.lower() for w in NETWORK_WORDS), captured.err
    assert not [w for w in recwarn if "upload_results" in str(w.message)]
    assert seen == [(1, 3), (2, 3), (3, 3)]

    overall = report["scores"]["overall"]
    # c1 exact; s1 adds Summarization: nodes tp 3, fp 1, fn 0 -> P 3/4, R 1 -> F1 6/7
    assert overall["records"] == 2 and report["scores"]["skipped_unparsable_gold"] == 1
    assert overall["node_f1"] == 85.71
    assert overall["task_selection"] == 50.0 and overall["flow_of_thought"] == 50.0
    assert report["scores"]["chain"]["edge_f1"] == 100.0
    # The summary evaluator (LangSmith's experiment-level scores) agrees with our sums,
    # and both agree with taskbench.score over the same pairs.
    for key in ("node_f1", "edge_f1", "arg_name_f1", "arg_value_f1", "task_selection"):
        assert report["summary_evaluator"][key] == overall[key]
    whole = taskbench.score([(r, PREDICTED[r["id"]]) for r in RECORDS])
    assert whole["overall"]["arg_value_f1"] == overall["arg_value_f1"]
    assert report["noise"] == {"gold.unparsable_record": 1}
    assert report["langsmith"]["mode"] == "offline"
    assert [p["id"] for p in report["predictions"]] == ["c1", "s1", "bad"]
    assert report["predictions"][0]["counts"]["flow_of_thought"] == 1


def test_planner_errors_score_as_empty_plans_and_do_not_stop_the_run(no_network, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")

    def flaky(request, inputs):
        if inputs["id"] == "c1":
            raise RuntimeError("model fell over")
        return _fake_predict(request, inputs)

    report = runner.run_taskbench(RECORDS, flaky)
    assert report["no_plan"] == 1
    assert report["predictions"][0]["error"] == "crashed: RuntimeError: model fell over"
    assert report["predictions"][0]["task_nodes"] == []
    assert report["scores"]["chain"]["node_f1"] == 0.0


def test_llm_planner_runs_through_the_runner(no_network, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    reply = {
        "subtasks": [
            {
                "id": "node-0",
                "task": "automatic-speech-recognition",
                "args": {"audio": "meeting.wav"},
            },
            {"id": "node-1", "task": "summarization", "args": {"text": "<node-0>"}},
        ]
    }
    fake = GenericFakeChatModel(messages=iter([AIMessage(json.dumps(reply))]))
    monkeypatch.setattr("graph_agent.chat.make_chat_model", lambda spec: fake)
    predict = runner.llm_predictor("fake:model")
    report = runner.run_taskbench(RECORDS[:1], predict)
    assert report["predictions"][0]["task_nodes"] == CHAIN
    assert report["fallbacks"] == 0
    assert report["scores"]["overall"]["flow_of_thought"] == 100.0


class _StandInClient:
    """The few ``langsmith.Client`` methods :func:`sync_dataset` calls, in memory."""

    def __init__(self) -> None:
        self.datasets: dict[str, SimpleNamespace] = {}
        self.examples: dict[uuid.UUID, Example] = {}
        self.calls: list[tuple[str, int]] = []

    def has_dataset(self, *, dataset_name):
        return dataset_name in self.datasets

    def read_dataset(self, *, dataset_name):
        return self.datasets[dataset_name]

    def create_dataset(self, dataset_name, *, description=None):
        self.datasets[dataset_name] = SimpleNamespace(id=uuid.uuid4(), name=dataset_name)
        self.calls.append(("create_dataset", 1))
        return self.datasets[dataset_name]

    def list_examples(self, *, dataset_id):
        return [e for e in self.examples.values() if e.dataset_id == dataset_id]

    def create_examples(self, *, dataset_id, examples):
        for e in examples:
            self.examples[e.id] = Example(
                id=e.id,
                dataset_id=dataset_id,
                inputs=e.inputs,
                outputs=e.reference_outputs,
                metadata=e.metadata,
            )
        self.calls.append(("create_examples", len(examples)))

    def update_examples(self, *, dataset_id, updates):
        for u in updates:
            self.examples[u.id] = Example(
                id=u.id, dataset_id=dataset_id, inputs=u.inputs, outputs=u.outputs
            )
        self.calls.append(("update_examples", len(updates)))


def test_sync_dataset_creates_then_updates_only_what_changed():
    client = _StandInClient()
    first = runner.sync_dataset(client, "tb", RECORDS)
    assert client.calls == [("create_dataset", 1), ("create_examples", 3)]
    assert [e.id for e in first] == [runner.example_id("tb", r["id"]) for r in RECORDS]
    assert first[0].outputs == {"task_nodes": CHAIN, "type": "chain", "id": "c1"}
    assert first[0].metadata["split"] == taskbench.split_of("c1")
    changed = [{**RECORDS[0], "task_nodes": CHAIN[:1]}, *RECORDS[1:]]
    client.calls.clear()
    again = runner.sync_dataset(client, "tb", changed)
    assert client.calls == [("update_examples", 1)]
    assert again[0].outputs["task_nodes"] == CHAIN[:1]
    client.calls.clear()
    runner.sync_dataset(client, "tb", changed)
    assert client.calls == []


def test_an_upload_that_langsmith_refuses_is_one_clear_error(monkeypatch):
    class Refusing(_StandInClient):
        def has_dataset(self, *, dataset_name):
            raise PermissionError("401 Unauthorized")

        def close(self, timeout=None):
            self.closed = timeout

    client = Refusing()
    with pytest.raises(runner.RunnerError, match="dataset 'tb': 401 Unauthorized"):
        runner.run_taskbench(RECORDS, _fake_predict, client=client, upload=True, dataset_name="tb")
    assert client.closed == runner.UPLOAD_DRAIN_SECONDS


def test_client_from_env(monkeypatch):
    client, upload = runner.client_from_env({})
    assert upload is False and client.api_url == runner.OFFLINE_API_URL
    assert client.tracing_queue is None  # no background tracing thread to wait for
    client.close(timeout=0)

    class Stub:
        pass

    monkeypatch.setattr("langsmith.Client", Stub)
    client, upload = runner.client_from_env({"LANGSMITH_API_KEY": "lsv2-test"})
    assert upload is True and isinstance(client, Stub)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def data_file(tmp_path) -> Path:
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--planner", "llm"], "needs --llm SPEC"),
        (["--llm", "no-colon-here"], "is not 'offline' or '<provider>:<model>'"),
        (["--limit", "-1"], "--limit must be"),
        (["--data", "/nonexistent/dev.jsonl"], "not found at /nonexistent/dev.jsonl"),
        (["--predictions", "p.jsonl", "--planner", "offline"], "drop --planner"),
        (["--out", "/nonexistent/dir/out.json"], "does not exist"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(argv, message, capsys, data_file):
    data = [] if "--data" in argv else ["--data", str(data_file)]
    assert main(["eval", "taskbench", *data, "--split", "all", *argv]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert message in err
    assert "Traceback" not in err


def test_cli_scores_a_predictions_file_prints_the_table_and_writes_json(
    tmp_path, data_file, capsys, monkeypatch, no_network
):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    predictions = tmp_path / "predictions.jsonl"
    hugginggpt = [
        {"id": 0, "task": "automatic-speech-recognition", "dep": [-1], "args": {"audio": "x.wav"}},
        {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
    ]
    predictions.write_text(
        json.dumps({"id": "c1", "tasks": hugginggpt})
        + "\n"
        + json.dumps({"id": "s1", "task_nodes": [_n(TTS, "hello")]})
        + "\n"
    )  # no prediction for "bad": scored as no plan
    out = tmp_path / "report.json"
    argv = ["eval", "taskbench", "--data", str(data_file), "--split", "all"]
    argv += ["--predictions", str(predictions), "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for text in ("node", "edge", "arg-name", "arg-value", "selection", "thought"):
        assert text in printed
    assert "overall" in printed and "chain" in printed and "single" in printed
    assert f"report written to {out}" in printed
    report = json.loads(out.read_text())
    assert report["planner"] == f"file:{predictions}" and report["records"] == 3
    assert report["no_plan"] == 1
    chain = report["scores"]["chain"]
    # the argument value differs (x.wav vs meeting.wav): 1 of 2 values right -> 50
    assert (chain["node_f1"], chain["edge_f1"], chain["arg_value_f1"]) == (100.0, 100.0, 50.0)
    assert report["scores"]["single"]["task_selection"] == 100.0
    assert report["langsmith"]["mode"] == "offline"


def test_e2e_passes_every_argument_through(monkeypatch):
    got: list[list[str]] = []
    fake = types.ModuleType("graph_agent.evals.e2e")
    fake.main = lambda argv=None: got.append(argv) or 3
    monkeypatch.setitem(sys.modules, "graph_agent.evals.e2e", fake)
    assert main(["eval", "e2e", "--limit", "3", "--help"]) == 3
    assert got == [["--limit", "3", "--help"]]


def test_e2e_says_clearly_when_the_module_is_missing(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "graph_agent.evals.e2e", None)
    assert main(["eval", "e2e", "--limit", "1"]) == 2
    assert "graph_agent.evals.e2e" in capsys.readouterr().err


#: Loaded at start-up by the subprocess (``sitecustomize``): records every internet socket
#: connection attempt and reports them at exit.
_NETWORK_GUARD = """
import atexit, socket, sys
attempts = []
_connect = socket.socket.connect
def _guard(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        attempts.append(address)
    return _connect(self, address)
socket.socket.connect = _guard
atexit.register(lambda: attempts and print("NETWORK ATTEMPTS:", attempts, file=sys.stderr))
"""


def _command() -> str:
    """The installed ``graph-agent`` console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "graph-agent"
    if not script.is_file():
        pytest.fail(f"the graph-agent command is not installed next to {sys.executable}")
    return str(script)


def test_cli_offline_run_exits_within_two_seconds_of_its_last_result(tmp_path):
    """The real command with the real offline planner: no network, a fast exit."""
    if not taskbench.data_dir().is_dir():  # as the other TaskBench-data tests do
        pytest.skip("shared TaskBench data is not present")
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(_NETWORK_GUARD)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LANGSMITH_") or k in ("LANGSMITH_TRACING", "LANGSMITH_TEST_TRACKING")
    }
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(guard), env.get("PYTHONPATH")]))
    out = tmp_path / "report.json"
    argv = ["eval", "taskbench", "--split", "heldout", "--limit", "3", "--out", str(out)]
    with (tmp_path / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            [_command(), *argv], stdout=subprocess.PIPE, stderr=err, text=True, env=env
        )
        assert proc.stdout is not None
        lines, last = [], None
        for line in proc.stdout:
            lines.append(line)
            last = time.monotonic()
        code = proc.wait(timeout=300)
        exited = time.monotonic()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert code == 0, stderr
    assert last is not None and "report written to" in lines[-1]
    assert exited - last < 2.0, f"exited {exited - last:.2f}s after the last result"
    assert "NETWORK ATTEMPTS" not in stderr
    assert not any(w in stderr.lower() for w in NETWORK_WORDS), stderr
    report = json.loads(out.read_text())
    assert report["records"] == 3 and report["split"] == "heldout"
    assert report["scores"]["overall"]["records"] == 3
