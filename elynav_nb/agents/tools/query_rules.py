"""The safety rules of the frame tools' ``query``: an expression in pandas ``query`` syntax, checked
with Python's ``ast`` and turned into a small plan that can only read columns.

Where it sits: ``frame_tools`` calls ``compile_query(expression, columns)`` before touching the frame,
then ``query_eval.evaluate_mask(plan, frame)``. Pure: text and column labels in, a plan or an
``InvalidInput`` out. Nothing here (or in the evaluator) ever calls ``eval``, ``pandas.eval`` or
``DataFrame.query``: the plan's nodes are the whole language.

What an expression may contain (everything else is refused, with the reason):

- column names, bare or in backticks (``amount > 10``, ```first name` == 'Ada'``), and ``index``;
- literals: numbers, strings, ``True``, ``False``, ``None``; a list / tuple / set of literals only
  right after ``in``, ``not in``, ``==`` or ``!=`` (pandas' meaning: membership);
- comparisons ``== != < <= > >=`` (chains like ``1 < a < 5`` too), ``in`` / ``not in``;
- ``and`` / ``or`` / ``not`` and their pandas spellings ``&`` / ``|`` / ``~`` (with pandas' precedence:
  ``a > 1 & b < 2`` means ``(a > 1) and (b < 2)``);
- arithmetic ``+ - * / // % **`` and unary ``-`` / ``+`` (never on a string literal; the evaluator also
  refuses it on a text column: ``'x' * 10**9`` cannot be built);
- the calls ``col.isna()``, ``col.notna()``, ``col.isnull()``, ``col.notnull()``,
  ``col.between(low, high[, inclusive='both'])``, ``col.str.contains('text'[, case=False])`` (plain
  text, never a regular expression: no catastrophic backtracking), ``col.str.startswith('x')``,
  ``col.str.endswith('x')``, ``col.str.lower()``, ``col.str.upper()``, ``col.str.strip()``,
  ``col.str.len()``, with literal arguments only;
- the date fields ``col.dt.year`` (``month``, ``day``, ``hour``, ``minute``, ``second``,
  ``dayofweek``, ``dayofyear``, ``quarter``).

Refused, among others: ``@name`` (kernel variables), any other attribute (``a.values``,
``a.__class__``, ```a`.__class__``), any other call (``__import__('os')``, ``a.values.tolist()``),
names with a double underscore, subscripts, lambdas, comprehensions, f-strings, bytes, walrus,
conditional expressions, and expressions over 2,000 characters or 300 nodes.
"""

from __future__ import annotations

import ast
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from elynav_nb.errors import InvalidInput

__all__ = [
    "ALLOWED_SUMMARY",
    "Arithmetic",
    "BooleanOperation",
    "Column",
    "Comparison",
    "DateField",
    "IndexValues",
    "Membership",
    "MethodCall",
    "Negation",
    "QueryNode",
    "Value",
    "compile_query",
]

MAX_EXPRESSION_CHARS = 2000
MAX_NODES = 300

ALLOWED_SUMMARY = (
    "allowed: column names (`with spaces` in backticks), numbers, strings, True/False/None, "
    "== != < <= > >=, in / not in [list], and / or / not (& | ~), + - * / // % **, "
    "col.isna() / notna() / between(a, b), col.str.contains('text', case=False) / startswith / endswith / "
    "lower() / upper() / strip() / len(), col.dt.year / month / day / hour / dayofweek"
)

_SERIES_METHODS: dict[str, tuple[int, dict[str, type]]] = {
    # name -> (number of positional literal arguments, keyword -> literal type)
    "isna": (0, {}),
    "notna": (0, {}),
    "isnull": (0, {}),
    "notnull": (0, {}),
    "between": (2, {"inclusive": str}),
}
_STRING_METHODS: dict[str, tuple[int, dict[str, type]]] = {
    "contains": (1, {"case": bool}),
    "startswith": (1, {}),
    "endswith": (1, {}),
    "lower": (0, {}),
    "upper": (0, {}),
    "strip": (0, {}),
    "len": (0, {}),
}
_DATE_FIELDS = {"year", "month", "day", "hour", "minute", "second", "dayofweek", "dayofyear", "quarter"}
_BETWEEN_INCLUSIVE = {"both", "neither", "left", "right"}

