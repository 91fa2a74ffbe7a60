"""Checks request bodies against the official SDKs' request types.

Usage: sdk_check.py FORMAT FILE, where FILE holds a JSON list of request
bodies. Each must be a valid streaming create request of the format's SDK:
every key known to the TypedDict it is in (no extra keys), required keys
present, literals and scalar types right, unions matched by some member.
Exits 1 listing every problem.
"""

import sys
import typing
import json

try:
    import typing_extensions as te
except ImportError:  # pragma: no cover
    te = typing

FORMATS = {
    "anthropic": ("anthropic.types.message_create_params", "MessageCreateParamsStreaming"),
    "openai-chat": ("openai.types.chat.completion_create_params", "CompletionCreateParamsStreaming"),
    "openai-responses": ("openai.types.responses.response_create_params", "ResponseCreateParamsStreaming"),
}


def is_typeddict(tp):
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") and hasattr(tp, "__total__")


def hints(tp):
    return typing.get_type_hints(tp, include_extras=True)


def strip(tp):
    """Removes Annotated/Required/NotRequired/ReadOnly wrappers."""
    while True:
        origin = typing.get_origin(tp)
        if origin in (typing.Annotated, te.Annotated):
            tp = typing.get_args(tp)[0]
        elif origin in (te.Required, te.NotRequired, getattr(te, "ReadOnly", None)) and origin is not None:
            tp = typing.get_args(tp)[0]
        else:
            return tp


def check(value, tp, path, depth=0):
    if depth > 60:
        return []
    tp = strip(tp)
    if tp is typing.Any or tp is object:
        return []
    if isinstance(tp, typing.TypeVar):
        return []
    if isinstance(tp, typing.ForwardRef):
        return []
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if origin is typing.Union or (origin is not None and str(origin) == "types.UnionType"):
        best = None
        for member in args:
            errs = check(value, member, path, depth + 1)
            if not errs:
                return []
            if best is None or len(errs) < len(best):
                best = errs
        return best or [f"{path}: no union member matches"]
    if origin in (typing.Literal, te.Literal):
        return [] if value in args else [f"{path}: {value!r} not one of {args}"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected object for {tp.__name__}"]
        fields = hints(tp)
        required = getattr(tp, "__required_keys__", set())
        errs = []
        for key in value:
            if key not in fields:
                errs.append(f"{path}: unknown key `{key}` for {tp.__name__}")
        for key in required:
            if key not in value:
                errs.append(f"{path}: missing `{key}` for {tp.__name__}")
        for key, v in value.items():
            if key in fields:
                errs += check(v, fields[key], f"{path}.{key}", depth + 1)
        return errs
    if origin in (list, typing.List, tuple, set) or (origin is not None and getattr(origin, "__name__", "") in ("Iterable", "Sequence", "SequenceNotStr")):
        if not isinstance(value, list):
            return [f"{path}: expected array"]
        errs = []
        item = args[0] if args else typing.Any
        for i, v in enumerate(value):
            errs += check(v, item, f"{path}[{i}]", depth + 1)
        return errs
    if origin in (dict, typing.Dict) or (origin is not None and getattr(origin, "__name__", "") in ("Mapping",)):
        return [] if isinstance(value, dict) else [f"{path}: expected object"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected string, got {value!r}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected bool"]
    if tp is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{path}: expected integer, got {value!r}"]
    if tp is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{path}: expected number"]
    if getattr(tp, "__name__", "") in ("SequenceNotStr",):
        return [] if isinstance(value, list) else [f"{path}: expected array"]
    # Other classes (file types, datetimes): not sent by Baton.
    return [f"{path}: unexpected value for {tp!r}"] if isinstance(tp, type) and not isinstance(value, tp) and tp not in (dict, list) else []


def main():
    fmt, file = sys.argv[1], sys.argv[2]
    module, name = FORMATS[fmt]
    params = getattr(__import__(module, fromlist=[name]), name)
    bodies = json.load(open(file))
    problems = []
    for i, body in enumerate(bodies):
        problems += check(body, params, f"request[{i}]")
    for p in problems[:50]:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
