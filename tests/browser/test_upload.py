"""The upload page in real Chromium, with JavaScript (preview, format choice, drop, copy) and
without it (the same form posts to /upload/ and the result page shows the link and password).
"""

from __future__ import annotations

import json

import pytest

from apps.trajectories.models import Trajectory
from tests.browser.conftest import DESKTOP, PHONE, BrowserPage
from tests.conftest import SAMPLES_DIR

# Read as ShareGPT when detected (2 turns), as OpenAI chat messages when chosen (3 messages).
AMBIGUOUS = {
    "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}],
    "messages": [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "README.md setup.py"},
        {"role": "user", "content": "thanks"},
    ],
}


def assert_quiet(browser_page, *, allow_404: bool = False) -> None:
    """Nothing a user would notice went wrong: no dialog, no script error, no CSP violation."""
    assert browser_page.dialogs == []
    assert browser_page.page_errors == []
    errors = browser_page.console_errors
    if allow_404:  # a 404 answer is reported in the console; nothing else may be
        errors = [error for error in errors if "404" not in error]
    assert errors == []


def assert_fits(page, viewport) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def _choose_file_with_picker(page, name: str) -> None:
    page.locator("#upload-file").set_input_files(str(SAMPLES_DIR / name))


def _drop_file(page, name: str) -> None:
    """A real drop event carrying the file, as when dragging it from the desktop."""
    content = (SAMPLES_DIR / name).read_text()
    handle = page.evaluate_handle(
        """([name, content]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([content], name, {type: "application/json"}));
            return transfer;
        }""",
        [name, content],
    )
    page.locator("#dropzone").dispatch_event("dragenter", {"dataTransfer": handle})
    assert "dragging" in page.locator("#dropzone").get_attribute("class")
    page.locator("#dropzone").dispatch_event("drop", {"dataTransfer": handle})


def _preview_summary(page) -> dict[str, str]:
    preview = page.locator("#preview")
    return dict(
        zip(
            preview.locator("dt").all_inner_texts(),
            preview.locator("dd").all_inner_texts(),
            strict=True,
        )
    )


@pytest.fixture
def nojs_page(browser, live_server, transactional_db):
    """A page in a browser context with JavaScript turned off."""
    context = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    page = context.new_page()
    result = BrowserPage(page=page, context=context, base_url=live_server.url)
    page.on("dialog", lambda dialog: (result.dialogs.append(dialog.message), dialog.dismiss()))
    page.on("console", lambda m: m.type == "error" and result.console_errors.append(m.text))
    page.set_default_timeout(10_000)
    yield result
    context.close()


# --- With JavaScript ------------------------------------------------------------------------


def test_anonymous_upload_shows_link_and_password_once_then_deletes_with_it(browser_page, browser):
    page = browser_page.page
    browser_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    browser_page.goto("/upload/")
    assert page.get_by_role("button", name="Share").is_disabled()
    assert page.locator("input[name=visibility][value=private]").is_checked()
    assert not page.locator("#license-box").is_visible()  # only for public shares
    assert page.get_by_label("Format").input_value() == ""  # detect automatically
    browser_page.screenshot("upload-empty-desktop", full_page=True)

    _choose_file_with_picker(page, "openhands_v0_events.json")
    page.locator("#preview").get_by_text("OpenHands event array").wait_for()
    assert _preview_summary(page) == {
        "Format": "OpenHands event array",
        "Trajectories": "1",
        "Events": "11",
    }
    assert page.locator("#dropzone-file").inner_text().startswith("openhands_v0_events.json")
    assert Trajectory.objects.count() == 0  # the preview stored nothing
    page.get_by_label("Feedback").fill("Clicked through the GUI as asked.")
    page.get_by_text("Good", exact=True).click()
    assert page.locator("#upload-status").inner_text() == "Ready to share."
    browser_page.screenshot("upload-preview-desktop", full_page=True)

    page.get_by_role("button", name="Share").click()
    page.wait_for_url("**/upload/done")  # post/redirect/get
    result = page.locator("#upload-result")
    result.get_by_role("heading", name="Shared").wait_for()
    password = result.locator("#shared-password-0").input_value()
    link = result.locator("#shared-link-0").input_value()
    trajectory = Trajectory.objects.get()
    assert link.endswith(f"/t/{trajectory.share_id}/")
    assert trajectory.owner is None and trajectory.visibility == "private"
    assert trajectory.polarity == "positive"
    assert trajectory.feedback_text == "Clicked through the GUI as asked."
    assert trajectory.raw_filename == "openhands_v0_events.json"
    assert len(password) >= 16
    assert password not in page.url
    assert "shown only this once" in result.inner_text()

    result.locator(".copy-row", has=page.locator("#shared-password-0")).get_by_role(
        "button", name="Copy"
    ).click()
    result.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == password
    browser_page.screenshot("upload-done-desktop", full_page=True)

    # This browser may open the private trajectory (it was just shown the password) ...
    result.get_by_role("link", name=trajectory.title).click()
    page.wait_for_url(f"**/t/{trajectory.share_id}/")
    assert password not in page.content()
    # ... the password was shown once: going back to the result (no-store: fetched again)
    # uploads nothing again and leads to the form, without the password.
    page.go_back()
    page.wait_for_url("**/upload/")
    assert password not in page.content() and Trajectory.objects.count() == 1
    # ... a stranger's gets a 404.
    stranger = browser.new_context()
    try:
        answer = stranger.new_page().goto(f"{browser_page.base_url}/t/{trajectory.share_id}/")
        assert answer.status == 404
    finally:
        stranger.close()

    # The link-and-password page: a wrong password is refused neutrally ...
    browser_page.goto(f"/t/{trajectory.share_id}/unlock")
    page.locator("#delete-password").fill("not-the-password")
    page.get_by_label("Yes, delete this trajectory for good").check()
    page.get_by_role("button", name="Delete the trajectory").click()
    assert "No trajectory matches this link and password" in page.content()
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
    browser_page.screenshot("unlock-refused-desktop", full_page=True)

    # ... and the right one deletes it.
    page.locator("#delete-password").fill(password)
    page.get_by_label("Yes, delete this trajectory for good").check()
    page.get_by_role("button", name="Delete the trajectory").click()
    page.get_by_role("heading", name="Deleted").wait_for()
    assert not Trajectory.objects.filter(pk=trajectory.pk).exists()
    browser_page.screenshot("deleted-desktop", full_page=True)
    assert_quiet(browser_page, allow_404=True)


