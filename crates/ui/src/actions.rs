//! Forms for what a user does: send, receive, peek, receive deferred, faults, create entities,
//! and the scenario menu (presets, open a link). Each action becomes a scenario step.
use crate::form::*;
use crate::state::Action;
use crate::state::{StateProps, Tab};
use sbp_engine::time::Instant;
use sbp_engine::EntityKind;
use sbp_scenario::link::{decode_link, Link};
use sbp_scenario::Action as StepAction;
use sbp_scenario::*;
use yew::prelude::*;

/// Paths that can be received from: queues, subscriptions, and their DLQs (the engine's list).
fn receivable(store: &crate::state::StateHandle) -> Vec<String> {
    let sim = store.sim.borrow();
    sim.ns()
        .receive_sources()
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}
/// Every queue, topic and subscription (what a fault or an edit can name), and the
/// subscriptions alone.
fn entity_paths(store: &crate::state::StateHandle) -> (Vec<String>, Vec<String>) {
    let sim = store.sim.borrow();
    let all = sim.ns().entities().map(|e| e.path.clone()).collect();
    let subscriptions = sim
        .ns()
        .entities()
        .filter(|e| matches!(e.kind, EntityKind::Subscription { .. }))
        .map(|e| e.path.clone())
        .collect();
    (all, subscriptions)
}
fn sendable(store: &crate::state::StateHandle) -> Vec<String> {
    let sim = store.sim.borrow();
    // In the scenario's own order (a lesson names its first queue first), not by name: the
    // first is the form's choice until the learner makes one.
    sim.ns()
        .entities_by_id()
        .filter(|e| !matches!(e.kind, EntityKind::Subscription { .. }))
        .map(|e| e.path.clone())
        .collect()
}

/// The built-in starter, then the presets `presets/index.json` lists (fetched: data, not code).
fn starter_option() -> Vec<(String, String)> {
    vec![("playground".to_string(), crate::i18n::t("starter"))]
}

/// The control sections. A plain function: the forms in it re-render only when their fields
/// change (DataForm), the running actors on the slow version.
pub fn actions(store: &crate::state::StateHandle) -> Html {
    let (entities, subscriptions) = entity_paths(store);
    let form = FormProps {
        dispatch: store.dispatcher(),
        sim: crate::state::SimRef(store.sim.clone()),
        targets: sendable(store),
        sources: receivable(store),
        entities,
        subscriptions,
    };
    // The sections as tabs, so the lanes stay in view; a lesson shows only the ones it needs.
    let shown: Vec<Tab> = match store.lesson.as_deref() {
        Some(run) if !run.lesson.controls.is_empty() => Tab::ALL
            .into_iter()
            .filter(|t| run.lesson.controls.iter().any(|c| c == t.id()))
            .collect(),
        _ => Tab::ALL.to_vec(),
    };
    let tab = if shown.contains(&store.tab) {
        store.tab
    } else {
        shown.first().copied().unwrap_or(Tab::Send)
    };
    // The forms are plain functions, not components: they have no hooks, and each DataForm
    // re-renders only when its own fields change.
    let section = match tab {
        Tab::Receive => receive_form(&form),
        Tab::Faults => fault_form(&form),
        Tab::Traffic => html! {
            <>
            {crate::traffic::actors(store)}
            {crate::traffic::producer_form(&form)}
            {crate::traffic::consumer_form(&form)}
            </>
        },
        Tab::Entities => entity_form(&form),
        Tab::Send => send_form(&form),
    };
    // The ARIA tabs pattern: one Tab stop (the selected tab), the arrow keys, Home and End move
    // along the tabs and open the one they reach.
    let onkeydown = {
        let store = store.clone();
        let shown = shown.clone();
        Callback::from(move |e: KeyboardEvent| {
            let at = shown.iter().position(|t| *t == tab).unwrap_or(0);
            let last = shown.len().saturating_sub(1);
            let to = match e.key().as_str() {
                "ArrowRight" | "ArrowDown" => (at + 1) % (last + 1),
                "ArrowLeft" | "ArrowUp" => at.checked_sub(1).unwrap_or(last),
                "Home" => 0,
                "End" => last,
                _ => return,
            };
            e.prevent_default();
            if let Some(&next) = shown.get(to) {
                store.dispatch(Action::Tab(next));
                crate::browser::focus_soon(vec![format!("#tab-{}", next.id())]);
            }
        })
    };
    html! {
        <>
        <div class="tabs" role="tablist" aria-label={crate::i18n::t("area-actions")} {onkeydown}>
            { for shown.iter().map(|&t| {
                let store = store.clone();
                let onclick = Callback::from(move |_: MouseEvent| store.dispatch(Action::Tab(t)));
                let selected = t == tab;
                html! {
                    <button role="tab" id={format!("tab-{}", t.id())} aria-selected={selected.to_string()}
                        aria-controls="tab-panel" tabindex={if selected { "0" } else { "-1" }}
                        class={classes!("tab", selected.then_some("selected"))} {onclick}>{crate::i18n::t(&format!("tab-{}", t.id()))}</button>
                }
            }) }
        </div>
        // Keyed by the tab: another section is a new form, not this one's state reused.
        <div role="tabpanel" id="tab-panel" aria-labelledby={format!("tab-{}", tab.id())} key={tab.id()}>{section}</div>
        // Every section has a duration field: the rule for one typed without a unit, once.
        <p class="hint" id="duration-rule">{crate::i18n::t("duration-rule")}</p>
        </>
    }
}

