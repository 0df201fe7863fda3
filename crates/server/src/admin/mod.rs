//! The management API that `ServiceBusAdministrationClient` speaks: ATOM entity descriptions
//! over HTTP (`--admin`, plain, as the .NET client addresses the emulator) or HTTPS
//! (`--admin-tls`, as the Python and JavaScript clients always ask). Queues, topics,
//! subscriptions and rules are created, read, updated, listed and deleted; their runtime
//! properties are the counts now; `$namespaceinfo` names the tier. Every change is a step of
//! the run ([`crate::broker::Broker::run`]): the engine's rules apply (names, limits, tier), the
//! live view shows it, the journal keeps it and the recording replays it.
//!
//! The wire format, status codes and errors follow what the SDKs send and accept (read from
//! their sources and run against them, docs/SERVE.md "The management API"): a GET of a name
//! that does not exist answers 200 with an empty feed, as the service does; an update or
//! delete of one answers 404; a create of an existing one 409; a bad value 400 naming it; a
//! quota 403. A list is paged by `$skip` and `$top` (100 by default) with a `next` link while
//! more remain.
pub mod atom;
pub mod xml;

use crate::broker::Broker;
use crate::shared::Shared;
use atom::{canonical, Writing};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use sbp_engine::entity::{Entity, EntityKind};
use sbp_engine::{BrokerError, ErrorKind};
use sbp_scenario::{Action, EntityDef, RuleStepDef, UpdateDef};
use std::net::SocketAddr;
use std::sync::Arc;

/// How long a request may take from its header to its answer (its body read whole included):
/// a client that sends its body slowly does not hold a connection for good.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A list's page when `$top` is not given, and the largest asked for.
pub const PAGE: usize = 100;
pub const MAX_PAGE: usize = 1_000;

/// What a request's path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `$namespaceinfo`.
    Namespace,
    /// `$Resources/queues` (true) or `$Resources/topics` (false).
    List {
        queues: bool,
    },
    /// A queue or topic by name.
    Entity(String),
    /// A topic's subscriptions.
    Subscriptions(String),
    Subscription(String, String),
    /// A subscription's rules.
    Rules(String, String),
    Rule(String, String, String),
}

impl Target {
    /// The target a path names: its segments percent-decoded (a name may hold `/`, sent as
    /// `%2F` by Python and as is by JavaScript), `Subscriptions` and `Rules` in any case.
    pub fn of(path: &str) -> Result<Target, String> {
        let raw: Vec<&str> = path
            .trim_start_matches('/')
            .trim_end_matches('/')
            .split('/')
            .collect();
        let decoded: Vec<String> = raw
            .iter()
            .map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8()
                    .map(|d| d.into_owned())
                    .map_err(|_| format!("{path}: a name that is not UTF-8"))
            })
            .collect::<Result<_, _>>()?;
        let is = |s: &str, word: &str| s.eq_ignore_ascii_case(word);
        // A segment a URL cannot name (a client drops `.` and `..` before it sends), or a name
        // that XML cannot carry back (a control character), is refused.
        for name in &decoded {
            if name.is_empty() || name == "." || name == ".." {
                return Err(format!(
                    "{path}: a name is not empty, . or .. (a URL cannot name it)"
                ));
            }
            if name.chars().any(|c| !xml::is_xml_char(c)) {
                return Err(format!("{path}: a name holds a character XML cannot carry"));
            }
        }
        // The words of the path are matched as sent; the names are the decoded segments.
        match raw.as_slice() {
            [""] => return Err("name a queue, a topic, $Resources/queues or $namespaceinfo".into()),
            [ns] if is(ns, "$namespaceinfo") => return Ok(Target::Namespace),
            [r, kind] if is(r, "$Resources") => {
                return match kind.to_ascii_lowercase().as_str() {
                    "queues" => Ok(Target::List { queues: true }),
                    "topics" => Ok(Target::List { queues: false }),
                    _ => Err(format!(
                        "$Resources/{kind}: only queues and topics are listed"
                    )),
                }
            }
            _ => {}
        }
        let Some(at) = raw
            .iter()
            .skip(1)
            .position(|s| is(s, "subscriptions"))
            .map(|p| p + 1)
        else {
            return Ok(Target::Entity(decoded.join("/")));
        };
        let topic = decoded[..at].join("/");
        let name = |i: usize| decoded[i].clone();
        match &raw[at + 1..] {
            [] => Ok(Target::Subscriptions(topic)),
            [_] => Ok(Target::Subscription(topic, name(at + 1))),
            [_, rules] if is(rules, "rules") => Ok(Target::Rules(topic, name(at + 1))),
            [_, rules, _] if is(rules, "rules") => {
                Ok(Target::Rule(topic, name(at + 1), name(at + 3)))
            }
            _ => Err(format!(
                "{path}: a subscription is TOPIC/Subscriptions/NAME, a rule \
                 TOPIC/Subscriptions/NAME/Rules/RULE"
            )),
        }
    }
}

