//! Tool RAG over the live catalog: [`CatalogSearch`], the catalog's tools searched for one
//! role at a time through that role's [`FilterChain`], the index refreshed whenever the
//! catalog's snapshot changed. `search_tools` ([`crate::meta`]), `toolgate tools search` and
//! the agent loop's retrieval selector (`toolgate_app::rag::RetrievalSelector`) search
//! through it.

use std::sync::{Arc, Mutex};

use toolgate_gateway::govern::READ_RESULT;
use toolgate_gateway::policy::{RolePolicy, Roles};
use toolgate_protocol::ToolSpec;
use toolgate_registry::{Catalog, Snapshot};

use crate::error::RagError;
use crate::filter::FilterChain;
use crate::index::Mode;
use crate::meta::SEARCH_TOOLS;
use crate::service::ToolSearch;

/// Whether `name` is one of toolgate's own meta tools (`search_tools`, `read_result`), which
/// are never retrieved and do not count towards the threshold.
pub fn is_meta_tool(name: &str) -> bool {
    name == SEARCH_TOOLS || name == READ_RESULT
}

/// One tool a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub spec: ToolSpec,
    pub score: f32,
}

/// A [`ToolSearch`] over a live catalog: refreshed whenever the catalog's snapshot changed,
/// searched through one role's filter chain at a time.
pub struct CatalogSearch {
    search: Arc<ToolSearch>,
    catalog: Arc<Catalog>,
    roles: Arc<Roles>,
    mode: Mode,
    /// The snapshot the index was last refreshed from.
    seen: Mutex<Option<Arc<Snapshot>>>,
}

impl CatalogSearch {
    /// Without an embedder every mode is BM25 (a dense search would fail every time).
    pub fn new(
        search: Arc<ToolSearch>,
        catalog: Arc<Catalog>,
        roles: Arc<Roles>,
        mode: Mode,
    ) -> Self {
        let mode = if search.has_embedder() {
            mode
        } else {
            Mode::Bm25
        };
        CatalogSearch {
            search,
            catalog,
            roles,
            mode,
            seen: Mutex::new(None),
        }
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many tools `role` sees without retrieval: available, allowed by the role, meta
    /// tools not counted. This is what `[rag] threshold` is compared with.
    pub fn visible_count(&self, role: &str) -> usize {
        let Some(policy) = self.roles.get(role) else {
            return 0;
        };
        self.catalog
            .snapshot()
            .entries()
            .filter(|e| e.is_available() && policy.allows(&e.spec().name))
            .filter(|e| !is_meta_tool(&e.spec().name))
            .count()
    }

    async fn refresh(&self, snap: &Arc<Snapshot>) -> Result<(), RagError> {
        let stale = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            !seen.as_ref().is_some_and(|s| Arc::ptr_eq(s, snap))
        };
        if stale {
            let specs: Vec<ToolSpec> = snap
                .entries()
                .map(|e| e.spec().clone())
                .filter(|s| !is_meta_tool(&s.name))
                .collect();
            self.search.refresh(&specs).await?;
            *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(snap));
        }
        Ok(())
    }

    /// The best `k` tools for `query` among those `role` may see, best first; never a meta
    /// tool. The filter chain runs before the cut (R-RAG-1).
    pub async fn find(
        &self,
        role: &RolePolicy,
        query: &str,
        k: usize,
    ) -> Result<Vec<Found>, RagError> {
        self.find_as(role, query, k, self.mode).await
    }

    /// [`find`](Self::find) with another retriever (BM25 needs no model and cannot fail).
    pub async fn find_as(
        &self,
        role: &RolePolicy,
        query: &str,
        k: usize,
        mode: Mode,
    ) -> Result<Vec<Found>, RagError> {
        let snap = self.catalog.snapshot();
        self.refresh(&snap).await?;
        let chain = FilterChain::new(role, &snap);
        let admit = |n: &str| !is_meta_tool(n) && chain.admits(n);
        let hits = self.search.search(query, k, mode, &admit).await?;
        Ok(hits
            .into_iter()
            .filter_map(|h| {
                Some(Found {
                    spec: snap.get(&h.name)?.spec().clone(),
                    score: h.score,
                })
            })
            .collect())
    }
}