/// Fields: to, MessageId, TTL, schedule in, Subject, properties, body, how many.
fn send_step(v: &Values, _button: usize, now: Instant) -> Result<Action, FormError> {
    if v.get("send-to").is_empty() {
        return Err(crate::i18n::t("error-no-target").into());
    }
    let mut properties = std::collections::BTreeMap::new();
    let mut system_properties = std::collections::BTreeMap::new();
    // SES-01: the SessionId has its own field.
    if let Some(id) = opt(v.get("send-session").to_string()) {
        system_properties.insert("SessionId".to_string(), id);
    }
    for pair in v
        .get("send-props")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (k, val) = pair
            .split_once('=')
            .ok_or_else(|| crate::i18n::tf("error-property", &[("pair", pair)]))?;
        // FLT-02: `sys.To=...` sets a system property (To, ReplyTo, ContentType...).
        match k.trim().strip_prefix("sys.") {
            Some(name) => {
                system_properties.insert(name.to_string(), val.trim().to_string());
            }
            // An application property keeps its type: a value that reads as JSON (10, 1.5,
            // true, "10", {"long": 5}) is that value; any other text is a string.
            None => {
                let value = serde_json::from_str(val.trim())
                    .unwrap_or_else(|_| sbp_engine::PropertyValue::String(val.trim().to_string()));
                properties.insert(k.trim().to_string(), value);
            }
        };
    }
    let send = SendDef {
        to: v.get("send-to").to_string(),
        message_id: opt(v.get("send-id").to_string()),
        ttl: parse::dur("TimeToLive", v.get("send-ttl"))?,
        // "in 5m" from now: the step records the absolute instant.
        scheduled_enqueue_time: parse::dur(
            &crate::i18n::t("send-schedule"),
            v.get("send-schedule"),
        )?
        .map(|d| Dur(now.saturating_add(d.ms()))),
        subject: opt(v.get("send-subject").to_string()),
        properties,
        system_properties,
        body: v.get("send-body").into(),
        count: parse::real(
            &crate::i18n::t("send-count"),
            v.get("send-count"),
            1.0,
            10_000.0,
        )?
        .map(|n| n as u32),
        ..Default::default()
    };
    Ok(Action::Do(Box::new(Step::new(StepAction::Send(send)))))
}