ArithmeticOperator = Literal["+", "-", "*", "/", "//", "%", "**"]
ComparisonOperator = Literal["==", "!=", "<", "<=", ">", ">="]

_ARITHMETIC: dict[type[ast.operator], ArithmeticOperator] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_COMPARISONS: dict[type[ast.cmpop], ComparisonOperator] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


@dataclass(frozen=True)
class Column:
    label: Hashable  # the frame's own column label
    name: str


@dataclass(frozen=True)
class IndexValues:
    pass


@dataclass(frozen=True)
class Value:
    value: int | float | str | bool | None


@dataclass(frozen=True)
class Arithmetic:
    operator: ArithmeticOperator
    left: QueryNode
    right: QueryNode


@dataclass(frozen=True)
class Negation:
    kind: Literal["not", "minus", "plus"]
    operand: QueryNode


@dataclass(frozen=True)
class BooleanOperation:
    operator: Literal["and", "or"]
    operands: tuple[QueryNode, ...]


@dataclass(frozen=True)
class Comparison:
    operator: ComparisonOperator
    left: QueryNode
    right: QueryNode


@dataclass(frozen=True)
class Membership:
    operand: QueryNode
    values: tuple[int | float | str | bool | None, ...]
    negated: bool


@dataclass(frozen=True)
class MethodCall:
    target: QueryNode
    accessor: Literal["", "str"]
    method: str
    arguments: tuple[Any, ...]
    keywords: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class DateField:
    target: QueryNode
    field: str


QueryNode = (
    Column
    | IndexValues
    | Value
    | Arithmetic
    | Negation
    | BooleanOperation
    | Comparison
    | Membership
    | MethodCall
    | DateField
)


def _refuse(reason: str) -> InvalidInput:
    return InvalidInput(f"query refused: {reason} ({ALLOWED_SUMMARY})", details={"reason": reason})


