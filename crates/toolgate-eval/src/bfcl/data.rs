//! The BFCL data set as shipped in the `bfcl-eval` wheel: one JSON Lines file per category
//! (`BFCL_v4_<category>.json`: id, question turns, function docs) and, for the AST
//! categories, `possible_answer/BFCL_v4_<category>.json` (the accepted values per parameter).
//!
//! Where the data is, first match wins: an explicit directory (`--data`), the
//! `TOOLGATE_BFCL_DATA` environment variable, or the `bfcl_eval` package found by the Python
//! of a `.venv` in the current directory or one of its parents, then `python3` on `PATH`.
//!
//! ```no_run
//! use toolgate_eval::bfcl::{BfclData, Category};
//! let data = BfclData::locate(None)?;
//! for case in data.load(Category::SimplePython)? {
//!     let question = case.entry.user_text();
//!     let names: Vec<&str> = case.entry.functions.iter().map(|f| f.name.as_str()).collect();
//!     # let _ = (question, names, case.answer);
//! }
//! # Ok::<(), toolgate_eval::bfcl::DataError>(())
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use super::category::Category;
use super::value::PyValue;

/// The environment variable naming the BFCL data directory.
pub const DATA_ENV: &str = "TOOLGATE_BFCL_DATA";

/// The file-name prefix of the data set version this crate reads.
pub const VERSION_PREFIX: &str = "BFCL_v4";

/// Why the data could not be found or read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// No data directory was found.
    #[error(
        "BFCL data not found (tried: {}). Install it with `.venv/bin/pip install --no-deps \
         bfcl-eval==2026.3.23` (scripts/test.sh does), or point --data / {DATA_ENV} at the \
         `bfcl_eval/data` directory",
        tried.join("; ")
    )]
    NotFound {
        /// What was tried, in order, and why each failed.
        tried: Vec<String>,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a valid entry.
    #[error("{path}:{line}: not a valid BFCL entry: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A ground-truth row is not a list of calls with lists of accepted values.
    #[error("{path}:{line}: not a valid BFCL entry: {error}")]
    Answer {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        error: AnswerError,
    },
    /// An AST entry has no ground truth.
    #[error("{category}: entry `{id}` has no ground truth in possible_answer/")]
    MissingAnswer {
        /// The category.
        category: Category,
        /// The entry id.
        id: String,
    },
}

/// Why a `ground_truth` value does not read as expected calls.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The value is not a list.
    #[error("ground_truth is not a list")]
    NotAList,
    /// A call is not an object.
    #[error("a ground-truth call is not an object: {0}")]
    CallNotAnObject(PyValue),
    /// A call names no function or several.
    #[error("a ground-truth call must have exactly one function name, has {0}")]
    FunctionCount(usize),
    /// A call's parameters are not an object.
    #[error("the parameters of `{0}` are not an object")]
    ParamsNotAnObject(String),
    /// A parameter's accepted values are not a list.
    #[error("`{function}.{param}`: the accepted values are not a list: {value}")]
    AcceptedNotAList {
        /// The function.
        function: String,
        /// The parameter.
        param: String,
        /// What was there instead.
        value: PyValue,
    },
}

/// One chat message of a question.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
pub struct Message {
    /// `user`, `system` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// A function document, as written in the data (`parameters.type` is `"dict"`, BFCL's name
/// for a JSON object; Java and JavaScript categories use their own type names).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct FunctionDoc {
    /// The function name, possibly dotted (`math.factorial`).
    pub name: String,
    /// What the function does.
    #[serde(default)]
    pub description: String,
    /// `{type: "dict", properties: {name: {type, description, items?, default?, enum?}},
    /// required: [...]}`, kept as written.
    pub parameters: serde_json::Value,
}

impl FunctionDoc {
    /// The declared parameters, in the order written, with their schema.
    pub fn properties(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.parameters
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
    }

    /// The schema of one parameter.
    pub fn property(&self, name: &str) -> Option<&serde_json::Value> {
        self.parameters.get("properties")?.get(name)
    }

    /// The `required` list (`None` when the doc has none).
    pub fn required(&self) -> Option<Vec<&str>> {
        let list = self.parameters.get("required")?.as_array()?;
        Some(list.iter().filter_map(serde_json::Value::as_str).collect())
    }

    /// Name, description and every parameter's name and description, one text (what a
    /// retriever indexes).
    pub fn search_text(&self) -> String {
        let mut text = format!("{} {}", self.name, self.description);
        for (name, schema) in self.properties() {
            text.push(' ');
            text.push_str(name);
            if let Some(d) = schema
                .get("description")
                .and_then(serde_json::Value::as_str)
            {
                text.push(' ');
                text.push_str(d);
            }
        }
        text
    }
}

/// One test entry: a question (one or more turns of messages) and the functions offered.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct Entry {
    /// `simple_python_0`, `live_multiple_12-4-3`, …
    pub id: String,
    /// Turns, each a list of messages (single-turn categories have one turn).
    pub question: Vec<Vec<Message>>,
    /// The function docs offered to the model.
    #[serde(rename = "function")]
    pub functions: Vec<FunctionDoc>,
}