def test_drag_and_drop_a_file_with_several_trajectories_and_share_them(browser_page):
    page = browser_page.page
    browser_page.goto("/upload/")
    _drop_file(page, "openhands_eval_output.jsonl")
    preview = page.locator("#preview")
    preview.get_by_text("Trajectories").wait_for()
    assert preview.locator("dd").all_inner_texts()[1:] == ["2", "16"]
    assert preview.locator(".preview-items li").count() == 2
    assert page.locator("#dropzone").get_attribute("class") == "dropzone enhanced"  # not dragging
    # The dropped file is what the form sends.
    page.get_by_role("button", name="Share").click()
    page.get_by_role("heading", name="2 trajectories shared").wait_for()
    stored = Trajectory.objects.all()
    assert len(stored) == 2 and sum(t.num_events for t in stored) == 16
    assert {t.raw_filename for t in stored} == {"openhands_eval_output.jsonl"}
    assert page.locator("#shared-password-1").is_visible()
    assert_quiet(browser_page)


def test_unreadable_file_is_explained_and_cannot_be_shared(browser_page, tmp_path):
    page = browser_page.page
    broken = tmp_path / "notes.json"
    broken.write_text('{"hello": "world"}')
    browser_page.goto("/upload/")
    page.locator("#upload-file").set_input_files(str(broken))
    page.get_by_text("This file cannot be shared").wait_for()
    preview = page.locator("#preview").inner_text()
    assert "no known trajectory format matches an object with keys hello" in preview
    assert "choose the right one under Format" in preview
    assert page.get_by_role("button", name="Share").is_disabled()
    browser_page.screenshot("upload-error-desktop", full_page=True)


def test_choosing_the_format_overrides_detection_in_preview_and_share(browser_page, tmp_path):
    page = browser_page.page
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(AMBIGUOUS))
    browser_page.goto("/upload/")
    page.locator("#upload-file").set_input_files(str(chat))
    page.locator("#preview").get_by_text("ShareGPT conversation").wait_for()
    assert _preview_summary(page)["Events"] == "2"

    page.get_by_label("Format").select_option(label="OpenAI chat messages")
    page.locator("#preview").get_by_text("OpenAI chat messages").wait_for()
    assert _preview_summary(page) == {
        "Format (chosen)": "OpenAI chat messages",
        "Trajectories": "1",
        "Events": "3",
    }
    browser_page.screenshot("upload-format-chosen-desktop", full_page=True)
    page.get_by_role("button", name="Share").click()
    page.get_by_role("heading", name="Shared").wait_for()
    trajectory = Trajectory.objects.get()
    assert (trajectory.source_format, trajectory.num_events) == ("openai_messages", 3)
    assert_quiet(browser_page)


