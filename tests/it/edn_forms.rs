//! The generic EDN reader on every form of the spec, its printer's round
//! trip, its error positions, and its nesting bound (proved on a thread
//! with a small stack).

use elle_si::edn::{MAX_DEPTH, Value, read_all, read_one};

fn one(s: &str) -> Value {
    match read_one(s.as_bytes()) {
        Ok(v) => v,
        Err(e) => panic!("`{s}` did not read: {e:?}"),
    }
}

fn all(s: &str) -> Vec<Value> {
    match read_all(s.as_bytes()) {
        Ok(v) => v,
        Err(e) => panic!("`{s}` did not read: {e:?}"),
    }
}

fn err(s: &str) -> (usize, String) {
    match read_all(s.as_bytes()) {
        Ok(v) => panic!("`{s}` read as {v:?}, expected an error"),
        Err(e) => (e.offset, e.message),
    }
}

fn kw(s: &str) -> Value {
    Value::Keyword(s.into())
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.into())
}

fn string(s: &str) -> Value {
    Value::String(s.into())
}

#[test]
fn nil_and_booleans() {
    assert_eq!(
        all("nil true false"),
        [Value::Nil, Value::Bool(true), Value::Bool(false)]
    );
    // Only the exact tokens: these are symbols.
    assert_eq!(all("nil? truex"), [sym("nil?"), sym("truex")]);
}

#[test]
fn integers() {
    assert_eq!(
        all("0 7 -7 +7 9223372036854775807 -9223372036854775808"),
        [
            Value::Int(0),
            Value::Int(7),
            Value::Int(-7),
            Value::Int(7),
            Value::Int(i64::MAX),
            Value::Int(i64::MIN)
        ]
    );
}

#[test]
fn bigints_beyond_i64_and_with_n() {
    assert_eq!(
        all("9223372036854775808 -9223372036854775809 12N +3N 123456789012345678901234567890N"),
        [
            Value::BigInt("9223372036854775808".into()),
            Value::BigInt("-9223372036854775809".into()),
            Value::BigInt("12".into()),
            Value::BigInt("3".into()),
            Value::BigInt("123456789012345678901234567890".into()),
        ]
    );
    assert_eq!(Value::BigInt("12".into()).to_string(), "12N");
}

#[test]
fn floats_and_bigdecimals() {
    assert_eq!(
        all("1.5 -0.25 1e3 2.5E-2 +1.0 6.02e+23"),
        [
            Value::Float(1.5),
            Value::Float(-0.25),
            Value::Float(1000.0),
            Value::Float(0.025),
            Value::Float(1.0),
            Value::Float(6.02e23)
        ]
    );
    assert_eq!(
        all("1.5M 3M -2.50M"),
        [
            Value::BigDec("1.5".into()),
            Value::BigDec("3".into()),
            Value::BigDec("-2.50".into())
        ]
    );
    let inf = all("##Inf ##-Inf ##NaN");
    assert_eq!(inf[0], Value::Float(f64::INFINITY));
    assert_eq!(inf[1], Value::Float(f64::NEG_INFINITY));
    assert!(matches!(inf[2], Value::Float(x) if x.is_nan()));
}

#[test]
fn ratios() {
    assert_eq!(
        all("1/2 -3/4 22/7"),
        [
            Value::Ratio("1/2".into()),
            Value::Ratio("-3/4".into()),
            Value::Ratio("22/7".into())
        ]
    );
    assert_eq!(err("1/x").1, "invalid number `1/x`");
    assert_eq!(err("1.5/2").1, "invalid number `1.5/2`");
}

#[test]
fn characters() {
    let cs = all(
        r"\a \Z \newline \space \tab \return \backspace \formfeed \u00e9 \u0041 \o101 \( \\ \, \é \u",
    );
    let want = [
        'a', 'Z', '\n', ' ', '\t', '\r', '\u{8}', '\u{c}', 'é', 'A', 'A', '(', '\\', ',', 'é', 'u',
    ];
    assert_eq!(cs, want.map(Value::Char));
    // A character ends at a delimiter: `\a]` closes the vector.
    assert_eq!(one(r"[\a]"), Value::Vector(vec![Value::Char('a')]));
    assert_eq!(err(r"\foo").1, r"unknown character literal `\foo`");
    assert_eq!(err("[1 \\").1, "`\\` at end of input: expected a character");
}

