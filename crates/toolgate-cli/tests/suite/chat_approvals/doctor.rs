//! `toolgate doctor` on the channels.

use super::*;

/// `toolgate doctor` checks each channel: token accepted, chat reachable — or says why not.
#[test]
fn doctor_checks_each_channel() {
    let fake = Fake::telegram();
    let config = telegram_config(&fake).replace(
        &format!("chats = [\"{CHAT}\"]"),
        &format!("chats = [\"{CHAT}\", \"-1002\"]"),
    );
    let env = Env::with_config(&config);
    let doctor = |token: Option<&str>| {
        let mut cmd = env.command();
        cmd.args(["doctor", "--json"]);
        if let Some(t) = token {
            cmd.env("TG_TOKEN", t);
        }
        let run = Run::from_output(cmd.output().expect("doctor"));
        run.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("approvals:"))
            .map(|c| {
                format!(
                    "{} {} {}",
                    c["status"].as_str().unwrap(),
                    c["name"].as_str().unwrap(),
                    c["detail"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let good = doctor(Some(TG_TOKEN));
    assert!(
        good[0].starts_with("ok approvals: telegram:oncall token accepted: @"),
        "{good:?}"
    );
    assert!(
        good[1].starts_with(&format!(
            "ok approvals: telegram:oncall chat {CHAT} reachable"
        )),
        "{good:?}"
    );
    assert!(
        good[2].starts_with("fail approvals: telegram:oncall chat -1002")
            && good[2].contains("chat not found"),
        "{good:?}"
    );

    // mallory is mapped but holds no operator right anywhere in the configuration.
    assert!(
        good.iter().any(|l| l.starts_with(
            "warn approvals: telegram:oncall operators mallory hold(s) no operator token"
        )),
        "{good:?}"
    );
    let wrong = doctor(Some("123:wrong"));
    assert!(
        wrong[0].starts_with("fail") && wrong[0].contains("the token is wrong or revoked"),
        "{wrong:?}"
    );
    let unset = doctor(None);
    assert!(
        unset[0].starts_with("fail") && unset[0].contains("TG_TOKEN"),
        "{unset:?}"
    );
    for line in good.iter().chain(&wrong).chain(&unset) {
        assert!(
            !line.contains(TG_TOKEN) && !line.contains("123:wrong"),
            "{line}"
        );
    }

    // Without the egress allowance nothing reaches the fake.
    let guarded = Env::with_config(&config.replace("allow_hosts = [\"127.0.0.1\"]", ""));
    let run = Run::from_output(
        guarded
            .command()
            .args(["doctor", "--json"])
            .env("TG_TOKEN", TG_TOKEN)
            .output()
            .unwrap(),
    );
    let refused = run.json()["checks"].to_string();
    assert!(refused.contains("refused by [egress]"), "{refused}");
}
