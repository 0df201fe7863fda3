//! The namespace view: every queue and subscription as a lane of message cards, with its
//! dead-letter queue under it. Large lanes show a window of cards and a summary of the rest.
use crate::i18n::{t, tf};
use crate::state::Action;
use sbp_engine::message::Message;
use sbp_engine::namespace::{queue_path, split_queue_path};
use sbp_engine::time::{format_duration, Instant, MAX_VALUE, NEVER};
use sbp_engine::{
    CardExpiry, CardStatus, Entity, EntityKind, Event, EventKind, QueueRef, SettleKind,
};
use sbp_scenario::{Action as StepAction, SettleDef, Step};
use yew::prelude::*;

/// Cards shown per lane; the rest are summarised by count.
const WINDOW: usize = 40;
/// While messages stream through: fewer cards, and the card elements are reused in place
/// (unkeyed) instead of being removed and created every tick.
const FAST_WINDOW: usize = 16;
pub const FAST_SPEED: u32 = 60;
/// Events in a second of wall time past which messages stream through (about 50 a tick).
const STREAMING_EVENTS: usize = 1_000;

/// Whether messages stream through faster than their cards can be followed one by one: the
/// clock plays at x60 or more, or more than [`STREAMING_EVENTS`] events happened in the last
/// second of wall time (10,000 msg/s at x1 is about 30,000).
pub fn streaming(app: &crate::state::AppState) -> bool {
    if !app.playing {
        return false;
    }
    if app.speed >= FAST_SPEED {
        return true;
    }
    let sim = app.sim.borrow();
    let log = sim.ns().log();
    let second = 1_000 * i64::from(app.speed);
    log.len()
        .checked_sub(STREAMING_EVENTS)
        .and_then(|i| log.get(i))
        .is_some_and(|ev| ev.at >= sim.now() - second)
}

/// "12.3 s", "4 min 05 s", "expired": a countdown to `at`.
pub fn countdown(now: Instant, at: Instant) -> String {
    if at == NEVER {
        return "never".into();
    }
    let left = at - now;
    if left <= 0 {
        return "passed".into();
    }
    if left < 60_000 {
        format!(
            "{} s",
            sbp_engine::time::format_decimal(left as f64 / 1000.0, 1)
        )
    } else if left < 3_600_000 {
        format!("{} min {:02} s", left / 60_000, (left % 60_000) / 1000)
    } else {
        format_duration(left - left % 1000)
    }
}

/// A card's status in words, and its class for styling.
pub fn status_words(status: &CardStatus) -> (String, &'static str) {
    let words = match status {
        CardStatus::Locked { holder } => tf("status-locked", &[("receiver", holder)]),
        CardStatus::Scheduled => t("status-scheduled"),
        CardStatus::Deferred => t("status-deferred"),
        CardStatus::ExpiredNotCollected => t("status-expired"),
        CardStatus::DeadLettered => t("status-dead-lettered"),
        CardStatus::Active => t("status-active"),
    };
    (words, status.class())
}

fn settings_text(e: &Entity) -> String {
    let s = &e.settings;
    let ttl = if s.default_message_time_to_live >= MAX_VALUE {
        "MaxValue".into()
    } else {
        format_duration(s.default_message_time_to_live)
    };
    // DUP-01: the window, when the entity detects duplicates.
    let duplicates = if s.requires_duplicate_detection {
        format!(
            " · RequiresDuplicateDetection {}",
            format_duration(s.duplicate_detection_history_time_window)
        )
    } else {
        String::new()
    };
    let text = match e.kind {
        EntityKind::Topic => format!("DefaultMessageTimeToLive {ttl}"),
        _ => tf(
            "lane-settings",
            &[
                ("lock", &format_duration(s.lock_duration)),
                ("max", &s.max_delivery_count.to_string()),
                ("ttl", &ttl),
                (
                    "dlq",
                    &t(if s.dead_lettering_on_message_expiration {
                        "on"
                    } else {
                        "off"
                    }),
                ),
                (
                    "forward",
                    &s.forward_to
                        .as_ref()
                        .map(|f| format!(" · ForwardTo {f}"))
                        .unwrap_or_default(),
                ),
            ],
        ),
    };
    // SES-01: chosen at creation.
    let sessions = if s.requires_session {
        " · RequiresSession"
    } else {
        ""
    };
    // FLT-01: a subscription's rules.
    let rules = if matches!(e.kind, EntityKind::Subscription { .. }) {
        format!(" · {}", e.rules_text())
    } else {
        String::new()
    };
    text + &duplicates + sessions + &rules
}

