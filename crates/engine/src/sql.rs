//! FLT-03, FLT-04: a subscription rule's SQL filter and action, the SQL-92 subset Service Bus
//! takes: comparisons, AND/OR/NOT, IN, LIKE (`%`, `_`, ESCAPE), IS [NOT] NULL, EXISTS, arithmetic
//! and parentheses over system properties (`sys.` prefix) and application properties (bare, or
//! `user.` prefix). A missing property makes a comparison unknown, and unknown is not a match.
//! An expression outside the subset is refused at creation with what was not understood.
use crate::message::Message;
use crate::property::PropertyValue;
use crate::text::Text;

/// The longest filter or action text (the service's: "Max allowed length of sql expression is
/// 1024 chars", the .NET SDK's SqlRuleFilter and SqlRuleAction). It also bounds what one LIKE
/// costs against a property of 32 KB.
pub const MAX_SQL: usize = 1024;
/// The deepest nesting of an expression (parentheses, NOT, operators).
const MAX_DEPTH: usize = 32;

/// A value in an expression, typed as the service types it: an integer constant is a long, a
/// decimal constant a double (the SQL filter syntax page, "Constants"); a property keeps the
/// type it was sent with. Null is also "unknown" (a missing property, a type mismatch).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    Text(String),
    Timestamp(i64),
    Uuid(u128),
}

impl From<&PropertyValue> for Value {
    fn from(p: &PropertyValue) -> Value {
        match p {
            PropertyValue::Null => Value::Null,
            PropertyValue::String(s) => Value::Text(s.clone()),
            PropertyValue::Int(n) => Value::Int(*n),
            PropertyValue::Long(n) => Value::Long(*n),
            PropertyValue::Double(d) => Value::Double(*d),
            PropertyValue::Bool(b) => Value::Bool(*b),
            PropertyValue::Timestamp(t) => Value::Timestamp(*t),
            PropertyValue::Uuid(u) => Value::Uuid(*u),
        }
    }
}

impl Value {
    /// What an action stores (None: the property is removed).
    fn property(self) -> Option<PropertyValue> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => PropertyValue::Bool(b),
            Value::Int(n) => PropertyValue::Int(n),
            Value::Long(n) => PropertyValue::Long(n),
            Value::Double(d) => PropertyValue::Double(d),
            Value::Text(s) => PropertyValue::String(s),
            Value::Timestamp(t) => PropertyValue::Timestamp(t),
            Value::Uuid(u) => PropertyValue::Uuid(u),
        })
    }

    /// The value as a double, for a comparison or arithmetic with one.
    fn double(&self) -> Option<f64> {
        match self {
            Value::Int(n) => Some(f64::from(*n)),
            Value::Long(n) => Some(*n as f64),
            Value::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// The value as a long, for one with an integer of the other width.
    fn long(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(i64::from(*n)),
            Value::Long(n) => Some(*n),
            _ => None,
        }
    }
}

