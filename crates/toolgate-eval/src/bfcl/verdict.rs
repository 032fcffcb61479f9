//! [`Verdict`] and [`ErrorKind`]: the outcome of checking one output, with the official
//! checker's `error_type` strings, so verdicts can be compared one to one.

use std::fmt;

/// Why an output was rejected. [`ErrorKind::as_str`] is the official `error_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(into = "&'static str")]
pub enum ErrorKind {
    /// The expected function was not called (`simple_function_checker:wrong_func_name`).
    WrongFuncName,
    /// A required parameter is missing.
    MissingRequired,
    /// A parameter the function does not declare, or the answer does not expect.
    UnexpectedParam,
    /// A parameter the answer needs was left out although it is not optional in the answer.
    MissingOptional,
    /// A value has the wrong type.
    TypeSimple,
    /// An element of a list value has the wrong type.
    TypeNested,
    /// A Java value is not a string.
    TypeJava,
    /// A JavaScript value is not a string.
    TypeJs,
    /// A string value is not among the accepted ones (after normalisation).
    ValueString,
    /// A list value is not among the accepted ones.
    ValueList,
    /// An object value has an unexpected or a missing key.
    ValueDictKey,
    /// An object value has a wrong value under a key.
    ValueDictValue,
    /// A list of objects has the wrong length.
    ValueListDictCount,
    /// Any other value not among the accepted ones.
    ValueOthers,
    /// An object value matched no accepted object, and no more precise reason was recorded.
    DictUnclear,
    /// A list of objects matched no accepted list, no more precise reason recorded.
    ListDictUnclear,
    /// A simple category's output does not have exactly one call.
    SimpleWrongCount,
    /// A multiple category's output does not have as many calls as the answer.
    MultipleWrongCount,
    /// A parallel category's output does not have as many calls as the answer.
    ParallelWrongCount,
    /// An expected call matched none of the remaining output calls.
    ParallelNoMatch,
    /// An irrelevance entry got a call.
    IrrelevanceCall,
    /// A relevance entry got no call.
    RelevanceNoCall,
    /// The output is not a list of `{function: {param: value}}` objects.
    WrongOutputFormat,
    /// The model's answer could not be decoded into calls (e.g. arguments that are not JSON).
    DecoderFailed,
    /// The model could not be asked (toolgate's own kind; BFCL has no model errors).
    ModelError,
    /// The official checker would raise an exception on this input (malformed data or an
    /// unsupported type); counted as a failure.
    Exception,
}

impl ErrorKind {
    /// The official `error_type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::WrongFuncName => "simple_function_checker:wrong_func_name",
            ErrorKind::MissingRequired => "simple_function_checker:missing_required",
            ErrorKind::UnexpectedParam => "simple_function_checker:unexpected_param",
            ErrorKind::MissingOptional => "simple_function_checker:missing_optional",
            ErrorKind::TypeSimple => "type_error:simple",
            ErrorKind::TypeNested => "type_error:nested",
            ErrorKind::TypeJava => "type_error:java",
            ErrorKind::TypeJs => "type_error:js",
            ErrorKind::ValueString => "value_error:string",
            ErrorKind::ValueList => "value_error:list/tuple",
            ErrorKind::ValueDictKey => "value_error:dict_key",
            ErrorKind::ValueDictValue => "value_error:dict_value",
            ErrorKind::ValueListDictCount => "value_error:list_dict_count",
            ErrorKind::ValueOthers => "value_error:others",
            ErrorKind::DictUnclear => "dict_checker:unclear",
            ErrorKind::ListDictUnclear => "list_dict_checker:unclear",
            ErrorKind::SimpleWrongCount => "simple_function_checker:wrong_count",
            ErrorKind::MultipleWrongCount => "multiple_function_checker:wrong_count",
            ErrorKind::ParallelWrongCount => "parallel_function_checker_no_order:wrong_count",
            ErrorKind::ParallelNoMatch => "parallel_function_checker_no_order:cannot_find_match",
            ErrorKind::IrrelevanceCall => "irrelevance_error:decoder_success",
            ErrorKind::RelevanceNoCall => "relevance_error:decoder_failed",
            ErrorKind::WrongOutputFormat => "ast_decoder:decoder_wrong_output_format",
            ErrorKind::DecoderFailed => "ast_decoder:decoder_failed",
            ErrorKind::ModelError => "model_error",
            ErrorKind::Exception => "exception",
        }
    }

    /// A short family name for summaries: `wrong_function`, `missing_param`,
    /// `unexpected_param`, `type`, `value`, `count`, `relevance`, `format`, `model`, `exception`.
    pub fn family(self) -> &'static str {
        use ErrorKind as K;
        match self {
            K::WrongFuncName | K::ParallelNoMatch => "wrong_function",
            K::MissingRequired | K::MissingOptional => "missing_param",
            K::UnexpectedParam => "unexpected_param",
            K::TypeSimple | K::TypeNested | K::TypeJava | K::TypeJs => "type",
            K::ValueString
            | K::ValueList
            | K::ValueDictKey
            | K::ValueDictValue
            | K::ValueListDictCount
            | K::ValueOthers
            | K::DictUnclear
            | K::ListDictUnclear => "value",
            K::SimpleWrongCount | K::MultipleWrongCount | K::ParallelWrongCount => "count",
            K::IrrelevanceCall | K::RelevanceNoCall => "relevance",
            K::WrongOutputFormat | K::DecoderFailed => "format",
            K::ModelError => "model",
            K::Exception => "exception",
        }
    }
}

impl From<ErrorKind> for &'static str {
    fn from(k: ErrorKind) -> Self {
        k.as_str()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rejection: its kind and a message naming the parameter and the values involved.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Failure {
    /// The kind (the official `error_type`).
    pub kind: ErrorKind,
    /// What was wrong, for a person.
    pub message: String,
}

impl Failure {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn exception(message: impl Into<String>) -> Self {
        Failure::new(ErrorKind::Exception, message)
    }
}

/// The verdict on one output: valid, or the failure.
pub type Verdict = Result<(), Failure>;
