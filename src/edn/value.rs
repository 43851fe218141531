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

    /// One form for all the values Clojure's `=` holds equal to this one,
    /// so that equal values compare and hash alike: an integer written
    /// `5N` is `5` (`(= 5 5N)`), a list is the vector of its elements
    /// (`(= '(1 2) [1 2])`), a set or a map is in one order whatever the
    /// text's, `-0.0` is `0.0`, a decimal is rid of trailing zeros
    /// (`(= 1.50M 1.5M)`), a ratio is in lowest terms. Kinds `=` keeps
    /// apart stay apart: `1`, `1.0`, `1M` and `"1"` are four values. `##NaN`
    /// stays itself, equal to nothing, as in Clojure.
    pub fn canonical(&self) -> Value {
        match self {
            Value::BigInt(s) => canonical_integer(s),
            Value::Float(x) if *x == 0.0 => Value::Float(0.0),
            Value::BigDec(s) => canonical_decimal(s),
            Value::Ratio(s) => canonical_ratio(s),
            Value::List(xs) | Value::Vector(xs) => {
                Value::Vector(xs.iter().map(Value::canonical).collect())
            }
            Value::Set(xs) => {
                let mut v: Vec<Value> = xs.iter().map(Value::canonical).collect();
                sort_values(&mut v, |x| x);
                v.dedup();
                Value::Set(v)
            }
            Value::Map(m) => {
                let mut v: Vec<(Value, Value)> = m
                    .iter()
                    .map(|(k, x)| (k.canonical(), x.canonical()))
                    .collect();
                sort_values(&mut v, |(k, _)| k);
                Value::Map(v)
            }
            Value::Tagged(t, x) => Value::Tagged(t.clone(), Box::new(x.canonical())),
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

/// Sorts values by their printed form: an order that does not depend on
/// the order they were written in (for sets and maps, which have none).
fn sort_values<T>(v: &mut [T], key: impl Fn(&T) -> &Value) {
    v.sort_by_cached_key(|x| key(x).to_string());
}

/// An integer's digits (`s` as a `BigInt` holds them: a sign, digits) as
/// the one value they stand for: an `Int` when it fits one.
fn canonical_integer(s: &str) -> Value {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Value::Int(0);
    }
    let text = if neg {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    match text.parse::<i64>() {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(text),
    }
}

/// A decimal's text (without its `M`) as `digits E exponent`, trailing
/// zeros moved into the exponent: equal for every text of one number
/// (`1.50`, `1.5`, `15e-1`), as `BigDecimal.compareTo` says.
fn canonical_decimal(s: &str) -> Value {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].trim_start_matches('+').parse::<i64>()),
        None => (s, Ok(0)),
    };
    let Ok(exp) = exp else {
        return Value::BigDec(s.to_string());
    };
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{int}{frac}");
    let mut exp = exp - frac.len() as i64;
    let trimmed = digits.trim_end_matches('0').len();
    exp += (digits.len() - trimmed) as i64;
    digits.truncate(trimmed);
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Value::BigDec("0E0".into());
    }
    let sign = if neg { "-" } else { "" };
    Value::BigDec(format!("{sign}{digits}E{exp}"))
}

