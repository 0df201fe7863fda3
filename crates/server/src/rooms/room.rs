//! A workshop's rooms, without I/O: who joined, where each learner is in the lessons, the
//! spread of the room's answers to each prediction, and what the trainer did (moved everyone
//! to a lesson, revealed a spread). Time is passed in; keys are given by the caller (made from
//! the OS's randomness in [`super`]).
//!
//! What a learner's page sends is its chosen name once, then where it is: the lesson, the
//! part, whether the part's goal is reached, the hints shown and its answer to the part's
//! prediction. No scenario, step or address of the learner is kept or shown. The trainer sees
//! each learner's place and totals, and each prediction's answers only as counts; a learner
//! sees those counts once the trainer reveals them.
//!
//! Every input is bounded: the rooms at once, the learners of a room, a name's and an answer's
//! characters, a lesson id, a part's number, the parts a learner reports on.
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Rooms open at once on one server.
pub const MAX_ROOMS: usize = 16;
/// Learners in one room.
pub const MAX_LEARNERS: usize = 200;
/// A learner's chosen name, in characters.
pub const MAX_NAME_CHARS: usize = 40;
/// An answer to a prediction, in characters.
pub const MAX_ANSWER_CHARS: usize = 100;
/// A lesson's id, in bytes (`a-z`, `0-9`, `-`, `_`).
pub const MAX_LESSON_ID: usize = 64;
/// Parts of a lesson.
pub const MAX_PARTS: u32 = 100;
/// Hints a part shows, counted at most.
pub const MAX_HINTS: u32 = 100;
/// Parts one learner reports on, over every lesson (and predictions a trainer reveals).
pub const MAX_ENTRIES: usize = 256;
/// A room nobody has used for this long is closed, and its place freed.
pub const ROOM_IDLE: Duration = Duration::from_secs(12 * 60 * 60);

/// A part of a lesson: the lesson's id and the part's index (from 0).
pub type PartId = (String, u32);

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RoomError {
    #[error("there is no room {0} on this server (a room closes after 12 hours unused, and when the server stops)")]
    NoRoom(String),
    #[error("this key is not {0}")]
    WrongKey(&'static str),
    #[error("at most {MAX_ROOMS} rooms are open at once on one server")]
    TooManyRooms,
    #[error("at most {MAX_LEARNERS} learners join one room")]
    RoomFull,
    #[error("{0} is already in this room: choose another name")]
    NameTaken(String),
    #[error("{0}")]
    Invalid(String),
    #[error(
        "a change to a room carries the header {}: 1",
        crate::live::CLOCK_HEADER
    )]
    Unsigned,
    #[error("no randomness for a key: {0}")]
    NoRandomness(String),
}

impl RoomError {
    /// The HTTP status that says it.
    pub fn status(&self) -> u16 {
        match self {
            RoomError::NoRoom(_) => 404,
            RoomError::WrongKey(_) | RoomError::Unsigned => 403,
            RoomError::NoRandomness(_) => 500,
            RoomError::TooManyRooms => 503,
            RoomError::RoomFull | RoomError::NameTaken(_) => 409,
            RoomError::Invalid(_) => 400,
        }
    }
}

/// What a learner's page reports: where it is now.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub lesson: String,
    /// The part shown (from 0) and the lesson's number of parts.
    pub part: u32,
    pub of: u32,
    /// Whether the part's goal is reached (a part without a goal reports false).
    #[serde(default)]
    pub reached: bool,
    /// Hints shown in this part.
    #[serde(default)]
    pub hints: u32,
    /// The learner's answer to this part's prediction, once given.
    #[serde(default)]
    pub answer: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Entry {
    reached: bool,
    hints: u32,
    answer: Option<String>,
}

struct Learner {
    name: String,
    /// The lesson, part and number of parts last reported.
    at: Option<(String, u32, u32)>,
    entries: BTreeMap<PartId, Entry>,
}

struct Room {
    trainer_key: String,
    learners: Vec<Learner>,
    by_key: HashMap<String, usize>,
    /// Where the trainer moved everyone, and how many moves so far (a page starts the lesson
    /// when the count passes the one it last followed).
    lesson: Option<String>,
    moves: u64,
    revealed: BTreeSet<PartId>,
    used: Instant,
    /// Bumped by every change the trainer's view shows, and by those the learners' view shows.
    trainer_version: u64,
    learner_version: u64,
}

