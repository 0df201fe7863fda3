//! The namespace as a graph, for the map: its places (senders, queues, topics, subscriptions,
//! their dead-letter queues, consumers) and the edges between them, and which edge each logged
//! event moves a message along. The broker's relations (fan-out, ForwardTo, dead-lettering, who
//! holds a receiver) are decided here, so the map only draws them.
use crate::entity::{Entity, EntityKind, QueueRef};
use crate::event::{Event, EventKind};
use crate::namespace::Namespace;
use crate::rules::Rule;

/// A place on the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// Sends made by the user's own calls (no producer).
    Client,
    /// A producer, by its index among the namespace's producers.
    Producer(u32),
    /// A queue, topic or subscription (`dlq: false`) or its dead-letter queue.
    Queue(QueueRef),
    /// A consumer group, by its index among the namespace's consumer groups.
    Consumers(u32),
    /// A receiver of the user's own calls, by its id.
    Receiver(u32),
}

/// How a message moves along an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Movement {
    /// Sent or scheduled into a queue or topic.
    Send,
    /// TOP-01: a topic's copy into a subscription.
    FanOut,
    /// FWD-01/03: auto-forwarded.
    Forward,
    /// Moved into the dead-letter queue.
    DeadLetter,
    /// Locked, received and deleted, or peeked by a receiver.
    Receive,
    /// Completed, abandoned or deferred by the receiver that holds it.
    Settle,
    /// Gone from its queue without moving (expired and dropped).
    Vanish,
}

/// One message moving along an edge (`from` = `to` for [`Movement::Vanish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub from: Place,
    pub to: Place,
    pub movement: Movement,
}

/// A standing edge of the map: who sends where, fan-out with its filter, forwards, the DLQ
/// branch, who receives from where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: Place,
    pub to: Place,
    pub movement: Movement,
    /// The filter of a fan-out edge, ForwardTo or ForwardDeadLetteredMessagesTo, in words.
    pub label: String,
}

/// What a place is, for the map's layout and labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceView {
    pub place: Place,
    pub label: String,
    /// The entity path of a queue place (what its lane shows), or the actor's queue.
    pub path: String,
    pub kind: PlaceKind,
    /// Stored messages (queues), else 0.
    pub depth: usize,
    pub active: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceKind {
    Client,
    Producer,
    Queue,
    Topic,
    Subscription,
    DeadLetterQueue,
    Consumers,
    Receiver,
}

/// The map's places and edges, in a stable order (creation order of entities and actors), and
/// what it needs to place the events of the log on its edges.
#[derive(Clone, Debug, Default)]
pub struct MapView {
    pub places: Vec<PlaceView>,
    pub edges: Vec<Edge>,
    /// (receiver, its consumer group), (entity, the first producer sending to it), (subscription,
    /// its topic): few, so lists.
    receiver_group: Vec<(u32, u32)>,
    producer_of: Vec<(u32, u32)>,
    topic_of: Vec<(u32, u32)>,
}

/// A value by key in a list sorted by key (the map sorts its lists once built; `flow` runs
/// for every logged event).
fn lookup(list: &[(u32, u32)], key: u32) -> Option<u32> {
    list.binary_search_by_key(&key, |(k, _)| *k)
        .ok()
        .map(|i| list[i].1)
}

/// Adds (key, value) to a list sorted by key unless the key is there (the first stays). Keys
/// mostly come in order, so this appends.
fn insert_sorted(list: &mut Vec<(u32, u32)>, key: u32, value: u32) {
    if let Err(i) = list.binary_search_by_key(&key, |(k, _)| *k) {
        list.insert(i, (key, value));
    }
}

