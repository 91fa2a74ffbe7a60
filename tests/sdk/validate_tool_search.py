"""Checks Baton's tool-search output against the official SDKs' request types.

Usage: python3 validate_tool_search.py DOCUMENT.json...

The document holds, per wire format, what a host would send: the tool list
and the messages (the ToolSearch result, the reminder). Each piece is
validated with pydantic against the SDK's TypedDict for it, in strict mode
and with unknown keys forbidden (the SDKs' TypedDicts ignore extra keys by
default, which would let a misspelt `defer_loading` through). Prints one
JSON line per document: {"file", "checked", "problems"}. Several documents
per run, because importing the SDKs is the slow part. Exit 3 when the SDKs
are missing.
"""

import json
import sys

try:
    import anthropic
    import openai
    from pydantic import TypeAdapter, ValidationError
    from typing_extensions import is_typeddict
    from anthropic.types import MessageParam, ToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
    from openai.types.responses import FunctionToolParam, ResponseInputItemParam
except ImportError as e:  # pragma: no cover - environment problem
    print(f"missing Python package ({e}); run ./.ci/deps", file=sys.stderr)
    sys.exit(3)

PINNED = {"anthropic": "2.12.0", "openai": "3.54.0"}
for module in (anthropic, openai):
    want = PINNED[module.__name__]
    if module.__version__ != want:
        print(f"{module.__name__} {module.__version__} installed, {want} expected; run ./.ci/deps",
              file=sys.stderr)
        sys.exit(3)


def forbid_unknown_keys():
    """Every SDK TypedDict that does not choose otherwise rejects extra keys."""
    for name, module in list(sys.modules.items()):
        if not (name.startswith("anthropic.types") or name.startswith("openai.types")):
            continue
        for obj in list(vars(module).values()):
            if (is_typeddict(obj) and getattr(obj, "__module__", None) == name
                    and "__pydantic_config__" not in obj.__dict__):
                obj.__pydantic_config__ = {"extra": "forbid"}


def drain(value):
    """Consumes the lazy iterators pydantic returns for `Iterable[...]`
    fields, so that their items are validated too."""
    if isinstance(value, dict):
        return {k: drain(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [drain(v) for v in value]


forbid_unknown_keys()
CHECKS = {
    "anthropic": {"tools": TypeAdapter(ToolParam), "messages": TypeAdapter(MessageParam)},
    "openai_chat": {
        "tools": TypeAdapter(ChatCompletionFunctionToolParam),
        "messages": TypeAdapter(ChatCompletionMessageParam),
    },
    "openai_responses": {
        "tools": TypeAdapter(FunctionToolParam),
        "messages": TypeAdapter(ResponseInputItemParam),
    },
}


def check(path):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    problems = []
    checked = 0
    for case, parts in document.items():
        fmt = parts["format"]
        for kind in ("tools", "messages"):
            for i, item in enumerate(parts.get(kind, [])):
                try:
                    drain(CHECKS[fmt][kind].validate_python(item, strict=True))
                    checked += 1
                except ValidationError as e:
                    first = e.errors()[0]
                    loc = ".".join(str(x) for x in first["loc"])
                    problems.append(
                        f"{case}: {kind}[{i}]: {e.error_count()} errors, e.g. {loc}: {first['msg']}")
    if checked == 0:
        problems.append("nothing was checked")
    return {"file": path, "checked": checked, "problems": problems}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps(check(path)))
