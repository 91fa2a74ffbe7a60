//! What a host asks the engine before each model request when tools are
//! deferred (SPEC §10): which definitions to send, which names to announce,
//! and forgetting what the model loaded once the host compacted history.

use baton_engine::deferred::{self, deferral_of, Deferral, DiscoveredTools, Mark, RequestTools};

use baton_engine::wire::WireFormat;

use crate::Engine;

impl Engine {
    /// The `tools` of the next request in `format` (loaded tools in full,
    /// deferred ones marked or left out as the format requires), the names
    /// still deferred, and the reminder text announcing them.
    pub fn request_tools(&self, format: WireFormat) -> RequestTools {
        deferred::request_tools(
            self.runtime.pipeline().pool(),
            self.runtime.session(),
            format,
        )
    }

    /// Deferred tools the model has not loaded yet, in pool order.
    pub fn deferred_tools(&self) -> Vec<String> {
        deferred::deferred_names(self.runtime.pipeline().pool(), self.runtime.session())
    }

    /// Deferred tools the model has loaded, in the order it loaded them.
    pub fn loaded_tools(&self) -> Vec<String> {
        self.discovered().names()
    }

    /// Forgets which tools the model loaded: call it after compacting the
    /// conversation, when the ToolSearch results that carried their
    /// definitions are gone. They are deferred again from the next request.
    pub fn reset_loaded_tools(&self) {
        self.discovered().reset()
    }

    /// A point in the history of loaded tools, for [`Self::loaded_since`].
    pub fn loaded_mark(&self) -> Mark {
        self.discovered().mark()
    }

    /// Tools loaded after `mark` (e.g. during one batch).
    pub fn loaded_since(&self, mark: Mark) -> Vec<String> {
        self.discovered().since(mark)
    }

    /// Whether tool search is on in this session, and why.
    pub fn deferral(&self) -> Deferral {
        (*deferral_of(self.runtime.session())).clone()
    }

    fn discovered(&self) -> std::sync::Arc<DiscoveredTools> {
        self.runtime
            .session()
            .slots()
            .get_or_default::<DiscoveredTools>()
    }
}
