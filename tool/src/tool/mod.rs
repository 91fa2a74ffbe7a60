//! The tool contract (SPEC §2).
//!
//! A tool is a [`ToolDef`] (static metadata with fail-closed defaults) plus a
//! [`ToolLogic`] over an input type. [`Tool::typed`] derives the input schema
//! from a Rust type, so schema and code cannot drift; [`Tool::raw`] takes a
//! JSON Schema value (MCP tools, tools defined at run time). Either way the
//! schema is compiled once, here, and the logic is erased behind one type so
//! the pool and pipeline never see generics.

mod def;
mod erased;
mod logic;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use def::{
    InterruptBehavior, ToolDef, ToolKind, ToolOrigin, WorkKind, DEFAULT_MAX_RESULT_SIZE_CHARS,
};
pub use erased::ParsedInput;
pub use logic::ToolLogic;

use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput};
use crate::permission::{PermissionTarget, ToolPermission};
use crate::schema::{CompiledSchema, InvalidSchema, SchemaProblem};
use erased::{ErasedLogic, Typed};

/// A complete tool, ready for the pool.
pub struct Tool {
    def: ToolDef,
    schema: CompiledSchema,
    logic: Box<dyn ErasedLogic>,
}

crate::debug_fields! { Tool as this { name: this.def.name } }

impl Tool {
    /// A tool whose input is the Rust type `I`; its schema is derived from `I`
    /// and the raw JSON is validated against it before deserialising.
    pub fn typed<I, L>(def: ToolDef, logic: L) -> Result<Tool, InvalidSchema>
    where
        I: DeserializeOwned + JsonSchema + Send + Sync + 'static,
        L: ToolLogic<I>,
    {
        let schema = serde_json::to_value(schemars::schema_for!(I))
            .map_err(|e| InvalidSchema(e.to_string()))?;
        Ok(Tool {
            def,
            schema: CompiledSchema::compile(clean_derived_schema(schema))?,
            logic: Box::new(Typed::new(logic)),
        })
    }

    /// A tool whose input is raw JSON described by `schema`.
    pub fn raw<L>(def: ToolDef, schema: Value, logic: L) -> Result<Tool, InvalidSchema>
    where
        L: ToolLogic<Value>,
    {
        Ok(Tool {
            def,
            schema: CompiledSchema::compile(schema)?,
            logic: Box::new(Typed::<Value, L>::new(logic)),
        })
    }

    /// The tool's static description: name, description, scheduling.
    pub fn def(&self) -> &ToolDef {
        &self.def
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The JSON Schema inputs are checked against (and sent to the model).
    pub fn input_schema(&self) -> &Value {
        self.schema.schema()
    }

    /// Whether the tool is available in this environment; a panic means no.
    pub fn is_enabled(&self) -> bool {
        guarded(|| self.logic.is_enabled(), false)
    }

    /// Checks `input` against the schema, then converts it to the tool's
    /// input type. Every problem is reported, not only the first.
    pub fn parse(&self, input: &Value) -> Result<ParsedInput, Vec<SchemaProblem>> {
        let problems = self.schema.check(input);
        if !problems.is_empty() {
            return Err(problems);
        }
        self.logic.parse(input).map_err(|message| {
            vec![SchemaProblem::Other {
                path: String::new(),
                message,
            }]
        })
    }

    /// Concurrency safety for this input. A panicking classifier means "not
    /// safe" (SPEC §5).
    pub fn is_concurrency_safe(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_concurrency_safe(input), false)
    }

    /// Whether this call only reads; a panicking classifier means no.
    pub fn is_read_only(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_read_only(input), false)
    }

    /// Whether this call is irreversible; a panicking classifier means yes.
    pub fn is_destructive(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_destructive(input), true)
    }

    /// Whether this call reaches the outside world; a panicking classifier
    /// means yes.
    pub fn is_open_world(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_open_world(input), true)
    }

    /// What the rules judge for this call (a command, a path, a URL).
    pub fn permission_target(&self, input: &ParsedInput, ctx: &ToolContext) -> PermissionTarget {
        guarded(
            || self.logic.permission_target(input, ctx),
            PermissionTarget::None,
        )
    }

    /// The context the rules judge this tool's calls in, if not the
    /// session's (see [`ToolLogic::permission_context`]). A tool that
    /// panics here is judged in the session's context.
    pub fn permission_context(
        &self,
        context: &crate::context::Context,
    ) -> Option<crate::context::Context> {
        guarded(|| self.logic.permission_context(context), None)
    }

    /// The targets judged besides [`Self::permission_target`]. A tool that
    /// panics here is judged as touching the working directory too.
    pub fn further_permission_targets(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Vec<PermissionTarget> {
        guarded(
            || self.logic.further_permission_targets(input, ctx),
            vec![PermissionTarget::Path {
                path: ctx.cwd().to_path_buf(),
                access: crate::permission::FileAccess::Write,
            }],
        )
    }

    /// Label naming this call in other results, e.g. `Bash(ls -la)`.
    pub fn label(&self, input: &ParsedInput) -> String {
        guarded(|| self.logic.label(input), None).unwrap_or_else(|| self.def.name.clone())
    }

    // The three async methods hand on the tool's own (boxed) future rather
    // than wrap it in an `async fn`: a wrapper's future would hold its
    // arguments (for `call`, the input and the whole context) beside that
    // box, and every call's pipeline future would grow by it.

    /// The tool's own check of the input, after the schema's; `Err` is the
    /// message for the model.
    pub fn validate_input<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = Result<(), String>> + Send + 'a {
        self.logic.validate_input(input, ctx)
    }

    /// The tool's own view of the call's permission, before the rules.
    pub fn check_permissions<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = ToolPermission> + Send + 'a {
        self.logic.check_permissions(input, ctx)
    }

    /// Runs the tool. Panics are not caught here; the pipeline does that.
    pub fn call(
        &self,
        input: ParsedInput,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + '_ {
        self.logic.call(input, ctx)
    }
}

fn guarded<T>(f: impl FnOnce() -> T, fallback: T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// schemars adds `$schema` and `title`, and turns the input type's doc
/// comment into a root `description`; the model needs none of them. The
/// type's doc is for Rust readers: what the model reads about the tool is
/// [`ToolDef`]'s description, and about each field, the field's doc.
fn clean_derived_schema(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
    }
    schema
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// A documented input type, as every built-in tool's input is.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Documented {
        /// What to look for.
        pattern: String,
    }

    #[test]
    fn the_input_types_doc_stays_out_of_the_schema_and_the_fields_docs_stay_in() {
        let schema = serde_json::to_value(schemars::schema_for!(Documented)).unwrap();
        assert!(schema.get("description").is_some(), "schemars adds it");
        let clean = super::clean_derived_schema(schema);
        assert!(clean.get("description").is_none(), "{clean}");
        assert!(clean.get("title").is_none() && clean.get("$schema").is_none());
        assert_eq!(
            clean["properties"]["pattern"]["description"],
            "What to look for."
        );
    }
}
