"""Bad input gets a FormatError that says what is wrong and where; files with several records
keep the good ones and report each bad one by line or index."""

import orjson
import pytest

from apps.trajectories.importers import (
    FormatError,
    Limits,
    decode_json,
    parse,
    parse_document,
    split_lines,
)


def event(n, **extra):
    return {"id": n, "source": "user", "action": "message", "args": {"content": f"m{n}"}} | extra


def error_of(data: bytes, **kwargs) -> FormatError:
    """The one error `data` produces, whether raised for the whole body or for its record."""
    try:
        result = parse(data, **kwargs)
    except FormatError as exc:
        return exc
    assert result.trajectories == []
    assert len(result.errors) == 1
    return result.errors[0].error


@pytest.mark.parametrize("body", [b"", b"   \n\t ", b"\n\n"])
def test_empty_body(body):
    assert error_of(body).message == "the body is empty"


def test_invalid_utf8_names_the_byte():
    data = b'[{"action": "message", "args": {"content": "caf\xe9"}}]'
    error = error_of(data)
    position = data.index(b"\xe9")
    assert error.message == f"not valid UTF-8 (byte {position})"


def test_not_json_says_where():
    error = error_of(b'[{"action": "run",\n  "args": {"command": ls}}]')
    assert error.message.startswith("not valid JSON")
    assert error.where == "line 2, column 23"


def test_utf8_bom_is_accepted():
    result = parse(b"\xef\xbb\xbf" + orjson.dumps([event(1)]))
    assert len(result.trajectories) == 1


def test_event_that_is_not_an_object():
    error = error_of(orjson.dumps([event(1), event(2), "not an event", event(3)]))
    assert error.where == "event 2"
    assert error.message == "event is a string, not an object"


def test_event_missing_required_fields():
    error = error_of(orjson.dumps([event(1), {"id": 2, "source": "agent", "args": {}}]))
    assert error.where == "event 1"
    assert error.message == "event has neither 'action' nor 'observation'"


def test_event_with_wrong_typed_args():
    error = error_of(orjson.dumps([event(1), {"id": 2, "action": "run", "args": ["ls"]}]))
    assert (error.where, error.message) == ("event 1", "'args' is an array, expected an object")


def nested(depth: int) -> bytes:
    return b'{"trajectory": [' + b"[" * depth + b"]" * depth + b"]}"


def test_nesting_deeper_than_the_limit():
    error = error_of(nested(250))
    assert error.message == "JSON nested deeper than 200 levels"
    assert error_of(nested(50), limits=Limits(max_depth=20)).message == (
        "JSON nested deeper than 20 levels"
    )


@pytest.mark.parametrize("limit", [200, 1000])  # the recursive and the iterative walk
def test_nesting_limit_is_exact(limit):
    def document(levels):  # object > array > event > `extras` array > ... : `levels` in all
        value: list = []
        for _ in range(levels - 4):
            value = [value]
        return {"trajectory": [event(1) | {"extras": value}]}

    limits = Limits(max_depth=limit)
    assert parse_document(document(limit), limits=limits).trajectories
    with pytest.raises(FormatError, match=f"nested deeper than {limit} levels"):
        parse_document(document(limit + 1), limits=limits)


def test_nesting_100000_deep_does_not_crash():
    assert error_of(b"[" * 100_000 + b"]" * 100_000).message == "JSON nested too deeply"
    assert error_of(b"[\n" * 100_000 + b"]\n" * 100_000).message == "JSON nested too deeply"
    # Already decoded (the share API's own JSON parser): the walk is iterative, no recursion.
    value: list = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(FormatError, match="nested deeper than 200 levels"):
        parse_document({"trajectory": value})


def test_too_many_events():
    error = error_of(orjson.dumps([event(n) for n in range(6)]), limits=Limits(max_events=5))
    assert error.message == "6 events, over the limit of 5"


def test_far_too_many_events_fail_before_conversion():
    error = error_of(orjson.dumps([event(n) for n in range(11)]), limits=Limits(max_events=5))
    assert error.message == "11 items, far over the limit of 5 events"


def test_a_field_over_the_field_limit_is_named():
    big = event(1)
    big["args"]["content"] = "é" * 600  # 1,200 bytes of UTF-8
    error = error_of(orjson.dumps([big]), limits=Limits(max_field_bytes=1000))
    assert error.message == "field 'content' is 1,200 bytes, over the limit of 1,000"
    huge_key = event(2) | {"k" * 2000: 1}
    error = error_of(orjson.dumps([huge_key]), limits=Limits(max_field_bytes=1000))
    assert "over the limit of 1,000" in error.message


