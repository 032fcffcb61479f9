//! Every chain the cluster's log ever had. A chain's records and its head prove what the
//! chain holds, not that it exists: deleting a replica's chain — its head and all its rows —
//! would leave the others verifying clean. So chains are registered in order:
//!
//! - opening a chain takes the next `ordinal` (1, 2, 3, … under a transaction-scoped
//!   advisory lock) and a `link_mac = HMAC(key, "toolgate-audit-chain\n<ordinal>\n<chain>\n
//!   <chain of ordinal - 1, or ->")`: a chain deleted from the middle leaves a gap, and
//!   renumbering the rest breaks their links;
//! - every head a writer commits names `known`, the highest ordinal it saw in the same
//!   transaction, under the head's MAC: the newest chain deleted shows as a head that knew of
//!   more chains than are left.
//!
//! Chains opened before schema 12 have no ordinal; they are checked as before.

use std::collections::BTreeMap;

use super::key::AuditKey;
use super::pg::ChainHead;

/// `pg_advisory_xact_lock` key of chain registration (ASCII "tg-chain").
pub(crate) const LOCK_KEY: i64 = 0x7467_2d63_6861_696e;

/// The text a chain's registration MAC covers.
pub(crate) fn link_message(ordinal: u64, chain: &str, previous: Option<&str>) -> String {
    format!(
        "toolgate-audit-chain\n{ordinal}\n{chain}\n{}",
        previous.unwrap_or("-")
    )
}

/// What is wrong with the register of chains, as (chain, reason).
pub(crate) fn check(heads: &[ChainHead], key: Option<&AuditKey>) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let by_ordinal: BTreeMap<u64, &ChainHead> = heads
        .iter()
        .filter_map(|h| h.ordinal.map(|o| (o, h)))
        .collect();
    let newest = by_ordinal.keys().next_back().copied().unwrap_or(0);
    for ordinal in 1..=newest {
        let Some(head) = by_ordinal.get(&ordinal) else {
            let next = by_ordinal
                .range(ordinal..)
                .next()
                .map_or(String::new(), |(_, h)| h.chain.clone());
            problems.push((
                next,
                format!("the chain registered as number {ordinal} is gone (deleted)"),
            ));
            continue;
        };
        let Some(key) = key else {
            continue;
        };
        let previous = ordinal
            .checked_sub(1)
            .and_then(|p| by_ordinal.get(&p))
            .map(|h| h.chain.as_str());
        if ordinal > 1 && previous.is_none() {
            continue; // reported as a gap above
        }
        let message = link_message(ordinal, &head.chain, previous);
        let good = head
            .link_mac
            .as_deref()
            .is_some_and(|m| key.verify(message.as_bytes(), m));
        if !good {
            problems.push((
                head.chain.clone(),
                format!(
                    "the chain's registration (number {ordinal}) has a wrong MAC (renumbered, \
                     or registered without the key)"
                ),
            ));
        }
    }
    // A head's `known` is under its MAC: with the key, an edited one fails that check.
    if let Some(knew) = heads
        .iter()
        .filter_map(|h| h.known.map(|k| (k, h)))
        .max_by_key(|(k, _)| *k)
        && knew.0 > newest
    {
        problems.push((
            knew.1.chain.clone(),
            format!(
                "this chain's head knew of {} chains, but the newest left is number {newest} \
                 (chains deleted)",
                knew.0
            ),
        ));
    }
    problems
}