/// A property: `sys.MessageId` or an application property.
#[derive(Clone, Debug, PartialEq)]
pub enum Property {
    System(String),
    User(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Literal(Value),
    Property(Property),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// By the index of its operator in [`COMPARISONS`].
    Compare(Box<Expr>, u8, Box<Expr>),
    /// `+`, `-`, `*`, `/`, `%`.
    Arithmetic(Box<Expr>, char, Box<Expr>),
    Negate(Box<Expr>),
    In(Box<Expr>, Vec<Expr>, bool),
    Like(Box<Expr>, String, Option<char>, bool),
    IsNull(Box<Expr>, bool),
    Exists(Property),
}

/// FLT-04: what an action does to the subscription's copy.
#[derive(Clone, Debug, PartialEq)]
pub enum Assignment {
    Set(Property, Expr),
    Remove(Property),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    /// As written, and its value.
    Number(String, f64),
    Symbol(String),
}

use crate::property::number;

fn unsupported(what: &str) -> Text {
    crate::text!("e-sql", what = what)
}

fn tokens(text: &str) -> Result<Vec<Token>, Text> {
    if text.len() > MAX_SQL {
        return Err(crate::text!("e-sql-long", max = MAX_SQL));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(unsupported("'")),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        s.push(c);
                        i += 1;
                    }
                }
            }
            out.push(Token::Text(s));
        } else if c == '[' {
            let end = chars[i..]
                .iter()
                .position(|&c| c == ']')
                .ok_or_else(|| unsupported("["))?;
            out.push(Token::Word(chars[i + 1..i + end].iter().collect()));
            i += end + 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
            {
                i += 1;
            }
            let n: String = chars[start..i].iter().collect();
            let value = number(&n).ok_or_else(|| unsupported(&n))?;
            out.push(Token::Number(n, value));
        } else if c.is_ascii_alphabetic() || c == '_' || c == '@' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '@'))
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if ["<>", "!=", "<=", ">="].contains(&two.as_str()) {
                out.push(Token::Symbol(if two == "!=" { "<>".into() } else { two }));
                i += 2;
            } else if "=<>()+-*/%,".contains(c) {
                out.push(Token::Symbol(c.to_string()));
                i += 1;
            } else {
                return Err(unsupported(&c.to_string()));
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Word(x)) if x.eq_ignore_ascii_case(w))
    }
    fn word(&mut self, w: &str) -> bool {
        let yes = self.peek_word(w);
        if yes {
            self.at += 1;
        }
        yes
    }
    fn symbol(&mut self, s: &str) -> bool {
        let yes = matches!(self.tokens.get(self.at), Some(Token::Symbol(x)) if x == s);
        if yes {
            self.at += 1;
        }
        yes
    }
    fn expect(&mut self, s: &str) -> Result<(), Text> {
        if self.symbol(s) {
            Ok(())
        } else {
            Err(self.here())
        }
    }
    fn here(&self) -> Text {
        match self.tokens.get(self.at) {
            None => crate::text!("e-sql-end"),
            Some(Token::Word(w) | Token::Symbol(w) | Token::Text(w) | Token::Number(w, _)) => {
                unsupported(w)
            }
        }
    }
    fn deeper(&mut self) -> Result<(), Text> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(crate::text!("e-sql-deep", max = MAX_DEPTH));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, Text> {
        self.deeper()?;
        let mut left = self.and()?;
        while self.word("OR") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.depth -= 1;
        Ok(left)
    }
    fn and(&mut self) -> Result<Expr, Text> {
        let mut left = self.not()?;
        while self.word("AND") {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }
    fn not(&mut self) -> Result<Expr, Text> {
        if self.word("NOT") {
            self.deeper()?;
            let e = Expr::Not(Box::new(self.not()?));
            self.depth -= 1;
            return Ok(e);
        }
        self.predicate()
    }
    fn predicate(&mut self) -> Result<Expr, Text> {
        if self.word("EXISTS") {
            self.expect("(")?;
            let p = match self.sum()? {
                Expr::Property(p) => p,
                _ => return Err(unsupported("EXISTS")),
            };
            self.expect(")")?;
            return Ok(Expr::Exists(p));
        }
        let left = self.sum()?;
        if self.word("IS") {
            let negated = self.word("NOT");
            if !self.word("NULL") {
                return Err(self.here());
            }
            return Ok(Expr::IsNull(Box::new(left), negated));
        }
        let negated = self.word("NOT");
        if self.word("IN") {
            self.expect("(")?;
            let mut list = vec![self.sum()?];
            while self.symbol(",") {
                list.push(self.sum()?);
            }
            self.expect(")")?;
            return Ok(Expr::In(Box::new(left), list, negated));
        }
        if self.word("LIKE") {
            let Some(Token::Text(pattern)) = self.tokens.get(self.at).cloned() else {
                return Err(self.here());
            };
            self.at += 1;
            let escape = if self.word("ESCAPE") {
                match self.tokens.get(self.at).cloned() {
                    Some(Token::Text(e)) if e.chars().count() == 1 => {
                        self.at += 1;
                        e.chars().next()
                    }
                    _ => return Err(self.here()),
                }
            } else {
                None
            };
            return Ok(Expr::Like(Box::new(left), pattern, escape, negated));
        }
        if negated {
            return Err(self.here());
        }
        for (i, op) in COMPARISONS.iter().enumerate() {
            if self.symbol(op) {
                return Ok(Expr::Compare(
                    Box::new(left),
                    i as u8,
                    Box::new(self.sum()?),
                ));
            }
        }
        Ok(left)
    }
    fn sum(&mut self) -> Result<Expr, Text> {
        let mut left = self.product()?;
        loop {
            let op = if self.symbol("+") {
                '+'
            } else if self.symbol("-") {
                '-'
            } else {
                return Ok(left);
            };
            left = Expr::Arithmetic(Box::new(left), op, Box::new(self.product()?));
        }
    }
    fn product(&mut self) -> Result<Expr, Text> {
        let mut left = self.unary()?;
        loop {
            let op = if self.symbol("*") {
                '*'
            } else if self.symbol("/") {
                '/'
            } else if self.symbol("%") {
                '%'
            } else {
                return Ok(left);
            };
            left = Expr::Arithmetic(Box::new(left), op, Box::new(self.unary()?));
        }
    }
    fn unary(&mut self) -> Result<Expr, Text> {
        if self.symbol("-") {
            self.deeper()?;
            let e = Expr::Negate(Box::new(self.unary()?));
            self.depth -= 1;
            return Ok(e);
        }
        if self.symbol("(") {
            let e = self.or()?;
            self.expect(")")?;
            return Ok(e);
        }
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        Ok(match token {
            Some(Token::Text(s)) => Expr::Literal(Value::Text(s)),
            // An integer constant is a long, a decimal one a double.
            Some(Token::Number(text, n)) => Expr::Literal(match text.contains('.') {
                false if n.abs() < 9.0e15 => Value::Long(n as i64),
                _ => Value::Double(n),
            }),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("TRUE") => {
                Expr::Literal(Value::Bool(true))
            }
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("FALSE") => {
                Expr::Literal(Value::Bool(false))
            }
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("NULL") => Expr::Literal(Value::Null),
            Some(Token::Word(w)) => Expr::Property(property(&w)?),
            _ => {
                self.at -= 1;
                return Err(self.here());
            }
        })
    }
}