/// A prediction's answers in the room, as counts: most given first, then by text.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Spread {
    pub lesson: String,
    pub part: u32,
    pub answers: Vec<(String, usize)>,
    pub revealed: bool,
}

/// One learner as the trainer sees them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LearnerView {
    pub name: String,
    pub lesson: Option<String>,
    /// The part shown, from 1, and the lesson's number of parts.
    pub part: Option<u32>,
    pub of: Option<u32>,
    /// Goals reached and hints shown, over every lesson.
    pub goals: usize,
    pub hints: u32,
}

/// What the trainer's page shows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TrainerView {
    pub lesson: Option<String>,
    pub learners: Vec<LearnerView>,
    pub predictions: Vec<Spread>,
}

/// What a learner's page is told: their name, where the trainer moved everyone, and the
/// spreads revealed (never one the trainer has not revealed).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LearnerFeed {
    pub name: String,
    pub lesson: Option<String>,
    pub moves: u64,
    pub revealed: Vec<Spread>,
}

/// Every room on the server.
#[derive(Default)]
pub struct Rooms {
    rooms: BTreeMap<String, Room>,
}

/// A lesson id as the track names them.
fn check_lesson(id: &str) -> Result<(), RoomError> {
    if id.is_empty()
        || id.len() > MAX_LESSON_ID
        || !id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        return Err(RoomError::Invalid(format!(
            "a lesson is named by its id: 1 to {MAX_LESSON_ID} of a-z, 0-9, - and _"
        )));
    }
    Ok(())
}

/// A text a person typed: trimmed, 1 to `max` characters, no control characters.
fn typed(text: &str, what: &str, max: usize) -> Result<String, RoomError> {
    let text = text.trim();
    let chars = text.chars().count();
    if chars == 0 || chars > max || text.chars().any(char::is_control) {
        return Err(RoomError::Invalid(format!(
            "{what}: 1 to {max} characters, no control characters"
        )));
    }
    Ok(text.to_string())
}

impl Room {
    /// The learner whose key this is.
    fn learner_index(&self, key: &str) -> Result<usize, RoomError> {
        self.by_key
            .get(key)
            .copied()
            .ok_or(RoomError::WrongKey("a learner's of this room"))
    }

    /// Refuses a key that is not the trainer's.
    fn trainer(&self, key: &str) -> Result<(), RoomError> {
        crate::http::same_token(key, &self.trainer_key)
            .then_some(())
            .ok_or(RoomError::WrongKey("this room's trainer's"))
    }

    /// Each answered part's spread; `only_revealed` leaves out what the trainer kept hidden.
    fn spreads(&self, only_revealed: bool) -> Vec<Spread> {
        let mut counts: BTreeMap<&PartId, BTreeMap<&str, usize>> = BTreeMap::new();
        for learner in &self.learners {
            for (part, entry) in &learner.entries {
                if only_revealed && !self.revealed.contains(part) {
                    continue;
                }
                if let Some(answer) = &entry.answer {
                    *counts.entry(part).or_default().entry(answer).or_default() += 1;
                }
            }
        }
        counts
            .into_iter()
            .map(|(id, answers)| {
                let mut answers: Vec<(String, usize)> = answers
                    .into_iter()
                    .map(|(text, n)| (text.to_string(), n))
                    .collect();
                answers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                Spread {
                    lesson: id.0.clone(),
                    part: id.1,
                    answers,
                    revealed: self.revealed.contains(id),
                }
            })
            .collect()
    }
}

impl Rooms {
    /// Closes the rooms unused for [`ROOM_IDLE`].
    fn close_idle(&mut self, now: Instant) {
        self.rooms
            .retain(|_, room| now.saturating_duration_since(room.used) < ROOM_IDLE);
    }

    fn room_mut(&mut self, id: &str, now: Instant) -> Result<&mut Room, RoomError> {
        self.close_idle(now);
        let room = self
            .rooms
            .get_mut(id)
            .ok_or_else(|| RoomError::NoRoom(shown_id(id)))?;
        room.used = now;
        Ok(room)
    }

    fn room(&self, id: &str) -> Result<&Room, RoomError> {
        self.rooms
            .get(id)
            .ok_or_else(|| RoomError::NoRoom(shown_id(id)))
    }