/// The engine's path of a subscription.
fn subscription_path(topic: &str, sub: &str) -> String {
    format!("{topic}/subscriptions/{sub}")
}

#[derive(Clone)]
struct Admin {
    shared: Arc<Shared>,
    scheme: &'static str,
}

/// Serves the management API on `addr` (over TLS with `tls`), behind the door of
/// [`crate::http`] (loopback names and `allow_hosts`; no token: the SDKs cannot carry one).
/// Gives the address bound.
pub async fn serve(
    addr: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    allow_hosts: &[String],
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let door = Arc::new(crate::http::Door::without_token(bound, allow_hosts));
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(Admin {
            shared,
            scheme: if tls.is_some() { "https" } else { "http" },
        })
        .layer(axum::extract::DefaultBodyLimit::max(xml::MAX_BODY))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(axum::middleware::from_fn_with_state(
            door,
            crate::http::admit,
        ));
    tokio::spawn(crate::http::serve_over(listener, app, tls));
    Ok(bound)
}

/// The connection string the administration clients take: the emulator's, with this
/// listener's port always (their https goes to 443 without one; Python's and JavaScript's
/// always speak https to it).
pub fn connection_string(addr: &SocketAddr) -> String {
    crate::emulator_connection_string(&format!("localhost:{}", addr.port()))
}

async fn handle(
    State(admin): State<Admin>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let base = format!("{}://{}", admin.scheme, host);
    let target = match Target::of(uri.path()) {
        Ok(t) => t,
        Err(why) => return error(StatusCode::BAD_REQUEST, &why).into_response(),
    };
    let update = headers.contains_key(header::IF_MATCH);
    let page = match paging(uri.query().unwrap_or("")) {
        Ok(p) => p,
        Err(why) => return error(StatusCode::BAD_REQUEST, &why).into_response(),
    };
    // A body is read into its tree before the broker is held (its cost is the body's, not
    // the other clients' wait).
    let root = match method {
        Method::PUT => match xml::parse(&body) {
            Ok(root) => Some(root),
            Err(why) => return error(StatusCode::BAD_REQUEST, &why).into_response(),
        },
        _ => None,
    };
    // The broker is held on a thread of its own, not on one of the runtime's few workers: a
    // long list does not stall the other listeners' tasks while it is written.
    let shared = admin.shared.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let answer = {
            let mut broker = shared.lock();
            broker.tick();
            let request = Request {
                base: &base,
                target: &target,
                update,
                page,
            };
            match method {
                Method::GET => Ok(get(&broker, &request)),
                Method::PUT => put(&mut broker, &request, &root.unwrap_or_default()),
                Method::DELETE => delete(&mut broker, &target),
                _ => Err(error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the management API takes GET, PUT and DELETE",
                )),
            }
        };
        // What waited on an entity made or removed looks again.
        shared.bump();
        answer
    })
    .await
    .unwrap_or_else(|_| {
        Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "sbp serve failed on this request (a bug: please report it with the request)",
        ))
    });
    answer.unwrap_or_else(IntoResponse::into_response)
}

/// A list's page: `$skip` and `$top` (written `%24skip` by the JavaScript client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Page {
    skip: usize,
    top: usize,
}

