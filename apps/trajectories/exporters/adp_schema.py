"""A check of ADP standardized trajectories, written from ADP's published schema
(neulab/agent-data-protocol: schema/trajectory.py, schema/action/*.py, schema/observation/*.py,
schema/tool_call_links.py; SCHEMA.md). Pure Python, no Django, no pydantic.

`problems(doc)` lists what ADP's own models would refuse, each naming the item:
- the trajectory: only `schema_version` (a supported version), `id` (text), `content` (a list),
  `available_apis` (text names or null) and `details` (an object);
- each item by `class_`: its required fields, their types, and no field the class lacks (the
  models forbid extra fields);
- the tool-call links, after ADP's own back-fill of adjacent pairs: action ids unique, each
  observation id that of an action before it, one result per id, a result for every id.

ADP enumerates `code_action.language` (300-odd names); this check asks for a non-empty name:
the export writes a code_action only where ADP data gave one.
"""

from __future__ import annotations

from typing import Any

SUPPORTED_VERSIONS = ("1.3.1", "1.3.0", "1.2.0", "1.1.0", "1.0.0")
TOP_KEYS = {"schema_version", "id", "content", "available_apis", "details"}
SOURCES = {"user", "agent", "environment"}
ACTION_CLASSES = {"api_action", "code_action", "message_action"}
CALL_CLASSES = {"api_action", "code_action"}

# class -> {field: (required, check)}; `required` means the key must be there (it may be null
# where the check allows None).
_TEXT = ("text", lambda v: isinstance(v, str))
_TEXT_OR_NULL = ("text or null", lambda v: v is None or isinstance(v, str))
_NUMBER_OR_NULL = (
    "a number or null",
    lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)),
)
_OBJECT = ("an object", lambda v: isinstance(v, dict))
_SOURCE = ("user, agent or environment", lambda v: v in SOURCES)
_NAME = ("a non-empty name", lambda v: isinstance(v, str) and bool(v))

_ACTION = {
    "reasoning_content": (False, _TEXT_OR_NULL),
    "reward": (False, _NUMBER_OR_NULL),
    "tool_call_id": (False, _TEXT_OR_NULL),
}
_OBSERVATION = {"reward": (False, _NUMBER_OR_NULL), "tool_call_id": (False, _TEXT_OR_NULL)}
FIELDS: dict[str, dict[str, tuple[bool, tuple[str, Any]]]] = {
    "api_action": {
        **_ACTION,
        "function": (True, _TEXT),
        "kwargs": (True, _OBJECT),
        "description": (False, _TEXT_OR_NULL),
        "function_call": (False, _TEXT_OR_NULL),
    },
    "code_action": {
        **_ACTION,
        "language": (True, _NAME),
        "content": (True, _TEXT),
        "description": (True, _TEXT_OR_NULL),
    },
    "message_action": {
        **_ACTION,
        "content": (True, _TEXT),
        "description": (False, _TEXT_OR_NULL),
    },
    "text_observation": {
        **_OBSERVATION,
        "content": (True, _TEXT),
        "source": (True, _SOURCE),
        "name": (False, _TEXT_OR_NULL),
    },
    "image_observation": {
        **_OBSERVATION,
        "content": (True, _TEXT),
        "source": (True, _SOURCE),
        "annotations": (False, ("a list or null", lambda v: v is None or isinstance(v, list))),
    },
    "web_observation": {
        **_OBSERVATION,
        "html": (True, _TEXT_OR_NULL),
        "axtree": (True, _TEXT_OR_NULL),
        "url": (True, _TEXT_OR_NULL),
        "image_observation": (
            True,
            ("an object or null", lambda v: v is None or isinstance(v, dict)),
        ),
        "viewport_size": (
            True,
            (
                "two integers or null",
                lambda v: (
                    v is None
                    or (
                        isinstance(v, list)
                        and len(v) == 2
                        and all(isinstance(n, int) and not isinstance(n, bool) for n in v)
                    )
                ),
            ),
        ),
    },
}