    fn trainers_room_mut(
        &mut self,
        id: &str,
        key: &str,
        now: Instant,
    ) -> Result<&mut Room, RoomError> {
        let room = self.room_mut(id, now)?;
        room.trainer(key)?;
        Ok(room)
    }

    /// Opens room `id` with its trainer's key.
    pub fn open(&mut self, id: String, trainer_key: String, now: Instant) -> Result<(), RoomError> {
        self.close_idle(now);
        if self.rooms.len() >= MAX_ROOMS {
            return Err(RoomError::TooManyRooms);
        }
        self.rooms.insert(
            id,
            Room {
                trainer_key,
                learners: Vec::new(),
                by_key: HashMap::new(),
                lesson: None,
                moves: 0,
                revealed: BTreeSet::new(),
                used: now,
                trainer_version: 0,
                learner_version: 0,
            },
        );
        Ok(())
    }

    /// Closes room `id` (its trainer asks).
    pub fn close(&mut self, id: &str, key: &str, now: Instant) -> Result<(), RoomError> {
        self.trainers_room_mut(id, key, now)?;
        self.rooms.remove(id);
        Ok(())
    }

    /// `name` joins room `id` as the learner with `key`; gives the name as kept (trimmed).
    pub fn join(
        &mut self,
        id: &str,
        name: &str,
        key: String,
        now: Instant,
    ) -> Result<String, RoomError> {
        let name = typed(name, "a name", MAX_NAME_CHARS)?;
        let room = self.room_mut(id, now)?;
        if room.learners.len() >= MAX_LEARNERS {
            return Err(RoomError::RoomFull);
        }
        if room
            .learners
            .iter()
            .any(|l| l.name.to_lowercase() == name.to_lowercase())
        {
            return Err(RoomError::NameTaken(name));
        }
        room.by_key.insert(key, room.learners.len());
        room.learners.push(Learner {
            name: name.clone(),
            at: None,
            entries: BTreeMap::new(),
        });
        room.trainer_version += 1;
        Ok(name)
    }

    /// A learner's report of where they are.
    pub fn report(
        &mut self,
        id: &str,
        key: &str,
        report: Report,
        now: Instant,
    ) -> Result<(), RoomError> {
        check_lesson(&report.lesson)?;
        if report.of == 0 || report.of > MAX_PARTS || report.part >= report.of {
            return Err(RoomError::Invalid(format!(
                "a lesson has 1 to {MAX_PARTS} parts, and the part shown is one of them"
            )));
        }
        if report.hints > MAX_HINTS {
            return Err(RoomError::Invalid(format!(
                "a part shows at most {MAX_HINTS} hints"
            )));
        }
        let answer = report
            .answer
            .as_deref()
            .map(|a| typed(a, "an answer", MAX_ANSWER_CHARS))
            .transpose()?;
        let room = self.room_mut(id, now)?;
        let part = (report.lesson.clone(), report.part);
        let revealed = room.revealed.contains(&part);
        let index = room.learner_index(key)?;
        let learner = &mut room.learners[index];
        if !learner.entries.contains_key(&part) && learner.entries.len() >= MAX_ENTRIES {
            return Err(RoomError::Invalid(format!(
                "a learner reports on at most {MAX_ENTRIES} parts"
            )));
        }
        let entry = learner.entries.entry(part).or_default();
        let answer_changed = answer.is_some() && entry.answer != answer;
        entry.reached |= report.reached;
        entry.hints = entry.hints.max(report.hints);
        if answer.is_some() {
            entry.answer = answer;
        }
        learner.at = Some((report.lesson, report.part, report.of));
        room.trainer_version += 1;
        if answer_changed && revealed {
            room.learner_version += 1;
        }
        Ok(())
    }

    /// The trainer moves everyone to `lesson`.
    pub fn move_to(
        &mut self,
        id: &str,
        key: &str,
        lesson: &str,
        now: Instant,
    ) -> Result<(), RoomError> {
        check_lesson(lesson)?;
        let room = self.trainers_room_mut(id, key, now)?;
        room.lesson = Some(lesson.to_string());
        room.moves += 1;
        room.trainer_version += 1;
        room.learner_version += 1;
        Ok(())
    }

