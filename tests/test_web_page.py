"""The web page (graph_agent/web), driven in headless Chromium against ``langgraph dev``.

The browser is Debian's ``chromium`` with ``chromium-driver`` (``.ci/run`` installs both),
driven by Selenium; nothing is downloaded at test time. Without them the browser tests skip
with the reason, except in CI (``CI=true``), where a missing browser is a failure: a CI run
that skipped every page test would prove nothing about the page.

Screenshots of each state (plan running, results, approval, an error) go to
``WEB_PAGE_SCREENSHOTS`` when it is set (not a ``GRAPH_AGENT_`` name: conftest clears those),
else to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_agent.uploads import uploads_root

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: How long one run of the models may take on a busy two-core machine.
RUN_TIMEOUT_S = 240


def _missing(reason: str) -> None:
    """Skip outside CI; fail in CI, where .ci/run installs the browser."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI must run the browser tests: .ci/run installs it)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium through chromium-driver, with autoplay allowed and sound muted."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed: pip install -e '.[dev]'")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        _missing(
            "Chromium and its driver are not installed: apt-get install chromium "
            "chromium-driver (.ci/run does it)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
        "--disable-dev-shm-usage",
        "--window-size=1280,1100",
        "--autoplay-policy=no-user-gesture-required",
        "--mute-audio",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go."""
    folder = os.environ.get("WEB_PAGE_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, speech_wav, sample_photo) -> dict[str, Path]:
    """meeting.wav (real speech), photo.jpg (the sample photo) and a text file named .wav."""
    folder = tmp_path_factory.mktemp("page-files")
    wav, _ = speech_wav
    out = {"meeting.wav": folder / "meeting.wav", "photo.jpg": folder / "photo.jpg"}
    shutil.copy(wav, out["meeting.wav"])
    shutil.copy(sample_photo, out["photo.jpg"])
    out["bad.wav"] = folder / "bad.wav"
    out["bad.wav"].write_text("this is not a recording\n")
    return out


def _wait(driver, condition, timeout: float = RUN_TIMEOUT_S, what: str = ""):
    """Wait for ``condition(driver)``; on timeout, fail with the page's error box and status."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)
    except TimeoutException:
        error = driver.find_element("id", "error").text
        status = driver.find_element("id", "status").text
        pytest.fail(f"timed out waiting for {what}; page error: {error!r}; status: {status!r}")


