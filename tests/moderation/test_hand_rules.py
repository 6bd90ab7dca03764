"""Every hand rule (apps/moderation/scanning/rules.py) finds the shape it was written for.

The recall corpora exercise the rules through the secrets they hold, which leave most keyword rows,
the bare ASIA/ABIA/ACCA ids, cut-off private keys and `user:password@` in URLs untried: here each
rule has a sample of its own, found whole by the scan and matched by the rule itself, so that a
rule that stops matching (or is dropped without the library covering its shape) fails a test.
"""

from __future__ import annotations

import string

import pytest

from apps.moderation.scanning import candidates
from apps.moderation.scanning import rules as hand
from apps.moderation.scanning.scanner import Scanner
from tests.moderation import samples as s

ALNUM = string.ascii_letters + string.digits
LOWER_HEX = "0123456789abcdef"


def _value() -> str:
    return s.random_key(24)


def _keyword_samples() -> dict[str, tuple[str, str]]:
    """One sample per keyword row, each of its spellings in turn (upper case, in an assignment)."""
    out: dict[str, tuple[str, str]] = {}
    places = ["{k}={v}", 'export {k}="{v}"', '{{"{k}": "{v}"}}', "{k}: {v}", "{k} => '{v}'"]
    spellings = {
        "passw": ["DB_PASSWORD", "passwd"],
        "passphrase": ["GPG_PASSPHRASE"],
        "pwd": ["ADMIN_PWD"],
        "private": ["PRIVATE_KEY", "private-key"],
        "secret": ["SECRET", "AWS_SECRET_KEY", "secretkey"],
        "signing": ["SIGNING_KEY", "signing_secret"],
        "session": ["SESSION_SECRET", "session-key"],
        "api": ["API_KEY", "api-token", "apisecret"],
        "access": ["ACCESS_TOKEN", "access_key"],
        "auth": ["AUTH_TOKEN", "authkey"],
        "app": ["APP_KEY", "app_secret"],
        "client": ["CLIENT_SECRET", "client-secret"],
        "cookie": ["COOKIE_SECRET"],
        "crypt": ["CRYPT_KEY", "crypto_key"],
        "token": ["GITLAB_TOKEN", "token"],
        "enc": ["ENCRYPTION_KEY", "ENC_KEY", "encrypt-key"],
        "master": ["MASTER_KEY"],
        "hmac": ["HMAC_KEY", "hmac_secret"],
        "jwt": ["JWT_SECRET", "jwt-key"],
    }
    for anchor, _ in hand.KEYWORDS:
        for index, keyword in enumerate(spellings[anchor]):
            value = _value()
            place = places[index % len(places)]
            out[f"assignment_{anchor}#{index}"] = (place.format(k=keyword, v=value), value)
    return out


def _harness_body() -> str:
    return f"{s.body(22, ALNUM + '_-')}.{s.body(24)}.{s.body(20)}"


def _azure_client_secret() -> str:
    return s.body(3, ALNUM + "_~.") + "8Q~" + s.body(34, ALNUM + "_~.-")


def _prefixed_samples() -> dict[str, tuple[str, str]]:
    bodies = {
        "4b1d": s.body(38),
        "live_": s.body(40, ALNUM + "_-"),
        "eyJrIjoi": s.body(60),
        "glc_": s.body(48, ALNUM + "+/"),
        "key-": s.body(32, LOWER_HEX),
        "pubkey-": s.body(32, LOWER_HEX),
        "pk.": s.body(60, string.ascii_lowercase + string.digits),
        "sk.": s.body(60, string.ascii_lowercase + string.digits)
        + "."
        + s.body(22, string.ascii_lowercase + string.digits),
        "NRJS-": s.body(19, LOWER_HEX),
        "NRII-": s.body(32, string.ascii_lowercase + string.digits),
        "NRAK-": s.body(27, string.ascii_lowercase + string.digits),
        "access-": "sandbox-" + "-".join(s.body(n, LOWER_HEX) for n in (8, 4, 4, 4, 12)),
        "pscale_": "tkn_" + s.body(43, ALNUM + "_"),
        "tfp_": s.body(59, string.ascii_lowercase + string.digits),
        "t1.": s.body(40, ALNUM) + "." + s.body(86, ALNUM),
        "AQVN": s.body(36, ALNUM + "_-"),
        "AKCp": s.body(69),
        "cmVmd": s.body(59),
        "fo1_": s.body(43, ALNUM + "_-"),
        "fm1a_": s.body(120, ALNUM + "+/") + "==",
        "fm1r_": s.body(104, ALNUM + "+/"),
        "fm2_": s.body(160, ALNUM + "+/") + "=",
        "pat.": _harness_body(),
        "sat.": _harness_body(),
    }
    out = {}
    for rule in hand.FAMILY["literal"]:
        if rule.name.startswith("prefixed_"):
            token = rule.anchor + bodies[rule.anchor]
            out[rule.name] = (f"config: {token} (from the vault)", token)
    return out