def compile_query(expression: str, column_labels: Sequence[Hashable]) -> QueryNode:
    """The checked plan of ``expression`` over a frame with ``column_labels``; ``InvalidInput`` saying why not."""
    if not isinstance(expression, str) or not expression.strip():
        raise _refuse("the expression is empty")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise _refuse(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    python_text, backtick_names = _rewrite_pandas_syntax(expression)
    try:
        tree = ast.parse(python_text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        detail = error.msg if isinstance(error, SyntaxError) else type(error).__name__
        raise _refuse(f"it is not a valid expression ({detail})") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise _refuse(f"the expression has more than {MAX_NODES} parts")
    for node in nodes:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if "__" in name:
            raise _refuse(f"names with a double underscore ({name!r}) reach Python objects")
    columns = _column_lookup(column_labels)
    return _Compiler(columns, backtick_names).node(tree.body)


def _rewrite_pandas_syntax(expression: str) -> tuple[str, dict[str, str]]:
    """Backtick names -> placeholder identifiers, ``&`` / ``|`` -> ``and`` / ``or`` (outside strings)."""
    placeholder_stem = "elynav_backtick_"
    while placeholder_stem in expression:
        placeholder_stem += "x_"
    output: list[str] = []
    backtick_names: dict[str, str] = {}
    position = 0
    while position < len(expression):
        character = expression[position]
        if character in "'\"":
            end = _string_end(expression, position)
            output.append(expression[position:end])
            position = end
            continue
        if character == "`":
            closing = expression.find("`", position + 1)
            if closing < 0:
                raise _refuse("a backtick name is not closed")
            placeholder = f"{placeholder_stem}{len(backtick_names)}"
            backtick_names[placeholder] = expression[position + 1 : closing]
            output.append(f" {placeholder} ")
            position = closing + 1
            continue
        if character == "@":
            raise _refuse("'@' (kernel variables such as @limit) is not allowed: write the value itself")
        output.append({"&": " and ", "|": " or "}.get(character, character))
        position += 1
    return "".join(output), backtick_names


def _string_end(expression: str, start: int) -> int:
    quote = expression[start]
    delimiter = quote * 3 if expression.startswith(quote * 3, start) else quote
    position = start + len(delimiter)
    while position < len(expression):
        if expression[position] == "\\":
            position += 2
            continue
        if expression.startswith(delimiter, position):
            return position + len(delimiter)
        position += 1
    return len(expression)  # unterminated: the parser reports it


def _column_lookup(column_labels: Sequence[Hashable]) -> dict[str, Hashable | list[Hashable]]:
    lookup: dict[str, Hashable | list[Hashable]] = {}
    for label in column_labels:
        name = str(label)
        if name in lookup:
            previous = lookup[name]
            lookup[name] = [*previous, label] if isinstance(previous, list) else [previous, label]
        else:
            lookup[name] = label
    return lookup


class _Compiler:
    def __init__(self, columns: dict[str, Hashable | list[Hashable]], backtick_names: dict[str, str]) -> None:
        self.columns = columns
        self.backtick_names = backtick_names

    def node(self, node: ast.expr) -> QueryNode:
        if isinstance(node, ast.BoolOp):
            operator: Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
            return BooleanOperation(operator, tuple(self.node(value) for value in node.values))
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.arithmetic(node)
        if isinstance(node, ast.Compare):
            return self.comparison(node)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Constant):
            return Value(_literal(node))
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            raise _refuse("a list may only follow in, not in, == or !=")
        raise _refuse(f"{_describe(node)} is not allowed")

    def unary(self, node: ast.UnaryOp) -> QueryNode:
        operand = self.node(node.operand)
        if isinstance(node.op, (ast.Not, ast.Invert)):
            return Negation("not", operand)
        if isinstance(operand, Value) and isinstance(operand.value, str):
            raise _refuse("arithmetic on a string literal is not allowed")
        return Negation("minus" if isinstance(node.op, ast.USub) else "plus", operand)

    def arithmetic(self, node: ast.BinOp) -> QueryNode:
        operator = _ARITHMETIC.get(type(node.op))
        if operator is None:
            raise _refuse(f"the operator {_describe(node)} is not allowed")
        left, right = self.node(node.left), self.node(node.right)
        for side in (left, right):
            if isinstance(side, Value) and (isinstance(side.value, str) or side.value is None):
                raise _refuse("arithmetic on a string literal or None is not allowed")
        return Arithmetic(operator, left, right)

    def comparison(self, node: ast.Compare) -> QueryNode:
        pairs: list[QueryNode] = []
        left_node = node.left
        for operator_node, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(left_node, (ast.List, ast.Tuple, ast.Set)):
                raise _refuse("a list may only be on the right of in, not in, == or !=")
            left = self.node(left_node)
            is_list = isinstance(right_node, (ast.List, ast.Tuple, ast.Set))
            if isinstance(operator_node, (ast.In, ast.NotIn)) or (
                is_list and isinstance(operator_node, (ast.Eq, ast.NotEq))
            ):
                negated = isinstance(operator_node, (ast.NotIn, ast.NotEq))
                pairs.append(Membership(left, self.literal_list(right_node), negated))
            else:
                operator = _COMPARISONS.get(type(operator_node))
                if operator is None:
                    raise _refuse(
                        f"the comparison {type(operator_node).__name__} (is / is not) is not allowed"
                    )
                pairs.append(Comparison(operator, left, self.node(right_node)))
            left_node = right_node
        return pairs[0] if len(pairs) == 1 else BooleanOperation("and", tuple(pairs))

    def literal_list(self, node: ast.expr) -> tuple[int | float | str | bool | None, ...]:
        if isinstance(node, ast.Constant):
            return (_literal(node),)
        if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            raise _refuse("in / not in need a list of literals on their right, such as ['a', 'b']")
        values: list[int | float | str | bool | None] = []
        for element in node.elts:
            if isinstance(element, ast.UnaryOp) and isinstance(element.op, ast.USub):
                inner = element.operand
                if isinstance(inner, ast.Constant) and isinstance(inner.value, (int, float)):
                    values.append(-_number(inner))
                    continue
            if not isinstance(element, ast.Constant):
                raise _refuse("the list after in / not in may hold literals only")
            values.append(_literal(element))
        return tuple(values)

    def name(self, identifier: str) -> QueryNode:
        column_name = self.backtick_names.get(identifier, identifier)
        label = self.columns.get(column_name)
        if isinstance(label, list):
            raise _refuse(f"the column name {column_name!r} is ambiguous: {len(label)} columns have it")
        if column_name in self.columns:
            return Column(label, column_name)
        if column_name == "index" and identifier not in self.backtick_names:
            return IndexValues()
        known = ", ".join(list(self.columns)[:40])
        raise _refuse(f"{column_name!r} is not a column (columns: {known})")

    def call(self, node: ast.Call) -> QueryNode:
        function = node.func
        if not isinstance(function, ast.Attribute):
            called = function.id if isinstance(function, ast.Name) else _describe(function)
            raise _refuse(f"calling {called}(...) is not allowed; only the methods listed are")
        target_node, accessor, table = function.value, "", _SERIES_METHODS
        if isinstance(target_node, ast.Attribute) and target_node.attr == "str":
            target_node, accessor, table = target_node.value, "str", _STRING_METHODS
        method = function.attr
        if method not in table:
            prefix = ".str" if accessor else ""
            raise _refuse(f"the call {prefix}.{method}(...) is not allowed")
        if any(isinstance(argument, ast.Starred) for argument in node.args) or any(
            keyword.arg is None for keyword in node.keywords
        ):
            raise _refuse("* and ** arguments are not allowed")
        positional_count, keyword_types = table[method]
        if len(node.args) != positional_count:
            raise _refuse(f".{method}() takes {positional_count} literal argument(s), not {len(node.args)}")
        arguments = tuple(self.method_argument(argument, method) for argument in node.args)
        if method in ("contains", "startswith", "endswith") and not isinstance(arguments[0], str):
            raise _refuse(f".str.{method}() needs a string")
        keywords: list[tuple[str, Any]] = []
        for keyword in node.keywords:
            expected = keyword_types.get(str(keyword.arg))
            value = self.method_argument(keyword.value, method)
            if expected is None or not isinstance(value, expected):
                raise _refuse(f".{method}() does not take {keyword.arg}={value!r}")
            if method == "between" and value not in _BETWEEN_INCLUSIVE:
                raise _refuse(f"between(inclusive=...) is one of {sorted(_BETWEEN_INCLUSIVE)}")
            keywords.append((str(keyword.arg), value))
        target = self.node(target_node)
        if isinstance(target, Value):
            raise _refuse(f".{method}() applies to a column, not to a literal")
        return MethodCall(target, "str" if accessor else "", method, arguments, tuple(keywords))

    def method_argument(self, node: ast.expr, method: str) -> Any:
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
        ):
            if isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
                return -_number(node.operand)
        if not isinstance(node, ast.Constant):
            raise _refuse(f"the arguments of .{method}() must be literals")
        return _literal(node)

    def attribute(self, node: ast.Attribute) -> QueryNode:
        owner = node.value
        if isinstance(owner, ast.Attribute) and owner.attr == "dt" and node.attr in _DATE_FIELDS:
            target = self.node(owner.value)
            if isinstance(target, Value):
                raise _refuse(".dt applies to a column, not to a literal")
            return DateField(target, node.attr)
        raise _refuse(f"attribute access (.{node.attr}) is not allowed, except col.dt.<field>")


def _literal(node: ast.Constant) -> int | float | str | bool | None:
    value = node.value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise _refuse(f"the literal {type(value).__name__} is not allowed")


def _number(node: ast.Constant) -> int | float:
    value = node.value
    assert isinstance(value, (int, float))
    return value


def _describe(node: ast.AST) -> str:
    names = {
        "Subscript": "indexing with [...]",
        "Lambda": "lambda",
        "IfExp": "a conditional expression (x if c else y)",
        "ListComp": "a comprehension",
        "SetComp": "a comprehension",
        "DictComp": "a comprehension",
        "GeneratorExp": "a comprehension",
        "JoinedStr": "an f-string",
        "NamedExpr": "the walrus operator :=",
        "Dict": "a dict",
        "Starred": "*",
        "Await": "await",
        "Yield": "yield",
        "MatMult": "@",
        "BitXor": "^",
        "LShift": "<<",
        "RShift": ">>",
    }
    kind = type(node.op).__name__ if isinstance(node, ast.BinOp) else type(node).__name__
    return names.get(kind, kind)
