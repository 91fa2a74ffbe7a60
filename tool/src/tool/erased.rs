//! Type erasure between a `ToolLogic<I>` and the generic-free [`super::Tool`].

use std::any::Any;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::logic::ToolLogic;
use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput};
use crate::permission::{PermissionTarget, ToolPermission};

/// An input that passed the schema and was converted to the tool's type.
/// Parsed at add time (and again, from the same unchanged input, when a call
/// that waited in the queue starts); the same value decides safety and is
/// handed to `call`, so classification and execution cannot disagree.
pub struct ParsedInput {
    raw: Value,
    /// The typed input, or [`SameAsRaw`] for tools whose input type is
    /// `Value` itself: those would otherwise hold the JSON twice (a small
    /// object costs hundreds of bytes, per call, for as long as it waits).
    value: Box<dyn Any + Send + Sync>,
}

/// Marks a [`ParsedInput`] whose typed value is its raw JSON. Zero-sized, so
/// boxing it allocates nothing.
struct SameAsRaw;

crate::debug_fields! { ParsedInput { raw } }

impl ParsedInput {
    /// The JSON the model sent (after any hook rewrite).
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    fn get<I: 'static>(&self) -> Option<&I> {
        if self.value.is::<SameAsRaw>() {
            return (&self.raw as &dyn Any).downcast_ref::<I>();
        }
        self.value.downcast_ref::<I>()
    }

    /// The typed input, by value (for `call`).
    fn into_typed<I: 'static>(self) -> Option<I> {
        if self.value.is::<SameAsRaw>() {
            // Moved out through an `Option` on the stack: boxing the JSON
            // to downcast it would allocate once per call.
            let mut raw = Some(self.raw);
            return (&mut raw as &mut dyn Any)
                .downcast_mut::<Option<I>>()
                .and_then(Option::take);
        }
        (self.value as Box<dyn Any>)
            .downcast::<I>()
            .ok()
            .map(|typed| *typed)
    }
}

const WRONG_INPUT: &str = "internal error: input parsed for a different tool";

/// A future the erased layer hands on. The three async methods return the
/// tool's own future (already boxed by `ToolLogic`'s `async_trait`) instead
/// of boxing a second future around it: that was three allocations and
/// frees more per call.
type Boxed<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

pub(super) trait ErasedLogic: Send + Sync {
    fn parse(&self, input: &Value) -> Result<ParsedInput, String>;
    fn is_enabled(&self) -> bool;
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool;
    fn is_read_only(&self, input: &ParsedInput) -> bool;
    fn is_destructive(&self, input: &ParsedInput) -> bool;
    fn is_open_world(&self, input: &ParsedInput) -> bool;
    fn permission_target(&self, input: &ParsedInput, ctx: &ToolContext) -> PermissionTarget;
    fn label(&self, input: &ParsedInput) -> Option<String>;
    fn permission_context(
        &self,
        context: &crate::context::Context,
    ) -> Option<crate::context::Context>;
    fn further_permission_targets(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Vec<PermissionTarget>;
    fn validate_input<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> Boxed<'a, Result<(), String>>;
    fn check_permissions<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> Boxed<'a, ToolPermission>;
    fn call(
        &self,
        input: ParsedInput,
        ctx: ToolContext,
    ) -> Boxed<'_, Result<ToolOutput, ToolError>>;
}

pub(super) struct Typed<I, L> {
    logic: L,
    _input: PhantomData<fn() -> I>,
}

impl<I, L> Typed<I, L> {
    pub(super) fn new(logic: L) -> Self {
        Typed {
            logic,
            _input: PhantomData,
        }
    }
}

/// Raw tools are typed tools over `serde_json::Value`.
impl<I, L> ErasedLogic for Typed<I, L>
where
    I: DeserializeOwned + Send + Sync + 'static,
    L: ToolLogic<I>,
{
    fn parse(&self, input: &Value) -> Result<ParsedInput, String> {
        if std::any::TypeId::of::<I>() == std::any::TypeId::of::<Value>() {
            return Ok(ParsedInput {
                raw: input.clone(),
                value: Box::new(SameAsRaw),
            });
        }
        let value: I = I::deserialize(input).map_err(|e| e.to_string())?;
        Ok(ParsedInput {
            raw: input.clone(),
            value: Box::new(value),
        })
    }

    fn is_enabled(&self) -> bool {
        self.logic.is_enabled()
    }
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool {
        input
            .get::<I>()
            .is_some_and(|i| self.logic.is_concurrency_safe(i))
    }
    fn is_read_only(&self, input: &ParsedInput) -> bool {
        input.get::<I>().is_some_and(|i| self.logic.is_read_only(i))
    }
    fn is_destructive(&self, input: &ParsedInput) -> bool {
        input
            .get::<I>()
            .is_none_or(|i| self.logic.is_destructive(i))
    }
    fn is_open_world(&self, input: &ParsedInput) -> bool {
        input.get::<I>().is_none_or(|i| self.logic.is_open_world(i))
    }
    fn permission_target(&self, input: &ParsedInput, ctx: &ToolContext) -> PermissionTarget {
        input.get::<I>().map_or(PermissionTarget::None, |i| {
            self.logic.permission_target(i, ctx)
        })
    }
    fn label(&self, input: &ParsedInput) -> Option<String> {
        input.get::<I>().and_then(|i| self.logic.label(i))
    }
    fn permission_context(
        &self,
        context: &crate::context::Context,
    ) -> Option<crate::context::Context> {
        self.logic.permission_context(context)
    }
    fn further_permission_targets(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Vec<PermissionTarget> {
        input
            .get::<I>()
            .map_or_else(Vec::new, |i| self.logic.further_permission_targets(i, ctx))
    }
    fn validate_input<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> Boxed<'a, Result<(), String>> {
        match input.get::<I>() {
            Some(i) => self.logic.validate_input(i, ctx),
            None => Box::pin(std::future::ready(Err(WRONG_INPUT.to_string()))),
        }
    }
    fn check_permissions<'a>(
        &'a self,
        input: &'a ParsedInput,
        ctx: &'a ToolContext,
    ) -> Boxed<'a, ToolPermission> {
        match input.get::<I>() {
            Some(i) => self.logic.check_permissions(i, ctx),
            None => Box::pin(std::future::ready(ToolPermission::Deny(
                WRONG_INPUT.to_string(),
            ))),
        }
    }
    fn call(
        &self,
        input: ParsedInput,
        ctx: ToolContext,
    ) -> Boxed<'_, Result<ToolOutput, ToolError>> {
        match input.into_typed::<I>() {
            Some(i) => self.logic.call(i, ctx),
            None => Box::pin(std::future::ready(Err(ToolError::new(WRONG_INPUT)))),
        }
    }
}
