//! The web tools wired into the binary: off by default, `url_read` reading a local page when
//! `[web.url_read]` enables it and `[egress]` allows the address, refused when it does not;
//! `retrieve_papers` called by the agent loop against a local arXiv fake.

use std::io::{Read, Write};
use std::net::TcpListener;

use serde_json::json;
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

use super::harness::{Env, Run, failure, success};

const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";

/// Serves one small HTML page on 127.0.0.1 to every connection; returns the port.
fn page_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<title>Hi</title><p>Hello <a href=\"/next\">next</a></p>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn url_read_is_off_by_default_and_reads_an_allowed_page_when_enabled() {
    let off = Env::new();
    let listed = off.run(&["tools", "show", "url_read", "--json"]);
    assert_ne!(listed.code, 0, "{listed:?}");

    let port = page_server();
    let url = format!("http://127.0.0.1:{port}/");
    let allowed = Env::with_config(&format!(
        "[egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n\
         [web.url_read]\nenabled = true\n"
    ));
    let run = allowed.call("url_read", &json!({"url": url}));
    run.assert_code(0);
    let text = format!("# Hi\n\nHello [next](http://127.0.0.1:{port}/next)");
    assert_eq!(
        run.envelope(),
        success(json!({
            "url": url, "final_url": url, "status": 200, "content_type": "text/html",
            "kind": "html", "title": "Hi", "charset": "UTF-8", "bytes_read": 54,
            "truncated": false, "offset": 0, "total_chars": text.chars().count(),
            "next_offset": null, "notes": [],
            "content": format!("<untrusted-content source=\"{url}\">\n{text}\n</untrusted-content>"),
        }))
    );

    let strict = Env::with_config(&format!(
        "[egress]\nallow_http = [\"127.0.0.1:{port}\"]\n[web.url_read]\nenabled = true\n"
    ));
    let run = strict.call("url_read", &json!({"url": url}));
    run.assert_code(2);
    assert_eq!(
        run.envelope(),
        failure(json!({
            "code": "policy_denied",
            "message": format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{port}\" to [egress] allow_hosts"
            ),
            "retryable": false
        }))
    );
}

/// Serves arXiv's Atom answer (one entry) to every connection; returns the port.
fn arxiv_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
                <feed xmlns=\"http://www.w3.org/2005/Atom\"><entry>\
                <id>http://arxiv.org/abs/1706.03762v7</id>\
                <published>2017-06-12T17:57:34Z</published>\
                <title>Attention Is All You Need</title>\
                <summary>The dominant sequence transduction models.</summary>\
                <author><name>Ashish Vaswani</name></author>\
                <link href=\"http://arxiv.org/abs/1706.03762v7\" rel=\"alternate\" type=\"text/html\"/>\
                <link title=\"pdf\" href=\"http://arxiv.org/pdf/1706.03762v7\" rel=\"related\"/>\
                </entry></feed>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/atom+xml\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// `retrieve_papers` is off by default; with `[web.papers]` the agent loop calls it through
/// the gateway like any tool, and the model's next request carries the papers, the abstract
/// inside an untrusted-content block.
#[test]
fn retrieve_papers_is_off_by_default_and_answers_the_agent_loop_when_configured() {
    let off = Env::new();
    let listed = off.run(&["tools", "show", "retrieve_papers", "--json"]);
    assert_ne!(listed.code, 0, "{listed:?}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_1",
                "retrieve_papers",
                r#"{"query": "attention transformer", "limit": 1}"#,
            )])),
            Reply::Turn(FakeTurn::text("Vaswani et al., 2017.")),
        ]))
        .unwrap();
    let (m, a) = (model.addr.port(), arxiv_server());
    let env = Env::with_config(&format!(
        "[model]\nprovider = \"openai-chat\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\n\
         api_key_env = \"{KEY_VAR}\"\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{m}\", \"127.0.0.1:{a}\"]\n\
         allow_http = [\"127.0.0.1:{m}\", \"127.0.0.1:{a}\"]\n\n\
         [web.papers]\nsources = [\"arxiv\"]\narxiv_url = \"http://127.0.0.1:{a}/api/query\"\n",
        model.base_url()
    ));
    let out = env
        .command()
        .env(KEY_VAR, "sk-test-model-key-0123456789")
        .args(["run", "Which paper introduced the Transformer?"])
        .output()
        .unwrap();
    let run = Run::from_output(out);
    run.assert_code(0);
    assert_eq!(run.stdout, "Vaswani et al., 2017.\n", "{run:#?}");

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .tool_names()
            .contains(&"retrieve_papers".to_owned()),
        "{:?}",
        requests[0].tool_names()
    );
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    let data: serde_json::Value = serde_json::from_str(&result).unwrap();
    let data = data.get("data").unwrap_or(&data);
    assert_eq!(
        data["results"],
        json!([{
            "title": "Attention Is All You Need",
            "authors": ["Ashish Vaswani"],
            "year": 2017,
            "venue": null,
            "abstract": "<untrusted-content source=\"http://arxiv.org/abs/1706.03762v7\">\n\
                         The dominant sequence transduction models.\n</untrusted-content>",
            "doi": null,
            "arxiv_id": "1706.03762",
            "landing_url": "http://arxiv.org/abs/1706.03762v7",
            "pdf_url": "http://arxiv.org/pdf/1706.03762v7",
            "sources": ["arxiv"],
        }]),
        "{result}"
    );
}

/// An MCP host — the official Python SDK's client — spawns `toolgate serve --stdio` and
/// reaches `retrieve_papers` like any tool: listed with its annotations, called, the papers
/// in the result.
#[test]
fn retrieve_papers_answers_an_mcp_client_through_serve() {
    let a = arxiv_server();
    let env = Env::with_config(&format!(
        "[egress]\nallow_hosts = [\"127.0.0.1:{a}\"]\nallow_http = [\"127.0.0.1:{a}\"]\n\n\
         [web.papers]\nsources = [\"arxiv\"]\narxiv_url = \"http://127.0.0.1:{a}/api/query\"\n"
    ));
    let mut server = env.command();
    server.args(["serve", "--stdio"]);
    let spec = json!({
        "command": server.get_program().to_string_lossy(),
        "args": server.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "env": server
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_string_lossy().into_owned(), v?.to_string_lossy().into_owned())))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "cwd": server.get_current_dir().map(|d| d.to_string_lossy().into_owned()),
    });
    let client =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/stdio_call_client.py");
    let out = std::process::Command::new(super::harness::peer_python())
        .arg(client)
        .args(["--spec", &spec.to_string(), "--tool", "retrieve_papers"])
        .args(["--args", &json!({"id": "arXiv:1706.03762"}).to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tool = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "retrieve_papers")
        .expect("retrieve_papers is listed");
    assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool:#}");
    let result = &report["result"];
    assert_ne!(result["isError"], true, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let data: serde_json::Value = serde_json::from_str(text).unwrap();
    let data = data.get("data").unwrap_or(&data);
    assert_eq!(data["id"], "arXiv:1706.03762", "{data:#}");
    assert_eq!(
        (&data["results"][0]["title"], &data["results"][0]["sources"]),
        (&json!("Attention Is All You Need"), &json!(["arxiv"])),
        "{data:#}"
    );
}
