//! The generic EDN value: what the reader yields for anything the typed
//! op reader does not recognise (nemesis values, `:error` maps, odd keys).

use std::fmt;

/// One EDN value. Maps and sets keep their source order: histories are
/// small per value, and order-preserving output makes round trips exact.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `nil`.
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// An integer that fits i64.
    Int(i64),
    /// An integer beyond i64 or written with the `N` suffix, as its digits.
    BigInt(String),
    /// A floating-point number.
    Float(f64),
    /// A decimal written with the `M` suffix, as its text without the `M`.
    BigDec(String),
    /// A ratio `n/d`, as written.
    Ratio(String),
    /// A character (`\c`).
    Char(char),
    /// A string.
    String(String),
    /// A symbol.
    Symbol(String),
    /// A keyword, without its leading colon.
    Keyword(String),
    /// A list `( ... )`.
    List(Vec<Value>),
    /// A vector `[ ... ]`.
    Vector(Vec<Value>),
    /// A map `{ ... }`, its entries in source order.
    Map(Vec<(Value, Value)>),
    /// A set `#{ ... }`, in source order.
    Set(Vec<Value>),
    /// A tagged value `#tag value`.
    Tagged(String, Box<Value>),
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Value::Nil => {}
            Value::Bool(b) => b.hash(h),
            Value::Int(i) => i.hash(h),
            Value::Float(f) => f.to_bits().hash(h),
            Value::Char(c) => c.hash(h),
            Value::BigInt(s)
            | Value::BigDec(s)
            | Value::Ratio(s)
            | Value::String(s)
            | Value::Symbol(s)
            | Value::Keyword(s) => s.hash(h),
            Value::List(v) | Value::Vector(v) | Value::Set(v) => v.hash(h),
            Value::Map(m) => m.hash(h),
            Value::Tagged(t, v) => {
                t.hash(h);
                v.hash(h)
            }
        }
    }
}

impl Value {
    /// The keyword `:s` (`s` without its colon).
    pub fn keyword(s: &str) -> Value {
        Value::Keyword(s.to_string())
    }

    /// The integer, if it is one that fits i64.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Looks a key up in a map value.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match self {
            Value::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Short name of the value's kind, for error messages.
    /// The value with every collection longer than `items` cut to its
    /// first `items` elements and a `...` symbol, at every depth: what a
    /// report prints of a long value, always whole forms (never text cut
    /// mid-form).
    pub fn abbreviated(&self, items: usize) -> Value {
        let cut = |xs: &[Value]| -> Vec<Value> {
            let mut v: Vec<Value> = xs
                .iter()
                .take(items)
                .map(|x| x.abbreviated(items))
                .collect();
            if xs.len() > items {
                v.push(Value::Symbol(format!("... {} more", xs.len() - items)));
            }
            v
        };
        match self {
            Value::List(xs) => Value::List(cut(xs)),
            Value::Vector(xs) => Value::Vector(cut(xs)),
            Value::Set(xs) => Value::Set(cut(xs)),
            Value::Map(m) => {
                let mut v: Vec<(Value, Value)> = m
                    .iter()
                    .take(items)
                    .map(|(k, x)| (k.abbreviated(items), x.abbreviated(items)))
                    .collect();
                if m.len() > items {
                    v.push((
                        Value::Symbol("...".into()),
                        Value::Symbol(format!("{} more", m.len() - items)),
                    ));
                }
                Value::Map(v)
            }
            Value::Tagged(t, x) => Value::Tagged(t.clone(), Box::new(x.abbreviated(items))),
            other => other.clone(),
        }
    }

    /// What kind of value it is, for messages (`integer`, `map`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::BigInt(_) => "an integer",
            Value::Float(_) | Value::BigDec(_) | Value::Ratio(_) => "a number",
            Value::Char(_) => "a character",
            Value::String(_) => "a string",
            Value::Symbol(_) => "a symbol",
            Value::Keyword(_) => "a keyword",
            Value::List(_) => "a list",
            Value::Vector(_) => "a vector",
            Value::Map(_) => "a map",
            Value::Set(_) => "a set",
            Value::Tagged(..) => "a tagged literal",
        }
    }
}

fn write_seq(f: &mut fmt::Formatter<'_>, open: &str, items: &[Value], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{v}")?;
    }
    f.write_str(close)
}

/// Writes a string literal with EDN escapes.
pub fn write_edn_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Prints EDN that the reader reads back to an equal value.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::BigInt(s) => write!(f, "{s}N"),
            Value::Float(x) => {
                if x.is_nan() {
                    f.write_str("##NaN")
                } else if x.is_infinite() {
                    f.write_str(if *x > 0.0 { "##Inf" } else { "##-Inf" })
                } else {
                    // Debug always shows a `.` or an exponent (`1.0`,
                    // `1e300`), so the text reads back as the same float.
                    write!(f, "{x:?}")
                }
            }
            Value::BigDec(s) => write!(f, "{s}M"),
            Value::Ratio(s) => f.write_str(s),
            Value::Char(c) => match c {
                '\n' => f.write_str("\\newline"),
                ' ' => f.write_str("\\space"),
                '\t' => f.write_str("\\tab"),
                '\r' => f.write_str("\\return"),
                c if c.is_control() => write!(f, "\\u{:04x}", *c as u32),
                c => write!(f, "\\{c}"),
            },
            Value::String(s) => write_edn_string(f, s),
            Value::Symbol(s) => f.write_str(s),
            Value::Keyword(s) => write!(f, ":{s}"),
            Value::List(v) => write_seq(f, "(", v, ")"),
            Value::Vector(v) => write_seq(f, "[", v, "]"),
            Value::Set(v) => write_seq(f, "#{", v, "}"),
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_str("}")
            }
            Value::Tagged(t, v) => write!(f, "#{t} {v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviated_values_are_whole_forms() {
        let v = Value::Map(vec![(
            Value::keyword("value"),
            Value::Vector((0..10).map(Value::Int).collect()),
        )]);
        assert_eq!(v.abbreviated(3).to_string(), "{:value [0 1 2 ... 7 more]}");
        assert_eq!(v.abbreviated(20), v);
    }
}
