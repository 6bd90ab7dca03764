"""POST /upload/: the upload page's own form, which shares without JavaScript.

The page posts the file and the choices (multipart, CSRF) and answers with a result page: a link
per stored trajectory, the one-time deletion password of an anonymous share, and each record
that could not be stored; or the form again, with the choices kept, saying what is wrong.
"""

from __future__ import annotations

import gzip
import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.trajectories.importers import FORMATS
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_check_password
from apps.trajectories.views.site import UNLOCKED_SESSION_KEY
from tests.trajectories.test_pages import assert_csp_clean
from tests.trajectories.test_pages_upload import AMBIGUOUS

pytestmark = pytest.mark.django_db

UPLOAD = "/upload/"
SHARE_ID = re.compile(r'href="/t/([0-9a-f]{64})/"')


def post(client, data: bytes | None = None, name: str = "trajectory.json", **fields):
    if data is not None:
        fields["file"] = SimpleUploadedFile(name, data, content_type="application/json")
    # The upload answers 303 to its result page (post/redirect/get), which a browser follows.
    return client.post(UPLOAD, fields, follow=True)


def shared_ids(response) -> list[str]:
    return list(dict.fromkeys(SHARE_ID.findall(response.content.decode())))


def password_on(response, index: int = 0) -> str:
    match = re.search(rf'id="shared-password-{index}" value="([^"]+)"', response.content.decode())
    return unescape(match.group(1)) if match else ""