fn paging(query: &str) -> Result<Page, String> {
    let mut page = Page { skip: 0, top: PAGE };
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        let key = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
        let number = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("{key}={value}: a whole number"))
        };
        match key.as_ref() {
            "$skip" => page.skip = number()?,
            "$top" => page.top = number()?.clamp(1, MAX_PAGE),
            _ => {}
        }
    }
    Ok(page)
}

struct Request<'a> {
    base: &'a str,
    target: &'a Target,
    update: bool,
    page: Page,
}

fn writing<'a>(broker: &Broker, base: &'a str) -> Writing<'a> {
    Writing {
        base,
        clock: broker.clock(),
        now: broker.sim.now(),
        tier: broker.sim.ns().tier(),
    }
}

/// A queue or topic by name (not a subscription).
fn queue_or_topic<'b>(broker: &'b Broker, name: &str) -> Option<&'b Entity> {
    broker
        .sim
        .ns()
        .entity(name)
        .filter(|e| !matches!(e.kind, EntityKind::Subscription { .. }))
}

fn get(broker: &Broker, r: &Request) -> Response {
    let w = writing(broker, r.base);
    let ns = &broker.sim.ns();
    match r.target {
        Target::Namespace => ok_entry(w.namespace("sbp")),
        Target::Entity(name) => match queue_or_topic(broker, name) {
            Some(e) => ok_entry(w.entity(e)),
            None => not_there(&w, name),
        },
        Target::Subscription(topic, sub) => match ns.entity(&subscription_path(topic, sub)) {
            Some(e) => ok_entry(w.entity(e)),
            None => not_there(&w, &canonical(&subscription_path(topic, sub))),
        },
        Target::Rule(topic, sub, rule) => {
            let path = subscription_path(topic, sub);
            let found = ns.entity(&path).and_then(|e| {
                e.rules
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(rule))
                    .map(|(n, r)| (e, n, r))
            });
            match found {
                Some((e, name, rule)) => ok_entry(w.rule(e, name, rule)),
                None => not_there(&w, &format!("{}/Rules/{rule}", canonical(&path))),
            }
        }
        Target::List { queues } => {
            let entities: Vec<&Entity> = ns
                .entities()
                .filter(|e| {
                    if *queues {
                        e.kind == EntityKind::Queue
                    } else {
                        e.kind == EntityKind::Topic
                    }
                })
                .collect();
            let title = if *queues { "Queues" } else { "Topics" };
            let path = format!("$Resources/{title}");
            feed(&w, &path, title, r, entities.len(), |i| {
                w.entity(entities[i])
            })
        }
        Target::Subscriptions(topic) => {
            let subs: Vec<&Entity> = match ns.entity(topic) {
                Some(t) if t.kind == EntityKind::Topic => t
                    .subscriptions
                    .iter()
                    .filter_map(|id| ns.entity(ns.entity_name(*id)))
                    .collect(),
                _ => {
                    return error(StatusCode::NOT_FOUND, &format!("no topic {topic}"))
                        .into_response()
                }
            };
            let path = format!("{topic}/Subscriptions");
            feed(&w, &path, "Subscriptions", r, subs.len(), |i| {
                w.entity(subs[i])
            })
        }
        Target::Rules(topic, sub) => {
            let path = subscription_path(topic, sub);
            let Some(e) = ns.entity(&path) else {
                return error(StatusCode::NOT_FOUND, &format!("no subscription {path}"))
                    .into_response();
            };
            let base = format!("{}/Rules", canonical(&path));
            feed(&w, &base, "Rules", r, e.rules.len(), |i| {
                let (name, rule) = &e.rules[i];
                w.rule(e, name, rule)
            })
        }
    }
}

/// A page of a list: `count` items, the page's written by `item`, with a `next` link while
/// more remain.
fn feed(
    w: &Writing,
    path: &str,
    title: &str,
    r: &Request,
    count: usize,
    item: impl Fn(usize) -> String,
) -> Response {
    let Page { skip, top } = r.page;
    let end = skip.saturating_add(top).min(count);
    let entries: Vec<String> = (skip.min(count)..end).map(item).collect();
    let next = (end < count).then(|| format!("{path}?$skip={end}&$top={top}"));
    let body = w.feed(path, title, &entries, next.as_deref());
    xml_response(
        StatusCode::OK,
        "application/atom+xml;type=feed;charset=utf-8",
        body,
    )
}