fn send_form(props: &FormProps) -> Html {
    let fields = vec![
        choice_field("send-to", same(props.targets.clone())),
        text_field("send-id", "", true),
        text_field("send-ttl", "10s", true),
        text_field("send-schedule", "", true),
        text_field("send-subject", "", false),
        text_field("send-session", "", true),
        text_field("send-props", "", true),
        text_field("send-body", "hello", false),
        text_field("send-count", "1", false),
    ];
    data_form(
        "send-form",
        false,
        fields,
        vec!["send-button"],
        send_step,
        props,
    )
}

/// Fields: from, receiver, mode, count, auto-renew, deferred sequence numbers. Buttons: receive,
/// peek, receive deferred.
fn receive_step(v: &Values, button: usize, _now: Instant) -> Result<Action, FormError> {
    let from = v.get("receive-from").to_string();
    if from.is_empty() {
        return Err(crate::i18n::t("error-no-source").into());
    }
    let receiver =
        opt(v.get("receive-receiver").to_string()).unwrap_or_else(|| DEFAULT_RECEIVER.into());
    let count = parse::real(
        &crate::i18n::t("receive-count"),
        v.get("receive-count"),
        1.0,
        10_000.0,
    )?
    .map(|n| n as u32);
    let step = match button {
        1 => Step::new(StepAction::Peek(PeekDef {
            from,
            receiver,
            from_seq: None,
            count,
            name: None,
        })),
        2 => {
            let seqs = v
                .get("deferred-seqs")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse::<u64>()
                        .map_err(|_| crate::i18n::tf("error-seq", &[("seq", s)]))
                })
                .collect::<Result<Vec<u64>, String>>()?;
            if seqs.is_empty() {
                return Err(crate::i18n::t("error-no-seqs").into());
            }
            Step::new(StepAction::ReceiveDeferred(ReceiveDeferredDef {
                from,
                seqs,
                receiver,
                name: None,
            }))
        }
        // SES-02..05: accept, renew, get, set, close.
        3..=7 => Step::new(StepAction::Session(SessionDef {
            receiver,
            from,
            op: [
                SessionOpDef::Accept,
                SessionOpDef::RenewLock,
                SessionOpDef::GetState,
                SessionOpDef::SetState,
                SessionOpDef::Close,
            ][button - 3],
            session_id: opt(v.get("session-id").to_string()),
            state: opt(v.get("session-state").to_string()).map(sbp_engine::Body::from),
            name: None,
        })),
        _ => Step::new(StepAction::Receive(ReceiveDef {
            from,
            receiver,
            mode: if v.get("receive-mode") == "ReceiveAndDelete" {
                ModeDef::ReceiveAndDelete
            } else {
                ModeDef::PeekLock
            },
            count,
            max_auto_lock_renewal: parse::dur(
                &crate::i18n::t("receive-renew"),
                v.get("receive-renew"),
            )?,
            transfer_fails: false,
            name: None,
        })),
    };
    Ok(Action::Do(Box::new(step)))
}

fn receive_form(props: &FormProps) -> Html {
    let fields = vec![
        choice_field("receive-from", same(props.sources.clone())),
        text_field("receive-receiver", "worker", false),
        choice_field(
            "receive-mode",
            pairs(&[
                ("PeekLock", "mode-peeklock"),
                ("ReceiveAndDelete", "mode-receiveanddelete"),
            ]),
        ),
        text_field("receive-count", "1", false),
        text_field("receive-renew", "", true),
        text_field("deferred-seqs", "", true),
        text_field("session-id", "", true),
        text_field("session-state", "", true),
    ];
    let buttons = vec![
        "receive-button",
        "peek-button",
        "receive-deferred-button",
        "session-accept",
        "session-renew",
        "session-get",
        "session-set",
        "session-close",
    ];
    data_form("receive-form", false, fields, buttons, receive_step, props)
}

