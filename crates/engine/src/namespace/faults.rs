use super::*;

impl Namespace {
    /// Faults: RCV-10 (service/OS update: every lock lost), RCV-08 (a receiver's connection drops),
    /// SEND-04 (server busy for a while).
    pub fn fault(&mut self, fault: Fault) -> Result<()> {
        match fault {
            Fault::ServiceUpdate | Fault::OsUpdate => {
                let cause = if fault == Fault::ServiceUpdate {
                    LockLossCause::ServiceUpdate
                } else {
                    LockLossCause::OsUpdate
                };
                self.fault_event(text::Text::new(cause.key()), Rule::Rcv10);
                let locked: Vec<(QueueRef, u64)> = self
                    .entities
                    .iter()
                    .flatten()
                    .flat_map(|e| {
                        [false, true].into_iter().flat_map(move |dlq| {
                            e.store(dlq)
                                .locked_seqs()
                                .into_iter()
                                .map(move |s| (QueueRef { entity: e.id, dlq }, s))
                        })
                    })
                    .collect();
                for (q, seq) in locked {
                    self.lose_lock(q, seq, cause);
                }
                self.lose_sessions(None, None);
            }
            Fault::Disconnect { receiver } => {
                let Some(&r) = self.receiver_ids.get(&receiver) else {
                    return Err(BrokerError::new(
                        ErrorKind::InvalidOperation,
                        text!("e-no-receiver", name = &receiver),
                    ));
                };
                self.fault_event(
                    text!("ev-fault-disconnect", receiver = &receiver),
                    Rule::Rcv08,
                );
                let held: Vec<(QueueRef, u64)> = self.receivers[r as usize]
                    .handles
                    .iter()
                    .filter_map(|(&(q, seq), h)| match h {
                        Handle::Locked(token) => self
                            .lock_of(q, seq)
                            .filter(|l| l.token == *token)
                            .map(|_| (q, seq)),
                        _ => None,
                    })
                    .collect();
                for (q, seq) in held {
                    self.lose_lock(q, seq, LockLossCause::ReceiverDisconnected);
                }
                self.lose_sessions(None, Some(r));
                let attached: Vec<QueueRef> = self.receivers[r as usize]
                    .attached
                    .iter()
                    .copied()
                    .collect();
                for q in attached {
                    self.detach(r, q);
                }
            }
            Fault::ServerBusy { duration } if duration < 0 => {
                return Err(BrokerError::new(
                    ErrorKind::ArgumentOutOfRange,
                    text!("e-busy-negative", duration = format_duration(duration)),
                ));
            }
            Fault::ServerBusy { duration } => {
                self.server_busy_until = after(self.now, duration);
                self.fault_event(
                    text!("ev-fault-server-busy", duration = format_duration(duration)),
                    Rule::Send04,
                );
            }
        }
        Ok(())
    }

    /// A fault happened (not about one entity).
    fn fault_event(&mut self, what: text::Text, rule: Rule) {
        self.record(Event {
            at: self.now,
            entity: u32::MAX,
            dlq: false,
            seq: 0,
            kind: EventKind::Fault { what },
            rule: Some(rule),
        });
    }
}