/// The lanes. A plain function, not a component: it follows every tick anyway.
pub fn lanes(store: &crate::state::StateHandle) -> Html {
    let sim = store.sim.borrow();
    let now = sim.now();
    let entities: Vec<&Entity> = sim.ns().entities().collect();
    if entities.is_empty() {
        return html! { <p class="empty">{t("no-entities")}</p> };
    }
    // PRO-01: which limits and defaults apply.
    let profile = tf("profile", &[("tier", &sim.ns().tier().to_string())]);
    // TTL-07/08: the expiry mode decides when an expired message leaves; say which one runs,
    // and that exact expiry is the playground's choice.
    let expiry = t(match sim.ns().expiry_mode() {
        sbp_engine::ExpiryMode::Exact => "expiry-mode-exact",
        sbp_engine::ExpiryMode::Realistic => "expiry-mode-realistic",
    });
    html! {
        <div class="lanes">
        <p class="hint" id="profile">{profile}{" · "}<span id="expiry-mode">{expiry}</span></p>
        { for entities.into_iter().map(|e| {
            let c = e.counts(now);
            let mut counts = match e.kind {
                EntityKind::Topic => tf("counts-topic", &[("scheduled", &c.scheduled.to_string())]),
                _ => tf("counts", &[("active", &c.active.to_string()), ("locked", &c.locked.to_string()), ("scheduled", &c.scheduled.to_string()), ("deferred", &c.deferred.to_string()), ("dead", &c.dead_lettered.to_string()),
                    ("expired", &if c.expired_uncollected > 0 { tf("counts-expired", &[("expired", &c.expired_uncollected.to_string())]) } else { String::new() })]),
            };
            // DUP-02: what duplicate detection dropped.
            if e.duplicates_dropped > 0 {
                counts += &tf("counts-duplicates", &[("count", &e.duplicates_dropped.to_string())]);
            }
            let kind = t(match e.kind { EntityKind::Queue => "kind-queue", EntityKind::Topic => "kind-topic", EntityKind::Subscription { .. } => "kind-subscription" });
            html! {
                <article class="lane" tabindex="-1" aria-label={format!("{kind} {}", e.path)} data-entity={e.path.clone()}>
                    <header>
                        <h3><span class="kind">{&kind}</span>{" "}{e.path.clone()}</h3>
                        <p class="counts" data-testid="counts">{counts}</p>
                        <p class="settings">{settings_text(e)}</p>
                    </header>
                    if e.settings.requires_session {
                        <p class="sessions" data-testid="sessions">{sessions(e, sim.ns(), now)}</p>
                    }
                    {cards(store, &e.path, false)}
                    if e.kind != EntityKind::Topic {
                        <div class="dlq" aria-label={tf("dlq-of", &[("path", &e.path)])}>
                            <h4>{queue_path(&e.path, true)}{format!(" · {}", e.dlq.len())}</h4>
                            {cards(store, &e.path, true)}
                        </div>
                    }
                </article>
            }
        }) }
        </div>
    }
}

/// SES-02..05: a session entity's sessions: who holds each, until when, and its state. One
/// line of text (the first few sessions), so it costs the wasm little.
fn sessions(e: &Entity, ns: &sbp_engine::Namespace, now: Instant) -> String {
    const SHOWN: usize = 8;
    let mut line = t("sessions");
    for s in e.sessions.iter().take(SHOWN) {
        let held = match s.lock.filter(|l| l.locked_until > now) {
            Some(l) => tf(
                "session-held",
                &[
                    ("receiver", ns.receiver_name(l.holder)),
                    ("left", &countdown(now, l.locked_until)),
                ],
            ),
            None => t("session-free"),
        };
        line += &format!(" {} ({held}", s.id);
        if let Some(state) = &s.state {
            line += &tf("session-state-is", &[("state", &state.shown())]);
        }
        line += "),";
    }
    if line.ends_with(',') {
        line.pop();
    }
    if e.sessions.len() > SHOWN {
        line += &tf(
            "sessions-more",
            &[("more", &(e.sessions.len() - SHOWN).to_string())],
        );
    }
    line
}