/// Fields: in, entity, receiver. Buttons: service update, OS update, entity update, disconnect.
fn fault_step(v: &Values, button: usize, now: Instant) -> Result<Action, FormError> {
    let step = match button {
        0 => Step::new(StepAction::Fault(FaultDef::ServiceUpdate)),
        1 => Step::new(StepAction::Fault(FaultDef::OsUpdate)),
        2 => Step::new(StepAction::Update(UpdateDef {
            entity: v.get("fault-entity").to_string(),
            settings: SettingsDef::default(),
        })),
        _ => Step::new(StepAction::Fault(FaultDef::Disconnect(
            opt(v.get("fault-receiver").to_string()).unwrap_or_else(|| "worker".into()),
        ))),
    };
    // Faults on a schedule: "in 30s" records the step for that instant.
    Ok(
        match parse::dur(&crate::i18n::t("fault-in"), v.get("fault-in"))? {
            Some(d) => Action::DoAt(Box::new(step), now.saturating_add(d.ms())),
            None => Action::Do(Box::new(step)),
        },
    )
}

fn fault_form(props: &FormProps) -> Html {
    let paths = props.entities.clone();
    let fields = vec![
        text_field("fault-in", "", true),
        choice_field("fault-entity", same(paths)),
        text_field("fault-receiver", "worker", false),
    ];
    let buttons = vec![
        "fault-service",
        "fault-os",
        "fault-update",
        "fault-disconnect",
    ];
    data_form("fault-form", true, fields, buttons, fault_step, props)
}

/// Fields: target, kind, name, subject filter, DefaultMessageTimeToLive, LockDuration,
/// MaxDeliveryCount, AutoDeleteOnIdle, ForwardTo, ForwardDeadLetteredMessagesTo, dead-lettering
/// on expiration. The engine checks the limits; its error names the setting.
fn entity_step(v: &Values, button: usize, _now: Instant) -> Result<Action, FormError> {
    // FLT-01: a rule added to (or removed from) the subscription chosen as the target.
    if button > 0 {
        let step = RuleStepDef {
            subscription: v.get("entity-target").to_string(),
            rule: rule_def(v).unwrap_or_else(|| RuleDef {
                name: opt(v.get("entity-rule-name").to_string()),
                ..Default::default()
            }),
        };
        return Ok(Action::Do(Box::new(Step::new(if button == 1 {
            StepAction::AddRule(step)
        } else {
            StepAction::RemoveRule(step)
        }))));
    }
    let settings = SettingsDef {
        default_message_time_to_live: parse::dur("DefaultMessageTimeToLive", v.get("entity-ttl"))?,
        lock_duration: parse::dur("LockDuration", v.get("entity-lock"))?,
        max_delivery_count: parse::real("MaxDeliveryCount", v.get("entity-max"), 0.0, 1e6)?
            .map(|n| n as u32),
        auto_delete_on_idle: parse::dur("AutoDeleteOnIdle", v.get("entity-idle"))?,
        forward_to: opt(v.get("entity-forward").to_string()),
        forward_dead_lettered_messages_to: opt(v.get("entity-forward-dl").to_string()),
        dead_lettering_on_message_expiration: on_off(v.get("entity-dlq")),
        requires_duplicate_detection: on_off(v.get("entity-dup")),
        duplicate_detection_history_time_window: parse::dur(
            "DuplicateDetectionHistoryTimeWindow",
            v.get("entity-dup-window"),
        )?,
        requires_session: on_off(v.get("entity-session")),
        ..Default::default()
    };
    if v.get("entity-target") != "new" {
        let update = UpdateDef {
            entity: v.get("entity-target").to_string(),
            settings,
        };
        return Ok(Action::Do(Box::new(Step::new(StepAction::Update(update)))));
    }
    if v.get("entity-name").is_empty() {
        return Err(crate::i18n::t("error-no-name").into());
    }
    let mut def = EntityDef {
        settings,
        ..Default::default()
    };
    match v.get("entity-kind") {
        "topic" => def.topic = Some(v.get("entity-name").to_string()),
        "subscription" => {
            def.subscription = Some(v.get("entity-name").to_string());
            def.rule = rule_def(v);
        }
        _ => def.queue = Some(v.get("entity-name").to_string()),
    }
    Ok(Action::Do(Box::new(Step::new(StepAction::Create(
        Box::new(def),
    )))))
}