def test_public_share_needs_the_licence(browser_page, owner, browser_login):
    page = browser_page.page
    browser_login(browser_page.context, owner)
    browser_page.goto("/upload/")
    _choose_file_with_picker(page, "openhands_v0_events.json")
    page.locator("#preview dd").first.wait_for()
    assert not page.locator("#license-box").is_visible()
    page.locator("input[name=visibility][value=public]").check()
    assert page.locator("#license-box").is_visible()
    page.get_by_role("button", name="Share").click()
    assert "agree to the licence" in page.locator("#upload-status").inner_text()
    assert Trajectory.objects.count() == 0

    page.locator("#license-agreed").check()
    page.get_by_role("button", name="Share").click()
    page.locator("#upload-result").get_by_role("heading", name="Shared").wait_for()
    trajectory = Trajectory.objects.get()
    assert trajectory.owner == owner and trajectory.visibility == "public"
    assert trajectory.license == "MIT"
    # Signed in: no password, the trajectory is in the account.
    assert page.locator("#shared-password-0").count() == 0
    assert page.locator("#upload-result").get_by_role("link", name="My trajectories").count()
    assert_quiet(browser_page)


def test_result_page_with_records_not_stored_on_a_phone(browser_page, sample, tmp_path):
    lines = sample("openhands_eval_output.jsonl").splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"\n".join([lines[0], b'{"hello": "world"}', lines[1]]))
    page = browser_page.page
    page.set_viewport_size(PHONE)
    browser_page.goto("/upload/")
    assert_fits(page, PHONE)
    page.locator("#upload-file").set_input_files(str(mixed))
    page.locator("#preview .preview-errors").wait_for()
    assert (
        "1 record cannot be imported and will be skipped" in page.locator("#preview").inner_text()
    )
    browser_page.screenshot("upload-preview-phone", full_page=True)
    page.get_by_role("button", name="Share").click()
    page.get_by_role("heading", name="2 trajectories shared").wait_for()
    not_stored = page.locator(".not-stored").inner_text()
    assert "1 record not stored" in not_stored
    assert "line 2: no known trajectory format matches an object with keys hello" in not_stored
    assert (
        page.locator("button.copy").count() == 4 and page.locator("button.copy").first.is_visible()
    )
    assert_fits(page, PHONE)
    browser_page.screenshot("upload-done-partial-phone", full_page=True)
    assert_quiet(browser_page)


# --- Without JavaScript ---------------------------------------------------------------------


def test_upload_without_javascript_shows_link_and_password_then_opens_it(nojs_page):
    page = nojs_page.page
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        nojs_page.goto("/upload/")
        assert_fits(page, viewport)
        nojs_page.screenshot(f"upload-nojs-{width_name}", full_page=True)
    # Everything is usable as served: the button, the licence box, the format choice.
    assert page.get_by_role("button", name="Share").is_enabled()
    assert page.locator("#license-box").is_visible()
    assert page.get_by_label("Format").input_value() == ""

    _choose_file_with_picker(page, "sweagent_run.traj")
    page.get_by_label("Title").fill("SWE-agent without scripts")
    page.get_by_text("Bad", exact=True).click()
    page.get_by_role("button", name="Share").click()
    page.get_by_role("heading", name="Shared").wait_for()

    trajectory = Trajectory.objects.get()
    assert (trajectory.title, trajectory.source_format, trajectory.polarity) == (
        "SWE-agent without scripts",
        "sweagent",
        "negative",
    )
    assert trajectory.owner is None and trajectory.visibility == "private"
    link = page.locator("#shared-link-0").input_value()
    password = page.locator("#shared-password-0").input_value()
    assert link.endswith(f"/t/{trajectory.share_id}/")
    assert len(password) >= 16 and password not in page.url
    text = page.locator("#upload-result").inner_text()
    assert "Save the link and the password now" in text
    assert f"/t/{trajectory.share_id}/unlock" in text
    # No script to make them work: the Copy buttons stay hidden, the fields can be selected.
    assert page.locator("button.copy").count() == 2
    assert not page.locator("button.copy").first.is_visible()
    assert page.locator("#shared-password-0").is_visible()
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        assert_fits(page, viewport)
        nojs_page.screenshot(f"upload-done-nojs-{width_name}", full_page=True)

    page.set_viewport_size(DESKTOP)
    page.get_by_role("link", name="SWE-agent without scripts").click()
    page.wait_for_url(f"**/t/{trajectory.share_id}/")
    assert page.get_by_role("heading", level=1).inner_text() == "SWE-agent without scripts"
    nojs_page.screenshot("upload-opened-nojs-desktop")
    assert nojs_page.dialogs == [] and nojs_page.console_errors == []