/// One queue's cards (the entity's or its DLQ's).
fn cards(app: &crate::state::StateHandle, entity_path: &str, dlq: bool) -> Html {
    let sim = app.sim.borrow();
    let now = sim.now();
    let Some(e) = sim.ns().entity(entity_path) else {
        return html! {};
    };
    let store = e.store(dlq);
    let path = queue_path(entity_path, dlq);
    let fast = streaming(app);
    let shown_count = if fast { FAST_WINDOW } else { WINDOW };
    let shown: Vec<&Message> = store.messages.values().take(shown_count).collect();
    let more = store.messages.len().saturating_sub(shown_count);
    let reduced = crate::browser::reduced_motion();
    // Moves of the last moment (about 1.5 s of wall time at the current speed): a requeued card
    // flashes; a message that left (completed, received and deleted, dropped) fades out as a ghost.
    // Under streaming traffic the moves are too many to show one by one.
    let recent_span = if fast {
        0
    } else {
        (1_500.0 * f64::from(app.speed)) as i64
    };
    let queue = QueueRef { entity: e.id, dlq };
    let recent: Vec<&Event> = sim
        .ns()
        .log()
        .iter()
        .rev()
        .take(if fast { 0 } else { 500 })
        .take_while(|ev| ev.at >= now - recent_span)
        .filter(|ev| queue.entity == ev.entity && queue.dlq == ev.dlq)
        .collect();
    let requeued = |seq: u64| {
        recent
            .iter()
            .find(|ev| ev.seq == seq)
            .is_some_and(|ev| matches!(ev.kind, EventKind::Requeued { .. }))
    };
    // (key, label, what): a message by its SequenceNumber; a dropped duplicate (DUP-02), which
    // has none, by its MessageId.
    let mut newer_duplicates = 0;
    let gone: Vec<(String, String, String)> = recent
        .iter()
        .filter_map(|ev| {
            let what = match &ev.kind {
                EventKind::DuplicateDropped { message_id } => {
                    // Numbered from the first one dropped, so a ghost keeps its key.
                    newer_duplicates += 1;
                    let number = e.duplicates_dropped + 1 - newer_duplicates;
                    return Some((
                        format!("dup-{number}"),
                        message_id.clone(),
                        t("gone-duplicate"),
                    ));
                }
                EventKind::Completed { .. } => "gone-completed",
                EventKind::ReceivedAndDeleted { .. } => "gone-received",
                EventKind::ExpiredDropped => "gone-dropped",
                EventKind::LostInTransfer { .. } => "gone-lost",
                EventKind::DeadLettered { .. } if !dlq => "gone-dlq",
                _ => return None,
            };
            (ev.seq > 0 && !store.messages.contains_key(&ev.seq))
                .then(|| (format!("gone-{}", ev.seq), format!("#{}", ev.seq), t(what)))
        })
        .take(10)
        .collect();
    html! {
        <ol class={classes!("cards", reduced.then_some("reduced-motion"))}>
            { for shown.into_iter().map(|m| card(app, sim.ns(), (queue, &path), m, now, requeued(m.sequence_number), !fast)) }
            { for gone.into_iter().map(|(key, label, what)| html! {
                <li {key} class="card ghost" aria-hidden="true"><span class="seq">{label}</span>{format!(" {what}")}</li>
            }) }
            if more > 0 {
                <li class="more">{tf("more-messages", &[("more", &more.to_string()), ("shown", &shown_count.to_string())])}</li>
            }
        </ol>
    }
}

