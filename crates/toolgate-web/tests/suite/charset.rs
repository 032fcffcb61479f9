//! Legacy encodings are decoded from the charset the server or the page declares. The
//! bytes are written out by hand (not produced by the decoder under test).

use serde_json::{Value, json};
use toolgate_web::UrlReadConfig;

use super::fixture::{body, call, dev_policy, serve_fn, url_read};

/// "café – “quoted” €5" in windows-1252.
const CP1252: &[u8] = b"caf\xE9 \x96 \x93quoted\x94 \x805";
/// 日本語 in Shift_JIS.
const SJIS: &[u8] = b"\x93\xFA\x96\x7B\x8C\xEA";
/// 中文 in GBK.
const GBK: &[u8] = b"\xD6\xD0\xCE\xC4";

fn html(meta: &str, title: &[u8], text: &[u8]) -> Vec<u8> {
    [
        format!("<html><head>{meta}<title>").as_bytes(),
        title,
        b"</title></head><body><p>",
        text,
        b"</p></body></html>",
    ]
    .concat()
}

#[tokio::test]
async fn pages_are_decoded_from_the_declared_charset() {
    let port = serve_fn(|path, _| match path {
        // Declared only in Content-Type.
        "/cp1252" => body("text/html; charset=windows-1252", html("", b"Menu", CP1252)),
        // Declared only in a <meta> tag.
        "/sjis" => body(
            "text/html",
            html("<meta charset=\"Shift_JIS\">", SJIS, SJIS),
        ),
        "/gbk-meta" => body(
            "text/html",
            html(
                "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">",
                GBK,
                GBK,
            ),
        ),
        // Content-Type wins over a contradicting <meta>.
        "/header-wins" => body(
            "text/html; charset=gbk",
            html("<meta charset=\"utf-8\">", GBK, GBK),
        ),
        "/gbk.txt" => body("text/plain; charset=GBK", GBK.to_vec()),
        // Undeclared and not UTF-8: the web's legacy default.
        "/undeclared.txt" => body("text/plain", CP1252.to_vec()),
        _ => body("text/plain", "?"),
    })
    .await;
    let tool = url_read(UrlReadConfig::default(), &dev_policy());
    let mut got = Vec::new();
    for path in [
        "/cp1252",
        "/sjis",
        "/gbk-meta",
        "/header-wins",
        "/gbk.txt",
        "/undeclared.txt",
    ] {
        let url = format!("http://site.test:{port}{path}");
        let page: Value = call(&tool, json!({"url": url, "format": "text"}))
            .await
            .unwrap();
        let content = page["content"].as_str().unwrap();
        let inner = content.lines().skip(1).collect::<Vec<_>>();
        let inner = inner[..inner.len() - 1].join("\n");
        got.push(json!([
            path,
            page["charset"],
            page["title"],
            inner,
            page["notes"]
        ]));
    }
    assert_eq!(
        got,
        [
            json!([
                "/cp1252",
                "windows-1252",
                "Menu",
                "Menu\n\ncafé – “quoted” €5",
                []
            ]),
            json!(["/sjis", "Shift_JIS", "日本語", "日本語", []]),
            json!(["/gbk-meta", "GBK", "中文", "中文", []]),
            json!(["/header-wins", "GBK", "中文", "中文", []]),
            json!(["/gbk.txt", "GBK", null, "中文", []]),
            json!([
                "/undeclared.txt",
                "windows-1252",
                null,
                "café – “quoted” €5",
                []
            ]),
        ]
    );
}
