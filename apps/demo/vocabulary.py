"""What demo sessions are made of: models, agents, projects, tasks, tools, source files."""

from __future__ import annotations

import random
from dataclasses import dataclass

MODELS = [
    # (model name as the LLM reports it, $ per 1M prompt tokens, $ per 1M completion tokens)
    ("claude-sonnet-4-20250514", 3.0, 15.0),
    ("claude-3-5-sonnet-20241022", 3.0, 15.0),
    ("claude-3-7-sonnet-20250219", 3.0, 15.0),
    ("gpt-4o-2024-08-06", 2.5, 10.0),
    ("gpt-4.1-2025-04-14", 2.0, 8.0),
    ("o3-mini-2025-01-31", 1.1, 4.4),
    ("deepseek-chat", 0.27, 1.1),
    ("gemini-2.5-pro", 1.25, 10.0),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", 0.2, 0.6),
    ("devstral-small-2505", 0.1, 0.3),
]
AGENTS = ["CodeActAgent"] * 6 + [
    "BrowsingAgent",
    "VisualBrowsingAgent",
    "ReadOnlyAgent",
    "LocAgent",
]
VERSIONS = [
    "0.34.0",
    "0.36.1",
    "0.39.1",
    "0.42.0",
    "0.45.0",
    "0.48.0",
    "0.52.1",
    "0.56.0",
    "0.59.0",
]


@dataclass(frozen=True)
class Project:
    name: str
    language: str
    package: str
    test_command: str
    host: str


PROJECTS = [
    Project("acme-api", "python", "acme", "python -m pytest -q", "localhost:8000"),
    Project("ledger-service", "python", "ledger", "python -m pytest tests -x -q", "localhost:8080"),
    Project("tiny-http", "go", "server", "go test ./...", "localhost:8081"),
    Project(
        "webshop-frontend", "typescript", "src", "npm test -- --watchAll=false", "localhost:3000"
    ),
    Project("rusty-cache", "rust", "src", "cargo test", "localhost:7070"),
    Project("weather-notebooks", "python", "weather", "python -m pytest -q", "localhost:8888"),
    Project("issue-tracker", "python", "tracker", "python manage.py test", "localhost:8080"),
    Project("md2site", "typescript", "lib", "npx vitest run", "localhost:5173"),
]

NOUNS = [
    "user",
    "order",
    "invoice",
    "session",
    "token",
    "report",
    "cache",
    "page",
    "item",
    "event",
    "account",
    "payment",
    "ticket",
    "upload",
    "config",
    "record",
    "metric",
    "queue",
]
VERBS = [
    "load",
    "save",
    "parse",
    "render",
    "validate",
    "fetch",
    "build",
    "merge",
    "sync",
    "format",
    "resolve",
    "compute",
    "encode",
    "refresh",
    "export",
    "import",
    "delete",
    "update",
]
# Irregular "-er" nouns of VERBS (the rest add "r" or "er").
DOERS = {"validate": "validator", "format": "formatter", "sync": "syncer"}


def gerund(verb: str) -> str:
    """validate -> validating, sync -> syncing."""
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


def doer(verb: str) -> str:
    """parse -> parser, validate -> validator, load -> loader."""
    return DOERS.get(verb) or (verb + "r" if verb.endswith("e") else verb + "er")


BUGS = [
    ("an off-by-one error in pagination", "returns the last {noun} twice on page 2"),
    ("a crash on empty input", "raises an exception when the {noun} list is empty"),
    ("a timezone bug", "shows {noun} dates one day off for users west of UTC"),
    ("a case-sensitive email lookup", "fails to find a {noun} when the email has capitals"),
    ("a race condition in the {noun} cache", "sometimes serves a stale {noun} after an update"),
    ("a missing null check", "returns 500 when a {noun} has no owner"),
    ("wrong rounding of totals", "shows totals like 10.000000001 on the {noun} page"),
    ("a slow query", "takes 8 seconds to list {noun}s for large accounts"),
    ("unescaped HTML in titles", "breaks the {noun} page layout when a title contains <b>"),
]
FEATURES = [
    "add a --dry-run flag to the {noun} import command",
    "add CSV export for {noun}s",
    "support filtering {noun}s by date range in the API",
    "add retry with backoff when fetching {noun}s",
    "show a progress bar while {gerund} {noun}s",
    "add a health check endpoint",
    "write unit tests for the {noun} {doer}",
]
DATA_TASKS = [
    (
        "plot the daily {noun} counts from data/{noun}s.csv and tell me which weekday is busiest",
        "Busiest weekday for {noun}s",
    ),
    ("load data/metrics.csv and chart the p95 latency per endpoint", "Latency per endpoint chart"),
    ("compare this month's {noun} volume with last month's", "Month-over-month {noun} volume"),
]
PAGE_WORDS = [
    "Dashboard",
    "Settings",
    "Overview",
    "Pull request",
    "Issue",
    "Build log",
    "Release notes",
    "Documentation",
    "Sign in",
    "Checkout",
    "Search results",
]
EMAIL_DOMAINS = ["acme-corp.io", "mailbox.org", "devs.dev", "fastmail.com"]
FIRST_NAMES = ["alice", "bob", "chen", "dana", "emeka", "fatima", "gustav", "hana", "ivan", "jo"]

