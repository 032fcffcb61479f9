//! Elicitation through the hub's `Elicitor` (the approval channel in the binary), against
//! server-everything's `trigger-elicitation-request` (registered only for clients that offer
//! elicitation): accept sends the form, decline is reported as declined, and a hub without
//! an elicitor does not offer it at all.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use toolgate_mcp_client::elicit::defaults_of;
use toolgate_mcp_client::{
    ElicitationAnswer, ElicitationRequest, Elicitor, HubOptions, McpHub, ServerState,
};
use toolgate_net::EgressPolicy;
use toolgate_registry::Catalog;

use crate::peers::{call, everything_stdio, quick_retry, start};

const TOOL: &str = "mcp__everything__trigger-elicitation-request";

/// Answers every request the same way and remembers what was asked.
#[derive(Debug)]
struct Scripted {
    accept: bool,
    asked: Mutex<Vec<ElicitationRequest>>,
}

#[async_trait]
impl Elicitor for Scripted {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let answer = if self.accept {
            ElicitationAnswer::Accept(defaults_of(&request.schema))
        } else {
            ElicitationAnswer::Decline
        };
        self.asked.lock().unwrap().push(request);
        answer
    }
}

async fn with_elicitor(accept: bool) -> (McpHub, Arc<Catalog>, Arc<Scripted>) {
    let elicitor = Arc::new(Scripted {
        accept,
        asked: Mutex::new(Vec::new()),
    });
    let catalog = Arc::new(Catalog::new());
    let options = HubOptions::new(quick_retry(), EgressPolicy::default())
        .with_elicitor(Arc::clone(&elicitor) as Arc<dyn Elicitor>);
    let hub = McpHub::start(
        vec![everything_stdio("everything")],
        Arc::clone(&catalog),
        options,
    )
    .await
    .expect("valid config");
    assert_eq!(hub.status()[0].state, ServerState::Ready, "{hub:?}");
    (hub, catalog, elicitor)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_elicitation_sends_the_forms_defaults() {
    let (hub, catalog, elicitor) = with_elicitor(true).await;
    let out = call(&catalog, TOOL, json!({})).await.unwrap();
    let text = serde_json::to_string(&out).unwrap();
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    let asked = elicitor.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].server, "everything");
    assert_eq!(
        asked[0].message,
        "Please provide inputs for the following fields:"
    );
    assert_eq!(
        asked[0].schema["properties"]["integer"]["default"],
        json!(42)
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_elicitation_is_reported_by_the_server_as_declined() {
    let (hub, catalog, elicitor) = with_elicitor(false).await;
    let out = call(&catalog, TOOL, json!({})).await.unwrap();
    let text = serde_json::to_string(&out).unwrap().to_lowercase();
    assert!(text.contains("decline"), "{text}");
    assert!(!text.contains("stormy night"), "{text}");
    assert_eq!(elicitor.asked.lock().unwrap().len(), 1);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_elicitor_the_client_does_not_offer_elicitation() {
    let (hub, catalog) = start(vec![everything_stdio("everything")]).await;
    assert!(catalog.get(TOOL).is_none(), "the server registered {TOOL}");
    hub.shutdown().await;
}