/// What a GET of a name that does not exist answers: 200 with an empty feed, as the service
/// (each SDK raises its not-found error).
fn not_there(w: &Writing, path: &str) -> Response {
    xml_response(
        StatusCode::OK,
        "application/atom+xml;type=feed;charset=utf-8",
        w.feed(path, "Publicly Listed Services", &[], None),
    )
}

fn ok_entry(body: String) -> Response {
    entry_response(StatusCode::OK, body)
}

fn entry_response(status: StatusCode, body: String) -> Response {
    xml_response(
        status,
        "application/atom+xml;type=entry;charset=utf-8",
        body,
    )
}

fn xml_response(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// A refusal: its status and what it says.
#[derive(Debug)]
pub struct Failed {
    status: StatusCode,
    detail: String,
}

/// An error as the service writes it: `<Error><Code>..</Code><Detail>..</Detail></Error>`.
impl IntoResponse for Failed {
    fn into_response(self) -> Response {
        xml_response(
            self.status,
            "application/xml; charset=utf-8",
            format!(
                "<Error><Code>{}</Code><Detail>{}</Detail></Error>",
                self.status.as_u16(),
                xml::escape(&self.detail)
            ),
        )
    }
}

fn error(status: StatusCode, detail: &str) -> Failed {
    Failed {
        status,
        detail: detail.to_string(),
    }
}

/// The engine's refusal as the service's status: 409 for a name taken, 404 for one not there,
/// 403 for a quota, 400 for a bad value or an operation the tier does not have.
fn refused(e: &BrokerError) -> Failed {
    let status = match e.kind {
        ErrorKind::MessagingEntityAlreadyExists => StatusCode::CONFLICT,
        ErrorKind::MessagingEntityNotFound => StatusCode::NOT_FOUND,
        ErrorKind::QuotaExceeded => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    };
    let field = e
        .field
        .as_deref()
        .map(|f| format!("{f}: "))
        .unwrap_or_default();
    error(status, &format!("{field}{}", e.message))
}

/// The description a PUT carries, read; a body that is not one is refused (400) naming why.
fn description<'x>(root: &'x xml::Element, names: &[&str]) -> Result<&'x xml::Element, Failed> {
    names.iter().find_map(|n| root.find(n)).ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            &format!("the body holds no {}", names.join(" or ")),
        )
    })
}

