"""The detectors, each on text where it must fire and text where it must not; the allowlist."""

from __future__ import annotations

import pytest

from apps.moderation.scanning.scanner import Allowlist, Detection, Scanner, scan
from tests.moderation import samples as s


def kinds(text: str, scanner: Scanner | None = None) -> list[tuple[str, str]]:
    found = (scanner or Scanner()).scan(text)
    for detection in found:
        assert text[detection.start : detection.end] == detection.text
    return [(d.kind, d.text) for d in found]


@pytest.mark.parametrize(
    ("kind", "make", "context"),
    [
        ("openai_api_key", s.openai_key, "export OPENAI_API_KEY={}\n"),
        ("openai_api_key", s.openai_project_key, 'client = OpenAI(api_key="{}")'),
        ("anthropic_api_key", s.anthropic_key, "ANTHROPIC_API_KEY={} python run.py"),
        ("huggingface_token", s.huggingface_token, "huggingface-cli login --token {}"),
        ("github_token", s.github_token, "git clone https://{}@github.com/acme/app"),
        ("github_token", s.github_pat, "GH_TOKEN={}"),
        ("gitlab_token", s.gitlab_token, "PRIVATE-TOKEN: {}"),
        ("slack_token", s.slack_token, "SLACK_BOT_TOKEN={}"),
        ("stripe_key", s.stripe_key, "stripe.api_key = '{}'"),
        ("aws_access_key", s.aws_key_id, "aws_access_key_id = {}"),
        ("aws_secret_key", s.aws_secret, "aws_secret_access_key = {}"),
        ("google_api_key", s.google_key, "https://maps.googleapis.com/maps/api?key={}&q=x"),
        ("private_key", s.private_key_block, "$ cat ~/.ssh/id_rsa\n{}\n$ "),
        ("jwt", s.jwt, "Cookie: session={}; path=/"),
    ],
)
def test_vendor_secret_is_found_with_its_exact_span(kind, make, context):
    secret = make()
    text = context.format(secret)
    assert kinds(text) == [(kind, secret)]


@pytest.mark.parametrize(
    "text",
    [
        "pip install scikit-learn; import sklearn  # sk-learn-is-great-for-ml-models",
        "task-" + "A1b2C3d4E5f6G7h8I9j0K1l2",  # "sk-" inside a word
        "sk-" + "x" * 48,  # the documentation placeholder
        "OPENAI_API_KEY=sk-...",
        "key: sk-proj-abcdefghij...",  # shown truncated
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7" + "EXAMPLE",  # AWS's documented example
        "hf_hub_download(repo_id='gpt2', filename='config.json')",
        "ghp_short",
        "eyJhbGciOiJIUzI1NiJ9 alone is only a header",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
        "YOUR_API_KEY",
    ],
)
def test_no_secret_in_lookalikes(text):
    assert [k for k, _ in kinds(text) if k not in {"email", "phone", "ip_address"}] == []


def test_generic_assignment_flags_high_entropy_values_only():
    value = s.body(20)
    assert kinds(f"DB_PASSWORD={value}") == [("secret", value)]
    assert kinds(f'{{"api_key": "{value}"}}') == [("secret", value)]
    assert kinds(f"client_secret: '{value}'") == [("secret", value)]
    for harmless in [
        "password=self.password",
        "password = settings.DATABASE_PASSWORD",
        "api_key=os.environ",
        "password: ${DB_PASSWORD}",
        "token = <your token here>",
        "password=password",
        "max_tokens=4096",
        "secret_key = get_secret_key()",
        "pwd: /workspace/project",
    ]:
        assert kinds(harmless) == [], harmless


def test_bearer_tokens_and_basic_auth_headers():
    token = s.body(40)
    assert kinds(f"curl -H 'Authorization: Bearer {token}' https://api.acme.io") == [
        ("bearer_token", token)
    ]
    assert kinds("Authorization: Basic dXNlcjpwYXNzd29yZA==")[0][0] == "bearer_token"
    assert kinds("Bearer tokens are described in RFC 6750") == []


def test_url_credentials_flag_the_password():
    password = s.body(14)
    text = f"DATABASE_URL=postgres://app:{password}@db.internal.acme.io:5432/app"
    assert kinds(text) == [("url_credentials", password)]
    assert kinds("redis://:changeme@localhost:6379/0") == []
    assert kinds("postgres://postgres:postgres@127.0.0.1:5432/x") == []
    assert kinds("https://github.com/acme/app") == []


