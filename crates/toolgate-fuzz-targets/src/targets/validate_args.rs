//! The gateway's validate layer (`toolgate_gateway::validate::ValidateLayer`: size cap, JSON
//! parse with its depth limit, JSON Schema 2020-12) on fuzzer-written argument text against
//! the real input schemas of the built-in tools and `url_read`/`web_search`.
//!
//! Input: one byte choosing the tool, then the argument text. Properties: no panic, no hang;
//! text over the size cap never passes; and arguments that pass are exactly what the tool
//! receives (less the optional `null` members the layer names as dropped) and satisfy its
//! schema by a second, hand-written checker ([`crate::schema`]).

use std::sync::{Arc, LazyLock, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use toolgate_core::DynTool;
use toolgate_gateway::validate::ValidateLayer;
use toolgate_gateway::{Arguments, Call, CallRequest, Layer, Next, Outcome};
use toolgate_protocol::ToolOutput;
use toolgate_registry::{Availability, Entry};

const MAX_ARGUMENT_BYTES: usize = 4096;

struct Fixture {
    tools: Vec<DynTool>,
    layers: Vec<Arc<dyn Layer>>,
    runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

/// Stands for the rest of the pipeline: keeps the arguments the tool would receive.
struct Reached(Arc<Mutex<Option<Value>>>);

#[async_trait]
impl Layer for Reached {
    fn name(&self) -> &'static str {
        "reached"
    }

    async fn handle(&self, call: &mut Call, _next: Next<'_>) -> Outcome {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = call.args.clone();
        Ok(ToolOutput::text("reached"))
    }
}

static REACHED: LazyLock<Arc<Mutex<Option<Value>>>> = LazyLock::new(Arc::default);

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = Arc::new(
        toolgate_tools::Workspace::new(dir.path(), Vec::new()).unwrap_or_else(|e| panic!("{e}")),
    );
    let mut tools = toolgate_tools::builtin_tools(ws, &toolgate_tools::BuiltinOptions::default());
    let web: toolgate_web::WebConfig = toml::from_str(
        "[url_read]\nenabled = true\n[search]\nbackend = \"searxng\"\nbase_url = \"https://search.example\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    tools.extend(
        toolgate_web::web_tools(&web, &toolgate_net::EgressPolicy::default())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let layers: Vec<Arc<dyn Layer>> = vec![
        Arc::new(ValidateLayer::new(MAX_ARGUMENT_BYTES)),
        Arc::new(Reached(Arc::clone(&REACHED))),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    Fixture {
        tools,
        layers,
        runtime,
        _dir: dir,
    }
});

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let Some((&which, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let f = &*FIXTURE;
    let tool = &f.tools[usize::from(which) % f.tools.len()];
    let mut call = Call::new(CallRequest::new(
        tool.spec().name.clone(),
        Arguments::Text(text.to_owned()),
    ));
    call.entry = Some(Entry {
        tool: Arc::clone(tool),
        availability: Availability::Available,
    });
    *REACHED.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let outcome = f
        .runtime
        .block_on(f.layers[0].handle(&mut call, Next::new(&f.layers[1..])));
    let reached = REACHED.lock().unwrap_or_else(|e| e.into_inner()).take();
    match (outcome, reached) {
        (Ok(_), Some(args)) => {
            assert!(
                text.len() <= MAX_ARGUMENT_BYTES,
                "{} bytes passed the cap",
                text.len()
            );
            let mut parsed: Value = if text.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                serde_json::from_str(text).unwrap_or_else(|e| panic!("passed but is not JSON: {e}"))
            };
            // A `null` for an optional member means "not given": the layer drops it and names
            // it; nothing else may change.
            for name in &call.dropped_nulls {
                let removed = parsed.as_object_mut().and_then(|m| m.remove(name));
                assert_eq!(
                    removed,
                    Some(Value::Null),
                    "`{name}` was named as a dropped null but was not a null member"
                );
            }
            assert_eq!(
                args, parsed,
                "the tool would receive other arguments than were sent"
            );
            let schema = &tool.spec().input_schema;
            if let Some(why) = crate::schema::violation(schema, &args, "") {
                panic!("`{}` accepted {args} though {why}", tool.spec().name);
            }
        }
        (Err(e), None) => {
            assert!(!e.message.is_empty());
        }
        (Ok(_), None) => panic!("validation passed without reaching the next layer"),
        (Err(e), Some(_)) => panic!("the call reached the tool and still failed: {e:?}"),
    }
}
