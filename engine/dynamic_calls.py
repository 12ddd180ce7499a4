"""Which children a node's body can start with ``ctx.run_node``, read from its source.

The replay check must not run node bodies, so it reads them: every ``<x>.run_node(target,
...)`` call, in source order, with the target resolved through the function's globals and
closure. A call inside an ``if``, a loop, a ``try`` or a nested function is *conditional*
(the code may skip it). A target that is not a plain name or attribute chain (a variable
assigned in the body, a call) is *unresolved*: the check then cannot say which names the
body may call. A body that hands its context to another function (``helper(ctx)``, an agent
turn) may start children there, out of sight: its calls are not read at all.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .nodes import BaseNode, FunctionNode, as_node


@dataclass(frozen=True, slots=True)
class CallSite:
    """One ``run_node`` call: the child it starts (None when unresolved), in source order."""

    name: str | None
    node: BaseNode | None
    line: int
    conditional: bool


_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match, ast.IfExp, ast.BoolOp)
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_cache: weakref.WeakKeyDictionary[Callable[..., Any], list[CallSite] | None] = weakref.WeakKeyDictionary()


def body_of(node: BaseNode) -> Callable[..., Any] | None:
    """The function whose source holds a node's ``run_node`` calls."""
    if isinstance(node, FunctionNode):
        return node.func
    implementation = type(node)._run_impl
    return None if implementation is BaseNode._run_impl else implementation


def child_calls(node: BaseNode) -> list[CallSite] | None:
    """The ``run_node`` call sites in a node's body; None when its source cannot be read, or
    when the body passes its context on (its children may start elsewhere)."""
    func = body_of(node)
    if func is None:
        return None
    try:
        return _cache[func]
    except KeyError:
        pass
    except TypeError:  # not weak-referenceable
        return _read(func)
    sites = _cache[func] = _read(func)
    return sites


def _read(func: Callable[..., Any]) -> list[CallSite] | None:
    target = inspect.unwrap(func)
    try:
        lines, first_line = inspect.getsourcelines(target)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    ast.increment_lineno(tree, first_line - 1)  # line numbers of the file, for messages
    definition = next(
        (item for item in ast.walk(tree) if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)), None
    )
    if definition is None or _hands_on_context(definition):
        return None
    scope = dict(getattr(target, "__globals__", {}))
    try:
        scope.update(inspect.getclosurevars(target).nonlocals)
    except (TypeError, ValueError):
        pass  # no closure to read
    sites: list[CallSite] = []
    for statement in definition.body:
        _visit(statement, False, scope, sites)
    return sites


def _hands_on_context(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the body passes its ``ctx`` parameter to a call (where children may start)."""
    arguments = definition.args
    names = {
        item.arg
        for item in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        if item.arg == "ctx" or (item.annotation is not None and "Context" in ast.unparse(item.annotation))
    }
    for item in ast.walk(definition):
        if isinstance(item, ast.Call):
            passed = [*item.args, *(keyword.value for keyword in item.keywords)]
            if any(isinstance(value, ast.Name) and value.id in names for value in passed):
                return True
    return False


def _visit(tree: ast.AST, conditional: bool, scope: dict[str, Any], sites: list[CallSite]) -> None:
    """Collect call sites in evaluation order: a call's arguments before the call itself."""
    inner = conditional or isinstance(tree, _BRANCHES + _SCOPES)
    for item in ast.iter_child_nodes(tree):
        # The test of an ``if`` or ``while`` always runs; only the branches are conditional.
        first = isinstance(tree, ast.If | ast.While) and item is tree.test
        _visit(item, conditional if first else inner, scope, sites)
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute) and tree.func.attr == "run_node":
        expression = tree.args[0] if tree.args else None
        for keyword in tree.keywords:
            if keyword.arg == "node_like":
                expression = keyword.value
        child = _resolve(expression, scope)
        sites.append(CallSite(child.name if child else None, child, tree.lineno, conditional))


def _resolve(expression: ast.expr | None, scope: dict[str, Any]) -> BaseNode | None:
    chain: list[str] = []
    while isinstance(expression, ast.Attribute):
        chain.append(expression.attr)
        expression = expression.value
    if not isinstance(expression, ast.Name) or expression.id not in scope:
        return None
    value = scope[expression.id]
    for attribute in reversed(chain):
        value = getattr(value, attribute, None)
    if not isinstance(value, BaseNode) and not callable(value):
        return None
    try:
        return as_node(value)
    except Exception:  # a callable that cannot be a node: not a child we can name
        return None