def test_emails():
    assert kinds("Author: Jane Roe <jane.roe@acme-corp.io>") == [("email", "jane.roe@acme-corp.io")]
    assert kinds("two: a.b@mail.co.uk, c+tag@gmail.com") == [
        ("email", "a.b@mail.co.uk"),
        ("email", "c+tag@gmail.com"),
    ]
    for harmless in [
        "john@example.com",
        "bob@mail.example.org",
        "dev@project.test",
        "root@localhost",
        "icon@2x.png",
        "npm i @types/node@20.1.0",
        "@property\ndef x(self):",
        "git@github.com:acme/app.git",
        "Co-authored-by: openhands <openhands@all-hands.dev>",
    ]:
        assert kinds(harmless) == [], harmless


def test_email_after_another_at_sign_in_the_same_text():
    text = "ssh deploy@10.0.0.7\nContact: jane.roe@gmail.com"
    assert kinds(text) == [("email", "jane.roe@gmail.com")]


def test_phone_numbers():
    assert kinds("call +1 415 555 2671 today") == [("phone", "+1 415 555 2671")]
    assert kinds("Tel: +44 20 7946 0958") == [("phone", "+44 20 7946 0958")]
    assert kinds("office (415) 555-2671") == [("phone", "(415) 555-2671")]
    assert kinds("cell 415-555-2671.") == [("phone", "415-555-2671")]
    for harmless in [
        "2024-01-15 10:30:00 +0000",
        "PID 123456789",
        "(212) 555-0123",  # reserved for fiction
        "@@ -12,7 +12,9 @@",
        "version 1.2.3-456-7890",
        "+1",
    ]:
        assert kinds(harmless) == [], harmless


def test_ip_addresses():
    assert kinds("ssh root@8.8.4.4 -p 22") == [("ip_address", "8.8.4.4")]
    assert kinds("server 2606:4700:4700::1111 up") == [("ip_address", "2606:4700:4700::1111")]
    for harmless in [
        "listening on 127.0.0.1:8000 and 0.0.0.0",
        "10.1.2.3 192.168.0.10 172.16.5.4 169.254.1.1",
        "docs use 192.0.2.1, 198.51.100.2 and 203.0.113.9",
        "::1 and fe80::1 and 2001:db8::1",
        "AppleClang-14.0.3.14030022-arm64",
        "version 1.2.3.4.5",
        "999.1.1.1",
        "std::vector<int> v; a[::2]; 10:30:00",
        "mac 00:1a:2b:3c:4d:5e",
    ]:
        assert kinds(harmless) == [], harmless


def test_overlaps_keep_the_more_specific_kind():
    key = s.openai_key()
    # `api_key=` and the vendor pattern both match: one finding, the vendor kind.
    assert kinds(f"api_key={key}") == [("openai_api_key", key)]
    token = s.jwt()
    assert kinds(f"access_token={token}") == [("jwt", token)]


def test_allowlist_setting_adds_and_replaces():
    text = "mail ops@acme-corp.io from 10.0.0.1"
    assert kinds(text) == [("email", "ops@acme-corp.io")]
    extra = Scanner(Allowlist.build({"domains": ["acme-corp.io"]}))
    assert kinds(text, extra) == []
    bare = Scanner(Allowlist.build({"use_defaults": False}))
    assert kinds(text, bare) == [("email", "ops@acme-corp.io"), ("ip_address", "10.0.0.1")]
    assert kinds("me@example.com", bare) == [("email", "me@example.com")]
    value = s.body(20)
    assert kinds(f"password={value}", Scanner(Allowlist.build({"values": [value]}))) == []
    with pytest.raises(ValueError):
        Allowlist.build({"domain": ["typo"]})


def test_scan_many_maps_findings_back_to_each_string():
    key = s.github_token()
    texts = ["nothing here", f"token {key}", "", "mail jane.roe@gmail.com", "x" * 10]
    found = Scanner().scan_many(texts)
    assert [(i, d.kind) for i, d in found] == [(1, "github_token"), (3, "email")]
    for index, detection in found:
        assert texts[index][detection.start : detection.end] == detection.text


def test_scan_pair_sees_a_secret_named_by_its_key():
    value = s.body(24)
    scanner = Scanner()
    assert scanner.scan_pair("DB_PASSWORD", value) == Detection("secret", value, 0, len(value))
    assert scanner.scan_pair("x-api-key", value) is not None
    assert scanner.scan_pair("max_tokens", value) is None
    assert scanner.scan_pair("password", "hunter2") is None
    assert scanner.scan_pair("password", "correct horse battery staple") is None


