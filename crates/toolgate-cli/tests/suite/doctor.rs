//! `toolgate doctor`, and a sandboxed shell call refused at the OS level and audited.

use serde_json::{Value, json};

use super::harness::Env;

#[test]
fn doctor_reports_every_check_and_passes_on_a_sandbox_capable_machine() {
    let env = Env::with_config("[shell]\nsandbox = \"required\"\n");
    let run = env.run(&["doctor", "--json"]);
    let report = run.json();
    let checks: Vec<(String, String)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let chromium = if std::path::Path::new("/usr/bin/chromium").is_file() {
        "ok"
    } else {
        "warn"
    };
    let expected: Vec<(String, String)> = [
        ("namespaces", "ok"),
        ("landlock", "ok"),
        ("seccomp", "ok"),
        ("process limit", "ok"),
        ("protected paths", "ok"),
        ("shell sandbox", "ok"),
        ("data dir", "ok"),
        ("workspace", "ok"),
        ("chromium", chromium),
        ("tool rag", "ok"),
        ("conversations", "ok"),
        ("tool definitions", "ok"),
    ]
    .iter()
    .map(|(n, s)| ((*n).to_owned(), (*s).to_owned()))
    .collect();
    assert_eq!(
        checks, expected,
        "this machine must offer Landlock and seccomp for the sandbox tests: {report:#}"
    );
    assert_eq!(report["ok"], json!(true));
    run.assert_code(0);
}

#[test]
fn a_write_outside_the_workspace_is_refused_by_the_sandbox_and_audited() {
    let env = Env::with_config(
        "[roles.ci]\ntools = [\"shell\"]\ndangerous = \"allow\"\n\n[shell]\nsandbox = \"required\"\n",
    );
    // A directory of the host that the sandbox's view does not have.
    let outside = std::path::Path::new("/var/tmp")
        .join(format!("toolgate-outside-{}.txt", std::process::id()));
    let command = format!("echo x > {}", outside.display());
    let run = env.call_with(
        &["--role", "ci"],
        "shell",
        &json!({ "command": command }),
        &[],
    );
    run.assert_code(0);
    let stderr = format!(
        "/bin/sh: 1: cannot create {}: Directory nonexistent\n",
        outside.display()
    );
    let data = &run.json()["data"];
    assert_eq!(
        (&data["exit_code"], &data["stderr"], &data["sandbox"]),
        (
            &json!(2),
            &json!(stderr),
            &json!("namespaces+landlock+seccomp")
        )
    );
    assert!(!outside.exists());

    let log = std::fs::read_to_string(env.audit_path()).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        (
            &last["tool"],
            &last["outcome"],
            &last["result"]["data"]["stderr"]
        ),
        (&json!("shell"), &json!("ok"), &json!(stderr))
    );
}

#[test]
fn doctor_says_whether_the_telemetry_collector_answers() {
    let statuses = |endpoint: &str| {
        let env = Env::with_config(&format!(
            "[telemetry]\nenabled = true\nendpoint = \"{endpoint}\"\n"
        ));
        let report = env.run(&["doctor", "--json"]).json();
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "telemetry")
            .cloned()
            .unwrap_or_else(|| panic!("no telemetry check: {report:#}"));
        (
            check["status"].as_str().unwrap().to_owned(),
            check["detail"].to_string(),
        )
    };
    let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listening.local_addr().unwrap();
    let (status, detail) = statuses(&format!("http://{open}"));
    assert_eq!(status, "ok", "{detail}");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let (status, detail) = statuses(&format!("http://{closed}"));
    assert_eq!(status, "warn", "{detail}");
    assert!(detail.contains("calls are unaffected"), "{detail}");
}

/// Issue 29: on a machine missing a wall of the sandbox (here no bubblewrap, as
/// `TOOLGATE_BWRAP` pointing nowhere makes it), `doctor` says which and fails, and a shell
/// call is refused with the reason instead of running with less.
#[test]
fn without_the_namespace_view_doctor_fails_and_the_shell_refuses() {
    let env = Env::with_config("[roles.ci]\ntools = [\"shell\"]\ndangerous = \"allow\"\n");
    let missing = env.root().join("no-such-bwrap");
    let run = |args: &[&str]| {
        let out = env
            .command()
            .env("TOOLGATE_BWRAP", &missing)
            .args(args)
            .output()
            .unwrap();
        super::harness::Run::from_output(out)
    };
    let doctor = run(&["doctor", "--json"]);
    let report = doctor.json();
    let status_of = |name: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == json!(name))
            .map(|c| (c["status"].clone(), c["detail"].clone()))
            .unwrap_or_else(|| panic!("no {name} check: {report:#}"))
    };
    let (status, detail) = status_of("namespaces");
    assert_eq!(status, json!("fail"), "{report:#}");
    assert!(
        detail.as_str().unwrap().contains("no-such-bwrap"),
        "{report:#}"
    );
    assert_eq!(status_of("shell sandbox").0, json!("fail"), "{report:#}");
    assert_eq!(report["ok"], json!(false));
    assert_ne!(doctor.code, 0);

    let call = run(&[
        "--role",
        "ci",
        "call",
        "shell",
        "--no-prompt",
        "--args",
        r#"{"command": "echo ran > ran.txt"}"#,
    ]);
    let error = &call.json()["error"];
    assert_eq!(error["code"], json!("unavailable"), "{call:#?}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("the shell sandbox is required but unavailable"),
        "{call:#?}"
    );
    assert!(
        !env.ws.join("ran.txt").exists(),
        "the command ran unconfined"
    );
}