def problems(doc: Any) -> list[str]:
    """What ADP's models would refuse in `doc` (empty when it is a valid trajectory)."""
    if not isinstance(doc, dict):
        return ["the trajectory is not an object"]
    found = [f"unknown field {key!r}" for key in sorted(set(doc) - TOP_KEYS)]
    if doc.get("schema_version", SUPPORTED_VERSIONS[0]) not in SUPPORTED_VERSIONS:
        found.append(f"unsupported schema_version {doc.get('schema_version')!r}")
    if not isinstance(doc.get("id"), str):
        found.append("id is not text")
    if "details" in doc and not isinstance(doc["details"], dict):
        found.append("details is not an object")
    apis = doc.get("available_apis")
    if apis is not None and not (isinstance(apis, list) and all(isinstance(a, str) for a in apis)):
        found.append("available_apis is not a list of names")
    content = doc.get("content")
    if not isinstance(content, list):
        return [*found, "content is not a list"]
    for index, item in enumerate(content):
        found.extend(f"content[{index}]: {problem}" for problem in _item_problems(item))
    if not found:
        found.extend(_link_problems(content))
    return found


def _item_problems(item: Any) -> list[str]:
    if not isinstance(item, dict):
        return ["not an object"]
    kind = item.get("class_")
    fields = FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return [f"unknown class_ {kind!r}"]
    found = [f"{kind} has no field {key!r}" for key in sorted(set(item) - set(fields) - {"class_"})]
    for key, (required, (wanted, check)) in fields.items():
        if key not in item:
            if required:
                found.append(f"{kind} lacks {key!r}")
        elif not check(item[key]):
            found.append(f"{kind}.{key} is not {wanted}")
    if kind == "image_observation" and isinstance(item.get("annotations"), list):
        for number, note in enumerate(item["annotations"]):
            box = note.get("bounding_box") if isinstance(note, dict) else None
            if not (
                isinstance(note, dict)
                and isinstance(note.get("text"), str)
                and isinstance(note.get("element_type"), str)
                and isinstance(box, dict)
                and all(isinstance(box.get(k), (int, float)) for k in ("x", "y", "width", "height"))
            ):
                found.append(f"annotations[{number}] is not {{text, element_type, bounding_box}}")
    if kind == "web_observation" and isinstance(item.get("image_observation"), dict):
        inner = item["image_observation"]
        found.extend(
            f"image_observation: {problem}"
            for problem in _item_problems({"class_": "image_observation", **inner})
        )
    return found


def _link_problems(content: list[dict]) -> list[str]:
    """schema/trajectory.py's validate_tool_call_links, after its adjacent back-fill (on copies:
    the document is not changed)."""
    ids = [item.get("tool_call_id") for item in content]
    taken = {ident for ident in ids if ident is not None}
    generated = 1
    for index in range(len(content) - 1):
        item, following = content[index], content[index + 1]
        if item["class_"] not in CALL_CLASSES or following["class_"] in ACTION_CLASSES:
            continue
        action_id, observation_id = ids[index], ids[index + 1]
        if action_id is not None and observation_id is not None:
            continue
        if action_id is None and observation_id is None:
            while f"call_{generated:06d}" in taken:
                generated += 1
            action_id = f"call_{generated:06d}"
            taken.add(action_id)
            generated += 1
        elif action_id is None:
            action_id = observation_id
        ids[index] = ids[index + 1] = action_id
    found: list[str] = []
    actions: dict[str, int] = {}
    results: dict[str, int] = {}
    for index, (item, ident) in enumerate(zip(content, ids, strict=True)):
        if ident is None:
            continue
        if item["class_"] in ACTION_CLASSES:
            if ident in actions:
                found.append(f"tool_call_id {ident!r} of two actions ({actions[ident]}, {index})")
            actions[ident] = index
        elif ident not in actions:
            found.append(f"content[{index}]: tool_call_id {ident!r} answers no action before it")
        elif ident in results:
            found.append(f"tool_call_id {ident!r} has two results ({results[ident]}, {index})")
        else:
            results[ident] = index
    found.extend(
        f"content[{index}]: tool_call_id {ident!r} has no result"
        for ident, index in actions.items()
        if ident not in results
    )
    return found