/// The rule the form describes: FLT-03 a SQL filter, else FLT-02 a correlation filter on
/// Subject, either with its action (FLT-04); with its name (FLT-01). None when it names no
/// filter.
fn rule_def(v: &Values) -> Option<RuleDef> {
    let name = opt(v.get("entity-rule-name").to_string());
    let action = opt(v.get("entity-rule-action").to_string());
    // FLT-01: TrueFilter or FalseFilter by name (the engine refuses it beside another filter).
    if let Some(filter) = opt(v.get("entity-rule-filter").to_string()) {
        return Some(RuleDef {
            name,
            filter: Some(filter),
            action,
            sql: opt(v.get("entity-rule-sql").to_string()),
            subject: opt(v.get("entity-rule-subject").to_string()),
            ..Default::default()
        });
    }
    match opt(v.get("entity-rule-sql").to_string()) {
        Some(sql) => Some(RuleDef {
            name,
            sql: Some(sql),
            action,
            ..Default::default()
        }),
        None => opt(v.get("entity-rule-subject").to_string()).map(|subject| RuleDef {
            name,
            subject: Some(subject),
            action,
            ..Default::default()
        }),
    }
}

/// A choice of "on", "off" or unchanged.
fn on_off(v: &str) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// Create an entity, or edit an existing one's settings (an update loses its locks: RCV-10).
/// Limits are checked by the engine; the error is shown next to the field it names.
fn entity_form(props: &FormProps) -> Html {
    let mut targets = vec![("new".to_string(), crate::i18n::t("new-entity"))];
    let subscriptions = props.subscriptions.iter();
    targets.extend(
        props
            .targets
            .iter()
            .chain(subscriptions)
            .map(|p| (p.clone(), crate::i18n::tf("edit-entity", &[("path", p)]))),
    );
    let fields = vec![
        choice_field("entity-target", targets),
        choice_field(
            "entity-kind",
            pairs(&[
                ("queue", "kind-queue"),
                ("topic", "kind-topic"),
                ("subscription", "kind-subscription-path"),
            ]),
        ),
        text_field("entity-name", "", true).keyed("Name"),
        text_field("entity-rule-name", "", true).keyed("RuleName"),
        choice_field(
            "entity-rule-filter",
            pairs(&[
                ("", "filter-from-fields"),
                ("TrueFilter", "filter-true"),
                ("FalseFilter", "filter-false"),
            ]),
        ),
        text_field("entity-rule-subject", "", true),
        text_field("entity-rule-sql", "", true).keyed("SqlFilter"),
        text_field("entity-rule-action", "", true).keyed("SqlAction"),
        text_field("entity-ttl", "", true).keyed("DefaultMessageTimeToLive"),
        text_field("entity-lock", "", true).keyed("LockDuration"),
        text_field("entity-max", "", true).keyed("MaxDeliveryCount"),
        text_field("entity-idle", "", true).keyed("AutoDeleteOnIdle"),
        text_field("entity-forward", "", true).keyed("ForwardTo"),
        text_field("entity-forward-dl", "", true).keyed("ForwardDeadLetteredMessagesTo"),
        choice_field(
            "entity-dlq",
            pairs(&[("", "default-unchanged"), ("on", "on"), ("off", "off")]),
        ),
        choice_field(
            "entity-dup",
            pairs(&[("", "default-unchanged"), ("on", "on"), ("off", "off")]),
        )
        .keyed("RequiresDuplicateDetection"),
        text_field("entity-dup-window", "", true).keyed("DuplicateDetectionHistoryTimeWindow"),
        choice_field(
            "entity-session",
            pairs(&[("", "default-unchanged"), ("on", "on"), ("off", "off")]),
        )
        .keyed("RequiresSession"),
    ];
    data_form(
        "entity-form",
        true,
        fields,
        vec!["entity-create", "entity-add-rule", "entity-remove-rule"],
        entity_step,
        props,
    )
}

/// Loads preset `name` (fetched: `presets/<name>.json`; "playground" is the starter). Its
/// expectations are checked as it plays, as the CLI checks them.
pub fn load_preset(store: &crate::state::StateHandle, name: &str) {
    load_preset_opened(store, name, false)
}