def test_without_javascript_errors_come_back_with_the_choices_kept(nojs_page, tmp_path):
    page = nojs_page.page
    nojs_page.goto("/upload/")
    page.locator("input[name=visibility][value=public]").check()
    page.get_by_label("Title").fill("Kept title")
    _choose_file_with_picker(page, "openhands_v0_events.json")
    page.get_by_role("button", name="Share").click()  # the licence box is not ticked

    page.locator("#upload-errors").wait_for()
    assert (
        "To share publicly, agree to the licence (MIT)."
        in page.locator("#license-box").inner_text()
    )
    assert page.locator("input[name=visibility][value=public]").is_checked()
    assert page.get_by_label("Title").input_value() == "Kept title"
    nojs_page.screenshot("upload-licence-error-nojs-desktop", full_page=True)
    assert Trajectory.objects.count() == 0

    broken = tmp_path / "notes.json"
    broken.write_text('{"hello": "world"}')
    page.locator("#license-agreed").check()
    page.locator("#upload-file").set_input_files(str(broken))
    page.get_by_role("button", name="Share").click()
    errors = page.locator("#upload-errors")
    errors.wait_for()
    assert "This file cannot be shared: no known trajectory format" in errors.inner_text()
    assert "choose it under Format below" in errors.inner_text()
    page.set_viewport_size(PHONE)
    assert_fits(page, PHONE)
    nojs_page.screenshot("upload-format-error-nojs-phone", full_page=True)

    page.set_viewport_size(DESKTOP)
    _choose_file_with_picker(page, "openhands_v0_events.json")
    page.get_by_role("button", name="Share").click()
    page.get_by_role("heading", name="Shared").wait_for()
    trajectory = Trajectory.objects.get()
    assert (trajectory.visibility, trajectory.license, trajectory.title) == (
        "public",
        "MIT",
        "Kept title",
    )


def test_without_javascript_a_file_over_the_limit_is_explained(nojs_page, settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 2_000  # the file is 3.4 KB
    page = nojs_page.page
    nojs_page.goto("/upload/")
    _choose_file_with_picker(page, "openhands_v0_events.json")
    page.get_by_role("button", name="Share").click()
    errors = page.locator("#upload-errors")
    errors.wait_for()
    assert "The file is too large: the request body is" in errors.inner_text()
    assert "over the limit of 2,000 bytes" in errors.inner_text()
    assert Trajectory.objects.count() == 0


def test_left_out_events_are_shown_after_sharing(browser_page, tmp_path):
    """Issue 11: an entry that is not an event is left out and the page says which."""
    payload = json.loads((SAMPLES_DIR / "openhands_share_payload.json").read_text())
    payload["trajectory"].insert(3, {"bogus": 1})
    path = tmp_path / "with-bogus.json"
    path.write_text(json.dumps(payload))
    page = browser_page.page
    browser_page.goto("/upload/")
    page.locator("#upload-file").set_input_files(str(path))
    page.wait_for_function(
        "() => document.getElementById('upload-status').textContent === 'Ready to share.'"
    )
    page.get_by_role("button", name="Share").click()
    page.wait_for_url("**/upload/done")
    left_out = page.locator("#left-out")
    assert "1 item left out" in left_out.inner_text()
    assert (
        "event 3: left out: event has neither 'action' nor 'observation'" in left_out.inner_text()
    )
    browser_page.screenshot("upload-left-out")
    page.set_viewport_size(PHONE)
    browser_page.screenshot("upload-left-out-phone", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1


def test_the_preview_shows_what_will_be_redacted_and_which_files_it_holds(browser_page, tmp_path):
    """Issue 22: a Claude Code session read from the sharer's disk is full of their paths and
    of files the agent read; the preview says what the scan will hide and flags the `.env`."""
    key = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3aB4cD5"
    base = {"sessionId": "s1", "cwd": "/Users/carol/shop"}
    records = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "message": {"role": "user", "content": f"Deploy with {key}"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Read",
                        "input": {"file_path": "/Users/carol/shop/.env"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Read",
                        "input": {"file_path": "/Users/carol/shop/app.py"},
                    },
                ],
            },
        },
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records))
    page = browser_page.page
    browser_page.goto("/upload/")

    page.locator("#upload-file").set_input_files(str(path))

    scan = page.locator("#preview .preview-scan")
    scan.wait_for()
    redactions = scan.locator(".preview-redactions li").all_inner_texts()
    assert any(row.startswith("<OPENAI_API_KEY_1> openai api key sk-p") for row in redactions)
    assert any(row.startswith("<USER_NAME_1> user name") for row in redactions)
    assert "a moderator looks at the share" in scan.inner_text()
    files = scan.locator(".preview-files li")
    assert files.all_inner_texts()[0].startswith("/Users/carol/shop/.env")
    assert files.nth(0).locator(".badge").inner_text() == "usually holds secrets"
    assert key not in page.content()
    browser_page.screenshot("upload-preview-redactions", full_page=True)
    assert Trajectory.objects.count() == 0
    assert_quiet(browser_page)
