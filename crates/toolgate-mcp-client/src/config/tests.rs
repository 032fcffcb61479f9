//! Parsing and validation of `[[mcp.servers]]` tables.

use super::*;

fn parse(toml_text: &str) -> Result<ServerConfig, String> {
    toml::from_str::<ServerConfig>(toml_text).map_err(|e| e.to_string())
}

#[test]
fn a_full_stdio_table_parses_with_defaults_filled() {
    let c = parse(
        r#"
        name = "files"
        command = "node"
        args = ["index.js", "/tmp"]
        env = { A = "1" }
        startup_timeout = "2s"
        exclude = ["write_*"]
        risk = { read_file = "read", delete = "dangerous" }
        "#,
    )
    .unwrap();
    let mut expected = ServerConfig::stdio("files", "node")
        .with_args(["index.js", "/tmp"])
        .with_env("A", "1")
        .with_startup_timeout(Duration::from_secs(2));
    expected.exclude = vec!["write_*".into()];
    expected.risk = BTreeMap::from([
        ("read_file".into(), Risk::Read),
        ("delete".into(), Risk::Dangerous),
    ]);
    assert_eq!(c, expected);
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.call_timeout, Duration::from_secs(60));
}

#[test]
fn durations_accept_seconds_and_reject_nonsense_with_a_hint() {
    let c = parse("name = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\ncall_timeout = 5\nprotocol = \"2025-11-25\"").unwrap();
    assert_eq!(c.call_timeout, Duration::from_secs(5));
    assert_eq!(c.protocol, ProtocolChoice::Initialize);
    let err = parse("name = \"a\"\ncommand = \"x\"\nstartup_timeout = \"soon\"").unwrap_err();
    assert!(err.contains("write it like \"10s\""), "{err}");
    let err = parse("name = \"a\"\ncommand = \"x\"\ncomand = \"y\"").unwrap_err();
    assert!(err.contains("unknown field `comand`"), "{err}");
}

#[test]
fn validation_names_the_problem() {
    let cases = [
        (
            ServerConfig::stdio("bad.name", "x"),
            ConfigError::InvalidName("bad.name".into()),
        ),
        (
            ServerConfig::stdio("a__b", "x"),
            ConfigError::InvalidName("a__b".into()),
        ),
        (
            ServerConfig {
                command: None,
                ..ServerConfig::stdio("s", "x")
            },
            ConfigError::NoTransport("s".into()),
        ),
        (
            ServerConfig {
                url: Some("http://h/mcp".into()),
                ..ServerConfig::stdio("s", "x")
            },
            ConfigError::BothTransports("s".into()),
        ),
        (
            ServerConfig::http("s", "http://h/mcp").with_cwd("/"),
            ConfigError::FieldNotApplicable {
                server: "s".into(),
                field: "cwd",
                applies_to: "stdio (`command`)",
            },
        ),
        (
            ServerConfig::stdio("s", "x").with_header("A", "b"),
            ConfigError::FieldNotApplicable {
                server: "s".into(),
                field: "headers",
                applies_to: "Streamable HTTP (`url`)",
            },
        ),
        (
            ServerConfig::http("s", "https://h/mcp").with_sandbox(SandboxSpec::default()),
            ConfigError::FieldNotApplicable {
                server: "s".into(),
                field: "sandbox",
                applies_to: "stdio (`command`)",
            },
        ),
        (
            ServerConfig::http("s", "ftp://h/mcp"),
            ConfigError::InvalidUrl {
                server: "s".into(),
                url: "ftp://h/mcp".into(),
                reason: "scheme `ftp` is not supported; use http or https".into(),
            },
        ),
        (
            ServerConfig::http("s", "http://h/mcp").with_header("Mcp-Session-Id", "x"),
            ConfigError::InvalidHeader {
                server: "s".into(),
                header: "Mcp-Session-Id".into(),
                reason: "the MCP transport sets this header itself; remove it".into(),
            },
        ),
        (
            ServerConfig::stdio("s", "x").with_call_timeout(Duration::ZERO),
            ConfigError::ZeroTimeout {
                server: "s".into(),
                field: "call_timeout",
            },
        ),
        (
            ServerConfig {
                include: vec!["a[".into()],
                ..ServerConfig::stdio("s", "x")
            },
            ConfigError::InvalidGlob {
                server: "s".into(),
                pattern: "a[".into(),
                reason: "unclosed character class; missing ']'".into(),
            },
        ),
    ];
    for (config, expected) in cases {
        assert_eq!(config.validate(), Err(expected));
    }
    let twice = [ServerConfig::stdio("a", "x"), ServerConfig::stdio("a", "y")];
    assert_eq!(
        validate_servers(&twice),
        Err(ConfigError::DuplicateName("a".into()))
    );
}