def _samples() -> dict[str, tuple[str, str]]:
    """Rule name (`#n` for a rule's further samples) -> (text, the value found in it)."""
    aws_ids = {
        f"aws_key_id_{prefix}": prefix + s.body(16, string.ascii_uppercase + string.digits)
        for prefix in ("AKIA", "ASIA", "ABIA", "ACCA")
    }
    key = s.private_key_block()
    cut_key = key.split("-----END")[0].rstrip()
    samples = {
        **_prefixed_samples(),
        **{
            name: (f"aws configure set id {key} --profile ci", key) for name, key in aws_ids.items()
        },
        **_keyword_samples(),
    }
    oauth = s.anthropic_oauth_token()
    azure = _azure_client_secret()
    admin = "sk-ant-admin01-" + s.body(80, ALNUM + "_-")
    openai = s.openai_key()
    project = s.openai_project_key()
    none_key = s.openai_none_key()
    password = "Xy7#kP9!qL2m"
    bearer = s.body(40, ALNUM + "._-")
    basic = s.body(28, ALNUM + "+/") + "=="
    generic = s.random_key(32)
    prose = {
        anchor: s.random_key(32) for anchor in ("credential", "secret", "token", "passw", "api")
    }
    samples.update(
        {
            "anthropic": (f"ANTHROPIC key {oauth} rotated", oauth),
            "anthropic#1": (f"admin key {admin}", admin),
            "azure_ad_client_secret": (f"$ az ad app credential reset\n{azure}\n", azure),
            "openai": (f"$ echo {openai}", openai),
            "openai#1": (f"using {project} for the eval", project),
            "openai#2": (f"key={none_key}&x=1", none_key),
            "private_key": (f"$ head -c 900 id_rsa\n{cut_key}", cut_key),
            "private_key#1": (f"$ cat deploy.pem\n{key}\n$ ", key),
            "url_credentials": (
                "git clone https://deploy:Xy7kP9!qL2m$@git.acme.io/a",
                "Xy7kP9!qL2m$",
            ),
            "email": ("Reach me at jane.roe@gmail.com today", "jane.roe@gmail.com"),
            "home_user_0": ("$ ls /Users/alice.smith/Repositories/cli", "alice.smith"),
            "home_user_1": ('{"cwd": "/home/dkowalski"}', "dkowalski"),
            "home_user_2": ("PS C:\\Users\\Alice\\project> dir", "Alice"),
            "prompt_host": ("alice@Alices-MacBook-Pro ~ % whoami", "Alices-MacBook-Pro"),
            "mysql_password": (f"mysql -h db -u root -p'{password}' shop", password),
            "mysql_password#1": ("mysqldump -u app -pS3cr3tPw9x shop > dump.sql", "S3cr3tPw9x"),
            "mariadb_password": (f"mariadb -u root -p{password} -e 'select 1'", password),
            "flag_password": (f"psql --password {password} -h db", password),
            "flag_password#1": (f"deploy --db-password='{password}'", password),
            "bearer": (f"GET /v1/me HTTP/1.1\nAuthorization: Bearer {bearer}\n", bearer),
            "basic_auth": (f'{{"Authorization": "Basic {basic}"}}', basic),
            "ipv4": ("ssh deploy@34.201.17.9 uptime", "34.201.17.9"),
            "phone_intl": ("call +44 20 7946 0958 after six", "+44 20 7946 0958"),
            "phone_nanp": ("office: (415) 555-2671", "(415) 555-2671"),
            "generic_key": (f"KEY={generic}", generic),
            "generic_key#1": (f"export SOME_KEY='{generic}'", generic),
            **{
                f"prose_{anchor}": (f"Loaded {word} {prose[anchor]} from vault", prose[anchor])
                for anchor, word in (
                    ("credential", "credential"),
                    ("secret", "secret"),
                    ("token", "token"),
                    ("passw", "password"),
                    ("api", "api key"),
                )
            },
        }
    )
    return samples


SAMPLES = _samples()