/// `sys.MessageId`, `user.color` or `color`.
fn property(name: &str) -> Result<Property, Text> {
    let lower = name.to_ascii_lowercase();
    if let Some(p) = lower.strip_prefix("sys.") {
        let known = [
            "messageid",
            "correlationid",
            "label",
            "subject",
            "to",
            "replyto",
            "sessionid",
            "replytosessionid",
            "contenttype",
            "sequencenumber",
            "deliverycount",
        ];
        if !known.contains(&p) {
            return Err(unsupported(name));
        }
        return Ok(Property::System(p.to_string()));
    }
    let user = name
        .strip_prefix("user.")
        .or_else(|| name.strip_prefix("User."))
        .unwrap_or(name);
    if ["AND", "OR", "NOT", "IN", "LIKE", "IS", "ESCAPE", "EXISTS"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(user))
    {
        return Err(unsupported(name));
    }
    Ok(Property::User(user.to_string()))
}

/// A filter: a SQL expression, parsed.
pub fn parse_filter(text: &str) -> Result<Expr, Text> {
    let mut p = Parser {
        tokens: tokens(text)?,
        at: 0,
        depth: 0,
    };
    if p.tokens.is_empty() {
        return Err(crate::text!("e-sql-end"));
    }
    let e = p.or()?;
    if p.at < p.tokens.len() {
        return Err(p.here());
    }
    Ok(e)
}

