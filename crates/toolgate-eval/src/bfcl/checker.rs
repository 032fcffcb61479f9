//! The AST checker: the rules of `bfcl_eval/eval_checker/ast_eval/ast_checker.py`
//! (bfcl-eval 2026.3.23), step for step, so that verdicts and error kinds agree.
//!
//! The order of checks for one call (the first failure is the verdict):
//! 1. the function name (dots turned into underscores when the model API needed it);
//! 2. every `required` parameter present;
//! 3. each argument, in the order the model wrote them: declared and expected → type
//!    (an int is accepted for a float; one level of list element types; a value whose type
//!    matches the answer's type instead is a "variable") → value (strings normalised; lists,
//!    objects and lists of objects compared element-wise; anything else by Python `==`);
//! 4. every answer parameter without `""` among its accepted values present.
//!
//! Outputs with several calls: "multiple" checks the one call against the answer's function;
//! "parallel" matches each expected call, in answer order, to the first unmatched output call
//! that passes. Irrelevance passes only with no call, relevance only with one.

use std::borrow::Cow;

use super::category::{Category, CheckKind, Language};
use super::data::{ExpectedCall, FunctionDoc};
use super::output::Call;
use super::types::{self, standardize};
use super::value::{PyType, PyValue};
use super::verdict::{ErrorKind, Failure, Verdict};
use super::{java, js};

/// Checker settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// The function names were sent to the model with `.` replaced by `_` (OpenAI-style
    /// APIs refuse dots), so expected names are compared in that form too.
    pub underscore_to_dot: bool,
}