def test_every_hand_rule_has_a_sample():
    named = {name.split("#")[0] for name in SAMPLES}
    assert named == {rule.name for rule in hand.RULES}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_rule_matches_its_shape_and_the_scan_finds_it_whole(name):
    text, value = SAMPLES[name]
    rule = hand.BY_NAME[name.split("#")[0]]
    at = text.index(value)
    # The rule itself, where its core is offered: its value (or its whole match) is the value.
    matches, _ = candidates.candidates().find(text, hand.one_byte_copy(text))
    spans = set()
    for matched, match in matches[rule.family]:
        if matched is rule:
            group = f"{rule.name}__v" if rule.family == "number" else "value"
            has_group = group in match.re.groupindex and match.start(group) >= 0
            spans.add(match.span(group) if has_group else match.span())
    if rule.kind == "email":  # the rule matches the domain; the local part is found after it
        assert (text.index("@") + 1, at + len(value)) in spans
    elif rule.kind == "password" and text[at - 1] in "'\"":  # matched with its quotes
        assert (at - 1, at + len(value) + 1) in spans
    else:
        assert (at, at + len(value)) in spans, (spans, (at, at + len(value)))
    # The scan (library and hand rules together) covers every character of it.
    inside: set[int] = set()
    for detection in Scanner().scan(text):
        inside.update(range(detection.start, detection.end))
    assert set(range(at, at + len(value))) <= inside


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD=changeme",  # allowlisted placeholder
        "API_KEY=${API_KEY}",  # a reference, not a value
        "secret = settings.SECRET_KEY",  # code
        "token: abcdefgh",  # one character class, low entropy
        "mysql -u root -p shop",  # -p alone prompts
        "psql --password --host db",  # a flag, not a value
        "Authorization: Bearer aaaaaaaaaaaaaaaaaaaa",  # no digit, repeated
        "version 10.2.3.4567 released",  # not an address
        "AKIAIOSFODNN7EXAMPLE",  # the documentation example
        "see https://github.com/acme/app",  # no credentials in the URL
    ],
)
def test_shapes_that_are_not_secrets(text):
    found = [d for d in Scanner().scan(text) if d.kind not in {"email", "phone"}]
    assert found == []


@pytest.mark.parametrize(
    "kind, token",
    [
        ("artifactory_api_key", "AKCp" + s.body(69)),
        ("artifactory_reference_token", "cmVmd" + s.body(59)),
        ("azure_client_secret", _azure_client_secret()),
        ("flyio_token", "fo1_" + s.body(43, ALNUM + "_-")),
        ("flyio_token", "fm2_" + s.body(140, ALNUM + "+/") + "=="),
        ("harness_token", "pat." + _harness_body()),
    ],
)
def test_the_kinds_missed_standing_alone_in_command_output_are_found_whole(kind, token):
    """Issue 22: on a corpus made from the public gitleaks rules, these were missed when they
    stood alone on a line of command output (no keyword before them)."""
    text = f"$ cat ~/.config/ci/credentials\n{token}\n$ echo done\ndone\n"
    at = text.index(token)
    found = [d for d in Scanner().scan(text) if d.start <= at and d.end >= at + len(token)]
    assert found, f"{kind} not found whole"
    assert found[0].kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "/home/runner/work/repo/repo",  # GitHub Actions
        "/home/user/project",  # the OpenHands sandbox
        "/Users/Shared/build",
        "cd /home/ubuntu && ls",
        "/workspace/Users/",  # no user name after it
    ],
)
def test_generic_home_folders_are_not_personal_data(text):
    assert [d for d in Scanner().scan(text) if d.kind == "user_name"] == []


def test_a_home_folder_user_name_is_found_and_the_rest_of_the_path_kept():
    text = "Edited /Users/dkowalski/Repositories/cli/main.go and C:\\Users\\dkowalski\\x"
    found = [(d.kind, text[d.start : d.end]) for d in Scanner().scan(text)]
    assert found == [("user_name", "dkowalski"), ("user_name", "dkowalski")]


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("alice@alice-laptop:~/shop$ ls", "alice-laptop"),
        ("[dkowalski@build7 app]$ make", "build7"),
        ("alice@work-laptop ~/src/app % git status", "work-laptop"),
        ("scp dump.sql deploy@db-primary-02:/var/backups", "db-primary-02"),
    ],
)
def test_a_machine_name_in_a_shell_prompt_is_personal_data(text, host):
    """Issue 22: local sessions carry the name of the sharer's computer in every prompt."""
    assert [(d.kind, d.text) for d in Scanner().scan(text)] == [("host", host)]


@pytest.mark.parametrize(
    "text",
    [
        "git@github.com:acme/private.git",  # a remote, no prompt
        "git@gitlab:acme/tools.git",
        "root@3f2a1b4c5d6e:/workspace# ls",  # a container's id
        "user@localhost:~$ ls",
        "runner@sandbox:~$ pytest",
        "npm i @types/node && see foo@bar baz",
        "@pytest.fixture\ndef x(): pass",
    ],
)
def test_what_is_not_a_machine_name(text):
    assert [d for d in Scanner().scan(text) if d.kind == "host"] == []


@pytest.mark.parametrize(
    "remote",
    [
        "https://alice:hunter2pass@git.company.com/team/repo.git",
        "https://oauth2:s3cr3tT0kenValue99@gitlab.internal.example.com/a/b.git",
        "https://x-token-auth:ATBBk2xQ9pLmN8vR4tY6uW1zE3sD5fG7hJ@bitbucket.org/acme/api.git",
    ],
)
def test_a_private_git_remote_with_credentials_is_a_secret(remote):
    """Issue 22: `git remote -v` in a local session shows the remote as configured."""
    text = f"$ git remote -v\norigin\t{remote} (fetch)\norigin\t{remote} (push)"
    found = [d for d in Scanner().scan(text) if d.kind == "url_credentials"]
    secret = remote.split(":")[2].split("@")[0]
    assert [d.text for d in found] == [secret, secret]