fn put(broker: &mut Broker, r: &Request, root: &xml::Element) -> Result<Response, Failed> {
    let bad = |why: String| error(StatusCode::BAD_REQUEST, &why);
    let run = |broker: &mut Broker, action: Action| {
        broker
            .run("admin", action)
            .map(|_| ())
            .map_err(|e| refused(&e))
    };
    match r.target {
        Target::Entity(name) => {
            let d = description(root, &["QueueDescription", "TopicDescription"])?;
            let mut settings = atom::settings(d, broker.sim.ns().tier()).map_err(bad)?;
            let queue = d.name == "QueueDescription";
            if r.update {
                match queue_or_topic(broker, name) {
                    None => {
                        return Err(error(
                            StatusCode::NOT_FOUND,
                            &format!("no queue or topic {name}"),
                        ))
                    }
                    Some(e) if (e.kind == EntityKind::Queue) != queue => {
                        return Err(bad(format!(
                            "{name} is a {}, not a {}",
                            kind_word(e),
                            if queue { "queue" } else { "topic" }
                        )))
                    }
                    Some(_) => {}
                }
                run(
                    broker,
                    Action::Update(UpdateDef {
                        entity: name.clone(),
                        settings,
                    }),
                )?;
            } else {
                service_defaults(&mut settings, broker.sim.ns().tier());
                let def = EntityDef {
                    queue: queue.then(|| name.clone()),
                    topic: (!queue).then(|| name.clone()),
                    settings,
                    ..EntityDef::default()
                };
                run(broker, Action::Create(Box::new(def)))?;
            }
            let e =
                queue_or_topic(broker, name).ok_or_else(|| error(StatusCode::NOT_FOUND, name))?;
            let w = writing(broker, r.base);
            Ok(entry_response(created(r.update), w.entity(e)))
        }
        Target::Subscription(topic, sub) => {
            let d = description(root, &["SubscriptionDescription"])?;
            let mut settings = atom::settings(d, broker.sim.ns().tier()).map_err(bad)?;
            let path = subscription_path(topic, sub);
            if r.update {
                if broker.sim.ns().entity(&path).is_none() {
                    return Err(error(
                        StatusCode::NOT_FOUND,
                        &format!("no subscription {path}"),
                    ));
                }
                run(
                    broker,
                    Action::Update(UpdateDef {
                        entity: path.clone(),
                        settings,
                    }),
                )?;
            } else {
                service_defaults(&mut settings, broker.sim.ns().tier());
                let rule = d
                    .child("DefaultRuleDescription")
                    .map(|rd| {
                        let name = rd
                            .text_of("Name")
                            .unwrap_or(sbp_engine::entity::DEFAULT_RULE);
                        atom::rule(rd, name)
                    })
                    .transpose()
                    .map_err(bad)?;
                let def = EntityDef {
                    subscription: Some(path.clone()),
                    rule,
                    settings,
                    ..EntityDef::default()
                };
                run(broker, Action::Create(Box::new(def)))?;
            }
            let e = broker
                .sim
                .ns()
                .entity(&path)
                .ok_or_else(|| error(StatusCode::NOT_FOUND, &path))?;
            let w = writing(broker, r.base);
            Ok(entry_response(created(r.update), w.entity(e)))
        }
        Target::Rule(topic, sub, name) => {
            let d = description(root, &["RuleDescription"])?;
            let rule = atom::rule(d, name).map_err(bad)?;
            let path = subscription_path(topic, sub);
            let step = RuleStepDef {
                subscription: path.clone(),
                rule,
            };
            if r.update {
                // The engine has no rule update: the rule is removed and added again (two
                // steps of the run), once the new one is known to be taken: a refused update
                // leaves the rule as it was.
                sbp_scenario::step::subscription_rule(Some(&step.rule))
                    .map_err(|t| bad(t.to_string()))?;
                if broker
                    .sim
                    .ns()
                    .entity(&path)
                    .is_none_or(|e| !e.rules.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
                {
                    return Err(error(
                        StatusCode::NOT_FOUND,
                        &format!("no rule {name} on {path}"),
                    ));
                }
                run(
                    broker,
                    Action::RemoveRule(RuleStepDef {
                        subscription: path.clone(),
                        rule: sbp_scenario::RuleDef {
                            name: Some(name.clone()),
                            ..Default::default()
                        },
                    }),
                )?;
            }
            run(broker, Action::AddRule(step))?;
            let e = broker
                .sim
                .ns()
                .entity(&path)
                .ok_or_else(|| error(StatusCode::NOT_FOUND, &path))?;
            let (n, rule) = e
                .rules
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .ok_or_else(|| error(StatusCode::NOT_FOUND, name))?;
            let w = writing(broker, r.base);
            Ok(entry_response(created(r.update), w.rule(e, n, rule)))
        }
        Target::Namespace | Target::List { .. } | Target::Subscriptions(_) | Target::Rules(..) => {
            Err(error(
                StatusCode::METHOD_NOT_ALLOWED,
                "a list or the namespace is only read (GET)",
            ))
        }
    }
}

/// What the service gives an entity created through its management API without a
/// LockDuration or a DuplicateDetectionHistoryTimeWindow: 1 minute and 10 minutes (the real
/// service's answers to an empty description, azure-sdk-for-net
/// `tests/SessionRecords/ServiceBusManagementClientLiveTests/BasicQueueCrudOperationsAsync.json`;
/// the Python and JavaScript clients send nothing they were not given). The playground's own
/// default lock, for entities of a scenario, is the seed's 30 s (RULES.md, RCV-03). The
/// emulator profile keeps its own defaults.
fn service_defaults(settings: &mut sbp_scenario::SettingsDef, tier: sbp_engine::Tier) {
    if tier == sbp_engine::Tier::Emulator {
        return;
    }
    settings
        .lock_duration
        .get_or_insert(sbp_scenario::Dur(sbp_engine::time::MINUTE));
    settings
        .duplicate_detection_history_time_window
        .get_or_insert(sbp_scenario::Dur(10 * sbp_engine::time::MINUTE));
}

/// 201 for a create, 200 for an update, as the service.
fn created(update: bool) -> StatusCode {
    if update {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    }
}

fn kind_word(e: &Entity) -> &'static str {
    match e.kind {
        EntityKind::Queue => "queue",
        EntityKind::Topic => "topic",
        EntityKind::Subscription { .. } => "subscription",
    }
}

