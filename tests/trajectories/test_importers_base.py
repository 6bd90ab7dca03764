"""importers/base.py's shared helpers.

`as_text` is the one reading of a content field, for the importers and the cards.

It replaced two copies that had drifted: the importers' one dropped a part's `content` and gave
Python's repr for other values (`True`, `{'a': 1}`); the cards' one dropped image parts."""

import orjson

from apps.trajectories.importers import parse
from apps.trajectories.importers.base import as_text, mostly

TOOL_RESULT = [{"type": "tool_result", "content": "3 passed"}, {"type": "text", "text": "done"}]
WITH_IMAGE = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]


def test_a_part_holding_its_text_in_content_is_read_by_both_callers():
    # The importers' copy gave "done" here: the tool result's text was lost.
    assert as_text(TOOL_RESULT) == "3 passed\ndone"
    assert as_text(TOOL_RESULT, image="") == "3 passed\ndone"


def test_values_that_are_not_text_are_json_not_python_repr():
    # The importers' copy gave "True" and "{'a': 1}".
    assert as_text(True) == "true"
    assert as_text({"a": 1}) == '{"a":1}'
    assert as_text(None) == ""
    assert as_text(3) == "3"


def test_an_image_part_is_marked_for_the_importers_and_left_to_the_card_for_the_page():
    assert as_text(WITH_IMAGE) == "look\n[image]"
    assert as_text(WITH_IMAGE, image="") == "look"


def test_an_imported_message_keeps_a_tool_result_parts_text():
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "content": TOOL_RESULT}]
    result = parse(orjson.dumps({"messages": messages}), format="openai_messages")
    texts = [event.text for event in result.trajectories[0].events]
    assert any("3 passed" in text for text in texts)


def test_mostly_is_half_or_more_of_the_first_records_and_never_none():
    # The "first 20, half or more" detection the list importers share.
    assert mostly([1, 1, "x", "x"], lambda item: item == 1)
    assert not mostly([1, "x", "x"], lambda item: item == 1)
    assert not mostly([], lambda item: True)
    assert mostly(["x"] * 20 + [1] * 30, lambda item: item == 1, sample=50)
    assert not mostly(["x"] * 20 + [1] * 30, lambda item: item == 1)