    /// The trainer shows the learners the spread of a prediction's answers.
    pub fn reveal(
        &mut self,
        id: &str,
        key: &str,
        lesson: &str,
        part: u32,
        now: Instant,
    ) -> Result<(), RoomError> {
        check_lesson(lesson)?;
        if part >= MAX_PARTS {
            return Err(RoomError::Invalid(format!(
                "a lesson has at most {MAX_PARTS} parts"
            )));
        }
        let room = self.trainers_room_mut(id, key, now)?;
        let part = (lesson.to_string(), part);
        if !room.revealed.contains(&part) && room.revealed.len() >= MAX_ENTRIES {
            return Err(RoomError::Invalid(format!(
                "a room reveals at most {MAX_ENTRIES} predictions"
            )));
        }
        room.revealed.insert(part);
        room.trainer_version += 1;
        room.learner_version += 1;
        Ok(())
    }

    /// What the trainer's page shows, and its version.
    pub fn trainer_view(&self, id: &str, key: &str) -> Result<(TrainerView, u64), RoomError> {
        let room = self.room(id)?;
        room.trainer(key)?;
        let learners = room
            .learners
            .iter()
            .map(|l| LearnerView {
                name: l.name.clone(),
                lesson: l.at.as_ref().map(|(lesson, _, _)| lesson.clone()),
                part: l.at.as_ref().map(|(_, part, _)| part + 1),
                of: l.at.as_ref().map(|(_, _, of)| *of),
                goals: l.entries.values().filter(|e| e.reached).count(),
                hints: l.entries.values().map(|e| e.hints).sum(),
            })
            .collect();
        Ok((
            TrainerView {
                lesson: room.lesson.clone(),
                learners,
                predictions: room.spreads(false),
            },
            room.trainer_version,
        ))
    }

    /// What a learner's page is told, and its version.
    pub fn learner_feed(&self, id: &str, key: &str) -> Result<(LearnerFeed, u64), RoomError> {
        let room = self.room(id)?;
        let learner = &room.learners[room.learner_index(key)?];
        Ok((
            LearnerFeed {
                name: learner.name.clone(),
                lesson: room.lesson.clone(),
                moves: room.moves,
                revealed: room.spreads(true),
            },
            room.learner_version,
        ))
    }

    /// The version of what the trainer's page or a learner's page shows (None: the room is
    /// gone), read without building the view.
    pub fn version(&self, id: &str, trainer: bool) -> Option<u64> {
        self.rooms.get(id).map(|room| {
            if trainer {
                room.trainer_version
            } else {
                room.learner_version
            }
        })
    }

    pub fn len(&self) -> usize {
        self.rooms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rooms.is_empty()
    }
}