def _open(driver, base: str) -> None:
    driver.get(f"{base}/")
    _wait(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-ready"), 30)


def _send(driver, request: str, attach: list[Path] = (), approve: bool = False) -> None:
    driver.find_element("id", "request").send_keys(request)
    if attach:
        driver.find_element("id", "files").send_keys("\n".join(str(p) for p in attach))
    box = driver.find_element("id", "approve-plan")
    if box.is_selected() != approve:
        box.click()
    driver.find_element("id", "send").click()


def _steps(driver) -> dict[str, str]:
    """Plan step id -> its state, as drawn."""
    return {
        g.get_attribute("data-id"): g.get_attribute("data-state")
        for g in driver.find_elements("css selector", "#plan g.step")
    }


def _done(driver) -> bool:
    return driver.find_element("id", "results-section").is_displayed() and not (
        driver.find_element("id", "progress").is_displayed()
    )


def _results(driver) -> dict[str, tuple[str, str]]:
    """Result id -> (kind, text)."""
    return {
        r.get_attribute("data-id"): (r.get_attribute("data-kind"), r.text)
        for r in driver.find_elements("css selector", "#results .result")
    }


def test_page_runs_uploads_shows_results_plays_audio_and_follows_up(browser, server, files, shots):
    driver = browser
    _open(driver, server)
    assert driver.current_url == f"{server}/app/", "/ must redirect to the page"

    _send(
        driver,
        "transcribe meeting.wav and tell me what is in photo.jpg",
        [files["meeting.wav"], files["photo.jpg"]],
    )
    # The plan is drawn as soon as it is made, and a step shows as running while it runs.
    _wait(driver, lambda d: "running" in _steps(d).values(), what="a running step")
    driver.save_screenshot(str(shots / "1-plan-running.png"))
    assert driver.find_element("id", "progress").is_displayed()
    assert set(_steps(driver)) == {"node-0", "node-1"}

    _wait(driver, _done, what="the results")
    driver.save_screenshot(str(shots / "2-results.png"))
    assert _steps(driver) == {"node-0": "ok", "node-1": "ok"}
    results = _results(driver)
    assert results["node-0"][0] == "text" and "Revenue rose" in results["node-0"][1]
    assert results["node-1"][0] == "text" and results["node-1"][1].strip()
    assert "Image label" in driver.find_element("id", "answer").text
    # Each step's model and time are drawn on the plan.
    labels = driver.find_element("id", "plan").text
    assert "whisper" in labels and "efficientnet-lite0" in labels and " s" in labels
    assert driver.find_element("id", "error").is_displayed() is False

    # The uploads landed in this thread's own folder under the uploads root, by name.
    thread = driver.find_element("id", "thread-label").text.removeprefix("Conversation ")
    folder = uploads_root() / thread
    assert sorted(p.name for p in folder.iterdir()) == ["meeting.wav", "photo.jpg"]

    # A follow-up on the same thread works on the first request's transcript; the speech it
    # makes plays in the page.
    _send(driver, "now read that transcript aloud")
    _wait(
        driver,
        lambda d: _done(d) and d.find_elements("css selector", "#results audio"),
        what="the spoken transcript",
    )
    assert driver.find_element("id", "thread-label").text == f"Conversation {thread}"
    played = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const audio = document.querySelector('#results audio');
        audio.play().then(() => setTimeout(() => done(audio.currentTime), 700))
             .catch((e) => done('play failed: ' + e));
        """
    )
    assert isinstance(played, float | int) and played > 0, played
    duration = driver.execute_script("return document.querySelector('#results audio').duration")
    assert duration > 1, "the spoken transcript should last more than a second"
    driver.save_screenshot(str(shots / "3-follow-up-audio.png"))

    # The conversation is listed and reopens from the checkpointer after a reload.
    _open(driver, server)
    _wait(
        driver,
        lambda d: d.find_elements("css selector", f'#threads [data-thread="{thread}"]'),
        30,
        "the conversation in the list",
    )
    driver.find_element("css selector", f'#threads [data-thread="{thread}"]').click()
    _wait(driver, lambda d: d.find_elements("css selector", "#results audio"), 30, "reopened")
    assert "read that transcript aloud" in driver.find_element("id", "threads").text


def test_page_approves_an_edited_plan(browser, server, files, shots):
    driver = browser
    _open(driver, server)
    _send(
        driver,
        "transcribe meeting.wav and tell me what is in photo.jpg",
        [files["meeting.wav"], files["photo.jpg"]],
        approve=True,
    )
    _wait(driver, lambda d: d.find_element("id", "approval").is_displayed(), what="approval")
    assert _steps(driver) == {"node-0": "waiting", "node-1": "waiting"}
    # Edit: drop the photo step, and pick the speech step's model from the candidates.
    driver.find_element("css selector", 'input.keep[data-step="node-1"]').click()
    choice = driver.find_element("css selector", 'select.model-choice[data-step="node-0"]')
    _wait(driver, lambda d: len(choice.find_elements("tag name", "option")) > 1, 30, "models")
    model = choice.find_elements("tag name", "option")[1].get_attribute("value")
    choice.find_element("css selector", f'option[value="{model}"]').click()
    driver.save_screenshot(str(shots / "4-approval-edit.png"))
    driver.find_element("id", "run-edited").click()

    _wait(driver, _done, what="the edited plan's results")
    assert _steps(driver) == {"node-0": "ok"}
    results = _results(driver)
    assert list(results) == ["node-0"] and "Revenue rose" in results["node-0"][1]
    assert model in driver.find_element("id", "plan").text
    # The thread records the human's edit, and the model it chose, as the server ran them.
    thread = driver.find_element("id", "thread-label").text.removeprefix("Conversation ")
    with urllib.request.urlopen(f"{server}/threads/{thread}/state", timeout=30) as answer:
        values = json.load(answer)["values"]
    assert any(
        d.get("node") == "approval" and d.get("decision") == "edited"
        for d in values["report"]["decisions"]
    )
    (edited,) = values["plan"]["subtasks"]
    assert edited["constraints"]["models"] == [model]


def test_page_says_what_is_wrong_with_a_bad_upload_and_an_unknown_file(
    browser, server, files, shots
):
    driver = browser
    _open(driver, server)
    driver.find_element("id", "new-thread").click()
    _send(driver, "transcribe bad.wav", [files["bad.wav"]])
    _wait(driver, lambda d: d.find_element("id", "error").is_displayed(), 60, "the error")
    message = driver.find_element("id", "error").text
    assert "bad.wav" in message and "named like audio" in message, message
    assert "upload the real file" in message
    driver.save_screenshot(str(shots / "5-error-bad-upload.png"))
    assert not driver.find_element("id", "plan-section").is_displayed(), "nothing may run"

    # A request about a file that was never sent: the agent says which, and what to do.
    driver.find_element("id", "request").clear()
    _send(driver, "transcribe missing.wav")
    _wait(driver, _done, what="the refusal")
    message = driver.find_element("id", "error").text
    assert "missing.wav" in message and "give that file as an input" in message, message
    driver.save_screenshot(str(shots / "6-error-missing-file.png"))


def test_page_rejects_a_plan_and_nothing_runs(browser, server, server_dirs, shots):
    driver = browser
    _open(driver, server)
    driver.find_element("id", "new-thread").click()
    _send(
        driver,
        "summarize this: The ferry leaves at noon and returns at six on weekdays.",
        approve=True,
    )
    _wait(driver, lambda d: d.find_element("id", "approval").is_displayed(), what="approval")
    assert set(_steps(driver).values()) == {"waiting"}
    driver.find_element("id", "reject").click()

    _wait(driver, _done, what="the rejection")
    driver.save_screenshot(str(shots / "7-approval-rejected.png"))
    message = driver.find_element("id", "error").text
    assert "the plan was not approved, so nothing was run" in message, message
    assert "not approved" in driver.find_element("id", "answer").text
    assert not driver.find_element("id", "approval").is_displayed()
    assert _results(driver) == {}
    assert set(_steps(driver).values()) == {"not run"}, "every step is drawn as not run"
    # The server agrees: the thread records the rejection, no step ran and no model was
    # chosen, and nothing but the report was written in its artifact folder.
    thread = driver.find_element("id", "thread-label").text.removeprefix("Conversation ")
    with urllib.request.urlopen(f"{server}/threads/{thread}/state", timeout=30) as answer:
        values = json.load(answer)["values"]
    assert not values.get("results") and not values.get("selections") and not values["outputs"]
    assert {"node": "approval", "decision": "rejected", "answer": "False"} in values["report"][
        "decisions"
    ]
    made = {p.name for p in (server_dirs["artifacts"] / thread).iterdir()}
    assert made <= {"report.json", "report.md"}, made