SYSTEM_PROMPT = (
    "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve "
    "tasks.\n\n<ROLE>\nYour primary role is to assist users by executing commands, modifying code, "
    "and solving technical problems effectively. You should be thorough, methodical, and prioritize "
    'quality over speed.\n* If the user asks a question, like "why is X happening", don\'t try to '
    "fix the problem. Just give an answer to the question.\n</ROLE>\n\n<EFFICIENCY>\n* Each action "
    "you take is somewhat expensive. Wherever possible, combine multiple actions into a single "
    "action.\n</EFFICIENCY>\n\n<FILE_SYSTEM_GUIDELINES>\n* When a user provides a file path, do NOT "
    "assume it's relative to the current working directory.\n* If asked to edit a file, edit the "
    "file directly, rather than creating a new file with a different filename.\n"
    "</FILE_SYSTEM_GUIDELINES>\n\n<VERSION_CONTROL>\n* When committing, use "
    "`git commit -a` only when you know every change is wanted.\n</VERSION_CONTROL>"
)


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool(
        "execute_bash",
        "Execute a bash command in the terminal within a persistent shell session.\n"
        "* One command at a time.\n* Long running commands: run them in the background.",
        {
            "command": {"type": "string", "description": "The bash command to execute."},
            "is_input": {"type": "string", "enum": ["true", "false"]},
        },
        ["command"],
    ),
    _tool(
        "think",
        "Use the tool to think about something. It will not obtain new information or "
        "make any changes, but just log the thought.",
        {"thought": {"type": "string", "description": "The thought to log."}},
        ["thought"],
    ),
    _tool(
        "finish",
        "Signals the completion of the current task or conversation.",
        {
            "message": {"type": "string"},
            "task_completed": {"type": "string", "enum": ["true", "false", "partial"]},
        },
        ["message", "task_completed"],
    ),
    _tool(
        "browser",
        "Interact with the browser using Python code. Use it ONLY when you need to "
        "interact with a webpage. goto(url), click(bid), fill(bid, value), scroll(dx, dy).",
        {"code": {"type": "string"}},
        ["code"],
    ),
    _tool(
        "execute_ipython_cell",
        "Run a cell of Python code in an IPython environment.",
        {"code": {"type": "string"}},
        ["code"],
    ),
    _tool(
        "str_replace_editor",
        "Custom editing tool for viewing, creating and editing files.\n"
        "* `view` shows a file with `cat -n`\n* `create` cannot overwrite an existing file\n"
        "* `str_replace` replaces old_str, which must match exactly one place in the file",
        {
            "command": {
                "type": "string",
                "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
            },
            "path": {"type": "string"},
            "file_text": {"type": "string"},
            "old_str": {"type": "string"},
            "new_str": {"type": "string"},
            "insert_line": {"type": "integer"},
            "view_range": {"type": "array", "items": {"type": "integer"}},
        },
        ["command", "path"],
    ),
]

# --- source code that the agent reads and edits ------------------------------------------------


def _python_file(rng: random.Random, package: str, lines: int) -> list[str]:
    out = [
        f'"""{rng.choice(NOUNS).title()} helpers for {package}."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        f"from {package}.models import {rng.choice(NOUNS).title()}",
        "",
        "log = logging.getLogger(__name__)",
        "",
    ]
    while len(out) < lines:
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        out += [
            "",
            f"def {verb}_{noun}({noun}_id: int, *, limit: int = {rng.choice([10, 20, 50])}):",
            f'    """{verb.title()} one {noun} and return it."""',
            f"    {noun} = {noun.title()}.objects.filter(pk={noun}_id).first()",
            f"    if {noun} is None:",
            f'        log.warning("no {noun} %s", {noun}_id)',
            "        return None",
            f"    items = list({noun}.items.all()[:limit])",
            f"    return {{'id': {noun}.pk, 'items': items, 'total': sum(i.amount for i in items)}}",
        ]
    return out[:lines]


def _go_file(rng: random.Random, package: str, lines: int) -> list[str]:
    out = [f"package {package}", "", "import (", '\t"encoding/json"', '\t"net/http"', ")", ""]
    while len(out) < lines:
        noun, verb = rng.choice(NOUNS).title(), rng.choice(VERBS).title()
        out += [
            "",
            f"// {verb}{noun} handles /{noun.lower()}s.",
            f"func {verb}{noun}(w http.ResponseWriter, r *http.Request) {{",
            '\tid := r.URL.Query().Get("id")',
            '\tif id == "" {',
            '\t\thttp.Error(w, "missing id", http.StatusBadRequest)',
            "\t\treturn",
            "\t}",
            f'\tjson.NewEncoder(w).Encode(map[string]string{{"{noun.lower()}": id}})',
            "}",
        ]
    return out[:lines]


def _ts_file(rng: random.Random, package: str, lines: int) -> list[str]:
    out = [f"import {{ api }} from './{rng.choice(NOUNS)}Api';", ""]
    while len(out) < lines:
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        out += [
            "",
            f"export async function {verb}{noun.title()}(id: string, page = 1) {{",
            f"  const res = await api.get(`/{noun}s/${{id}}?page=${{page}}`);",
            "  if (!res.ok) {",
            f"    throw new Error(`{verb} {noun} failed: ${{res.status}}`);",
            "  }",
            "  const body = await res.json();",
            f"  return body.{noun}s.slice(0, {rng.choice([10, 25, 50])});",
            "}",
        ]
    return out[:lines]


def _rust_file(rng: random.Random, package: str, lines: int) -> list[str]:
    out = ["use std::collections::HashMap;", ""]
    while len(out) < lines:
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        out += [
            "",
            f"/// {verb.title()} a {noun} by key.",
            f"pub fn {verb}_{noun}(map: &HashMap<String, u64>, key: &str) -> Option<u64> {{",
            "    let value = map.get(key)?;",
            "    if *value == 0 {",
            "        return None;",
            "    }",
            f"    Some(value.saturating_mul({rng.randint(2, 9)}))",
            "}",
        ]
    return out[:lines]


CODE = {
    "python": (_python_file, "py"),
    "go": (_go_file, "go"),
    "typescript": (_ts_file, "ts"),
    "rust": (_rust_file, "rs"),
}