/// An action: `SET a = expr, ...; REMOVE b` (statements separated by `;` or by their keyword).
pub fn parse_action(text: &str) -> Result<Vec<Assignment>, Text> {
    let mut out = Vec::new();
    for statement in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let mut p = Parser {
            tokens: tokens(statement)?,
            at: 0,
            depth: 0,
        };
        let mut after_comma = false;
        loop {
            if p.word("SET") || (after_comma && matches!(out.last(), Some(Assignment::Set(..)))) {
                let Some(Token::Word(name)) = p.tokens.get(p.at).cloned() else {
                    return Err(p.here());
                };
                p.at += 1;
                p.expect("=")?;
                out.push(Assignment::Set(property(&name)?, p.or()?));
            } else if p.word("REMOVE") {
                let Some(Token::Word(name)) = p.tokens.get(p.at).cloned() else {
                    return Err(p.here());
                };
                p.at += 1;
                out.push(Assignment::Remove(property(&name)?));
            } else {
                return Err(p.here());
            }
            if p.at >= p.tokens.len() {
                break;
            }
            after_comma = p.symbol(",");
        }
    }
    if out.is_empty() {
        return Err(crate::text!("e-sql-end"));
    }
    Ok(out)
}

/// What a property of `m` is, if it has one.
fn lookup(m: &Message, p: &Property) -> Value {
    let extra = m.extra();
    let text = |s: Option<&String>| s.map_or(Value::Null, |s| Value::Text(s.clone()));
    match p {
        Property::User(name) => extra
            .and_then(|e| crate::property::get_ignoring_case(&e.application_properties, name))
            .map_or(Value::Null, Value::from),
        Property::System(name) => match name.as_str() {
            "messageid" => Value::Text(m.message_id.clone()),
            "sequencenumber" => Value::Long(m.sequence_number as i64),
            "deliverycount" => Value::Int(m.failed_deliveries as i32),
            "label" | "subject" => text(extra.and_then(|e| e.subject.as_ref())),
            "correlationid" => text(extra.and_then(|e| e.correlation_id.as_ref())),
            other => text(extra.and_then(|e| e.system(other))),
        },
    }
}

/// Three-valued: Some(true), Some(false), or None (unknown).
fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn eval(e: &Expr, m: &Message) -> Value {
    match e {
        Expr::Literal(v) => v.clone(),
        Expr::Property(p) => lookup(m, p),
        Expr::Not(x) => truth(&eval(x, m)).map_or(Value::Null, |b| Value::Bool(!b)),
        Expr::And(a, b) => match (truth(&eval(a, m)), truth(&eval(b, m))) {
            (Some(false), _) | (_, Some(false)) => Value::Bool(false),
            (Some(true), Some(true)) => Value::Bool(true),
            _ => Value::Null,
        },
        Expr::Or(a, b) => match (truth(&eval(a, m)), truth(&eval(b, m))) {
            (Some(true), _) | (_, Some(true)) => Value::Bool(true),
            (Some(false), Some(false)) => Value::Bool(false),
            _ => Value::Null,
        },
        Expr::Compare(a, op, b) => compare(&eval(a, m), *op, &eval(b, m)),
        Expr::Arithmetic(a, op, b) => arithmetic(eval(a, m), *op, eval(b, m)),
        Expr::Negate(x) => match eval(x, m) {
            Value::Int(n) => n.checked_neg().map_or(Value::Null, Value::Int),
            Value::Long(n) => n.checked_neg().map_or(Value::Null, Value::Long),
            Value::Double(d) => Value::Double(-d),
            _ => Value::Null,
        },
        Expr::In(x, list, negated) => {
            let v = eval(x, m);
            if v == Value::Null {
                return Value::Null;
            }
            let found = list
                .iter()
                .any(|l| compare(&v, 0, &eval(l, m)) == Value::Bool(true));
            Value::Bool(found != *negated)
        }
        Expr::Like(x, pattern, escape, negated) => match eval(x, m) {
            Value::Text(s) => Value::Bool(like(&s, pattern, *escape) != *negated),
            _ => Value::Null,
        },
        Expr::IsNull(x, negated) => Value::Bool((eval(x, m) == Value::Null) != *negated),
        Expr::Exists(p) => Value::Bool(lookup(m, p) != Value::Null),
    }
}