/// As [`load_preset`], for the page's `?preset=`: opened where its `?at=` and `?speed=` say
/// ([`crate::startup::open_as_the_query_asks`]), and why not when one is refused.
pub fn load_preset_from_page(store: &crate::state::StateHandle, name: &str) {
    load_preset_opened(store, name, true)
}

fn load_preset_opened(store: &crate::state::StateHandle, name: &str, as_the_query_asks: bool) {
    let load = {
        let store = store.clone();
        move |parsed: Result<Scenario, crate::browser::LoadError>| match parsed {
            Ok(scenario) => {
                let title = scenario.name.clone();
                let mut link = Link::at(scenario, None);
                let refused = as_the_query_asks
                    .then(|| {
                        crate::startup::open_as_the_query_asks(&mut link)
                            .or_else(crate::startup::not_in_the_page)
                    })
                    .flatten();
                store.dispatch(Action::Load {
                    link: Box::new(link),
                    // A page that plays by itself (`?autoplay=1`) does not ask the reader to press play.
                    notice: crate::i18n::tf(
                        if crate::browser::query_flag("autoplay") {
                            "loaded-playing"
                        } else {
                            "loaded"
                        },
                        &[("title", &title)],
                    ),
                });
                if let Some(why) = refused {
                    store.dispatch(Action::Error(why));
                }
            }
            Err(e) => store.dispatch(Action::Error(e.to_string())),
        }
    };
    if name == "playground" {
        return load(
            Scenario::from_json(crate::browser::STARTER)
                .map_err(crate::browser::LoadError::Scenario),
        );
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return store.dispatch(Action::Error(crate::i18n::tf(
            "no-preset",
            &[("name", name)],
        )));
    }
    preset_worded(name.to_string(), load);
}

/// Preset `name` (`presets/<name>.json`) in the reader's language: its name, description and
/// notes (English where the words are not there).
fn preset_worded(
    name: String,
    done: impl FnOnce(Result<Scenario, crate::browser::LoadError>) + 'static,
) {
    crate::browser::fetch_text(&format!("presets/{name}.json"), move |text| {
        let parsed = text
            .map_err(crate::browser::LoadError::from)
            .and_then(|t| Scenario::from_json(&t).map_err(crate::browser::LoadError::Scenario));
        preset_texts(move |texts| {
            done(parsed.map(|mut scenario| {
                if let Some(words) = texts.get(&name) {
                    sbp_scenario::presets::translate(&mut scenario, words);
                }
                scenario
            }))
        });
    });
}

thread_local! {
    /// The presets' words in the language they were fetched for.
    static PRESET_TEXTS: std::cell::RefCell<Option<(&'static str, std::rc::Rc<sbp_scenario::presets::PresetTexts>)>> =
        const { std::cell::RefCell::new(None) };
}

/// Calls `done` with every preset's words in the reader's language (fetched once per language;
/// none in English, whose words are the presets' own, or if the fetch fails).
fn preset_texts(done: impl FnOnce(std::rc::Rc<sbp_scenario::presets::PresetTexts>) + 'static) {
    let lang = crate::i18n::lang();
    let cached = PRESET_TEXTS.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(l, _)| *l == lang)
            .map(|(_, t)| t.clone())
    });
    if let Some(texts) = cached {
        return done(texts);
    }
    if lang == "en" {
        return done(std::rc::Rc::default());
    }
    crate::browser::fetch_text(&format!("presets/i18n/{lang}.json"), move |text| {
        let texts = std::rc::Rc::new(
            text.ok()
                .and_then(|t| sbp_scenario::presets::preset_texts(&t).ok())
                .unwrap_or_default(),
        );
        PRESET_TEXTS.with(|c| *c.borrow_mut() = Some((lang, texts.clone())));
        done(texts)
    });
}