impl MapView {
    /// The edge an event moves a message along, if it moves one.
    pub fn flow(&self, e: &Event) -> Option<Flow> {
        let here = Place::Queue(QueueRef {
            entity: e.entity,
            dlq: e.dlq,
        });
        let holder =
            |r: u32| lookup(&self.receiver_group, r).map_or(Place::Receiver(r), Place::Consumers);
        let (from, to, movement) = match &e.kind {
            // A topic's copy (TOP-01), changed by its rule's action or not (FLT-04).
            EventKind::Sent { .. } if matches!(e.rule, Some(Rule::Top01 | Rule::Flt04)) => (
                Place::Queue(QueueRef {
                    entity: lookup(&self.topic_of, e.entity)?,
                    dlq: false,
                }),
                here,
                Movement::FanOut,
            ),
            EventKind::Sent { .. } | EventKind::Scheduled { .. } => (
                lookup(&self.producer_of, e.entity).map_or(Place::Client, Place::Producer),
                here,
                Movement::Send,
            ),
            EventKind::Forwarded { to, .. } => (
                here,
                Place::Queue(QueueRef {
                    entity: *to,
                    dlq: false,
                }),
                Movement::Forward,
            ),
            EventKind::DeadLettered { .. } => (
                Place::Queue(QueueRef {
                    entity: e.entity,
                    dlq: false,
                }),
                Place::Queue(QueueRef {
                    entity: e.entity,
                    dlq: true,
                }),
                Movement::DeadLetter,
            ),
            EventKind::Locked { receiver, .. }
            | EventKind::ReceivedAndDeleted { receiver }
            | EventKind::Peeked { receiver, .. } => (here, holder(*receiver), Movement::Receive),
            EventKind::Completed { receiver, .. }
            | EventKind::Abandoned { receiver }
            | EventKind::Released { receiver }
            | EventKind::Deferred { receiver } => (holder(*receiver), here, Movement::Settle),
            EventKind::ExpiredDropped | EventKind::DuplicateDropped { .. } => {
                (here, here, Movement::Vanish)
            }
            _ => return None,
        };
        Some(Flow { from, to, movement })
    }
}

