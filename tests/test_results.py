"""A tool's result as later steps, the report and the checkpointer receive it."""

from __future__ import annotations

from graph_agent.tools.results import ToolResult


def test_a_nul_character_from_a_model_is_dropped_and_noted():
    result = ToolResult(kind="transcript", modality="text", text="Sith\x00void")
    assert result.text == "Sithvoid" and result.extra == {"removed_nul_characters": True}
    assert ToolResult(kind="summary", modality="text", text="fine").extra == {}
