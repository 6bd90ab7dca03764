"""The scanning engine. Pure Python: no Django here (the scan service, Django's side, is
`apps.moderation.services.scan`).

- `scanner`: the entry points: `Scanner(allowlist).scan(text)`, `scan_many`, `scan_pair`,
  module-level `scan(text)`, and `version()` (recorded with each scan); `memo`: `ScanMemo`,
  what one scan has read already.
- `detection`: what a finding is (`Detection`) and which kinds are secrets or personal data.
- `library`: the Kingfisher secret scanner (hundreds of vendor rules, Base64-encoded secrets),
  compiled once per process, its rule ids mapped to placeholder kinds people understand.
- `rules`: the hand-written rules for what the library does not cover: personal data (email,
  phone, IP), keyword assignments (`DB_PASSWORD=...`, `ENCRYPTION_KEY=...`), command-line
  passwords, bearer tokens, bare AWS keys, cut-off private keys, key formats the library misses,
  home-folder user names; `checks`: the checks they run on a match (entropy and the like).
- `normalize`: the other ways a secret is shown: colour codes removed (as the page shows
  terminal output), URL-decoded, unwrapped where a terminal wrapped a long line, Base64-decoded;
  each view keeps a map back to offsets in the stored text.
- `allowlist`: what is never flagged (reserved domains, private networks, placeholders).
"""
