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

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.def.name)
            .finish()
    }
}

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

    pub fn def(&self) -> &ToolDef {
        &self.def
    }

    pub fn name(&self) -> &str {
        &self.def.name
    }

    pub fn input_schema(&self) -> &Value {
        self.schema.schema()
    }

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

    pub fn is_read_only(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_read_only(input), false)
    }

    pub fn is_destructive(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_destructive(input), true)
    }

    pub fn is_open_world(&self, input: &ParsedInput) -> bool {
        guarded(|| self.logic.is_open_world(input), true)
    }

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

    pub fn validate_input<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = Result<(), String>> + Send + 'a {
        self.logic.validate_input(input, ctx)
    }

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

/// schemars adds `$schema` and `title`; the model needs neither.
fn clean_derived_schema(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}