#[test]
fn env_references_are_expanded_at_connect_time() {
    let c = ServerConfig::stdio("s", "x")
        .with_env("HOME_COPY", "${HOME}/x")
        .with_env("LITERAL", "$${HOME}");
    let home = std::env::var("HOME").unwrap();
    let Endpoint::Stdio { env, .. } = c.endpoint().unwrap() else {
        panic!("stdio expected")
    };
    assert_eq!(
        env,
        BTreeMap::from([
            ("HOME_COPY".into(), format!("{home}/x")),
            ("LITERAL".into(), "${HOME}".into()),
        ])
    );
    let missing = ServerConfig::http("s", "http://h/mcp")
        .with_header("Authorization", "Bearer ${TOOLGATE_MCP_TEST_UNSET_VAR}");
    assert_eq!(
        missing.endpoint(),
        Err(ConfigError::MissingEnvVar {
            server: "s".into(),
            value: "Bearer ${TOOLGATE_MCP_TEST_UNSET_VAR}".into(),
            var: "TOOLGATE_MCP_TEST_UNSET_VAR".into(),
        })
    );
}

#[test]
fn include_then_exclude() {
    let c = ServerConfig {
        include: vec!["read_*".into(), "list_*".into()],
        exclude: vec!["read_secret*".into()],
        ..ServerConfig::stdio("s", "x")
    };
    let f = c.tool_filter().unwrap();
    let admitted: Vec<&str> = ["read_file", "read_secrets", "list_dir", "write_file"]
        .into_iter()
        .filter(|t| f.admits(t))
        .collect();
    assert_eq!(admitted, ["read_file", "list_dir"]);
}

#[test]
fn a_sandbox_table_parses_and_clears_the_environment() {
    let c = parse(
        "name = \"files\"\ncommand = \"node\"\n\
         sandbox = { writable = [\"/srv\"], readable = [\"/opt/node\"], network = true }",
    )
    .unwrap();
    let spec = SandboxSpec {
        writable: vec!["/srv".into()],
        readable: vec!["/opt/node".into()],
        network: true,
        egress: Vec::new(),
    };
    assert_eq!(c, ServerConfig::stdio("files", "node").with_sandbox(spec));
    assert!(matches!(
        c.endpoint(),
        Ok(Endpoint::Stdio {
            clear_env: true,
            ..
        })
    ));
    let e = parse("name = \"a\"\ncommand = \"x\"\nsandbox = { write = [] }").unwrap_err();
    assert!(e.contains("unknown field `write`"), "{e}");
}

#[test]
fn at_most_one_server_keeps_its_own_names() {
    let never = |name: &str| ServerConfig::stdio(name, "x").with_prefix(NamePrefix::Never);
    assert_eq!(
        validate_servers(&[never("a"), ServerConfig::stdio("b", "x")]),
        Ok(())
    );
    let err =
        validate_servers(&[never("a"), ServerConfig::stdio("b", "x"), never("c")]).unwrap_err();
    assert_eq!(
        err,
        ConfigError::TwoUnprefixed {
            first: "a".into(),
            second: "c".into()
        }
    );
    assert!(
        err.to_string().contains("keep the prefix on one of them"),
        "{err}"
    );
}

#[test]
fn prefix_is_read_from_toml() {
    let c: ServerConfig =
        toml::from_str("name = \"f\"\nurl = \"http://x/mcp\"\nprefix = \"never\"").unwrap();
    assert_eq!(c.prefix, NamePrefix::Never);
    assert_eq!(c.naming().tool("t"), "t");
    let bad = toml::from_str::<ServerConfig>(
        "name = \"f\"\nurl = \"http://x/mcp\"\nprefix = \"sometimes\"",
    );
    assert!(bad.unwrap_err().to_string().contains("never"));
}