impl Entry {
    /// The user messages of every turn joined by newlines (the query for retrieval).
    pub fn user_text(&self) -> String {
        self.question
            .iter()
            .flatten()
            .filter(|m| m.role == "user")
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One expected call of the ground truth: the function and, per parameter, the accepted
/// values (`""` among them means the parameter may be left out).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedCall {
    /// The function name.
    pub name: String,
    /// Parameter → accepted values, in the order written.
    pub params: Vec<(String, Vec<PyValue>)>,
}

impl ExpectedCall {
    /// The accepted values of one parameter.
    pub fn accepted(&self, param: &str) -> Option<&[PyValue]> {
        self.params
            .iter()
            .find(|(p, _)| p == param)
            .map(|(_, v)| v.as_slice())
    }
}

/// An entry with its ground truth (`None` for irrelevance and relevance categories).
#[derive(Debug, Clone)]
pub struct Case {
    /// The category it belongs to.
    pub category: Category,
    /// The entry.
    pub entry: Entry,
    /// The expected calls (in any order for parallel categories).
    pub answer: Option<Vec<ExpectedCall>>,
}

/// The BFCL data directory (the one holding `BFCL_v4_*.json` and `possible_answer/`).
#[derive(Debug, Clone)]
pub struct BfclData {
    dir: PathBuf,
}

impl BfclData {
    /// Uses `dir`, which must hold `BFCL_v4_simple_python.json`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, DataError> {
        let dir = dir.into();
        let probe = dir.join(format!("{VERSION_PREFIX}_simple_python.json"));
        if probe.is_file() {
            Ok(BfclData { dir })
        } else {
            Err(DataError::NotFound {
                tried: vec![format!("{} (no {})", dir.display(), probe.display())],
            })
        }
    }

