//! [`PyValue`]: a JSON value as the official checker sees it after `json.loads` — objects keep
//! their key order (Python dicts do, and the checker reports the first failing parameter in
//! that order), `1`, `1.0` and `true` are different types, and equality follows Python's `==`
//! (`True == 1 == 1.0`, dicts compare regardless of order).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A decoded JSON value with Python's types and equality.
#[derive(Debug, Clone)]
pub enum PyValue {
    /// `null` / `None`.
    None,
    /// `true` / `false`.
    Bool(bool),
    /// An integer literal (no fraction, no exponent).
    Int(i128),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// A string.
    Str(String),
    /// An array / list.
    List(Vec<PyValue>),
    /// An object / dict, in the order its keys were written.
    Dict(Vec<(String, PyValue)>),
}

/// The Python type of a [`PyValue`] (`type(value)` in the checker), plus `set`, which the
/// Java type table names but JSON never produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyType {
    /// `NoneType`
    None,
    /// `bool`
    Bool,
    /// `int`
    Int,
    /// `float`
    Float,
    /// `str`
    Str,
    /// `list`
    List,
    /// `dict`
    Dict,
    /// `set` (only as an expected type)
    Set,
}

impl PyType {
    /// The Python name of the type, as in the checker's messages.
    pub fn name(self) -> &'static str {
        match self {
            PyType::None => "NoneType",
            PyType::Bool => "bool",
            PyType::Int => "int",
            PyType::Float => "float",
            PyType::Str => "str",
            PyType::List => "list",
            PyType::Dict => "dict",
            PyType::Set => "set",
        }
    }
}