def test_json_lines_keep_good_records_and_locate_bad_ones():
    lines = [
        orjson.dumps([event(1)]),
        b'{"broken": ',
        b"",
        b"42",
        orjson.dumps([event(1), 7]),
        orjson.dumps({"conversations": [{"from": "human", "value": "hi"}]}),
    ]
    result = parse(b"\n".join(lines) + b"\n")
    wheres = [item.where for item in result.items]
    assert wheres == ["line 1", "line 2", "line 4", "line 5", "line 6"]
    assert [item.trajectory is not None for item in result.items] == [
        True,
        False,
        False,
        False,
        True,
    ]
    errors = {item.where: item.error for item in result.errors}
    assert errors["line 2"].message.startswith("not valid JSON")
    assert errors["line 4"].message.startswith("no known trajectory format matches a number")
    assert (errors["line 5"].where, errors["line 5"].message) == (
        "line 5, event 1",
        "event is a number, not an object",
    )
    assert [t.source_format for t in result.trajectories] == ["openhands_v0", "sharegpt"]


def test_json_lines_records_line_up_with_decode_json():
    """The ingest service stores record i's raw line: item i must be value i, line for line."""
    data = b"\n".join([orjson.dumps([event(1)]), b"", b"nope", orjson.dumps([event(2)])])
    value, lines = decode_json(data)
    assert lines
    result = parse_document(value, lines=True)
    assert [item.where for item in result.items] == [f"line {n}" for n, _ in value]
    text_lines = split_lines(data.decode())
    assert orjson.loads(text_lines[value[2][0] - 1]) == [event(2)]


def test_json_lines_with_line_separator_inside_a_string():
    """U+2028 is legal inside JSON strings; it must not split a record."""
    first = orjson.dumps([event(1) | {"message": "a\u2028b"}])
    result = parse(first + b"\n" + orjson.dumps([event(2)]))
    assert len(result.trajectories) == 2 and result.errors == []


def test_a_broken_pretty_printed_document_is_one_error_not_many_lines():
    text = orjson.dumps([event(1), event(2)], option=orjson.OPT_INDENT_2).decode()
    broken = text.replace('"id": 2', '"id": 2,,', 1).encode()
    with pytest.raises(FormatError) as caught:
        parse(broken)
    assert caught.value.message.startswith("not valid JSON")
    assert caught.value.where.startswith("line ")


def test_json_array_of_records_reports_bad_ones_by_index():
    conversations = [
        {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]},
        {"conversations": [{"from": "human", "value": "hi"}, {"from": "alien", "value": "?"}]},
        {"conversations": []},
    ]
    result = parse(orjson.dumps(conversations))
    assert result.format == "sharegpt"
    assert [item.where for item in result.items] == ["[0]", "[1]", "[2]"]
    assert len(result.trajectories) == 1
    assert result.items[1].error.where == "[1], message 1"
    assert result.items[2].error.message == "the trajectory has no events"


def test_json_array_record_over_the_limits_only_fails_that_record():
    records = [[event(1)], [event(1), event(2), event(3)]]
    result = parse(b"\n".join(orjson.dumps(r) for r in records), limits=Limits(max_events=2))
    assert len(result.trajectories) == 1
    assert result.errors[0].where == "line 2"


ONE_OF_EACH = {
    "openhands_v0": [event(1)],
    "openhands_share": {"version": "1.0", "feedback": "positive", "trajectory": [event(1)]},
    "openhands_eval": {"instance_id": "x-1", "history": [event(1)]},
    "openhands_v1": {
        "instance_id": "y-1",
        "history": [
            {
                "kind": "MessageEvent",
                "id": "m",
                "source": "user",
                "llm_message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            }
        ],
    },
    "sweagent": {
        "history": [
            {"role": "user", "content": "task", "message_type": "observation", "agent": "main"}
        ]
    },
    "sharegpt": {"conversations": [{"from": "human", "value": "hi"}]},
    "openai_messages": {"messages": [{"role": "user", "content": "hi"}]},
}


def test_every_format_works_as_json_lines():
    data = b"\n".join(orjson.dumps(record) for record in ONE_OF_EACH.values())
    result = parse(data)
    assert result.errors == []
    assert [t.source_format for t in result.trajectories] == list(ONE_OF_EACH)


# A bare event array is itself one record; arrays of them are tested below.
@pytest.mark.parametrize("name", sorted(set(ONE_OF_EACH) - {"openhands_v0"}))
def test_every_format_as_a_json_array_of_records(name):
    record = ONE_OF_EACH[name]
    result = parse(orjson.dumps([record, record, {"nothing": 1}]))
    assert [t.source_format for t in result.trajectories] == [name, name]
    assert result.errors[0].where == "[2]"


def test_array_of_event_arrays_is_one_trajectory_each():
    result = parse(orjson.dumps([[event(1)], [event(1), event(2)]]))
    assert [len(t.events) for t in result.trajectories] == [1, 2]