/// FLT-03: `a op b` for `+ - * / %`, bound as C# binds them (the SQL filter syntax page,
/// "Operator binding semantics"): int with int is an int, with a long a long, with a double a
/// double; an integer division truncates; a string joined to a string (or a number, as C#
/// joins one) with `+`. No other pair binds: unknown. An integer overflow or a division of
/// integers by zero, which C# raises as an exception, is unknown too (the playground's choice:
/// the message is not matched).
fn arithmetic(a: Value, op: char, b: Value) -> Value {
    let integers = |x: i64, y: i64| match op {
        '+' => x.checked_add(y),
        '-' => x.checked_sub(y),
        '*' => x.checked_mul(y),
        '/' => x.checked_div(y),
        _ => x.checked_rem(y),
    };
    match (&a, &b) {
        (Value::Int(x), Value::Int(y)) => integers(i64::from(*x), i64::from(*y))
            .and_then(|n| i32::try_from(n).ok())
            .map_or(Value::Null, Value::Int),
        (Value::Text(x), Value::Text(y)) if op == '+' => Value::Text(format!("{x}{y}")),
        (Value::Text(x), y) if op == '+' && y.double().is_some() => {
            Value::Text(format!("{x}{}", number_text(y)))
        }
        (x, Value::Text(y)) if op == '+' && x.double().is_some() => {
            Value::Text(format!("{}{y}", number_text(x)))
        }
        _ => match (a.long(), b.long(), a.double(), b.double()) {
            (Some(x), Some(y), _, _) => integers(x, y).map_or(Value::Null, Value::Long),
            (_, _, Some(x), Some(y)) => Value::Double(match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                '/' => x / y,
                // x % y by its definition (no libm fmod in the browser's wasm).
                _ => x - (x / y).trunc() * y,
            }),
            _ => Value::Null,
        },
    }
}

/// A number as text, as a string join writes it.
fn number_text(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::Long(n) => n.to_string(),
        Value::Double(d) => crate::time::format_decimal(*d, 6),
        _ => String::new(),
    }
}

/// The comparison operators, longest first where one starts another.
const COMPARISONS: [&str; 6] = ["=", "<>", "<=", ">=", "<", ">"];

/// FLT-03: `a op b` with `op` an index into [`COMPARISONS`], bound as C# binds them (the SQL
/// filter syntax page, "Operator binding semantics"): numbers of any width with each other
/// (promoted), strings with strings (ordinal), booleans and uuids for (in)equality, timestamps
/// with timestamps. A string and a number have no binding: unknown, so a string property "250"
/// never matches `quantity > 100` (the value that decides is the one sent, with its type).
fn compare(a: &Value, op: u8, b: &Value) -> Value {
    let order = match (a, b) {
        (Value::Text(x), Value::Text(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) if op < 2 => Some(x.cmp(y)),
        (Value::Uuid(x), Value::Uuid(y)) if op < 2 => Some(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Some(x.cmp(y)),
        _ => match (a.long(), b.long(), a.double(), b.double()) {
            (Some(x), Some(y), _, _) => Some(x.cmp(&y)),
            (_, _, Some(x), Some(y)) => x.partial_cmp(&y),
            _ => None,
        },
    };
    let Some(o) = order else {
        return Value::Null;
    };
    use std::cmp::Ordering::*;
    Value::Bool(match op {
        0 => o == Equal,
        1 => o != Equal,
        2 => o != Greater,
        3 => o != Less,
        4 => o == Less,
        _ => o == Greater,
    })
}

/// A LIKE pattern's parts: `%` any run, `_` one character, or a character itself.
#[derive(Clone, Copy, PartialEq)]
enum Wild {
    Run,
    One,
    Char(char),
}

/// A pattern's parts, `escape` making the next character literal.
fn wilds(pattern: &str, escape: Option<char>) -> Vec<Wild> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            c if Some(c) == escape => match chars.next() {
                Some(next) => Wild::Char(next),
                None => continue,
            },
            '%' => Wild::Run,
            '_' => Wild::One,
            c => Wild::Char(c),
        });
    }
    out
}

