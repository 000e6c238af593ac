"""The five template tools (names, JSON schemas, annotations) and the one dispatcher both tool paths use.

Where it sits: pure, between the policy and the use cases. The MCP server (``server.py``) and
the OpenAI-style invoker (``openai_tools.py``) only translate their transport to and from
``dispatch``; everything that decides a result or an error lives here or below, which is
what makes the two paths give identical answers.

Data flow of one call: ``dispatch(operations, policy, tool_name, arguments)``
-> the policy check (``NOT_ALLOWED`` before any effect; ``INVALID_INPUT`` for an unknown tool)
-> the argument check against the tool's input schema (``INVALID_INPUT``)
-> one use case of ``operations`` (the service) -> a JSON-ready ``dict``.
Typed ``ElynavError`` exceptions propagate; the transports turn them into ``{code, message}``.

The names are the seed's (IdeA ticket #81) so IdeA agents keep working; arguments use the
seed's camelCase (``templateId``, ``defaultProfileId``, ``expectedVersion``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from elynav_nb.errors import ElynavError, InvalidInput
from elynav_nb.templates.domain import MAX_CONTENT_BYTES, AgentTemplate
from elynav_nb.templates.policy import AgentPolicy

__all__ = [
    "CATALOGUE",
    "TOOL_NAMES",
    "TemplateOperations",
    "ToolSpec",
    "check_arguments",
    "dispatch",
    "error_payload",
    "tool_spec",
]


class TemplateOperations(Protocol):
    """What the dispatcher needs from the service (``TemplateService`` fits)."""

    def list_templates(self) -> list[AgentTemplate]: ...

    def read(self, template_id: str) -> AgentTemplate: ...

    def create(self, name: str, content: str, default_profile_id: str | None = None) -> AgentTemplate: ...

    def update(
        self,
        template_id: str,
        content: str | None = None,
        name: str | None = None,
        default_profile_id: str | None = None,
        expected_version: int | None = None,
    ) -> AgentTemplate: ...

    def delete(self, template_id: str, expected_version: int | None = None) -> AgentTemplate: ...


@dataclass(frozen=True)
class ToolSpec:
    """One catalogued tool: what tools/list and the OpenAI function list show."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool

    def openai_function(self) -> dict[str, Any]:
        """The OpenAI Chat Completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }


_TEMPLATE_ID = {"type": "string", "description": "The template id, as listed by idea_template_list."}
_EXPECTED_VERSION = {
    "type": "integer",
    "minimum": 1,
    "description": "The version you read. If the template moved on since, the call fails with "
    "VERSION_CONFLICT and changes nothing: read it again and retry.",
}
_CONTENT = {
    "type": "string",
    "description": f"The agent's system prompt in Markdown (UTF-8, at most {MAX_CONTENT_BYTES} bytes).",
}
_PROFILE = {
    "type": "string",
    "description": "A profile id: the CLI adapter, model and permission mode of new agents.",
}

_TEMPLATE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "contentMd": {"type": "string"},
        "version": {"type": "integer"},
        "defaultProfileId": {"type": "string"},
    },
    "required": ["id", "name", "contentMd", "version", "defaultProfileId"],
}


def _object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


CATALOGUE: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="idea_template_list",
        title="List agent templates",
        description="List the global IdeA agent templates, each with id, name, contentMd, version and defaultProfileId.",
        input_schema=_object_schema({}, []),
        output_schema={
            "type": "object",
            "properties": {"templates": {"type": "array", "items": _TEMPLATE_OUTPUT}},
            "required": ["templates"],
        },
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="idea_template_read",
        title="Read an agent template",
        description="Read one agent template by id.",
        input_schema=_object_schema({"templateId": _TEMPLATE_ID}, ["templateId"]),
        output_schema=_TEMPLATE_OUTPUT,
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="idea_template_create",
        title="Create an agent template",
        description="Create a global agent template at version 1. Refused unless this agent was granted it.",
        input_schema=_object_schema(
            {
                "name": {"type": "string", "description": "A non-empty, one-line name."},
                "content": _CONTENT,
                "defaultProfileId": _PROFILE,
            },
            ["name", "content"],
        ),
        output_schema=_TEMPLATE_OUTPUT,
        read_only=False,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        name="idea_template_update",
        title="Update an agent template",
        description="Change a template's content, name or default profile. The version goes up by one only when "
        "the content changes. Agents made from the template are not touched: they show drift until synced. "
        "Refused unless this agent was granted it.",
        input_schema=_object_schema(
            {
                "templateId": _TEMPLATE_ID,
                "content": _CONTENT,
                "name": {"type": "string", "description": "A new non-empty, one-line name."},
                "defaultProfileId": _PROFILE,
                "expectedVersion": _EXPECTED_VERSION,
            },
            ["templateId"],
        ),
        output_schema=_TEMPLATE_OUTPUT,
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    ToolSpec(
        name="idea_template_delete",
        title="Delete an agent template",
        description="Delete a template and its Markdown file. Agents made from it keep their files. "
        "Refused unless this agent was granted it.",
        input_schema=_object_schema(
            {"templateId": _TEMPLATE_ID, "expectedVersion": _EXPECTED_VERSION}, ["templateId"]
        ),
        output_schema={
            "type": "object",
            "properties": {
                "deleted": {"type": "boolean"},
                "templateId": {"type": "string"},
                "version": {"type": "integer"},
            },
            "required": ["deleted", "templateId", "version"],
        },
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
)

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in CATALOGUE)


def tool_spec(tool_name: str) -> ToolSpec:
    for spec in CATALOGUE:
        if spec.name == tool_name:
            return spec
    raise InvalidInput(f"unknown tool {tool_name!r}", details={"tool": tool_name})


_JSON_TYPE_NAMES = {"string": "a string", "integer": "an integer", "boolean": "a boolean"}


def _value_has_type(value: object, json_type: str) -> bool:
    if json_type == "string":
        return isinstance(value, str)
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "boolean":
        return isinstance(value, bool)
    return False


def check_arguments(spec: ToolSpec, arguments: object) -> dict[str, Any]:
    """The arguments as a dict once they match ``spec.input_schema``; ``InvalidInput`` naming the field otherwise.

    ``null`` for an optional field means "not given" (models often send it).
    """
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"{spec.name}: the arguments must be a JSON object", details={"tool": spec.name})
    properties: dict[str, Any] = spec.input_schema["properties"]
    required: list[str] = spec.input_schema["required"]
    checked: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in properties:
            known = ", ".join(properties) or "none"
            raise InvalidInput(
                f"{spec.name}: unknown argument {key!r} (known: {known})",
                details={"tool": spec.name, "field": key},
            )
        if value is None and key not in required:
            continue
        field_schema = properties[key]
        json_type = field_schema["type"]
        if not _value_has_type(value, json_type):
            raise InvalidInput(
                f"{spec.name}: {key!r} must be {_JSON_TYPE_NAMES[json_type]}",
                details={"tool": spec.name, "field": key},
            )
        minimum = field_schema.get("minimum")
        if minimum is not None and value < minimum:
            raise InvalidInput(
                f"{spec.name}: {key!r} must be >= {minimum}", details={"tool": spec.name, "field": key}
            )
        checked[key] = value
    for key in required:
        if key not in checked:
            raise InvalidInput(f"{spec.name}: {key!r} is required", details={"tool": spec.name, "field": key})
    return checked


def error_payload(error: ElynavError) -> dict[str, Any]:
    """The ``{code, message[, details]}`` both tool paths return for a typed error."""
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.details:
        payload["details"] = dict(error.details)
    return payload


def dispatch(
    operations: TemplateOperations, policy: AgentPolicy, tool_name: str, arguments: object
) -> dict[str, Any]:
    """Run one tool call for the agent ``policy`` describes. The policy is checked before anything else."""
    spec = tool_spec(tool_name)
    policy.check(tool_name)
    checked = check_arguments(spec, arguments)
    if tool_name == "idea_template_list":
        return {"templates": [template.to_dict() for template in operations.list_templates()]}
    if tool_name == "idea_template_read":
        return operations.read(checked["templateId"]).to_dict()
    if tool_name == "idea_template_create":
        created = operations.create(checked["name"], checked["content"], checked.get("defaultProfileId"))
        return created.to_dict()
    if tool_name == "idea_template_update":
        updated = operations.update(
            checked["templateId"],
            content=checked.get("content"),
            name=checked.get("name"),
            default_profile_id=checked.get("defaultProfileId"),
            expected_version=checked.get("expectedVersion"),
        )
        return updated.to_dict()
    if tool_name == "idea_template_delete":
        deleted = operations.delete(checked["templateId"], expected_version=checked.get("expectedVersion"))
        return {"deleted": True, "templateId": deleted.id, "version": deleted.version}
    # a catalogued tool without a branch above: a programming error, still reported as a typed error
    raise InvalidInput(f"unknown tool {tool_name!r}", details={"tool": tool_name})
