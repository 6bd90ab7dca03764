"""What presenters of several formats share: message content (text as Markdown, images from
our storage), the headings of chat-shaped formats' tool steps, and the generic card of an event
no presenter knows (its text and every field, never nothing)."""

from __future__ import annotations

from typing import Any

from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.values import as_str, humanize


def image_placeholders(text: str, files: Any) -> str:
    """`<image>` tokens named after the file each stood for (LLaMA-Factory's `images` list):
    the bytes are not in the upload, so the page says which picture was there."""
    if not isinstance(files, list) or "<image>" not in text:
        return text
    names = iter(files)

    def name() -> str:
        file = next(names, "")
        return f"[image: {as_str(file)} (not in the upload)]" if file else "[image]"

    parts = text.split("<image>")
    return parts[0] + "".join(name() + part for part in parts[1:])


def chat_content(b: CardBuilder, content: Any) -> None:
    """Message content: a string, or parts (text as Markdown, images from our storage)."""
    files = b.data.get("image_files")
    if isinstance(content, str) and files:
        content = image_placeholders(content, files)
        for file in files:
            b.badge(f"image: {as_str(file).rsplit('/', 1)[-1]}")
    if isinstance(content, list):
        texts: list[str] = []
        images: list[Any] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = as_str(part.get("type"))
                if isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif kind in ("image_url", "image", "input_image"):
                    images.append(
                        part.get("image_url")
                        or part.get("url")
                        or part.get("source")
                        or part.get("data")
                        or part.get("image_urls")
                    )
        b.markdown("\n\n".join(texts))
        b.images(*images, label="Images", alt="Attached image")
    else:
        b.markdown(as_str(content))


# Canonical types the importers give tool steps of chat-shaped formats (SWE-agent, OpenAI).
ACTION_TITLES = {
    "run": ("Command", "command"),
    "run_ipython": ("Python", "command"),
    "read": ("Read file", "file"),
    "edit": ("Edit file", "edit"),
    "write": ("Write file", "edit"),
    "browse": ("Browse", "browser"),
    "think": ("Thought", "think"),
    "finish": ("Finish", "finish"),
    "submit": ("Submit", "finish"),
}
OBSERVATION_TITLES = {
    "run": "Output",
    "run_ipython": "Python output",
    "read": "File content",
    "edit": "Edit result",
    "write": "Write result",
    "browse": "Browser",
    "finish": "Result",
}


def action_head(b: CardBuilder, default: str, family: str) -> None:
    title, fam = ACTION_TITLES.get(b.card.type, (default, family))
    b.head(title, fam)


def observation_head(b: CardBuilder, default: str) -> None:
    b.head(OBSERVATION_TITLES.get(b.card.type, default), "output")


def generic(b: CardBuilder) -> None:
    """An event of a type this page does not know: its text and every field, not nothing."""
    if b.card.kind == "message" and b.card.source in ("user", "agent") and b.text.strip():
        user = b.card.source == "user"
        b.head("User" if user else "Agent", "user" if user else "agent")
        b.markdown(b.text)
        rest = {
            k: v
            for k, v in b.data.items()
            if not (isinstance(v, str) and v.strip() == b.text.strip())
        }
        b.fields(rest, collapsed=True, summary="More fields")
        return
    b.head(
        humanize(b.card.type),
        {"message": "agent", "observation": "output", "system": "system"}.get(b.card.kind, "tool"),
    )
    b.output(b.text, tail=0)
    b.fields(b.data)