/// LIKE: `%` any run, `_` one character, `escape` makes the next one literal. Bit-parallel
/// over the text's positions (bit i: the pattern so far matches the text's first i
/// characters), so one pattern character costs a pass over the text's words, not its
/// characters; no recursion, no backtracking.
fn like(s: &str, pattern: &str, escape: Option<char>) -> bool {
    let s: Vec<char> = s.chars().collect();
    let bits = s.len() + 1;
    let words = bits.div_ceil(64);
    let last = match bits % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    };
    // Where each character of the pattern stands in the text (bit i: s[i - 1] is it).
    let mut masks: Vec<(char, Vec<u64>)> = Vec::new();
    let mut row = vec![0u64; words];
    row[0] = 1;
    let mut next = vec![0u64; words];
    for w in wilds(pattern, escape) {
        match w {
            Wild::Run => match row.iter().position(|&x| x != 0) {
                // Every position from the first matched one on.
                Some(i) => {
                    let low = row[i].trailing_zeros();
                    next[..i].fill(0);
                    next[i] = u64::MAX << low;
                    next[i + 1..].fill(u64::MAX);
                }
                None => return false,
            },
            Wild::One | Wild::Char(_) => {
                let mut carry = 0;
                for (n, r) in next.iter_mut().zip(&row) {
                    *n = (r << 1) | carry;
                    carry = r >> 63;
                }
                if let Wild::Char(c) = w {
                    let mask = match masks.iter().position(|(m, _)| *m == c) {
                        Some(i) => &masks[i].1,
                        None => {
                            let mut mask = vec![0u64; words];
                            for (i, _) in s.iter().enumerate().filter(|(_, x)| **x == c) {
                                mask[(i + 1) / 64] |= 1 << ((i + 1) % 64);
                            }
                            masks.push((c, mask));
                            &masks[masks.len() - 1].1
                        }
                    };
                    for (n, m) in next.iter_mut().zip(mask) {
                        *n &= m;
                    }
                }
            }
        }
        if let Some(end) = next.last_mut() {
            *end &= last;
        }
        std::mem::swap(&mut row, &mut next);
        if row.iter().all(|&x| x == 0) {
            return false;
        }
    }
    row[s.len() / 64] >> (s.len() % 64) & 1 == 1
}

fn remove_ignoring_case(
    properties: &mut std::collections::BTreeMap<String, PropertyValue>,
    name: &str,
) {
    if let Some(key) = crate::property::key_ignoring_case(properties, name) {
        properties.remove(&key);
    }
}

/// Whether `m` matches `filter` (unknown is no match).
pub fn matches(filter: &Expr, m: &Message) -> bool {
    eval(filter, m) == Value::Bool(true)
}