/// The preset (its value in the menu) the scenario named `name` is, by the title the menu gives
/// it (the starter by its own name).
fn preset_on_screen(options: &[(String, String)], name: &str) -> Option<String> {
    let is_starter = name == crate::browser::STARTER_NAME;
    options
        .iter()
        .find(|(value, title)| *title == name || (is_starter && value == "playground"))
        .map(|(value, _)| value.clone())
}

/// Presets and "open a link or scenario file".
#[function_component(ScenarioMenu)]
pub fn scenario_menu(props: &StateProps) -> Html {
    let store = props.store.clone();
    let preset = use_node_ref();
    let pasted = use_node_ref();
    let presets = use_state(starter_option);
    {
        let presets = presets.clone();
        let store = store.clone();
        // Listed again in a language the reader switches to; the preset on screen (named as the
        // list named it before) is worded again in it.
        use_effect_with(crate::i18n::lang(), move |_| {
            let on_screen = store.sim.borrow().scenario().name.clone();
            let preset = preset_on_screen(&presets, &on_screen).filter(|p| p != "playground");
            if let Some(preset) = preset {
                let store = store.clone();
                preset_worded(preset, move |worded| {
                    if let Ok(words) = worded {
                        store.dispatch(Action::Reword(Box::new(words)));
                    }
                });
            }
            crate::browser::fetch_text("presets/index.json", move |text| {
                let listed: Vec<serde_json::Value> = text
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default();
                preset_texts(move |texts| {
                    let mut options = starter_option();
                    options.extend(listed.iter().filter_map(|p| {
                        let name = p["name"].as_str()?.to_string();
                        let title = texts
                            .get(&name)
                            .map(|w| w.name.clone())
                            .or_else(|| p["title"].as_str().map(str::to_string))?;
                        Some((name, title))
                    }));
                    presets.set(options);
                });
            });
        });
    }
    let on_preset = {
        let store = store.clone();
        let preset = preset.clone();
        Callback::from(move |_: MouseEvent| {
            // The scenario on screen, named first when it is no preset: nothing to load.
            let name = select(&preset);
            if !name.is_empty() {
                load_preset(&store, &name)
            }
        })
    };
    let on_open = {
        let store = store.clone();
        let pasted = pasted.clone();
        Callback::from(move |_: MouseEvent| {
            let store = store.clone();
            crate::browser::unpack(&text(&pasted), move |t| open_text(&store, &t));
        })
    };
    let (name, description) = {
        let sim = store.sim.borrow();
        (
            sim.scenario().name.clone(),
            sim.scenario().description.clone(),
        )
    };
    // The menu shows the preset on screen; another scenario (yours, a link's, a lesson's) is
    // named as what it is, not as the first preset.
    let mut options = (*presets).clone();
    let shown = match preset_on_screen(&options, &name) {
        Some(value) => value,
        None => {
            let this = crate::i18n::tf("preset-this", &[("name", &name)]);
            options.insert(0, (String::new(), this));
            String::new()
        }
    };
    html! {
        <div class="menu">
            <label>{crate::i18n::t("preset")}{" "}
                {chosen(&preset, "preset", &options, &shown)}
            </label>
            <button id="load-preset" onclick={on_preset}>{crate::i18n::t("load")}</button>
            {field("open-input", &pasted, true, "text")}
            <button id="open-button" onclick={on_open}>{crate::i18n::t("open")}</button>
            if !description.is_empty() { <p class="description" id="scenario-description">{description}</p> }
        </div>
    }
}

/// Opens pasted text: a scenario file (JSON) or a link (already unpacked by the browser).
fn open_text(store: &crate::state::StateHandle, t: &str) {
    let parsed = if t.starts_with('{') {
        Scenario::from_json(t).map(|s| Link::at(s, None))
    } else {
        decode_link(t)
    };
    match parsed {
        Ok(link) => store.dispatch(Action::Load {
            link: Box::new(link),
            notice: crate::i18n::t("opened"),
        }),
        Err(e) => store.dispatch(Action::Error(crate::i18n::tf(
            "error-unchanged",
            &[("error", &e.to_string())],
        ))),
    }
}