fn delete(broker: &mut Broker, target: &Target) -> Result<Response, Failed> {
    let action = match target {
        Target::Entity(name) => {
            if queue_or_topic(broker, name).is_none() {
                return Err(error(
                    StatusCode::NOT_FOUND,
                    &format!("no queue or topic {name}"),
                ));
            }
            Action::Delete(name.clone())
        }
        Target::Subscription(topic, sub) => {
            let path = subscription_path(topic, sub);
            if broker.sim.ns().entity(&path).is_none() {
                return Err(error(
                    StatusCode::NOT_FOUND,
                    &format!("no subscription {path}"),
                ));
            }
            Action::Delete(path)
        }
        Target::Rule(topic, sub, name) => Action::RemoveRule(RuleStepDef {
            subscription: subscription_path(topic, sub),
            rule: sbp_scenario::RuleDef {
                name: Some(name.clone()),
                ..Default::default()
            },
        }),
        Target::Namespace | Target::List { .. } | Target::Subscriptions(_) | Target::Rules(..) => {
            return Err(error(
                StatusCode::METHOD_NOT_ALLOWED,
                "a list or the namespace is not deleted",
            ))
        }
    };
    broker.run("admin", action).map_err(|e| refused(&e))?;
    // 200 with an empty body, as the service (the Python client takes nothing else).
    Ok((StatusCode::OK, [(header::CACHE_CONTROL, "no-store")]).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_target_in_any_case_with_names_decoded() {
        assert_eq!(Target::of("/$namespaceinfo"), Ok(Target::Namespace));
        assert_eq!(
            Target::of("/$Resources/queues"),
            Ok(Target::List { queues: true })
        );
        assert_eq!(
            Target::of("/$Resources/Topics"),
            Ok(Target::List { queues: false })
        );
        assert_eq!(Target::of("/orders"), Ok(Target::Entity("orders".into())));
        assert_eq!(Target::of("/a%2Fb"), Ok(Target::Entity("a/b".into())));
        assert_eq!(Target::of("/a/b"), Ok(Target::Entity("a/b".into())));
        assert_eq!(
            Target::of("/t/Subscriptions/"),
            Ok(Target::Subscriptions("t".into()))
        );
        assert_eq!(
            Target::of("/t%2Fx/subscriptions/s%201"),
            Ok(Target::Subscription("t/x".into(), "s 1".into()))
        );
        assert_eq!(
            Target::of("/t/Subscriptions/s/Rules/"),
            Ok(Target::Rules("t".into(), "s".into()))
        );
        assert_eq!(
            Target::of("/t/subscriptions/s/rules/r"),
            Ok(Target::Rule("t".into(), "s".into(), "r".into()))
        );
        assert!(Target::of("/").is_err());
        assert!(Target::of("/$Resources/rules").is_err());
        assert!(Target::of("/t/Subscriptions/s/x/y").is_err());
    }

    #[test]
    fn a_page_is_skip_and_top_written_either_way() {
        assert_eq!(paging(""), Ok(Page { skip: 0, top: PAGE }));
        assert_eq!(
            paging("api-version=2021-05&%24skip=100&%24top=50"),
            Ok(Page { skip: 100, top: 50 })
        );
        assert_eq!(
            paging("$skip=0&$top=100000"),
            Ok(Page {
                skip: 0,
                top: MAX_PAGE
            })
        );
        assert!(paging("$skip=-1").unwrap_err().contains("whole number"));
    }
}