fn card(
    store: &crate::state::StateHandle,
    ns: &sbp_engine::Namespace,
    (q, path): (QueueRef, &str),
    m: &Message,
    now: Instant,
    requeued: bool,
    keyed: bool,
) -> Html {
    let seq = m.sequence_number;
    // What the card shows is the engine's: status, expiry, DeliveryCount, allowed settlements.
    let c = ns.card(q, m);
    let (state, class) = status_words(&c.status);
    // A property a prediction asks about is hidden until the learner answers.
    let masked = crate::lesson::masked(store);
    let live = store.live.is_some();
    let hidden = |property: &str| {
        masked
            .as_ref()
            .is_some_and(|m| m.hides(path, seq, property))
    };
    let select = {
        let store = store.clone();
        let path = path.to_string();
        Callback::from(move |_: MouseEvent| {
            store.dispatch(Action::Select(Some((path.clone(), seq))))
        })
    };
    let expiry = match c.expiry {
        _ if hidden("ExpiresAt") => tf("expires-in", &[("left", "?")]),
        CardExpiry::NeverInDeadLetterQueue => t("never-expires-dlq"),
        CardExpiry::Never => t("never-expires"),
        CardExpiry::Passed => t("expires-passed"),
        CardExpiry::At(at) => tf("expires-in", &[("left", &countdown(now, at))]),
    };
    let settle = |kind: SettleKind| {
        let store = store.clone();
        let path = path.to_string();
        let holder = m
            .lock
            .as_ref()
            .map(|l| ns.receiver_name(l.holder).to_string())
            .unwrap_or_default();
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            let def = SettleDef {
                from: path.clone(),
                seq,
                receiver: holder.clone(),
                reason: None,
                description: None,
                message: None,
            };
            let action = match kind {
                SettleKind::Complete => StepAction::Complete(def),
                SettleKind::Abandon => StepAction::Abandon(def),
                SettleKind::Defer => StepAction::Defer(def),
                SettleKind::RenewLock => StepAction::RenewLock(def),
                SettleKind::DeadLetter => StepAction::DeadLetter(SettleDef {
                    reason: Some("ManualDeadLetter".into()),
                    description: Some(t("dl-manual")),
                    ..def
                }),
            };
            store.dispatch(Action::Do(Box::new(Step::new(action))));
            // The keyboard stays where the reader was: on the card if it is still there, else
            // on its lane (not thrown back to the top of the page).
            let (lane, _) = split_queue_path(&path);
            crate::browser::focus_soon(vec![
                crate::browser::card_selector(lane, seq),
                crate::browser::lane_selector(lane),
            ]);
        })
    };
    let mut node = html! {
        <li class={classes!("card", class, requeued.then_some("requeued"))} data-seq={seq.to_string()} data-state={class}>
            <button class="card-body" onclick={select} title={tf("inspect", &[("seq", &seq.to_string()), ("id", &m.message_id)])}>
                <span class="seq">{format!("#{seq}")}</span>
                // Read as "#1 MessageId 1 Active...", not "#1 1 Active".
                <span class="mid"><span class="visually-hidden">{"MessageId "}</span>{m.message_id.clone()}</span>
                <span class="state">{state}</span>
                <span class="expiry">{expiry}</span>
                if let Some(until) = c.locked_until {
                    <span class="lock">{tf("lock-left", &[("left", &countdown(now, until))])}</span>
                }
                if let Some(at) = c.enqueues_at {
                    <span class="sched">{tf("enqueued-in", &[("left", &countdown(now, at))])}</span>
                }
                // Following an SDK's run, the count is said to be .NET's (MSG-02; the live
                // panel says what the Python and JavaScript SDKs show).
                <span class="dc">{if hidden("DeliveryCount") { "DeliveryCount ?".to_string() } else if live { format!("DeliveryCount {} (.NET)", c.delivery_count) } else { format!("DeliveryCount {}", c.delivery_count) }}</span>
                if let Some(id) = m.session_id() {
                    <span class="sid">{format!("SessionId {id}")}</span>
                }
                if let Some(reason) = &c.dead_letter_reason {
                    <span class="reason">{format!("DeadLetterReason: {}", if hidden("DeadLetterReason") { "?" } else { reason })}</span>
                }
            </button>
            if !c.settlements.is_empty() {
                <div class="settle" role="group" aria-label={tf("settle", &[("seq", &seq.to_string())])}>
                    { for c.settlements.iter().map(|&kind| html! {
                        <button onclick={settle(kind)} class={(kind == SettleKind::Complete).then_some("complete")}>{t(kind.key())}</button>
                    }) }
                </div>
            }
        </li>
    };
    if let (true, yew::virtual_dom::VNode::VTag(tag)) = (keyed, &mut node) {
        std::rc::Rc::make_mut(tag).key = Some(seq.into());
    }
    node
}
