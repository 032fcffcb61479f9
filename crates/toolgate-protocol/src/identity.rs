//! Who acts, in which role, in which session: [`Principal`], [`Role`] and [`SessionId`],
//! three names that are never interchangeable. Each is a string on the wire and in the
//! store (`#[serde(transparent)]`), read as `&str` where a string is wanted (`Deref`), and
//! compared with string literals; what it cannot do is stand in for one of the others.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(value: impl Into<String>) -> Self {
                $name(value.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }

            /// The text itself, to rewrite in place (the gateway's `admit` escapes NULs).
            pub fn as_mut_string(&mut self) -> &mut String {
                &mut self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                $name(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                $name(value.to_owned())
            }
        }

        impl From<&String> for $name {
            fn from(value: &String) -> Self {
                $name(value.clone())
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

name_type! {
    /// The authenticated caller a call acts for: a token's principal, a verified JWT's
    /// subject mapping, `local` on the CLI.
    Principal
}

name_type! {
    /// The role a caller acts in: the name of a `[roles.<name>]` table, which decides the
    /// tools it sees and what they may do.
    Role
}

name_type! {
    /// The conversation, MCP session or CLI session a call belongs to (session grants and
    /// quotas count per session).
    SessionId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_plain_string_on_the_wire() {
        let role = Role::from("ops");
        assert_eq!(serde_json::to_string(&role).unwrap(), "\"ops\"");
        let back: Role = serde_json::from_str("\"ops\"").unwrap();
        assert_eq!(back, role);
        assert_eq!(role, "ops");
        assert_eq!(role.len(), 3);
        assert_eq!(format!("{role}"), "ops");
    }
}
