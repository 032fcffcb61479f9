//! The 49 secret shapes of the second attack (reconstructed), each in its context.

/// The 49 secret shapes of the second attack (issue 30, item 6): the 20 it got through
/// first, then the 29 the redactor already masked. (name, text with `{s}`, secret format.)
pub(crate) const ATTACK_SHAPES: &[(&str, &str, &str)] = &[
    ("stripe sk_live_", "STRIPE_KEY in use: {s}", "sk_live_{a24}"),
    (
        "stripe rk_live_",
        "restricted key {s} rotated",
        "rk_live_{a24}",
    ),
    (
        "azure AccountKey=",
        "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net",
        "{b86}==",
    ),
    (
        "azure SAS sig=",
        "https://prodlogs.blob.core.windows.net/c/app.log?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={s}",
        "{a30}%2B{a12}%3D",
    ),
    (
        "PGP private key block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{s}\n-----END PGP PRIVATE KEY BLOCK-----",
        "{b64}",
    ),
    (
        "telegram bot token",
        "TG={s} python bot.py",
        "{d10}:AA{x33}",
    ),
    (
        "--password VALUE",
        "pg_dump --host db --password {s} app",
        "{a14}",
    ),
    (
        ".netrc",
        "machine api.example.com\n  login deploy\n  password {s}\n",
        "{x18}",
    ),
    ("Authorization: Token", "Authorization: Token {s}", "{h40}"),
    ("Cookie:", "Cookie: sessionid={s}; csrftoken=x1", "{l32}"),
    (
        "docker auth",
        "{\"auths\":{\"registry.example.com\":{\"auth\":\"{s}\"}}}",
        "ZGVwbG95OnMzY3JldC1wYXNz{b8}",
    ),
    (
        "gitlab glpat-",
        "git remote set-url origin https://oauth2:{s}@gitlab.example.com/g/p.git",
        "glpat-{x20}",
    ),
    (
        "npm npm_",
        "//registry.npmjs.org/:_authToken={s}",
        "npm_{a36}",
    ),
    ("sendgrid SG.", "mail via {s}", "SG.{x22}.{x43}"),
    (
        "hugging face hf_",
        "huggingface-cli login --token {s}",
        "hf_{L34}",
    ),
    (
        "slack webhook",
        "curl -X POST https://hooks.slack.com/services/{s} -d @msg.json",
        "T{u8}/B{u10}/{a24}",
    ),
    (
        "-passin pass:",
        "openssl rsa -in key.pem -passin pass:{s} -out plain.pem",
        "{a16}",
    ),
    ("secret_key:", "secret_key: {s}", "{x24}"),
    (
        "token as URL user",
        "git clone https://{s}@github.com/org/private.git",
        "{h40}",
    ),
    (
        "percent-encoded URL credentials",
        "GET /login?next=https%3A%2F%2Fadmin%3A{s}%40db.internal%2Fapp",
        "{a16}",
    ),
    ("bearer header", "Authorization: Bearer {s}", "{x40}"),
    (
        "basic header",
        "Authorization: Basic {s}",
        "YWRtaW46aHVudGVyMg{b6}",
    ),
    (
        "jwt",
        "session {s} expired",
        "eyJhbGciOiJIUzI1NiJ9.eyJ{x40}.{x43}",
    ),
    ("openai sk-proj-", "OPENAI_API_KEY={s}", "sk-proj-{x48}"),
    ("anthropic sk-ant-", "using {s}", "sk-ant-api03-{x93}AA"),
    ("aws access key id", "aws key {s} in use", "AKIA{u16}"),
    (
        "aws secret access key",
        "aws_secret_access_key = {s}",
        "{b40}",
    ),
    ("github ghp_", "clone with {s}", "ghp_{a36}"),
    ("github gho_", "oauth {s}", "gho_{a36}"),
    ("github_pat_", "pat {s}", "github_pat_{a82}"),
    ("slack xoxb-", "slack {s}", "xoxb-{d12}-{d13}-{a24}"),
    ("google AIza", "maps {s}", "AIza{x35}"),
    (
        "RSA private key",
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
        "{b64}",
    ),
    (
        "OpenSSH private key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
        "{b70}",
    ),
    (
        "URL password",
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
        "{x16}",
    ),
    ("redis URL password", "redis://:{s}@cache:6379/0", "{a16}"),
    ("password=", "connect with password={s} please", "{x12}"),
    ("passwd:", "passwd: {s}", "{a12}"),
    ("PGPASSWORD=", "PGPASSWORD={s} psql -h db -U app", "{a12}"),
    ("mysql -p", "mysql -h db -u root -p{s} appdb", "{a12}"),
    (
        "mysqldump --password=",
        "mysqldump --password={s} appdb",
        "{a12}",
    ),
    (
        "json \"password\"",
        "{\"user\":\"app\",\"password\":\"{s}\"}",
        "{x14}",
    ),
    ("quoted DB_PASSWORD", "export DB_PASSWORD=\"{s}\"", "{x14}"),
    ("api_key=", "settings: api_key={s}; region=eu", "{a20}"),
    ("curl -u", "curl -u admin:{s} https://x.test", "{a12}"),
    ("sshpass -p", "sshpass -p {s} ssh backup@host", "{a12}"),
    ("GITHUB_TOKEN=", "GITHUB_TOKEN={s} make release", "{a14}"),
    ("\"token\":", "{\"token\":\"{s}\"}", "{x24}"),
    ("X-Api-Key header", "X-Api-Key: {s}", "{a32}"),
];