/// FLT-04: applies an action to a subscription's copy (application properties; the system
/// properties an action may set are the ones a copy carries in `extra`).
pub fn apply(action: &[Assignment], m: &mut Message) {
    for a in action {
        match a {
            Assignment::Set(p, e) => {
                // FLT-04: the value keeps the type the expression has.
                let value = eval(e, m).property();
                let extra = m.extra_mut();
                match (p, value) {
                    // A name matches regardless of case: SET updates the property the message
                    // has (under its own name), else adds one under the name written.
                    (Property::User(name), Some(v)) => {
                        let key =
                            crate::property::key_ignoring_case(&extra.application_properties, name)
                                .unwrap_or_else(|| name.clone());
                        extra.application_properties.insert(key, v);
                    }
                    (Property::User(name), None) => {
                        remove_ignoring_case(&mut extra.application_properties, name)
                    }
                    (Property::System(name), v) => {
                        // A system property is text: a number or a boolean set as its text.
                        let text = v.map(|v| match v {
                            PropertyValue::String(s) => s,
                            other => other.to_string(),
                        });
                        extra.set_system(name, text)
                    }
                }
            }
            Assignment::Remove(Property::User(name)) => {
                remove_ignoring_case(&mut m.extra_mut().application_properties, name)
            }
            Assignment::Remove(Property::System(name)) => m.extra_mut().set_system(name, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_subset_and_refuses_the_rest() {
        for ok in [
            "color = 'red'",
            "sys.Label = 'x' AND (qty > 10 OR NOT EXISTS(prio))",
            "x IN ('a', 'b') AND y NOT IN (1, 2)",
            "name LIKE 'a%_' ESCAPE '!' AND z IS NOT NULL",
            "1 + 2 * 3 - -4 % 2 = 7 AND [odd name] <> 'x'",
            "quantity-1 > 2",
            "sys.MessageId != '1'",
        ] {
            parse_filter(ok).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
        }
        for bad in [
            "",
            "a =",
            "sys.Nope = 1",
            "a == 1",
            "color = 'red",
            "a; DROP",
            "(a = 1",
        ] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
        let deep = format!("{}a = 1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_filter(&deep).is_err());
        assert!(parse_action("SET a = 1, b = 'x'; REMOVE c").unwrap().len() == 3);
        assert!(parse_action("DELETE a").is_err());
    }

    #[test]
    fn a_minus_between_names_is_a_subtraction() {
        let e = parse_filter("quantity-1 > 2").unwrap();
        let Expr::Compare(left, _, _) = e else {
            panic!("a comparison")
        };
        assert!(matches!(*left, Expr::Arithmetic(_, '-', _)), "{left:?}");
    }

    /// The LIKE of before, position by position: what the bit-parallel one must agree with.
    fn like_by_positions(s: &str, pattern: &str, escape: Option<char>) -> bool {
        let s: Vec<char> = s.chars().collect();
        let mut row = vec![false; s.len() + 1];
        row[0] = true;
        for w in wilds(pattern, escape) {
            let mut next = vec![false; s.len() + 1];
            if w == Wild::Run {
                let mut any = false;
                for i in 0..=s.len() {
                    any |= row[i];
                    next[i] = any;
                }
            } else {
                for i in 1..=s.len() {
                    next[i] = row[i - 1] && (w == Wild::One || w == Wild::Char(s[i - 1]));
                }
            }
            row = next;
        }
        row[s.len()]
    }

    proptest::proptest! {
        #[test]
        fn like_agrees_with_the_position_by_position_match(
            s in "[ab%_!]{0,150}",
            pattern in "[ab%_!]{0,20}",
            escape in proptest::option::of(proptest::sample::select(vec!['!', 'a'])),
        ) {
            proptest::prop_assert_eq!(like(&s, &pattern, escape), like_by_positions(&s, &pattern, escape));
        }
    }

    #[test]
    fn a_long_pattern_against_a_long_text_is_quick_and_long_sql_is_refused() {
        let text = "a".repeat(32 * 1024);
        let pattern = format!("{}x", "%_".repeat(500));
        assert!(!like(&text, &pattern, None));
        assert!(like(&text, &"%_".repeat(500), None));
        let long = format!("p LIKE '{}'", "%".repeat(MAX_SQL));
        let e = parse_filter(&long).expect_err("refused");
        assert!(e.to_string().contains("1024"), "{e}");
        let _ = parse_filter("p LIKE 'a'").expect("taken");
        assert!(parse_action(&format!("SET a = '{}'", "x".repeat(MAX_SQL))).is_err());
    }

    #[test]
    fn like_patterns() {
        assert!(like("abc", "a%", None));
        assert!(like("abc", "_b_", None));
        assert!(!like("abc", "_b", None));
        assert!(like("a%c", "a!%c", Some('!')));
        assert!(!like("abc", "a!%c", Some('!')));
        assert!(like("", "%", None));
    }
}