#[test]
fn strings_with_every_escape() {
    assert_eq!(
        one(r#""q\" b\\ n\n t\t r\r b\b f\f u\u00e9 s\uD83D\uDE00 o\101 a\'""#),
        string("q\" b\\ n\n t\t r\r b\u{8} f\u{c} u\u{e9} s\u{1F600} oA a'")
    );
    assert_eq!(one(r#""""#), string(""));
    assert_eq!(one("\"multi\nline ✓\""), string("multi\nline ✓"));
    assert_eq!(err(r#""a\qb""#), (2, r"unknown string escape `\q`".into()));
    assert_eq!(
        err(r#""\u12""#),
        (1, r"`\u` must be followed by four hex digits".into())
    );
    assert_eq!(
        err(r#"  "abc"#),
        (2, "unterminated string: no closing `\"`".into())
    );
}

#[test]
fn symbols() {
    assert_eq!(
        all("foo ns/foo - + ... a.b/c.d <=> *x* ?q !b $ % & = / a#b a'b"),
        [
            "foo", "ns/foo", "-", "+", "...", "a.b/c.d", "<=>", "*x*", "?q", "!b", "$", "%", "&",
            "=", "/", "a#b", "a'b"
        ]
        .map(sym)
    );
}

#[test]
fn keywords_including_namespaced() {
    assert_eq!(
        all(":a :ns/a :a.b/c.d :txn :1 :+"),
        ["a", "ns/a", "a.b/c.d", "txn", "1", "+"].map(kw)
    );
    assert_eq!(err(":").1, "a keyword needs a name after `:`");
}

#[test]
fn lists_vectors_sets() {
    assert_eq!(
        one("(1 [2 (3)] #{4})"),
        Value::List(vec![
            Value::Int(1),
            Value::Vector(vec![Value::Int(2), Value::List(vec![Value::Int(3)])]),
            Value::Set(vec![Value::Int(4)]),
        ])
    );
    assert_eq!(
        all("() [] #{} {}"),
        [
            Value::List(vec![]),
            Value::Vector(vec![]),
            Value::Set(vec![]),
            Value::Map(vec![])
        ]
    );
}

#[test]
fn maps_with_any_key_type() {
    let m = one(
        r#"{:a 1, "s" 2, 3 :three, nil 4, [1 2] 5, {:k :v} 6, #{7} 7, \c 8, 1.5 9, true 10, sym 11}"#,
    );
    let Value::Map(pairs) = &m else {
        panic!("{m:?}")
    };
    let keys: Vec<&Value> = pairs.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            &kw("a"),
            &string("s"),
            &Value::Int(3),
            &Value::Nil,
            &Value::Vector(vec![Value::Int(1), Value::Int(2)]),
            &Value::Map(vec![(kw("k"), kw("v"))]),
            &Value::Set(vec![Value::Int(7)]),
            &Value::Char('c'),
            &Value::Float(1.5),
            &Value::Bool(true),
            &sym("sym"),
        ]
    );
    assert_eq!(
        m.get(&Value::Vector(vec![Value::Int(1), Value::Int(2)])),
        Some(&Value::Int(5))
    );
    assert_eq!(err("{:a 1 :b}").1, "map key :b has no value");
}

#[test]
fn namespaced_maps() {
    assert_eq!(
        one("#:person{:name \"x\" :other/k 1}"),
        Value::Map(vec![
            (kw("person/name"), string("x")),
            (kw("other/k"), Value::Int(1))
        ])
    );
    // Regression (fuzzing): a namespace that is no symbol printed back as
    // keywords that do not read.
    assert!(err("#:a\0b{:x 1}").1.contains("needs a namespace name"));
    assert!(err("#:{:x 1}").1.contains("needs a namespace name"));
}

#[test]
fn tagged_literals() {
    assert_eq!(
        all(
            r#"#inst "2020-01-01T00:00:00Z" #uuid "550e8400-e29b-41d4-a716-446655440000" #my/tag [1 2] #t #u 3"#
        ),
        [
            Value::Tagged("inst".into(), Box::new(string("2020-01-01T00:00:00Z"))),
            Value::Tagged(
                "uuid".into(),
                Box::new(string("550e8400-e29b-41d4-a716-446655440000"))
            ),
            Value::Tagged(
                "my/tag".into(),
                Box::new(Value::Vector(vec![Value::Int(1), Value::Int(2)]))
            ),
            Value::Tagged(
                "t".into(),
                Box::new(Value::Tagged("u".into(), Box::new(Value::Int(3))))
            ),
        ]
    );
    // A record literal, as Jepsen prints its ops: the tag and a plain map
    // (the op reader reads it as an op; see tests/it/layouts.rs).
    assert_eq!(
        one("#jepsen.history.Op{:type :ok, :process 0}"),
        Value::Tagged(
            "jepsen.history.Op".into(),
            Box::new(Value::Map(vec![
                (kw("type"), kw("ok")),
                (kw("process"), Value::Int(0))
            ]))
        )
    );
    assert_eq!(err("[#tag]"), (1, "tag #tag has no form after it".into()));
    assert_eq!(err("#tag"), (0, "tag #tag has no form after it".into()));
    assert!(err("#?(:clj 1)").1.contains("unknown `#` form"));
}

#[test]
fn comments() {
    assert_eq!(
        all("; leading\n[1 ; inside\n 2] ;; trailing, no newline"),
        [Value::Vector(vec![Value::Int(1), Value::Int(2)])]
    );
    assert_eq!(all(";; only a comment"), []);
    assert_eq!(all(""), []);
}

#[test]
fn discard_anywhere() {
    assert_eq!(all("#_1"), []);
    assert_eq!(all("#_ 1 2"), [Value::Int(2)]);
    assert_eq!(
        one("[1 #_2 3 #_ [4 5]]"),
        Value::Vector(vec![Value::Int(1), Value::Int(3)])
    );
    // Last in a map, as a key and a value pair, and before a key.
    assert_eq!(
        one("{:a 1 #_:b}"),
        Value::Map(vec![(kw("a"), Value::Int(1))])
    );
    assert_eq!(
        one("{#_:x :a #_:y 1 #_#_:b 2}"),
        Value::Map(vec![(kw("a"), Value::Int(1))])
    );
    // `#_ #_ a b c` discards a and b.
    assert_eq!(all("#_ #_ a b c"), [sym("c")]);
    assert_eq!(one("#{#_1}"), Value::Set(vec![]));
    assert_eq!(one("(#_(x y) z)"), Value::List(vec![sym("z")]));
    assert_eq!(
        one("#t #_x 1"),
        Value::Tagged("t".into(), Box::new(Value::Int(1)))
    );
    assert_eq!(
        err("[1 #_]"),
        (3, "`#_` discards nothing: no form follows it".into())
    );
    assert_eq!(
        err("#_"),
        (0, "`#_` discards nothing: no form follows it".into())
    );
}

#[test]
fn commas_are_whitespace() {
    assert_eq!(
        all(",,[1,2,,3],{:a,1},,"),
        [
            Value::Vector(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
            Value::Map(vec![(kw("a"), Value::Int(1))]),
        ]
    );
    assert_eq!(all("\t\r\n\x0c1"), [Value::Int(1)]);
}

#[test]
fn error_positions() {
    assert_eq!(
        err("[1 2 (3 4]"),
        (
            9,
            "unbalanced brackets: `]` where `)` was expected to close the `(`".into()
        )
    );
    assert_eq!(
        err("  {:a [1 2"),
        (
            6,
            "input ends inside this vector: no closing `]` (truncated file?)".into()
        )
    );
    assert_eq!(
        err("1 2 )"),
        (4, "unexpected `)`: nothing open here to close".into())
    );
    assert_eq!(err("[12ab]"), (1, "invalid number `12ab`".into()));
    assert_eq!(
        err("[\"ab\u{0}\" :k\u{1}]").1,
        "unexpected character `\u{1}` in `:k\u{1}`"
    );
    assert!(
        read_all(b"\"ab\xff\"")
            .is_err_and(|e| e.offset == 3 && e.message == "invalid UTF-8 in string")
    );
    assert!(read_all(b":k\xc3").is_err_and(|e| e.offset == 2 && e.message == "invalid UTF-8"));
    assert!(
        read_all(b"; \xff\n1")
            .is_err_and(|e| e.offset == 2 && e.message == "invalid UTF-8 in a comment")
    );
    assert_eq!(
        read_one(b"1 2").map_err(|e| e.message),
        Err("expected end of input after one form, found `2`".into())
    );
}

#[test]
fn printing_reads_back() {
    let text = r#"(nil true -5 12N 1.5 1e300 -0.0 2.5M 3/4 \newline \u0001 \( "s\"\\\n\u0007" sym ns/s :k :ns/k [1 [2]] #{1} {[1] {:a nil}} #inst "x" ##Inf ##-Inf)"#;
    let v = one(text);
    let printed = v.to_string();
    assert_eq!(one(&printed), v, "{printed}");
    // Floats keep a `.` or an exponent, so they stay floats.
    assert_eq!(Value::Float(1e300).to_string(), "1e300");
    assert_eq!(Value::Float(3.0).to_string(), "3.0");
    assert_eq!(one(&Value::Float(1e300).to_string()), Value::Float(1e300));
    assert_eq!(one("##NaN").to_string(), "##NaN");
}

/// Runs `f` on a thread with a 256 KB stack: a reader that recursed once
/// per `[` would overflow it long before 100k levels.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawning a thread")
        .join()
        .expect("the reader thread did not panic")
}

#[test]
fn depth_bound_is_exact() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(read_all(ok.as_bytes()).is_ok());
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let e = read_all(deep.as_bytes()).expect_err("one level too deep");
    assert_eq!(e.offset, MAX_DEPTH);
    assert!(e.message.contains("nesting deeper than 100 levels"));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let results = on_small_stack(|| {
        let n = 100_000;
        let inputs: Vec<Vec<u8>> = vec![
            "[".repeat(n).into_bytes(),
            "(".repeat(n).into_bytes(),
            "{".repeat(n).into_bytes(),
            "{:a ".repeat(n).into_bytes(),
            "#{".repeat(n).into_bytes(),
            "#_ ".repeat(n).into_bytes(),
            "#t ".repeat(n).into_bytes(),
            "#:a{:k ".repeat(n).into_bytes(),
            format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes(),
        ];
        inputs
            .iter()
            .map(|i| read_all(i).map(|_| ()).map_err(|e| e.message))
            .collect::<Vec<_>>()
    });
    for r in results {
        let m = r.expect_err("100k levels must be refused");
        assert!(m.contains("nesting deeper than"), "{m}");
    }
}

#[test]
fn deep_nesting_in_a_history_is_an_error_not_a_stack_overflow() {
    use elle_si::history::{LoadOptions, load_bytes};
    let results = on_small_stack(|| {
        let n = 100_000;
        let inputs = [
            "[".repeat(n),
            format!("{{:type :ok, :process 0, :value {}", "[".repeat(n)),
            format!("{{:type :ok, :process 0, :value [[:r 1 {}", "[".repeat(n)),
            format!("{{:type :ok, :process 0, :error {}", "{:a ".repeat(n)),
            format!(
                "{{:type :info, :process :nemesis, :value {}",
                "#{".repeat(n)
            ),
        ];
        inputs
            .into_iter()
            .map(
                |i| match load_bytes("deep.edn", i.into_bytes(), LoadOptions::default()) {
                    Ok(_) => "loaded".to_string(),
                    Err(e) => e.to_string(),
                },
            )
            .collect::<Vec<_>>()
    });
    for r in results {
        assert!(r.starts_with("deep.edn:1:"), "{r}");
    }
}

/// Inputs the fuzzers found panicking, kept as they were found.
#[test]
fn fuzz_regressions() {
    // An empty namespace token after `#:` indexed an empty token.
    assert!(read_all(b"{A:a [  #:\"p \\2b").is_err());
    assert!(read_all(b"{#:{i~\xe7n\0\0\x01R").is_err());
    // A namespace that is not a symbol printed back as unreadable keywords.
    assert!(read_all(b"{:person\0\0/age 3}").is_err());
    assert!(read_all(b"#:person\0{:age 3}").is_err());
    use elle_si::history::{LoadOptions, load_bytes};
    for input in [
        &b"{#:{i~\xe7n\0\0\x01R"[..],
        b"{:type :ok, :process 0, #:\"p 1}",
    ] {
        let e = load_bytes("f.edn", input.to_vec(), LoadOptions::default())
            .map(|_| ())
            .expect_err("not a history");
        assert!(e.to_string().starts_with("f.edn:1:"), "{e}");
    }
}
