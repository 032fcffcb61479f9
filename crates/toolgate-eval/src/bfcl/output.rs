//! [`Call`]: one decoded function call of a model's output, `{"name": {"param": value}}` in
//! BFCL's decoded form, arguments in the order the model wrote them.

use super::value::PyValue;
use super::verdict::{ErrorKind, Failure};

/// Why a model's arguments text is not a call's arguments.
#[derive(Debug, thiserror::Error)]
pub enum ArgumentsError {
    /// Not JSON.
    #[error("arguments of `{name}` are not JSON: {error}")]
    NotJson {
        /// The function called.
        name: String,
        /// The parser's complaint.
        error: serde_json::Error,
    },
    /// JSON, but not an object.
    #[error("arguments of `{name}` are not an object: {value}")]
    NotAnObject {
        /// The function called.
        name: String,
        /// What was sent instead.
        value: PyValue,
    },
}

/// One call of a decoded model output.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function name as the model wrote it.
    pub name: String,
    /// The arguments, in the order written.
    pub args: Vec<(String, PyValue)>,
}

impl Call {
    /// A call from a name and arguments.
    pub fn new(name: impl Into<String>, args: Vec<(String, PyValue)>) -> Self {
        Call {
            name: name.into(),
            args,
        }
    }

    /// An argument by name.
    pub fn arg(&self, name: &str) -> Option<&PyValue> {
        self.args.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// `{"name": {args}}`.
    pub fn to_py(&self) -> PyValue {
        PyValue::Dict(vec![(self.name.clone(), PyValue::Dict(self.args.clone()))])
    }

    /// Parses a model's arguments text (a JSON object, as the chat APIs return it).
    pub fn from_json_arguments(name: &str, arguments: &str) -> Result<Call, ArgumentsError> {
        let v: PyValue = serde_json::from_str(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        })
        .map_err(|error| ArgumentsError::NotJson {
            name: name.to_owned(),
            error,
        })?;
        match v {
            PyValue::Dict(args) => Ok(Call::new(name, args)),
            value => Err(ArgumentsError::NotAnObject {
                name: name.to_owned(),
                value,
            }),
        }
    }
}

/// Reads a decoded output, `[{"fn": {"param": value}}, ...]`, as BFCL's
/// `is_function_calling_format_output` accepts it. An empty list is a valid (empty) output;
/// `[{}]` counts as no call, as in BFCL's relevance check.
pub fn parse_output(v: &PyValue) -> Result<Vec<Call>, Failure> {
    let wrong = |why: String| Failure::new(ErrorKind::WrongOutputFormat, why);
    let PyValue::List(items) = v else {
        return Err(wrong(format!("the output is not a list: {v}")));
    };
    if let [PyValue::Dict(only)] = items.as_slice()
        && only.is_empty()
    {
        return Ok(Vec::new());
    }
    items
        .iter()
        .map(|item| match item {
            PyValue::Dict(pairs) => match pairs.as_slice() {
                [(name, PyValue::Dict(args))] => Ok(Call::new(name.clone(), args.clone())),
                [(name, other)] => Err(wrong(format!(
                    "the arguments of `{name}` are not an object: {other}"
                ))),
                _ => Err(wrong(format!(
                    "a call must be an object with exactly one function name, got {} keys",
                    pairs.len()
                ))),
            },
            other => Err(wrong(format!("a call is not an object: {other}"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_decoded_form() {
        let v: PyValue = serde_json::from_str(r#"[{"f": {"b": 1, "a": "x"}}, {"g": {}}]"#).unwrap();
        let calls = parse_output(&v).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].args[0].0, "b");
        let PyValue::List(items) = &v else {
            panic!("not a list")
        };
        assert_eq!(calls[0].to_py(), items[0]);
        let none: PyValue = serde_json::from_str("[{}]").unwrap();
        assert!(parse_output(&none).unwrap().is_empty());
        let bad: PyValue = serde_json::from_str(r#"[{"f": 1}]"#).unwrap();
        assert_eq!(
            parse_output(&bad).unwrap_err().kind,
            ErrorKind::WrongOutputFormat
        );
        assert!(matches!(
            Call::from_json_arguments("f", "[1]"),
            Err(ArgumentsError::NotAnObject { .. })
        ));
        let err = Call::from_json_arguments("f", "{").unwrap_err();
        assert!(matches!(err, ArgumentsError::NotJson { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with("arguments of `f` are not JSON"),
            "{err}"
        );
        assert_eq!(Call::from_json_arguments("f", "").unwrap().args.len(), 0);
    }
}