impl PyValue {
    /// `type(self)`.
    pub fn py_type(&self) -> PyType {
        match self {
            PyValue::None => PyType::None,
            PyValue::Bool(_) => PyType::Bool,
            PyValue::Int(_) => PyType::Int,
            PyValue::Float(_) => PyType::Float,
            PyValue::Str(_) => PyType::Str,
            PyValue::List(_) => PyType::List,
            PyValue::Dict(_) => PyType::Dict,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// `self == ""`: the marker of an optional parameter in an answer list.
    pub fn is_empty_str(&self) -> bool {
        matches!(self, PyValue::Str(s) if s.is_empty())
    }

    /// Looks a key up in a dict (`None` for other types or a missing key).
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python's `self == other`.
    pub fn py_eq(&self, other: &PyValue) -> bool {
        use PyValue as V;
        match (self, other) {
            (V::None, V::None) => true,
            (V::Str(a), V::Str(b)) => a == b,
            (V::List(a), V::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            (V::Dict(a), V::Dict(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| other.get(k).is_some_and(|w| v.py_eq(w)))
                    && b.iter().all(|(k, _)| self.get(k).is_some())
            }
            (V::Float(a), V::Float(b)) => a == b,
            (a, b) => match (a.as_number(), b.as_number()) {
                (Some(x), Some(y)) => x.eq(&y),
                _ => false,
            },
        }
    }

    /// Python's `self in list`.
    pub fn py_in(&self, list: &[PyValue]) -> bool {
        list.iter().any(|x| self.py_eq(x))
    }

    fn as_number(&self) -> Option<Number> {
        match self {
            PyValue::Bool(b) => Some(Number::Int(i128::from(*b))),
            PyValue::Int(i) => Some(Number::Int(*i)),
            PyValue::Float(f) => Some(Number::Float(*f)),
            _ => None,
        }
    }

    /// Converts a `serde_json::Value` (key order is that of `serde_json`'s map).
    pub fn from_json(v: &serde_json::Value) -> PyValue {
        match v {
            serde_json::Value::Null => PyValue::None,
            serde_json::Value::Bool(b) => PyValue::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    PyValue::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    PyValue::Int(i128::from(u))
                } else {
                    PyValue::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => PyValue::Str(s.clone()),
            serde_json::Value::Array(a) => {
                PyValue::List(a.iter().map(PyValue::from_json).collect())
            }
            serde_json::Value::Object(m) => PyValue::Dict(
                m.iter()
                    .map(|(k, v)| (k.clone(), PyValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Converts to a `serde_json::Value` (a float that JSON cannot hold becomes `null`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            PyValue::None => serde_json::Value::Null,
            PyValue::Bool(b) => serde_json::Value::Bool(*b),
            PyValue::Int(i) => i64::try_from(*i)
                .map(serde_json::Value::from)
                .or_else(|_| u64::try_from(*i).map(serde_json::Value::from))
                .unwrap_or_else(|_| serde_json::Value::from(*i as f64)),
            PyValue::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            PyValue::Str(s) => serde_json::Value::String(s.clone()),
            PyValue::List(l) => serde_json::Value::Array(l.iter().map(PyValue::to_json).collect()),
            PyValue::Dict(d) => {
                serde_json::Value::Object(d.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    /// Python compares an int and a float exactly (not by rounding the int).
    fn eq(&self, other: &Number) -> bool {
        match (*self, *other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a == b,
            (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => {
                f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && (f as i128) == i
            }
        }
    }
}

impl PartialEq for PyValue {
    fn eq(&self, other: &Self) -> bool {
        self.py_eq(other)
    }
}

impl fmt::Display for PyValue {
    /// Python's `repr` for the common cases (used in error messages only).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::None => f.write_str("None"),
            PyValue::Bool(true) => f.write_str("True"),
            PyValue::Bool(false) => f.write_str("False"),
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            PyValue::Str(s) => write!(f, "'{s}'"),
            PyValue::List(l) => {
                f.write_str("[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            PyValue::Dict(d) => {
                f.write_str("{")?;
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "'{k}': {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

impl<'de> Deserialize<'de> for PyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PyValueVisitor)
    }
}

struct PyValueVisitor;

impl<'de> Visitor<'de> for PyValueVisitor {
    type Value = PyValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<PyValue, E> {
        Ok(PyValue::None)
    }
    fn visit_none<E: de::Error>(self) -> Result<PyValue, E> {
        Ok(PyValue::None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<PyValue, D::Error> {
        PyValue::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<PyValue, E> {
        Ok(PyValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<PyValue, E> {
        Ok(PyValue::Int(i128::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<PyValue, E> {
        Ok(PyValue::Int(i128::from(v)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<PyValue, E> {
        Ok(PyValue::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<PyValue, E> {
        Ok(PyValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PyValue, E> {
        Ok(PyValue::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<PyValue, E> {
        Ok(PyValue::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PyValue, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(PyValue::List(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PyValue, A::Error> {
        let mut out: Vec<(String, PyValue)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, PyValue>()? {
            // A repeated key keeps its first position and takes the last value (json.loads).
            match out.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Ok(PyValue::Dict(out))
    }
}

impl Serialize for PyValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PyValue::None => s.serialize_unit(),
            PyValue::Bool(b) => s.serialize_bool(*b),
            PyValue::Int(i) => match i64::try_from(*i) {
                Ok(v) => s.serialize_i64(v),
                Err(_) => s.serialize_i128(*i),
            },
            PyValue::Float(f) => s.serialize_f64(*f),
            PyValue::Str(v) => s.serialize_str(v),
            PyValue::List(l) => {
                let mut seq = s.serialize_seq(Some(l.len()))?;
                for v in l {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            PyValue::Dict(d) => {
                let mut map = s.serialize_map(Some(d.len()))?;
                for (k, v) in d {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> PyValue {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn keeps_key_order_and_python_types() {
        let d = v(r#"{"b": 1, "a": 1.0, "c": true}"#);
        let PyValue::Dict(pairs) = &d else {
            panic!("not a dict")
        };
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(d.get("b").unwrap().py_type(), PyType::Int);
        assert_eq!(d.get("a").unwrap().py_type(), PyType::Float);
        assert_eq!(d.get("c").unwrap().py_type(), PyType::Bool);
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"b":1,"a":1.0,"c":true}"#
        );
    }

    #[test]
    fn equality_is_pythons() {
        assert!(v("1").py_eq(&v("1.0")));
        assert!(v("true").py_eq(&v("1")));
        assert!(v("false").py_eq(&v("0.0")));
        assert!(!v("1").py_eq(&v("\"1\"")));
        assert!(v(r#"{"a": 1, "b": [2]}"#).py_eq(&v(r#"{"b": [2.0], "a": true}"#)));
        assert!(!v(r#"{"a": 1}"#).py_eq(&v(r#"{"a": 1, "b": 2}"#)));
        assert!(!v("[1, 2]").py_eq(&v("[2, 1]")));
        assert!(v("null").py_eq(&v("null")));
        assert!(!v("null").py_eq(&v("\"\"")));
        assert!(!v("9007199254740993").py_eq(&v("9007199254740992.0")));
    }
}
