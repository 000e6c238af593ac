"""The template tools as OpenAI-style function calling: the function list and the invoker.

Where it sits: the second thin transport over ``catalogue.dispatch`` (the first is the MCP
server). ``openai_tools(agent)`` returns the Chat Completions ``tools`` entries the agent may
call; ``invoke(agent, name, arguments_json)`` runs one call and returns the JSON text to send
back as the tool message: the result object, or ``{"error": {code, message[, details]}}``.
Results and refusals are the ones the MCP server gives, by construction (one dispatcher, one
error payload); ``tests/templates/test_parity.py`` checks it on a table of scenarios.
"""

from __future__ import annotations

import json
from typing import Any

from elynav_nb.errors import ElynavError, InvalidInput
from elynav_nb.templates.catalogue import CATALOGUE, dispatch, error_payload
from elynav_nb.templates.policy import PolicyBook
from elynav_nb.templates.service import TemplateService

__all__ = ["OpenAIToolInvoker", "invoke", "openai_tools"]


class OpenAIToolInvoker:
    """Function schemas and calls for any agent identity, over one service and one policy book."""

    def __init__(self, service: TemplateService | None = None, policy_book: PolicyBook | None = None) -> None:
        self.service = service if service is not None else TemplateService.open()
        self.policy_book = policy_book if policy_book is not None else self.service.store.load_policy_book()

    def __repr__(self) -> str:
        return f"OpenAIToolInvoker({self.service!r}, {self.policy_book!r})"

    def tools(self, agent: str) -> list[dict[str, Any]]:
        """The ``tools`` entries ``agent`` may call (reads always; writes only when granted)."""
        policy = self.policy_book.for_agent(agent)
        functions: list[dict[str, Any]] = []
        for spec in CATALOGUE:
            if policy.allows(spec.name):
                functions.append(spec.openai_function())
        return functions

    def invoke_to_dict(self, agent: str, name: str, arguments_json: str) -> dict[str, Any]:
        """The call's outcome as a dict: the result, or ``{"error": {...}}``."""
        try:
            policy = self.policy_book.for_agent(agent)
            arguments = _decoded_arguments(name, arguments_json)
            return dispatch(self.service, policy, name, arguments)
        except ElynavError as error:
            return {"error": error_payload(error)}

    def invoke(self, agent: str, name: str, arguments_json: str) -> str:
        """The call's outcome as the JSON text of the tool message."""
        return json.dumps(self.invoke_to_dict(agent, name, arguments_json), ensure_ascii=False)


def _decoded_arguments(name: str, arguments_json: str) -> object:
    if not isinstance(arguments_json, str):
        raise InvalidInput(f"{name}: the arguments must be JSON text", details={"tool": name})
    if not arguments_json.strip():
        return {}  # some models send "" for a function without parameters
    try:
        return json.loads(arguments_json)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{name}: the arguments are not valid JSON (line {error.lineno} column {error.colno})",
            details={"tool": name},
        ) from None


def openai_tools(agent: str, *, invoker: OpenAIToolInvoker | None = None) -> list[dict[str, Any]]:
    """The function schemas ``agent`` may call (default invoker: the user's store and policy file)."""
    return (invoker or OpenAIToolInvoker()).tools(agent)


def invoke(agent: str, name: str, arguments_json: str, *, invoker: OpenAIToolInvoker | None = None) -> str:
    """Run one function call for ``agent``; returns the JSON text of the result or of the refusal."""
    return (invoker or OpenAIToolInvoker()).invoke(agent, name, arguments_json)