/// Checks one decoded output of an entry of `category`.
///
/// `answer` is the ground truth (`None` for irrelevance and relevance categories).
pub fn check(
    category: Category,
    functions: &[FunctionDoc],
    output: &[Call],
    answer: Option<&[ExpectedCall]>,
    options: CheckOptions,
) -> Verdict {
    match category.check_kind() {
        CheckKind::Irrelevance => match output {
            [] => Ok(()),
            _ => Err(Failure::new(
                ErrorKind::IrrelevanceCall,
                format!(
                    "a call was made where none should be: {}",
                    output
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        },
        CheckKind::Relevance => match output {
            [] => Err(Failure::new(
                ErrorKind::RelevanceNoCall,
                "no call was made where one should be",
            )),
            _ => Ok(()),
        },
        kind => {
            let answer =
                answer.ok_or_else(|| Failure::exception("no ground truth for an AST entry"))?;
            let checker = Checker {
                language: category.language(),
                options,
            };
            match kind {
                CheckKind::Parallel => checker.parallel(functions, output, answer),
                CheckKind::Multiple => checker.multiple(functions, output, answer),
                _ => checker.simple_entry(functions, output, answer),
            }
        }
    }
}

type TypeTable = fn(&str) -> Option<PyType>;

struct Checker {
    language: Language,
    options: CheckOptions,
}

fn find_description<'a>(functions: &'a [FunctionDoc], name: &str) -> Option<&'a FunctionDoc> {
    functions.iter().find(|f| f.name == name)
}

impl Checker {
    fn simple_entry(
        &self,
        functions: &[FunctionDoc],
        output: &[Call],
        answer: &[ExpectedCall],
    ) -> Verdict {
        if output.len() != 1 {
            return Err(Failure::new(
                ErrorKind::SimpleWrongCount,
                format!(
                    "Wrong number of functions: expected 1, got {}.",
                    output.len()
                ),
            ));
        }
        let expected = answer
            .first()
            .ok_or_else(|| Failure::exception("the ground truth has no call"))?;
        self.simple(functions.first(), &output[0], expected)
    }

    fn multiple(
        &self,
        functions: &[FunctionDoc],
        output: &[Call],
        answer: &[ExpectedCall],
    ) -> Verdict {
        if output.len() != answer.len() {
            return Err(Failure::new(
                ErrorKind::MultipleWrongCount,
                format!(
                    "Wrong number of functions: expected {}, got {}.",
                    answer.len(),
                    output.len()
                ),
            ));
        }
        let Some(expected) = answer.first() else {
            return Err(Failure::exception("the ground truth has no call"));
        };
        self.simple(
            find_description(functions, &expected.name),
            &output[0],
            expected,
        )
    }

    fn parallel(
        &self,
        functions: &[FunctionDoc],
        output: &[Call],
        answer: &[ExpectedCall],
    ) -> Verdict {
        if output.len() != answer.len() {
            return Err(Failure::new(
                ErrorKind::ParallelWrongCount,
                format!(
                    "Wrong number of functions: expected {}, got {}.",
                    answer.len(),
                    output.len()
                ),
            ));
        }
        let mut matched = vec![false; output.len()];
        for (i, expected) in answer.iter().enumerate() {
            let doc = find_description(functions, &expected.name);
            let mut reasons = Vec::new();
            let mut found = false;
            for (index, call) in output.iter().enumerate() {
                if matched[index] {
                    continue;
                }
                match self.simple(doc, call, expected) {
                    Ok(()) => {
                        matched[index] = true;
                        found = true;
                        break;
                    }
                    Err(f) if f.kind == ErrorKind::Exception => return Err(f),
                    Err(f) => reasons.push(format!("output {index}: {}", f.message)),
                }
            }
            if !found {
                return Err(Failure::new(
                    ErrorKind::ParallelNoMatch,
                    format!(
                        "No output call matches expected call {i} (`{}`): {}",
                        expected.name,
                        reasons.join("; ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn simple(&self, doc: Option<&FunctionDoc>, call: &Call, expected: &ExpectedCall) -> Verdict {
        let doc = doc.ok_or_else(|| {
            Failure::exception(format!(
                "the ground truth names `{}`, which no function doc declares",
                expected.name
            ))
        })?;
        let properties = doc
            .parameters
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .ok_or_else(|| Failure::exception(format!("`{}` has no properties", doc.name)))?;
        let required = doc
            .required()
            .ok_or_else(|| Failure::exception(format!("`{}` has no required list", doc.name)))?;

        let func_name = if self.options.underscore_to_dot {
            doc.name.replace('.', "_")
        } else {
            doc.name.clone()
        };
        if call.name != func_name {
            return Err(Failure::new(
                ErrorKind::WrongFuncName,
                format!("Function name '{func_name}' not found in model output."),
            ));
        }
        for param in &required {
            if call.arg(param).is_none() {
                return Err(Failure::new(
                    ErrorKind::MissingRequired,
                    format!("Missing required parameter: '{param}'."),
                ));
            }
        }
        for (param, value) in &call.args {
            let (Some(schema), Some(accepted)) = (properties.get(param), expected.accepted(param))
            else {
                return Err(Failure::new(
                    ErrorKind::UnexpectedParam,
                    format!("Unexpected parameter: '{param}'."),
                ));
            };
            self.argument(param, value, schema, accepted)?;
        }
        for (param, accepted) in &expected.params {
            if call.arg(param).is_none() && !accepted.iter().any(PyValue::is_empty_str) {
                return Err(Failure::new(
                    ErrorKind::MissingOptional,
                    format!(
                        "Optional parameter '{param}' not provided and not marked as optional."
                    ),
                ));
            }
        }
        Ok(())
    }

    fn argument(
        &self,
        param: &str,
        value: &PyValue,
        schema: &serde_json::Value,
        accepted: &[PyValue],
    ) -> Verdict {
        let type_name = schema
            .get("type")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| Failure::exception(format!("parameter '{param}' has no type")))?;
        let items_type = || {
            schema
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| Failure::exception(format!("parameter '{param}' has no items.type")))
        };
        let unknown = |t: &str| Failure::exception(format!("unsupported type '{t}'"));

        let mut value = Cow::Borrowed(value);
        let expected_type;
        let mut nested_type = None;
        match self.language {
            Language::Python => {
                expected_type = types::python_type(type_name).ok_or_else(|| unknown(type_name))?;
                if matches!(type_name, "array" | "tuple") {
                    let n = items_type()?;
                    nested_type = Some(types::python_type(n).ok_or_else(|| unknown(n))?);
                }
            }
            Language::Java | Language::JavaScript => {
                let (table, kind, lang): (TypeTable, ErrorKind, &str) =
                    if self.language == Language::Java {
                        (types::java_type, ErrorKind::TypeJava, "Java")
                    } else {
                        (types::js_type, ErrorKind::TypeJs, "JavaScript")
                    };
                expected_type = table(type_name).ok_or_else(|| unknown(type_name))?;
                let PyValue::Str(text) = value.as_ref() else {
                    return Err(Failure::new(
                        kind,
                        format!(
                            "Incorrect type for parameter '{param}'. Expected a {lang} value in a string, got {}.",
                            value.py_type().name()
                        ),
                    ));
                };
                let nested_name = if matches!(type_name, "Array" | "ArrayList" | "array") {
                    let n = items_type()?;
                    nested_type = Some(table(n).ok_or_else(|| unknown(n))?);
                    Some(n)
                } else {
                    None
                };
                value = Cow::Owned(if self.language == Language::Java {
                    java::convert(text, type_name, nested_name)?
                } else {
                    js::convert(text, type_name, nested_name)?
                });
            }
        }

        if self.language == Language::Python
            && type_name == "float"
            && let PyValue::Int(i) = *value
        {
            value = Cow::Owned(PyValue::Float(i as f64));
        }
        let value = value.as_ref();

        let is_variable = type_check(
            param,
            value,
            accepted,
            type_name,
            expected_type,
            nested_type,
        )?;
        if !is_variable {
            match (expected_type, nested_type) {
                (PyType::Dict, _) => return dict_check(value, accepted),
                (PyType::List, Some(PyType::Dict)) => {
                    return list_dict_check(value, accepted);
                }
                (PyType::Str, _) => return string_check(param, value, accepted),
                (PyType::List, _) => return list_check(param, value, accepted),
                _ => {}
            }
        }
        if !value.py_in(accepted) {
            return Err(Failure::new(
                ErrorKind::ValueOthers,
                format!(
                    "Invalid value for parameter '{param}': {value}. Expected one of {}.",
                    show(accepted)
                ),
            ));
        }
        Ok(())
    }
}

/// `[a, b]` in Python's repr, without copying the values.
fn show(values: &[PyValue]) -> String {
    let parts: Vec<String> = values.iter().map(PyValue::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// The type of the first accepted value that is not `""` (the optional marker).
fn answer_type(accepted: &[PyValue]) -> Option<PyType> {
    accepted
        .iter()
        .find(|a| !a.is_empty_str())
        .map(PyValue::py_type)
}

/// `type_checker`: `Ok(is_variable)` or the type failure. A value whose type is not the
/// declared one but is the answer's type is accepted as a "variable" (compared by `==`).
fn type_check(
    param: &str,
    value: &PyValue,
    accepted: &[PyValue],
    type_name: &str,
    expected: PyType,
    nested: Option<PyType>,
) -> Result<bool, Failure> {
    let answer_t = answer_type(accepted);
    let is_variable = answer_t.is_some_and(|t| t != expected);
    let mut nested_failed = false;
    if value.py_type() == expected {
        let Some(nested) = nested else {
            return Ok(is_variable);
        };
        let items: &[PyValue] = match value {
            PyValue::List(items) => items,
            _ => &[],
        };
        for answer_item in accepted {
            let ok = match answer_item {
                PyValue::List(inner) => items.iter().all(|item| {
                    type_check(param, item, inner, nested.name(), nested, None).is_ok()
                }),
                _ => true,
            };
            if ok {
                return Ok(is_variable);
            }
        }
        nested_failed = true;
    }
    if answer_t.is_some_and(|t| value.py_type() == t) {
        if nested_failed {
            return Err(Failure::new(
                ErrorKind::TypeNested,
                format!(
                    "Nested type checking failed for parameter '{param}'. Expected outer type {type_name} with inner type {}. Parameter value: {value}.",
                    nested.map_or("?", PyType::name)
                ),
            ));
        }
        return Ok(true);
    }
    Err(Failure::new(
        ErrorKind::TypeSimple,
        format!(
            "Incorrect type for parameter '{param}'. Expected type {type_name}, got {}. Parameter value: {value}.",
            value.py_type().name()
        ),
    ))
}

fn string_check(param: &str, value: &PyValue, accepted: &[PyValue]) -> Verdict {
    let model = standardize(value.as_str().unwrap_or_default());
    let found = accepted
        .iter()
        .filter_map(PyValue::as_str)
        .any(|a| standardize(a) == model);
    if found {
        Ok(())
    } else {
        Err(Failure::new(
            ErrorKind::ValueString,
            format!(
                "Invalid value for parameter '{param}': {value}. Expected one of {}. Case insensitive.",
                show(accepted)
            ),
        ))
    }
}

/// Strings standardised, everything else as is.
fn standardize_item(v: &PyValue) -> PyValue {
    match v {
        PyValue::Str(s) => PyValue::Str(standardize(s)),
        other => other.clone(),
    }
}

/// What `for j in range(len(x)): x[j]` yields in Python: a list's items, a string's
/// characters, nothing for an empty dict; anything else raises.
fn py_index_items(x: &PyValue) -> Result<Vec<PyValue>, Failure> {
    match x {
        PyValue::List(items) => Ok(items.clone()),
        PyValue::Str(s) => Ok(s.chars().map(|c| PyValue::Str(c.to_string())).collect()),
        PyValue::Dict(d) if d.is_empty() => Ok(Vec::new()),
        other => Err(Failure::exception(format!(
            "cannot index {} like a list",
            other.py_type().name()
        ))),
    }
}

fn py_len(x: &PyValue) -> Result<usize, Failure> {
    match x {
        PyValue::List(items) => Ok(items.len()),
        PyValue::Str(s) => Ok(s.chars().count()),
        PyValue::Dict(d) => Ok(d.len()),
        other => Err(Failure::exception(format!(
            "object of type '{}' has no len()",
            other.py_type().name()
        ))),
    }
}

fn list_check(param: &str, value: &PyValue, accepted: &[PyValue]) -> Verdict {
    let PyValue::List(items) = value else {
        return Err(Failure::exception("list_checker got a non-list"));
    };
    let model = PyValue::List(items.iter().map(standardize_item).collect());
    let mut found = false;
    for a in accepted {
        let std = PyValue::List(py_index_items(a)?.iter().map(standardize_item).collect());
        found |= std.py_eq(&model);
    }
    if found {
        Ok(())
    } else {
        Err(Failure::new(
            ErrorKind::ValueList,
            format!(
                "Invalid value for parameter '{param}': {value}. Expected one of {}.",
                show(accepted)
            ),
        ))
    }
}

/// `dict_checker`: the object must match one accepted object key by key (its messages name
/// the inner key, not the parameter).
fn dict_check(value: &PyValue, accepted: &[PyValue]) -> Verdict {
    let mut result = Failure::new(ErrorKind::DictUnclear, "No accepted object matches.");
    for answer in accepted {
        if answer.is_empty_str() {
            continue;
        }
        let PyValue::Dict(model) = value else {
            return Err(Failure::exception("dict_checker got a non-dict"));
        };
        let PyValue::Dict(answer_pairs) = answer else {
            return Err(Failure::exception(format!(
                "an accepted value of an object parameter is a {}",
                answer.py_type().name()
            )));
        };
        result = Failure::new(ErrorKind::DictUnclear, "No accepted object matches.");
        let mut ok = true;
        for (key, v) in model {
            let Some(allowed) = answer.get(key) else {
                result = Failure::new(
                    ErrorKind::ValueDictKey,
                    format!("Unexpected dict key parameter: '{key}'."),
                );
                ok = false;
                break;
            };
            let std_value = standardize_item(v);
            let std_allowed: Vec<PyValue> = py_index_items(allowed)?
                .iter()
                .map(standardize_item)
                .collect();
            if !std_value.py_in(&std_allowed) {
                result = Failure::new(
                    ErrorKind::ValueDictValue,
                    format!(
                        "Invalid value for parameter '{key}': {v}. Expected one of {}.",
                        show(&std_allowed)
                    ),
                );
                ok = false;
                break;
            }
        }
        for (key, allowed) in answer_pairs {
            let present = model.iter().any(|(k, _)| k == key);
            if !present && !py_contains_empty_str(allowed)? {
                result = Failure::new(
                    ErrorKind::ValueDictKey,
                    format!("Missing dict key parameter: '{key}'."),
                );
                ok = false;
                break;
            }
        }
        if ok {
            return Ok(());
        }
    }
    Err(result)
}

/// Python's `"" in x`.
fn py_contains_empty_str(x: &PyValue) -> Result<bool, Failure> {
    match x {
        PyValue::List(items) => Ok(items.iter().any(PyValue::is_empty_str)),
        PyValue::Str(_) => Ok(true),
        PyValue::Dict(d) => Ok(d.iter().any(|(k, _)| k.is_empty())),
        other => Err(Failure::exception(format!(
            "argument of type '{}' is not iterable",
            other.py_type().name()
        ))),
    }
}

fn list_dict_check(value: &PyValue, accepted: &[PyValue]) -> Verdict {
    let PyValue::List(model) = value else {
        return Err(Failure::exception("list_dict_checker got a non-list"));
    };
    let mut result = Failure::new(ErrorKind::ListDictUnclear, "No accepted list matches.");
    for answer in accepted {
        if model.len() != py_len(answer)? {
            result = Failure::new(
                ErrorKind::ValueListDictCount,
                "Wrong number of dictionaries in the list.",
            );
            continue;
        }
        let answer_items = py_index_items(answer)?;
        let mut ok = true;
        for (item, expected) in model.iter().zip(&answer_items) {
            if let Err(f) = dict_check(item, std::slice::from_ref(expected)) {
                if f.kind == ErrorKind::Exception {
                    return Err(f);
                }
                result = f;
                ok = false;
                break;
            }
        }
        if ok {
            return Ok(());
        }
    }
    Err(result)
}

#[cfg(test)]
mod tests;