    /// Finds the data: `explicit`, then `$TOOLGATE_BFCL_DATA`, then the installed `bfcl_eval`
    /// package (a `.venv` in the current directory or a parent, then `python3`).
    pub fn locate(explicit: Option<&Path>) -> Result<Self, DataError> {
        if let Some(dir) = explicit {
            return Self::open(dir);
        }
        if let Some(dir) = std::env::var_os(DATA_ENV).filter(|v| !v.is_empty()) {
            return Self::open(PathBuf::from(dir)).map_err(|e| match e {
                DataError::NotFound { mut tried } => {
                    tried.insert(0, format!("${DATA_ENV}"));
                    DataError::NotFound { tried }
                }
                other => other,
            });
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Self::discover_from(&cwd)
    }

    /// Asks the Python of the nearest `.venv` at or above `start` (then `python3`) where the
    /// `bfcl_eval` package is.
    pub fn discover_from(start: &Path) -> Result<Self, DataError> {
        let mut tried = Vec::new();
        let mut pythons: Vec<PathBuf> = start
            .ancestors()
            .map(|d| d.join(".venv/bin/python"))
            .filter(|p| p.is_file())
            .take(1)
            .collect();
        pythons.push(PathBuf::from("python3"));
        for python in pythons {
            match package_data_dir(&python) {
                Ok(dir) => match Self::open(&dir) {
                    Ok(data) => return Ok(data),
                    Err(_) => tried.push(format!(
                        "{}: bfcl_eval at {} has no data",
                        python.display(),
                        dir.display()
                    )),
                },
                Err(why) => tried.push(format!("{}: {why}", python.display())),
            }
        }
        Err(DataError::NotFound { tried })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of a category's entries file.
    pub fn entries_path(&self, category: Category) -> PathBuf {
        self.dir
            .join(format!("{VERSION_PREFIX}_{}.json", category.name()))
    }

    /// The path of a category's ground-truth file.
    pub fn answers_path(&self, category: Category) -> PathBuf {
        self.dir
            .join("possible_answer")
            .join(format!("{VERSION_PREFIX}_{}.json", category.name()))
    }

    /// Every entry of a category, in file order.
    pub fn entries(&self, category: Category) -> Result<Vec<Entry>, DataError> {
        read_jsonl(&self.entries_path(category))
    }

    /// The ground truth of an AST category, by entry id (empty for the others).
    pub fn answers(
        &self,
        category: Category,
    ) -> Result<HashMap<String, Vec<ExpectedCall>>, DataError> {
        if !category.has_answers() {
            return Ok(HashMap::new());
        }
        let path = self.answers_path(category);
        let rows: Vec<AnswerRow> = read_jsonl(&path)?;
        let mut out = HashMap::with_capacity(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            let calls =
                parse_ground_truth(&row.ground_truth).map_err(|error| DataError::Answer {
                    path: path.clone(),
                    line: i + 1,
                    error,
                })?;
            out.insert(row.id, calls);
        }
        Ok(out)
    }

    /// Every entry of a category joined with its ground truth.
    pub fn load(&self, category: Category) -> Result<Vec<Case>, DataError> {
        let entries = self.entries(category)?;
        let mut answers = self.answers(category)?;
        entries
            .into_iter()
            .map(|entry| {
                let answer = if category.has_answers() {
                    Some(
                        answers
                            .remove(&entry.id)
                            .ok_or_else(|| DataError::MissingAnswer {
                                category,
                                id: entry.id.clone(),
                            })?,
                    )
                } else {
                    None
                };
                Ok(Case {
                    category,
                    entry,
                    answer,
                })
            })
            .collect()
    }
}

#[derive(Deserialize)]
struct AnswerRow {
    id: String,
    ground_truth: PyValue,
}

/// `[{fn: {param: [accepted, ...]}}, ...]` → calls.
fn parse_ground_truth(v: &PyValue) -> Result<Vec<ExpectedCall>, AnswerError> {
    let PyValue::List(calls) = v else {
        return Err(AnswerError::NotAList);
    };
    calls
        .iter()
        .map(|call| {
            let PyValue::Dict(pairs) = call else {
                return Err(AnswerError::CallNotAnObject(call.clone()));
            };
            let [(name, params)] = pairs.as_slice() else {
                return Err(AnswerError::FunctionCount(pairs.len()));
            };
            let PyValue::Dict(params) = params else {
                return Err(AnswerError::ParamsNotAnObject(name.clone()));
            };
            let params = params
                .iter()
                .map(|(p, accepted)| match accepted {
                    PyValue::List(values) => Ok((p.clone(), values.clone())),
                    other => Err(AnswerError::AcceptedNotAList {
                        function: name.clone(),
                        param: p.clone(),
                        value: other.clone(),
                    }),
                })
                .collect::<Result<_, AnswerError>>()?;
            Ok(ExpectedCall {
                name: name.clone(),
                params,
            })
        })
        .collect()
}

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_owned(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| DataError::Parse {
                path: path.to_owned(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

const FIND_PACKAGE: &str = "import importlib.util, pathlib, sys\n\
s = importlib.util.find_spec('bfcl_eval')\n\
sys.exit('bfcl_eval is not installed') if s is None else None\n\
print(pathlib.Path(list(s.submodule_search_locations)[0]) / 'data')";

/// Why a Python did not say where `bfcl_eval` is (one entry of [`DataError::NotFound`]).
#[derive(Debug, thiserror::Error)]
enum PackageError {
    #[error("cannot run: {0}")]
    Run(std::io::Error),
    /// The last line of its standard error (`bfcl_eval is not installed`, a traceback's end).
    #[error("{0}")]
    Failed(String),
}

fn package_data_dir(python: &Path) -> Result<PathBuf, PackageError> {
    let out = Command::new(python)
        .args(["-c", FIND_PACKAGE])
        .output()
        .map_err(PackageError::Run)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("failed").trim().to_owned();
        return Err(PackageError::Failed(last));
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("possible_answer")).unwrap();
        std::fs::write(
            dir.path().join("BFCL_v4_simple_python.json"),
            concat!(
                r#"{"id": "simple_python_0", "question": [[{"role": "user", "content": "area of base 10 height 5"}]], "function": [{"name": "area", "description": "Triangle area.", "parameters": {"type": "dict", "properties": {"base": {"type": "integer", "description": "The base."}, "unit": {"type": "string", "description": "Unit."}}, "required": ["base"]}}]}"#,
                "\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("possible_answer/BFCL_v4_simple_python.json"),
            r#"{"id": "simple_python_0", "ground_truth": [{"area": {"base": [10], "unit": ["units", ""]}}]}"#,
        )
        .unwrap();
        dir
    }

    #[test]
    fn loads_entries_with_answers() {
        let dir = fixture();
        let data = BfclData::open(dir.path()).unwrap();
        let cases = data.load(Category::SimplePython).unwrap();
        assert_eq!(cases.len(), 1);
        let case = &cases[0];
        assert_eq!(case.entry.user_text(), "area of base 10 height 5");
        assert_eq!(case.entry.functions[0].required(), Some(vec!["base"]));
        assert_eq!(
            case.entry.functions[0].search_text(),
            "area Triangle area. base The base. unit Unit."
        );
        let answer = case.answer.as_ref().unwrap();
        assert_eq!(answer[0].name, "area");
        assert_eq!(
            answer[0].accepted("unit").unwrap(),
            &[PyValue::Str("units".into()), PyValue::Str(String::new())]
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = fixture();
        std::fs::write(
            dir.path()
                .join("possible_answer/BFCL_v4_simple_python.json"),
            "{\"id\": \"x\", \"ground_truth\": [{\"area\": {\"base\": 10}}]}\n",
        )
        .unwrap();
        let data = BfclData::open(dir.path()).unwrap();
        let err = data.load(Category::SimplePython).unwrap_err();
        assert!(
            matches!(
                &err,
                DataError::Answer { line: 1, error: AnswerError::AcceptedNotAList { function, param, .. }, .. }
                    if function == "area" && param == "base"
            ),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains("BFCL_v4_simple_python.json:1") && err.contains("area.base"),
            "{err}"
        );
        let err = data.entries(Category::Parallel).unwrap_err().to_string();
        assert!(err.contains("BFCL_v4_parallel.json"), "{err}");
        let err = BfclData::open(dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("pip install --no-deps bfcl-eval"), "{err}");
    }
}