/// A room id as an error names it (what prints, at most 32 characters).
fn shown_id(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lesson: &str, part: u32, answer: Option<&str>) -> Report {
        Report {
            lesson: lesson.into(),
            part,
            of: 5,
            reached: false,
            hints: 0,
            answer: answer.map(String::from),
        }
    }

    fn room_with(names: &[&str]) -> (Rooms, Instant) {
        let now = Instant::now();
        let mut rooms = Rooms::default();
        rooms.open("r1".into(), "tk".into(), now).unwrap();
        for (i, name) in names.iter().enumerate() {
            rooms.join("r1", name, format!("k{i}"), now).unwrap();
        }
        (rooms, now)
    }

    #[test]
    fn the_trainer_sees_places_and_counts_and_the_learners_only_what_is_revealed() {
        let (mut rooms, now) = room_with(&["Ann", "Bo", "Cy"]);
        rooms
            .report("r1", "k0", report("lazy-expiry", 1, Some("never")), now)
            .unwrap();
        rooms
            .report("r1", "k1", report("lazy-expiry", 1, Some("never")), now)
            .unwrap();
        rooms
            .report("r1", "k2", report("lazy-expiry", 1, Some("40s")), now)
            .unwrap();
        let goal = Report {
            reached: true,
            hints: 2,
            ..report("lazy-expiry", 2, None)
        };
        rooms.report("r1", "k0", goal, now).unwrap();

        let (view, _) = rooms.trainer_view("r1", "tk").unwrap();
        assert_eq!(view.learners[0].part, Some(3));
        assert_eq!((view.learners[0].goals, view.learners[0].hints), (1, 2));
        assert_eq!(
            view.predictions[0].answers,
            vec![("never".to_string(), 2), ("40s".to_string(), 1)]
        );
        assert!(!view.predictions[0].revealed);
        // Hidden from the learners until the trainer reveals it.
        let (feed, before) = rooms.learner_feed("r1", "k2").unwrap();
        assert!(feed.revealed.is_empty());
        rooms.reveal("r1", "tk", "lazy-expiry", 1, now).unwrap();
        let (feed, after) = rooms.learner_feed("r1", "k2").unwrap();
        assert!(after > before);
        assert_eq!(feed.revealed[0].answers.len(), 2);
        assert_eq!(feed.name, "Cy");
    }

    #[test]
    fn only_the_trainer_moves_and_reveals_and_only_a_learner_reports() {
        let (mut rooms, now) = room_with(&["Ann"]);
        assert_eq!(
            rooms.move_to("r1", "k0", "sessions", now),
            Err(RoomError::WrongKey("this room's trainer's"))
        );
        assert!(rooms.reveal("r1", "tx", "sessions", 0, now).is_err());
        assert!(rooms
            .report("r1", "tk", report("sessions", 0, None), now)
            .is_err());
        assert!(rooms.trainer_view("r1", "k0").is_err());
        assert!(rooms.learner_feed("r1", "tk").is_err());
        rooms.move_to("r1", "tk", "sessions", now).unwrap();
        let (feed, _) = rooms.learner_feed("r1", "k0").unwrap();
        assert_eq!((feed.lesson.as_deref(), feed.moves), (Some("sessions"), 1));
    }

    #[test]
    fn every_input_is_bounded_and_a_refusal_changes_nothing() {
        let (mut rooms, now) = room_with(&["Ann"]);
        let before = rooms.trainer_view("r1", "tk").unwrap();
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        for bad in ["", "  ", "a\u{7}b", long.as_str()] {
            let e = rooms.join("r1", bad, "k9".into(), now).unwrap_err();
            assert!(e.to_string().contains("1 to 40 characters"), "{e}");
        }
        assert_eq!(
            rooms.join("r1", " ann ", "k9".into(), now),
            Err(RoomError::NameTaken("ann".into()))
        );
        for bad in [
            Report {
                of: 0,
                ..report("a", 0, None)
            },
            Report {
                part: 5,
                ..report("a", 0, None)
            },
            Report {
                of: MAX_PARTS + 1,
                ..report("a", 0, None)
            },
            Report {
                hints: MAX_HINTS + 1,
                ..report("a", 0, None)
            },
            report("A<b>", 0, None),
            report(&"a".repeat(MAX_LESSON_ID + 1), 0, None),
            report("a", 0, Some(&"y".repeat(MAX_ANSWER_CHARS + 1))),
        ] {
            let e = rooms.report("r1", "k0", bad, now).unwrap_err();
            assert_eq!(e.status(), 400, "{e}");
        }
        assert_eq!(rooms.trainer_view("r1", "tk").unwrap(), before);
        for part in 0..MAX_ENTRIES as u32 {
            let lesson = format!("l{}", part / 4);
            let r = Report {
                of: 4,
                ..report(&lesson, part % 4, None)
            };
            rooms.report("r1", "k0", r, now).unwrap();
        }
        let e = rooms
            .report("r1", "k0", report("more", 0, None), now)
            .unwrap_err();
        assert!(e.to_string().contains("at most 256 parts"));
        // The room's and the server's bounds.
        for i in 1..MAX_LEARNERS {
            rooms
                .join("r1", &format!("n{i}"), format!("x{i}"), now)
                .unwrap();
        }
        assert_eq!(
            rooms.join("r1", "last", "y".into(), now),
            Err(RoomError::RoomFull)
        );
        for i in 1..MAX_ROOMS {
            rooms.open(format!("r{}", i + 1), "t".into(), now).unwrap();
        }
        assert_eq!(
            rooms.open("r99".into(), "t".into(), now),
            Err(RoomError::TooManyRooms)
        );
        // An unused room closes, and frees its place.
        let later = now + ROOM_IDLE;
        rooms.open("r99".into(), "t".into(), later).unwrap();
        assert_eq!(rooms.len(), 1);
    }
}
