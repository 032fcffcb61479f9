//! [`Finding`]: one thing wrong with one tool's definition, where (a JSON pointer into the
//! input schema when it is about a parameter), why, and the fix.

use serde::Serialize;

/// How much a finding is likely to cost in call accuracy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The definition is wrong (a `required` name that does not exist).
    Error,
    /// A model will likely guess or pick the wrong tool.
    Warning,
    /// Worth a look.
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// The rules, each with a stable id (used in JSON and SARIF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    NameStyle,
    NameVerb,
    DescriptionLength,
    DescriptionBoundary,
    ParamDescription,
    ParamEnum,
    ParamUnit,
    ParamFormat,
    RequiredList,
    SchemaDepth,
    SchemaSize,
    HintRisk,
    Confusable,
}

impl Rule {
    /// Every rule, in report order.
    pub const ALL: [Rule; 13] = [
        Rule::NameStyle,
        Rule::NameVerb,
        Rule::DescriptionLength,
        Rule::DescriptionBoundary,
        Rule::ParamDescription,
        Rule::ParamEnum,
        Rule::ParamUnit,
        Rule::ParamFormat,
        Rule::RequiredList,
        Rule::SchemaDepth,
        Rule::SchemaSize,
        Rule::HintRisk,
        Rule::Confusable,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::NameStyle => "name-style",
            Rule::NameVerb => "name-verb",
            Rule::DescriptionLength => "description-length",
            Rule::DescriptionBoundary => "description-boundary",
            Rule::ParamDescription => "param-description",
            Rule::ParamEnum => "param-enum",
            Rule::ParamUnit => "param-unit",
            Rule::ParamFormat => "param-format",
            Rule::RequiredList => "required-list",
            Rule::SchemaDepth => "schema-depth",
            Rule::SchemaSize => "schema-size",
            Rule::HintRisk => "hint-risk",
            Rule::Confusable => "confusable",
        }
    }

    /// One line on what the rule asks, for SARIF's rule table and `--help`-like listings.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::NameStyle => "Tool names are snake_case.",
            Rule::NameVerb => "Tool names start with a verb saying what the tool does.",
            Rule::DescriptionLength => {
                "Descriptions are long enough to choose by, short enough to read."
            }
            Rule::DescriptionBoundary => {
                "Descriptions say when not to use the tool, naming the tool to use instead."
            }
            Rule::ParamDescription => "Every parameter has a description.",
            Rule::ParamEnum => {
                "A parameter that takes one of a closed set of values lists them in `enum`."
            }
            Rule::ParamUnit => "A numeric quantity says its unit.",
            Rule::ParamFormat => "A date or time says its format.",
            Rule::RequiredList => "`required` lists exactly the parameters a call must give.",
            Rule::SchemaDepth => "Input schemas are shallow.",
            Rule::SchemaSize => "Input schemas are small.",
            Rule::HintRisk => "MCP hints agree with the risk the operator gave the tool.",
            Rule::Confusable => "No two tools are so alike that a model or Tool RAG mixes them up.",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The tool's catalog name.
    pub tool: String,
    pub rule: Rule,
    pub severity: Severity,
    /// JSON pointer into the input schema (`/properties/when`), when about a parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
    /// What to change, concretely.
    pub fix: String,
    /// The other tool, for a confusable pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<String>,
}

impl Finding {
    pub fn new(
        tool: &str,
        rule: Rule,
        severity: Severity,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            tool: tool.to_owned(),
            rule,
            severity,
            path: None,
            message: message.into(),
            fix: fix.into(),
            related: None,
        }
    }

    pub fn at(self, path: impl Into<String>) -> Self {
        Finding {
            path: Some(path.into()),
            ..self
        }
    }
}