def text_of(response) -> str:
    """The page's words, tags stripped, for checking what a reader sees."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_form_posts_to_the_page_itself_and_works_without_javascript(client):
    html = client.get(UPLOAD).content.decode()

    assert 'action="/upload/"' in html and 'enctype="multipart/form-data"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    # Nothing waits for a script: the button is enabled, the licence box visible.
    assert re.search(r'<button type="submit" id="upload-submit">Share</button>', html)
    assert re.search(r'<div id="license-box" class="license-box">', html)
    assert "<noscript>" not in html and "curl" not in html
    assert_csp_clean(html)


def test_format_select_offers_detection_and_every_importer(client):
    html = client.get(UPLOAD).content.decode()
    select = re.search(r'<select id="upload-format" name="format".*?</select>', html, re.S).group(0)
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]+)</option>', select)

    assert options[0] == ("", " selected", "Detect automatically")
    assert {(value, unescape(label)) for value, _, label in options[1:]} == {
        (name, module.LABEL) for name, module in FORMATS.items()
    }


def test_anonymous_upload_shows_link_and_password_once(client, sample):
    response = post(
        client,
        sample("openhands_v0_events.json"),
        name="gui.json",
        visibility="private",
        polarity="positive",
        title="Clicking through the GUI",
        feedback_text="It found the button.",
    )

    assert response.status_code == 200
    trajectory = Trajectory.objects.get()
    assert (trajectory.owner, trajectory.visibility, trajectory.polarity) == (
        None,
        "private",
        "positive",
    )
    assert trajectory.title == "Clicking through the GUI"
    assert trajectory.feedback_text == "It found the button."
    assert (trajectory.num_events, trajectory.raw_filename) == (11, "gui.json")
    assert shared_ids(response) == [trajectory.share_id]
    password = password_on(response)
    assert trajectory_check_password(trajectory=trajectory, password=password)
    words = text_of(response)
    assert "Save the link and the password now" in words
    assert "shown only this once" in words
    assert "11 events · private" in words
    assert f"http://127.0.0.1:8000/t/{trajectory.share_id}/unlock" in words
    html = response.content.decode()
    assert f'href="/t/{trajectory.share_id}/unlock"' in html
    assert f'value="http://127.0.0.1:8000/t/{trajectory.share_id}/"' in html
    # Copy buttons wait for the script that makes them work.
    assert html.count('data-copy="shared-') == 2 and "hidden>Copy</button>" in html
    assert_csp_clean(html)
    # Not cached anywhere; reached by a redirect, and the password is in no URL.
    assert "no-store" in response["Cache-Control"]
    assert response.redirect_chain == [("/upload/done", 303)]
    assert 'name="robots" content="noindex' in html


def test_the_anonymous_uploader_can_open_the_link_in_this_browser_only(client, sample):
    post(client, sample("openhands_v0_events.json"))
    trajectory = Trajectory.objects.get()

    assert client.session[UNLOCKED_SESSION_KEY] == [trajectory.share_id]
    assert client.get(f"/t/{trajectory.share_id}/").status_code == 200
    assert Client().get(f"/t/{trajectory.share_id}/").status_code == 404


def test_a_later_visit_shows_no_password(client, sample):
    response = post(client, sample("openhands_v0_events.json"))
    password = password_on(response)
    assert password

    for path in (UPLOAD, f"/t/{Trajectory.objects.get().share_id}/"):
        assert password not in client.get(path).content.decode()


def test_signed_in_upload_is_in_the_account_without_password(client, owner, sample):
    client.force_login(owner)

    response = post(
        client,
        sample("sweagent_run.traj"),
        name="run.traj",
        visibility="public",
        license_agreed="true",
        polarity="negative",
    )

    assert response.status_code == 200
    trajectory = Trajectory.objects.get()
    assert trajectory.owner == owner
    assert (trajectory.visibility, trajectory.license, trajectory.polarity) == (
        "public",
        "MIT",
        "negative",
    )
    assert trajectory.source_format == "sweagent"
    assert shared_ids(response) == [trajectory.share_id]
    assert password_on(response) == "" and "password" not in text_of(response).lower()
    assert "listed under My trajectories" in text_of(response)
    assert UNLOCKED_SESSION_KEY not in client.session


def test_multi_record_file_stores_the_good_ones_and_lists_the_bad(client, sample):
    lines = sample("openhands_eval_output.jsonl").splitlines()
    data = b"\n".join([lines[0], b'{"hello": "world"}', lines[1], b"{not json"])

    response = post(client, data, name="output.jsonl")

    assert response.status_code == 200
    stored = list(Trajectory.objects.order_by("created_at", "pk"))
    assert len(stored) == 2
    assert sorted(shared_ids(response)) == sorted(t.share_id for t in stored)
    assert password_on(response, 0) and password_on(response, 1)
    words = text_of(response)
    assert "2 trajectories shared" in words
    assert "2 records not stored" in words
    assert "line 2: no known trajectory format matches an object with keys hello" in words
    assert "line 4: not valid JSON" in words


def test_unreadable_file_gives_the_form_back_with_the_choices_kept(client):
    response = post(
        client,
        b'{"hello": "world"}',
        name="notes.json",
        visibility="public",
        license_agreed="true",
        polarity="negative",
        title="My <b>run</b>",
        feedback_text="It went\nbadly",
        format="",
    )

    assert response.status_code == 400
    assert Trajectory.objects.count() == 0
    html = response.content.decode()
    words = text_of(response)
    assert "This file cannot be shared: no known trajectory format matches an object" in words
    assert "If the format was not recognised, choose it under Format below." in words
    assert 'name="visibility" value="public" checked' in html
    assert 'id="license-agreed" name="license_agreed" value="true" checked' in html
    assert 'name="polarity" value="negative" checked' in html
    assert 'value="My &lt;b&gt;run&lt;/b&gt;"' in html
    assert ">It went\nbadly</textarea>" in html
    assert "Choose the file again" in html
    assert "no-store" in response["Cache-Control"]


def test_a_file_with_no_good_record_is_refused_with_each_error(client, settings, sample):
    settings.TRAJHUB_MAX_EVENTS = 4  # the two rows hold 11 and 5 events
    lines = sample("openhands_eval_output.jsonl").splitlines()
    data = b"\n".join([lines[0], b'{"hello": "world"}', lines[1]])

    response = post(client, data, name="output.jsonl")

    assert response.status_code == 400
    assert Trajectory.objects.count() == 0
    words = text_of(response)
    assert "Nothing in this file could be shared:" in words
    assert "line 1: 11 items, far over the limit of 4 events" in words
    assert "line 2: no known trajectory format matches an object with keys hello" in words
    assert "line 3: 5 events, over the limit of 4" in words


def test_missing_file(client):
    response = post(client, None, visibility="private", title="Kept")

    assert response.status_code == 400
    assert "Choose a trajectory file to share." in text_of(response)
    assert 'aria-invalid="true"' in response.content.decode()
    assert 'value="Kept"' in response.content.decode()
    assert Trajectory.objects.count() == 0


def test_public_without_the_licence_is_refused(client, sample):
    response = post(client, sample("openhands_v0_events.json"), visibility="public")

    assert response.status_code == 400
    assert Trajectory.objects.count() == 0
    assert "To share publicly, agree to the licence (MIT)." in text_of(response)
    html = response.content.decode()
    assert 'name="visibility" value="public" checked' in html
    assert 'class="license-box invalid"' in html


def test_licence_box_ticked_for_a_private_share_records_no_licence(client, sample):
    post(client, sample("openhands_v0_events.json"), visibility="private", license_agreed="true")
    assert Trajectory.objects.get().license == ""


def test_oversized_body_is_refused_before_it_is_read(client, settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 1000

    response = post(client, b"[" + b" " * 2000 + b"]", visibility="private")

    assert response.status_code == 413
    assert "The file is too large" in text_of(response)
    assert "over the limit of 1,000 bytes" in text_of(response)
    assert Trajectory.objects.count() == 0


def test_gzip_file_is_read_and_a_gzip_bomb_refused(client, settings, sample):
    data = gzip.compress(sample("openhands_v0_events.json"))
    assert post(client, data, name="run.json.gz").status_code == 200

    settings.TRAJHUB_MAX_DECOMPRESSED_BYTES = 10_000
    bomb = gzip.compress(b"[" + b" " * 100_000 + b"]")
    response = post(client, bomb, name="bomb.json.gz")
    assert response.status_code == 413
    assert "inflates past the limit" in text_of(response)
    assert Trajectory.objects.count() == 1


def test_a_chosen_format_overrides_detection(client):
    detected = post(client, AMBIGUOUS, name="chat.json")
    forced = post(client, AMBIGUOUS, name="chat.json", format="openai_messages")

    assert detected.status_code == forced.status_code == 200
    by_format = {t.source_format: t.num_events for t in Trajectory.objects.all()}
    assert by_format == {"sharegpt": 2, "openai_messages": 3}


def test_a_chosen_format_that_does_not_fit_says_why_and_stays_chosen(client, sample):
    response = post(client, sample("openhands_v0_events.json"), format="sweagent", title="x")

    assert response.status_code == 400
    assert Trajectory.objects.count() == 0
    words = text_of(response)
    assert "This file cannot be shared: expected a SWE-agent .traj object, got an array." in words
    assert "It was read as SWE-agent trajectory (.traj) because that format is chosen" in words
    assert '<option value="sweagent" selected>' in response.content.decode()


def test_unknown_format_is_a_field_error(client, sample):
    response = post(client, sample("openhands_v0_events.json"), format="yaml")
    assert response.status_code == 400
    assert "Select a valid choice" in text_of(response)
    assert Trajectory.objects.count() == 0


def test_csrf_is_enforced(owner, sample):
    client = Client(enforce_csrf_checks=True)
    data = sample("openhands_v0_events.json")

    refused = post(client, data)
    assert refused.status_code == 403
    assert Trajectory.objects.count() == 0

    client.get(UPLOAD)
    token = client.cookies["csrftoken"].value
    assert post(client, data, csrfmiddlewaretoken=token).status_code == 200

    client.force_login(owner)
    assert post(client, data).status_code == 403
    client.get(UPLOAD)
    token = client.cookies["csrftoken"].value
    assert post(client, data, csrfmiddlewaretoken=token).status_code == 200
    assert Trajectory.objects.count() == 2


def test_anonymous_rate_limit_says_so_with_429(client, settings, sample):
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 1
    data = sample("openhands_v0_events.json")
    assert post(client, data).status_code == 200

    response = post(client, data, title="Kept")

    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 3600  # when the hour's count starts again
    assert "Too many anonymous shares from this address" in text_of(response)
    assert 'value="Kept"' in response.content.decode()
    assert Trajectory.objects.count() == 1


def test_anonymous_sharing_off_is_a_403_with_a_way_out(client, settings, owner, sample):
    settings.TRAJHUB_ANONYMOUS_SHARING = False
    data = sample("openhands_v0_events.json")

    response = post(client, data)

    assert response.status_code == 403
    assert "Anonymous sharing is turned off on this site" in text_of(response)
    assert 'href="/accounts/login/?next=/upload/"' in response.content.decode()
    client.force_login(owner)
    assert post(client, data).status_code == 200


def test_text_from_the_file_and_the_form_is_escaped(client, sample):
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'

    response = post(client, sample("openhands_v0_events.json"), title=payload)

    assert response.status_code == 200
    html = response.content.decode()
    assert payload not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=" in html


def test_reloading_the_result_uploads_nothing_again_and_the_password_is_shown_once(client, sample):
    """The report: reloading the "Shared" page posted the file again. The upload now redirects
    (303) to the result, and the one-time password waits in the session for that one page."""
    first = client.post(
        UPLOAD,
        {"file": SimpleUploadedFile("a.json", sample("openhands_v0_events.json"))},
    )
    assert first.status_code == 303 and first["Location"] == "/upload/done"
    assert Trajectory.objects.count() == 1
    shown = client.get("/upload/done")
    password = password_on(shown)
    assert shown.status_code == 200 and password
    assert trajectory_check_password(trajectory=Trajectory.objects.get(), password=password)
    reloaded = client.get("/upload/done", follow=True)
    assert reloaded.redirect_chain == [("/upload/", 302)]
    assert password not in reloaded.content.decode()
    assert "shown once" in text_of(reloaded)
    assert Trajectory.objects.count() == 1
    # Another browser never sees the result.
    assert password not in Client().get("/upload/done", follow=True).content.decode()