def test_module_level_scan_and_short_or_empty_text():
    assert scan("") == []
    assert scan("a@b.c") == []
    assert scan("jane.roe@gmail.com") == [Detection("email", "jane.roe@gmail.com", 0, 18)]


def test_real_fixtures(real_fixture):
    """Public sample trajectories: no vendor credential, no false alarm in code, logs and JSON;
    the passwords a model hands out in the ShareGPT demo are flagged as secrets."""
    found: dict[str, list[str]] = {}
    for name in [
        "openhands_v0_basic.json",
        "openhands_v0_basic_gui_mode.json",
        "openhands_v0_eval_multi_swe_bench_output.jsonl",
        "sweagent_v07_marshmallow-1867_default.traj",
        "openhands_v1_sdk_openagentsafety_output.jsonl",
        "sharegpt_glaive_toolcall_en_demo.json",
    ]:
        for detection in Scanner().scan(real_fixture(name).decode()):
            found.setdefault(detection.kind, []).append(detection.text)
    # `curl -u theagentcompany:theagentcompany` in OpenAgentSafety: the benchmark's own login,
    # a real credential on a command line all the same.
    assert set(found) == {"email", "secret", "url_credentials", "user_name"}
    # An issue's crash log pasted into a Multi-SWE-bench task: someone's home folder on a Mac.
    assert set(found["user_name"]) == {"chriskdon"}
    # (Scanned here as raw JSON: the Markdown view, decoding `\\"` and the like, finds the same
    # login a second time where JSON escapes hid it from the plain pass.)
    assert set(found["url_credentials"]) == {"theagentcompany:theagentcompany"}
    assert "aB3#fG7!kL9@" in found["secret"]
    assert "sloria1@gmail.com" in found["email"]  # a real contributor's address in a SWE-agent log
    assert "openhands@all-hands.dev" not in found["email"]


def test_a_match_across_two_strings_hides_no_finding_in_between():
    """A PEM header in one output and a footer in a later one: the library's private-key rule
    matched from one to the other across the strings of the batch, won the overlap with every
    finding in between, and was then dropped as spanning strings, so the token and the email
    between them were found nowhere (and left in clear)."""
    token = s.github_token()
    texts = [
        "A PEM file starts with -----BEGIN RSA PRIVATE KEY----- and a line of Base64.",
        "ls -la ~/.ssh && cat ~/.ssh/config && echo done with the listing of the folder",
        f"export GITHUB_TOKEN={token}",
        "mail jane.roe@gmail.com",
        "It ends with -----END RSA PRIVATE KEY----- on a line of its own.",
    ]
    found = [(i, d.kind, d.text) for i, d in Scanner().scan_many(texts)]
    assert (2, "github_token", token) in found
    assert (3, "email", "jane.roe@gmail.com") in found


def _token(rng, length: int, alphabet: str) -> str:
    return "".join(rng.choices(alphabet, k=length))


def test_formats_left_to_the_library_are_found_as_the_same_kind():
    """Grafana service-account tokens, Duffel and Frame.io tokens, and AWS secret keys after a
    keyword were also hand rules; the library finds each as the kind it was already redacted as
    (its finding won the overlap), so they were dropped from the hand table."""
    import random
    import string

    rng = random.Random(11)
    alnum, lower = string.ascii_letters + string.digits, string.ascii_lowercase + string.digits
    cases = [
        (
            "grafana_service_account_token",
            "glsa_" + _token(rng, 32, alnum) + "_" + _token(rng, 8, "0123456789abcdef"),
            "export GRAFANA={}",
        ),
        ("duffel_api_token", "duffel_test_" + _token(rng, 43, lower), "token: {}"),
        ("frameio_api_token", "fio-u-" + _token(rng, 64, lower), "see {} here"),
        ("aws_secret_key", s.aws_secret(), "AWS_SECRET_KEY={}"),
        ("aws_secret_key", s.aws_secret(), "awsSecretAccessKey: '{}'"),
        ("aws_secret_key", s.aws_secret(), '"aws_secret_access_key" => "{}"'),
    ]
    for kind, secret, context in cases:
        assert kinds(context.format(secret)) == [(kind, secret)], (kind, context)
