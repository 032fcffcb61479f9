//! The wire contract, checked rather than trusted: every answer a test gets from a route of the
//! OpenAPI document — and every answer under `/v1` — is held against what the document
//! declares for that route and status. The status must be declared; the content type must be
//! a declared one; a JSON body must match the declared schema, its `$ref`s resolved into the
//! document's components. Streams and other non-JSON answers are checked by content type.
//!
//! The fixture's client ([`crate::checked`]) and the raw-socket helpers ([`crate::raw`]) call
//! [`assert_answer`] on every answer, so a test cannot skip it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use jsonschema::Validator;
use serde_json::{Value, json};
use toolgate_server::api::{ROUTES, openapi};

/// The document the server serves (its `servers` URL aside).
static DOCUMENT: LazyLock<Value> = LazyLock::new(|| openapi::document("http://127.0.0.1:1"));

/// Compiled schemas, by (method, route template, status).
type Compiled = HashMap<(String, String, String), Arc<Validator>>;
static VALIDATORS: LazyLock<Mutex<Compiled>> = LazyLock::new(Mutex::default);

/// What the document says about one request.
#[derive(Debug, PartialEq)]
pub enum Route {
    /// A documented operation: `(method, template)`, e.g. `("GET", "/v1/tools/{name}")`.
    Operation(String, &'static str),
    /// A documented path asked with another method: 405 with the error body.
    OtherMethod(&'static str),
    /// Under `/v1` but no route: 404 with the error body.
    Nowhere,
    /// Outside the document and outside `/v1` (`/mcp`, the console): not checked here.
    Outside,
}

/// Which route of the document `method target` reaches. `target` is a path, a path with a
/// query, or an absolute URL; literal segments win over parameters, as in the router.
pub fn route(method: &str, target: &str) -> Route {
    let path = path_of(target);
    let best = |same_method: bool| {
        ROUTES
            .iter()
            .filter(|r| !same_method || r.method.eq_ignore_ascii_case(method))
            .filter_map(|r| literal_segments(r.path, path).map(|n| (n, r.path)))
            .max_by_key(|(n, _)| *n)
            .map(|(_, template)| template)
    };
    match (best(false), best(true)) {
        (Some(any), Some(mine)) if any == mine => {
            Route::Operation(method.to_ascii_uppercase(), mine)
        }
        (Some(any), _) => Route::OtherMethod(any),
        (None, _) if path == "/v1" || path.starts_with("/v1/") => Route::Nowhere,
        (None, _) => Route::Outside,
    }
}

fn path_of(target: &str) -> &str {
    let no_query = target.split(['?', '#']).next().unwrap_or_default();
    match no_query.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => no_query,
    }
}

/// How many literal segments of `template` match `path`; `None` if it does not match.
fn literal_segments(template: &str, path: &str) -> Option<usize> {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    if t.len() != p.len() {
        return None;
    }
    let mut literal = 0;
    for (t, p) in t.iter().zip(&p) {
        if t.starts_with('{') {
            if p.is_empty() {
                return None;
            }
        } else if t == p {
            literal += 1;
        } else {
            return None;
        }
    }
    Some(literal)
}

/// The responses the document declares for `route`, by status.
fn declared(route: &Route) -> Option<Value> {
    let error = json!({"description": "The one error body.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    match route {
        Route::Operation(method, template) => {
            Some(DOCUMENT["paths"][*template][method.to_ascii_lowercase()]["responses"].clone())
        }
        Route::OtherMethod(_) => Some(json!({"405": error})),
        Route::Nowhere => Some(json!({"404": error})),
        Route::Outside => None,
    }
}

/// Checks one answer. `body` is `None` for a body not read (a stream).
pub fn check(
    method: &str,
    target: &str,
    status: u16,
    content_type: Option<&str>,
    body: Option<&[u8]>,
) -> Result<(), String> {
    let route = route(method, target);
    let Some(responses) = declared(&route) else {
        return Ok(());
    };
    let status = status.to_string();
    let Some(answer) = responses.get(&status) else {
        let known: Vec<&String> = responses
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        return Err(format!(
            "status {status} is not declared (the document declares {known:?})"
        ));
    };
    let media = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let Some(content) = answer["content"].get(&media) else {
        let known: Vec<&String> = answer["content"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        return Err(format!(
            "content type `{media}` is not declared (the document declares {known:?})"
        ));
    };
    let (Some(body), "application/json") = (body, media.as_str()) else {
        return Ok(());
    };
    let instance: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let key = match &route {
        Route::Operation(m, t) => (m.clone(), (*t).to_owned(), status),
        other => (String::new(), format!("{other:?}"), status),
    };
    let validator = validator(key, &content["schema"])?;
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("{} at `{}`", e, e.instance_path()))
        .collect();
    match errors.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the body breaks the declared schema: {}",
            errors.join("; ")
        )),
    }
}

/// The compiled `schema`, its `$ref`s resolving into the document's components.
fn validator(key: (String, String, String), schema: &Value) -> Result<Arc<Validator>, String> {
    let mut cache = VALIDATORS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = cache.get(&key) {
        return Ok(Arc::clone(v));
    }
    let root = json!({"components": DOCUMENT["components"], "allOf": [schema]});
    let compiled = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
        .map_err(|e| format!("the declared schema does not compile: {e}"))?;
    let compiled = Arc::new(compiled);
    cache.insert(key, Arc::clone(&compiled));
    Ok(compiled)
}

/// [`check`], failing the test with the route, the status, what broke and the body.
pub fn assert_answer(
    method: &str,
    target: &str,
    status: u16,
    content_type: Option<&str>,
    body: Option<&[u8]>,
) {
    if let Err(why) = check(method, target, status, content_type, body) {
        let route = match route(method, target) {
            Route::Operation(m, t) => format!("{m} {t}"),
            other => format!("{other:?}"),
        };
        let body = body.map_or("(not read)".into(), String::from_utf8_lossy);
        panic!(
            "the answer to {method} {target} breaks the OpenAPI document ({route} → {status}): {why}\nbody: {body}"
        );
    }
}

/// Checks one server-sent event of `GET /v1/approvals/stream` against the declared event
/// shape, and an `approval` event's data against the declared `x-event-data` schema.
pub fn assert_event(name: &str, data: &Value) {
    let content = &DOCUMENT["paths"]["/v1/approvals/stream"]["get"]["responses"]["200"]["content"]
        ["text/event-stream"];
    let event = json!({"event": name, "data": data.to_string()});
    let shape = validator(
        ("SSE".into(), "event".into(), "200".into()),
        &content["schema"],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    if let Some(e) = shape.iter_errors(&event).next() {
        panic!("the event breaks the declared event shape: {e}\nevent: {event}");
    }
    if name == "approval" {
        let data_schema = validator(
            ("SSE".into(), "data".into(), "200".into()),
            &content["x-event-data"],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let errors: Vec<String> = data_schema
            .iter_errors(data)
            .map(|e| format!("{e} at `{}`", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "an approval event breaks the declared schema: {}\ndata: {data}",
            errors.join("; ")
        );
    }
}
