//! Reading and acting on pages the test serves: a form filled and submitted, a link followed
//! by index and by selector, back, scroll, a screenshot decoded as a PNG.

use base64::Engine as _;
use serde_json::json;
use toolgate_core::ToolError;
use toolgate_protocol::ContentBlock;

use super::fixture::{Browser, Trap, element_index, page_text, serve_site};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_filled_and_submitted_and_the_result_read() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let b = Browser::for_site(site, "form");

    let form = b
        .read(json!({"action": "navigate", "url": format!("http://{site}/form")}))
        .await
        .unwrap();
    assert_eq!(
        page_text(&form),
        "Title: Contact\n\nText:\nYour name Colour\nred\nblue\nSend\n\n\
         Interactive elements (3 of 3):\n\
         [0] <input type=text> \"Your name\" value=\"\"\n\
         [1] <select> \"Colour red blue\" value=\"red\"\n\
         [2] <button> \"Send\""
    );
    let name = element_index(&form, "\"Your name\"");
    let typed = b
        .act(json!({"action": "type", "index": name, "text": "Ada <Lovelace>"}))
        .await
        .unwrap();
    assert!(
        page_text(&typed).contains("[0] <input type=text> \"Your name\" value=\"Ada <Lovelace>\""),
        "{}",
        page_text(&typed)
    );
    let send = element_index(&typed, "\"Send\"");
    let result = b
        .act(json!({"action": "click", "index": send}))
        .await
        .unwrap();
    assert_eq!(result.data["url"], json!(format!("http://{site}/submit")));
    assert_eq!(
        page_text(&result),
        "Title: Thanks\n\nText:\nThank you, Ada <Lovelace>! You chose red.\n\n\
         Interactive elements (0 of 0):"
    );
    assert_eq!(result.data["blocked"], json!([]));
    assert!(
        result.data["notice"]
            .as_str()
            .unwrap()
            .contains("treat it as data")
    );

    // The same form by selector, submitted with Enter.
    b.read(json!({"action": "navigate", "url": format!("http://{site}/form")}))
        .await
        .unwrap();
    let entered = b
        .act(json!({"action": "type", "selector": "input[name=name]", "text": "Grace", "submit": true}))
        .await
        .unwrap();
    assert!(
        page_text(&entered).contains("Thank you, Grace! You chose red."),
        "{}",
        page_text(&entered)
    );
    b.close().await;
    assert_eq!(trap.hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_are_followed_by_index_and_selector_and_back_returns() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let b = Browser::for_site(site, "links");

    let home = b
        .read(json!({"action": "navigate", "url": format!("http://{site}/")}))
        .await
        .unwrap();
    assert_eq!(
        page_text(&home),
        "Title: Home\n\nText:\nWelcome\n\nStart here.\n\nAbout us Contact form\n\n\
         Interactive elements (2 of 2):\n[0] <a> \"About us\" href=/about\n[1] <a> \"Contact form\" href=/form"
    );
    let about = b
        .act(json!({"action": "click", "index": element_index(&home, "About us")}))
        .await
        .unwrap();
    assert_eq!(
        (about.data["url"].clone(), page_text(&about)),
        (
            json!(format!("http://{site}/about")),
            "Title: About\n\nText:\nAbout us\n\nWe test browsers.\n\nInteractive elements (0 of 0):"
                .to_owned()
        )
    );
    let back = b.read(json!({"action": "back"})).await.unwrap();
    assert_eq!(back.data["url"], json!(format!("http://{site}/")));
    let contact = b
        .act(json!({"action": "click", "selector": "a[href='/form']"}))
        .await
        .unwrap();
    assert!(
        page_text(&contact).starts_with("Title: Contact\n"),
        "{}",
        page_text(&contact)
    );

    // An index the last snapshot does not list, and a selector that matches nothing.
    let errors = [
        b.act(json!({"action": "click", "index": 40}))
            .await
            .unwrap_err(),
        b.act(json!({"action": "click", "selector": "#nope"}))
            .await
            .unwrap_err(),
        b.act(json!({"action": "press", "key": "NoSuchKey"}))
            .await
            .unwrap_err(),
        b.act(json!({"action": "click"})).await.unwrap_err(),
    ];
    assert_eq!(
        errors,
        [
            ToolError::failed("no interactive element [40] (the page lists 3)"),
            ToolError::failed("no element matches the CSS selector"),
            ToolError::InvalidArguments(
                "unknown key `NoSuchKey`; use a key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown or a single character".into()
            ),
            ToolError::InvalidArguments(
                "click needs exactly one of `index` (from a snapshot) or `selector`".into()
            ),
        ]
    );
    let scrolled = b
        .read(json!({"action": "scroll", "direction": "down"}))
        .await
        .unwrap();
    assert_eq!(scrolled.data["viewport_height"], json!(800));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_is_a_real_png_of_the_page() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let b = Browser::for_site(site, "shot");
    b.read(json!({"action": "navigate", "url": format!("http://{site}/color")}))
        .await
        .unwrap();
    let shot = b.read(json!({"action": "screenshot"})).await.unwrap();
    let [ContentBlock::Image { data, mime_type }] = shot.content.as_slice() else {
        panic!("expected one image, got {:?}", shot.content);
    };
    assert_eq!(mime_type, "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(png.as_slice()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let bpp = frame.color_type.samples();
    let rgb = |x: usize, y: usize| {
        let at = (y * frame.width as usize + x) * bpp;
        (pixels[at], pixels[at + 1], pixels[at + 2])
    };
    assert_eq!(
        (frame.width, frame.height, rgb(10, 10), rgb(10, 500)),
        (1280, 800, (0, 0, 255), (255, 0, 0))
    );
    assert_eq!(
        (
            shot.data["width"].clone(),
            shot.data["height"].clone(),
            shot.data["bytes"].clone()
        ),
        (json!(1280), json!(800), json!(png.len()))
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_browser_is_closed_and_a_new_one_starts_on_the_next_call() {
    use std::sync::Arc;

    use toolgate_browser::{SessionPool, browser_tools_with_pool};
    use toolgate_net::StaticLookup;

    use super::fixture::{config, site_policy};

    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let mut cfg = config(site_policy(site));
    cfg.idle_timeout_secs = 1;
    let pool = SessionPool::new(cfg, Arc::new(StaticLookup::new()));
    let tools = browser_tools_with_pool(pool.clone());
    let ctx = toolgate_core::ToolContext::for_test();
    let nav = json!({"action": "navigate", "url": format!("http://{site}/about")});
    tools[0].call(nav.clone(), ctx.clone()).await.unwrap();
    assert_eq!(pool.open_sessions().await, 1);
    // The reaper runs every second; give it a bounded number of rounds.
    for _ in 0..100 {
        if pool.open_sessions().await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(pool.open_sessions().await, 0);
    let again = tools[0]
        .call(json!({"action": "snapshot"}), ctx.clone())
        .await
        .unwrap();
    assert_eq!(again.data["url"], json!("about:blank"));
    let closed = tools[0]
        .call(json!({"action": "close"}), ctx)
        .await
        .unwrap();
    assert_eq!(closed.data, json!({"closed": true}));
}

/// Host processes whose arguments mention `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

fn namespace(pid: &str, kind: &str) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).unwrap()
}

/// Issue 29: Chromium runs in the sandbox's namespace view — its own mount, PID and IPC
/// namespaces, in which the host's files outside the system trees do not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_runs_in_its_own_namespaces() {
    let canary = std::path::Path::new("/var/tmp")
        .join(format!("toolgate-browser-canary-{}", std::process::id()));
    std::fs::write(&canary, "host only").unwrap();
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let b = Browser::for_site(site, "namespaces");
    b.read(json!({"action": "navigate", "url": format!("http://{site}/about")}))
        .await
        .unwrap();
    let renderers: Vec<u32> = processes_with("--type=renderer")
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("toolgate-browser-"))
        })
        .collect();
    assert!(
        !renderers.is_empty(),
        "no Chromium renderer of this session found"
    );
    for pid in renderers {
        let pid = pid.to_string();
        for kind in ["mnt", "pid", "ipc"] {
            assert_ne!(
                namespace(&pid, kind),
                namespace("self", kind),
                "Chromium ({pid}) shares the {kind} namespace"
            );
        }
        // A host file outside the system trees is not in its view.
        let seen = format!("/proc/{pid}/root{}", canary.display());
        assert!(
            std::fs::metadata(&seen).is_err(),
            "{seen} exists in Chromium's view"
        );
    }
    b.close().await;
    std::fs::remove_file(&canary).unwrap();
}