impl Namespace {
    /// The namespace as a map: places and standing edges.
    pub fn map(&self) -> MapView {
        let mut map = MapView::default();
        // In creation order (ids), so that a new entity comes last and nothing else moves.
        let entities: Vec<&Entity> = self.entities_by_id().collect();
        // Entities a forward feeds (by id), found with the forward edges below.
        let mut forwarded_to = vec![false; entities.last().map_or(0, |e| e.id as usize + 1)];
        // The first producer of an entity stands for all of them.
        for (i, p) in self.producers().iter().enumerate() {
            insert_sorted(&mut map.producer_of, p.queue.entity, i as u32);
        }
        for (i, c) in self.consumer_groups().iter().enumerate() {
            for &r in &c.receivers {
                insert_sorted(&mut map.receiver_group, r, i as u32);
            }
        }
        for e in &entities {
            let main = Place::Queue(QueueRef {
                entity: e.id,
                dlq: false,
            });
            let kind = match e.kind {
                EntityKind::Queue => PlaceKind::Queue,
                EntityKind::Topic => PlaceKind::Topic,
                EntityKind::Subscription { topic } => {
                    // Pushed in id order: sorted, as `lookup` needs.
                    map.topic_of.push((e.id, topic));
                    map.edges.push(Edge {
                        from: Place::Queue(QueueRef {
                            entity: topic,
                            dlq: false,
                        }),
                        to: main,
                        movement: Movement::FanOut,
                        label: e.rules_text(),
                    });
                    PlaceKind::Subscription
                }
            };
            // A subscription is named within its topic (the edge from the topic says which).
            let label = match e.kind {
                EntityKind::Subscription { .. } => e.path.rsplit('/').next().unwrap_or(&e.path),
                _ => &e.path,
            };
            map.places.push(PlaceView {
                place: main,
                label: label.to_string(),
                path: e.path.clone(),
                kind,
                depth: e.main.len(),
                active: true,
            });
            if kind != PlaceKind::Topic {
                let dlq = Place::Queue(QueueRef {
                    entity: e.id,
                    dlq: true,
                });
                map.places.push(PlaceView {
                    place: dlq,
                    label: "$deadletterqueue".into(),
                    path: e.path.clone(),
                    kind: PlaceKind::DeadLetterQueue,
                    depth: e.dlq.len(),
                    active: true,
                });
                map.edges.push(Edge {
                    from: main,
                    to: dlq,
                    movement: Movement::DeadLetter,
                    label: String::new(),
                });
            }
            for (target, dlq, what) in [
                (&e.settings.forward_to, false, "ForwardTo"),
                (
                    &e.settings.forward_dead_lettered_messages_to,
                    true,
                    "ForwardDeadLetteredMessagesTo",
                ),
            ] {
                let Some(to) = target.as_deref().and_then(|t| self.entity(t)) else {
                    continue;
                };
                if let Some(fed) = forwarded_to.get_mut(to.id as usize) {
                    *fed = true;
                }
                map.edges.push(Edge {
                    from: Place::Queue(QueueRef { entity: e.id, dlq }),
                    to: Place::Queue(QueueRef {
                        entity: to.id,
                        dlq: false,
                    }),
                    movement: Movement::Forward,
                    label: what.into(),
                });
            }
        }
        // The user's own sends go to queues and topics that no producer and no forward feeds.
        let clientless: Vec<u32> = entities
            .iter()
            .filter(|e| !matches!(e.kind, EntityKind::Subscription { .. }))
            .filter(|e| lookup(&map.producer_of, e.id).is_none() && !forwarded_to[e.id as usize])
            .map(|e| e.id)
            .collect();
        if !clientless.is_empty() {
            map.places.insert(
                0,
                PlaceView {
                    place: Place::Client,
                    label: "your sends".into(),
                    path: String::new(),
                    kind: PlaceKind::Client,
                    depth: 0,
                    active: true,
                },
            );
        }
        for (i, p) in self.producers().iter().enumerate() {
            let place = Place::Producer(i as u32);
            map.places.push(PlaceView {
                place,
                label: p.spec.name.clone(),
                path: p.spec.to.clone(),
                kind: PlaceKind::Producer,
                depth: 0,
                active: p.active,
            });
            map.edges.push(Edge {
                from: place,
                to: Place::Queue(p.queue),
                movement: Movement::Send,
                label: String::new(),
            });
        }
        for (i, c) in self.consumer_groups().iter().enumerate() {
            let place = Place::Consumers(i as u32);
            map.places.push(PlaceView {
                place,
                label: format!("{} x{}", c.spec.name, c.spec.instances),
                path: c.spec.from.clone(),
                kind: PlaceKind::Consumers,
                depth: c.busy.iter().filter(|b| b.is_some()).count(),
                active: c.active,
            });
            map.edges.push(Edge {
                from: Place::Queue(c.queue),
                to: place,
                movement: Movement::Receive,
                label: String::new(),
            });
        }
        for (id, r) in self.receivers().iter().enumerate() {
            let id = id as u32;
            if lookup(&map.receiver_group, id).is_some() {
                continue;
            }
            let place = Place::Receiver(id);
            map.places.push(PlaceView {
                place,
                label: r.name.clone(),
                path: String::new(),
                kind: PlaceKind::Receiver,
                // What it holds now: a lock that lapsed (or was settled, or taken by another
                // receiver) is no longer held, though the receiver keeps its handle (RCV-08).
                depth: r
                    .handles
                    .iter()
                    .filter(|((q, seq), h)| {
                        matches!(h, crate::namespace::Handle::Locked(token)
                            if self.lock_of(*q, *seq).is_some_and(|l| l.token == *token))
                    })
                    .count(),
                active: true,
            });
            for &q in &r.attached {
                map.edges.push(Edge {
                    from: Place::Queue(q),
                    to: place,
                    movement: Movement::Receive,
                    label: String::new(),
                });
            }
        }
        for entity in clientless {
            map.edges.push(Edge {
                from: Place::Client,
                to: Place::Queue(QueueRef { entity, dlq: false }),
                movement: Movement::Send,
                label: String::new(),
            });
        }
        map
    }
}
