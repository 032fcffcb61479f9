//! The web tools wired into the binary: off by default, `url_read` reading a local page when
//! `[web.url_read]` enables it and `[egress]` allows the address, refused when it does not.

use std::io::{Read, Write};
use std::net::TcpListener;

use serde_json::json;

use super::harness::{Env, failure, success};

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