/// A ratio `n/d` in lowest terms, an integer when `d` divides `n` (as
/// Clojure's reader gives it); left as written when its parts are too
/// large to reduce here.
fn canonical_ratio(s: &str) -> Value {
    let Some((n, d)) = s.split_once('/') else {
        return Value::Ratio(s.to_string());
    };
    let (Ok(n), Ok(d)) = (n.parse::<i128>(), d.parse::<i128>()) else {
        return Value::Ratio(s.to_string());
    };
    if d == 0 {
        return Value::Ratio(s.to_string());
    }
    let (mut a, mut b) = (n.unsigned_abs(), d.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let g = a.max(1) as i128;
    let sign = if (n < 0) != (d < 0) && n != 0 { -1 } else { 1 };
    let (n, d) = (sign * (n.abs() / g), d.abs() / g);
    if d == 1 {
        canonical_integer(&n.to_string())
    } else {
        Value::Ratio(format!("{n}/{d}"))
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

/// The width [`Value::pretty`] fits lines to, as Clojure's pprint.
pub const PRETTY_WIDTH: usize = 80;

impl Value {
    /// The value as EDN over several lines where it does not fit in
    /// [`PRETTY_WIDTH`] columns from `col` (the column it starts at):
    /// a map's entries and a collection's items one per line, aligned
    /// under the first, as Clojure's pprint lays out a result map. Reads
    /// back as the same value as [`Display`](fmt::Display) gives.
    pub fn pretty(&self, col: usize) -> String {
        let mut out = String::new();
        self.pretty_into(col, &mut out);
        out
    }

    fn pretty_into(&self, col: usize, out: &mut String) {
        use fmt::Write as _;
        let flat = self.to_string();
        let (open, items, close): (&str, Vec<&Value>, &str) = match self {
            Value::List(v) => ("(", v.iter().collect(), ")"),
            Value::Vector(v) => ("[", v.iter().collect(), "]"),
            Value::Set(v) => ("#{", v.iter().collect(), "}"),
            Value::Map(_) => ("{", Vec::new(), "}"),
            Value::Tagged(t, v) if col + flat.len() > PRETTY_WIDTH => {
                let _ = write!(out, "#{t} ");
                return v.pretty_into(col + t.len() + 2, out);
            }
            _ => ("", Vec::new(), ""),
        };
        if open.is_empty() || col + flat.len() <= PRETTY_WIDTH {
            out.push_str(&flat);
            return;
        }
        let inner = col + open.len();
        let indent = " ".repeat(inner);
        out.push_str(open);
        if let Value::Map(m) = self {
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                    out.push_str(&indent);
                }
                let key = k.to_string();
                out.push_str(&key);
                out.push(' ');
                v.pretty_into(inner + key.len() + 1, out);
            }
        } else {
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                    out.push_str(&indent);
                }
                v.pretty_into(inner, out);
            }
        }
        out.push_str(close);
    }
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
    fn pretty_values_fit_their_width_and_read_back_the_same() {
        let op = |i: i64| {
            Value::Map(vec![
                (Value::keyword("index"), Value::Int(i)),
                (Value::keyword("type"), Value::keyword("ok")),
                (
                    Value::keyword("value"),
                    Value::Vector(vec![Value::Vector(vec![
                        Value::keyword("append"),
                        Value::Int(i),
                        Value::Vector((0..i).map(Value::Int).collect()),
                    ])]),
                ),
            ])
        };
        let v = Value::Map(vec![
            (Value::keyword("valid?"), Value::Bool(false)),
            (
                Value::keyword("cycle"),
                Value::Vector((1..6).map(|i| op(i * 7)).collect()),
            ),
            (
                Value::keyword("tag"),
                Value::Tagged("inst".into(), Box::new(Value::String("x".into()))),
            ),
        ]);
        let text = v.pretty(0);
        assert!(text.lines().count() > 5, "{text}");
        for line in text.lines() {
            // A line is longer than the width only where one atom is.
            assert!(
                line.len() <= PRETTY_WIDTH || !line.trim().contains(' '),
                "{line}"
            );
        }
        assert_eq!(
            crate::edn::read_one(text.as_bytes()).expect("reads back"),
            v
        );
        assert!(
            text.starts_with("{:valid? false,\n :cycle [{:index 7"),
            "{text}"
        );
        // What fits stays on one line, as Display gives it.
        assert_eq!(op(2).pretty(0), op(2).to_string());
    }

    #[test]
    fn abbreviated_values_are_whole_forms() {
        let v = Value::Map(vec![(
            Value::keyword("value"),
            Value::Vector((0..10).map(Value::Int).collect()),
        )]);
        assert_eq!(v.abbreviated(3).to_string(), "{:value [0 1 2 ... 7 more]}");
        assert_eq!(v.abbreviated(20), v);
    }

    #[test]
    fn canonical_values_are_equal_where_clojure_says_so() {
        let read = |t: &str| crate::edn::read_one(t.as_bytes()).expect(t).canonical();
        for (a, b) in [
            ("5", "5N"),
            ("-5", "-05N"),
            ("0", "-0N"),
            ("99999999999999999999", "99999999999999999999N"),
            ("[1 2]", "(1 2N)"),
            ("#{1 2 3}", "#{3 2N 1}"),
            ("{:a 1 :b [2]}", "{:b (2) :a 1N}"),
            ("0.0", "-0.0"),
            ("1.50M", "1.5M"),
            ("15e-1M", "1.5M"),
            ("100M", "1E2M"),
            ("0.00M", "0M"),
            ("2/4", "1/2"),
            ("4/2", "2"),
            ("-3/6", "-1/2"),
        ] {
            assert_eq!(read(a), read(b), "{a} = {b}");
        }
        for (a, b) in [
            ("5", "5.0"),
            ("5", "5M"),
            ("5.0", "5.0M"),
            ("1/2", "0.5"),
            ("\\a", "\"a\""),
            (":a", "a"),
            ("\"5\"", "5"),
            ("[1 2]", "#{1 2}"),
            ("99999999999999999999", "99999999999999999998"),
        ] {
            assert_ne!(read(a), read(b), "{a} != {b}");
        }
    }
}
