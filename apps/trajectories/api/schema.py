"""The OpenHands drop-in in the OpenAPI schema (/api/schema, /api/docs).

`share_od_trajectory` is a plain Django view (OpenHands posts without CSRF token or auth and
reads a fixed envelope), so drf-spectacular does not see it; this post-processing hook adds its
two paths, with the payload OpenHands sends and the envelope it reads, so that clients and the
schema tests know it as well as the rest of the API.
"""

from __future__ import annotations

from typing import Any

_MESSAGE = {"type": "string", "description": "what happened, in words OpenHands shows"}


def _envelope(status: int, description: str, **body: dict) -> dict[str, Any]:
    return {
        "description": description,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["statusCode", "body"],
                    "properties": {
                        "statusCode": {"type": "integer", "enum": [status]},
                        "body": {
                            "type": "object",
                            "required": ["message", *body],
                            "properties": {"message": _MESSAGE, **body},
                        },
                    },
                }
            }
        },
    }


def _operation(operation_id: str) -> dict[str, Any]:
    """The drop-in endpoint's OpenAPI operation. Long because it is one document written as
    data (request, example, responses); cut into pieces it would be harder to read."""
    share_id = {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "the share id"}
    password = {
        "type": "string",
        "description": "anonymous shares: the deletion password, shown only here ('' otherwise)",
    }
    warnings = {
        "type": "array",
        "description": "events of the upload left out because they are not events, by index "
        "(empty when nothing was left out; the message then says how many)",
        "items": {
            "type": "object",
            "required": ["where", "message"],
            "properties": {"where": {"type": "string"}, "message": {"type": "string"}},
        },
    }
    errors = {
        str(status): _envelope(status, description)
        for status, description in (
            (400, "not a share payload, or nothing in it could be stored"),
            (401, "an API token was sent and is wrong"),
            (403, "anonymous sharing is turned off"),
            (405, "only POST"),
            (413, "the body is over the size limit"),
            (414, "the query string is over the limit"),
            (415, "an unsupported Content-Encoding"),
            (429, "too many anonymous shares; Retry-After says when to try again"),
        )
    }
    return {
        "operationId": operation_id,
        "summary": "Share one trajectory the way OpenHands does (its share / feedback button)",
        "description": (
            "Takes exactly the payload OpenHands' `store_feedback` posts and answers HTTP 200 "
            "with the envelope it reads (`body.feedback_id` is the share id, `/share?share_id=` "
            "leads to it). Errors keep the envelope with a 4xx status. `permissions: public` "
            "agrees to the site's licence. No CSRF token; an API token is optional."
        ),
        "tags": ["openhands"],
        "security": [{"apiToken": []}, {}],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["trajectory"],
                        "properties": {
                            "version": {"type": "string"},
                            "email": {
                                "type": "string",
                                "description": "contact address, never shown",
                            },
                            "polarity": {"type": "string", "enum": ["positive", "negative"]},
                            "feedback": {"type": "string"},
                            "permissions": {"type": "string", "enum": ["public", "private"]},
                            "trajectory": {"type": "array", "items": {"type": "object"}},
                            "token": {"type": "string", "description": "never stored"},
                        },
                    },
                    "example": {
                        "version": "1.0",
                        "email": "",
                        "polarity": "positive",
                        "feedback": "positive",
                        "permissions": "private",
                        "trajectory": [
                            {
                                "id": 0,
                                "source": "user",
                                "action": "message",
                                "args": {"content": "hi"},
                            }
                        ],
                    },
                }
            },
        },
        "responses": {
            "200": _envelope(
                200, "stored", feedback_id=share_id, password=password, warnings=warnings
            ),
            **errors,
        },
    }


def add_openhands_drop_in(result: dict, generator: Any, request: Any, public: bool) -> dict:
    paths = result.setdefault("paths", {})
    paths["/share_od_trajectory"] = {"post": _operation("openhands_share")}
    paths["/api/share"] = {"post": _operation("openhands_share_api")}
    return result
