"""Docs' comment threads over REST: ``client.threads`` (list, open, reply, resolve, react).

Where it sits: the REST calls of comment threads, on a ``DocsRestClient``'s ``http.DocsHttp``;
answers become the records below (``Thread``, ``Comment``). The anchor of a thread (the text it is
about) is not here: Docs keeps it in the document, as a ``comment`` mark on that text
(``blocknote.comments``); ``DocsSession.threads()`` joins the two.

Endpoints (Docs 5.4.1, ``core/api/viewsets.py`` ``ThreadViewSet`` / ``CommentViewSet``,
``core/urls.py``; ``docs/docs-comments-versions.md`` has the facts)::

    list(d)               GET    documents/{d}/threads/              every thread, newest first, no pages
    get(d, t)             GET    documents/{d}/threads/{t}/
    open(d, text)         POST   documents/{d}/threads/              {"body"}: the first comment
    reply(d, t, text)     POST   documents/{d}/threads/{t}/comments/ {"body"}
    resolve / unresolve   POST   documents/{d}/threads/{t}/resolve/ | unresolve/   204
    delete(d, t)          DELETE documents/{d}/threads/{t}/
    react / unreact       POST / DELETE .../comments/{c}/reactions/  {"emoji"}  201 / 204

Rights are Docs': listing and writing comments need the document's ``comment`` ability (a
commenter, an editor, an owner...; a reader gets 403 ``NOT_ALLOWED``); resolving, unresolving and
deleting a thread need to be its creator or the document's owner/administrator; editing a comment,
its author. Bodies are BlockNote JSON (``markdown.comment_body``); texts here are inline markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from elynav_nb.docs.addressing import is_uuid_v4
from elynav_nb.docs.markdown.comment_body import body_from_markdown, markdown_from_body
from elynav_nb.docs.rest.http import VersionedApi
from elynav_nb.errors import InvalidInput, ServiceError

if TYPE_CHECKING:
    import pandas

__all__ = ["MAX_COMMENT_BYTES", "Comment", "DocsThreadsClient", "Reaction", "Thread", "Threads"]

MAX_COMMENT_BYTES: Final = 100_000
"""Largest comment text accepted (UTF-8 bytes); bigger ones are refused, never cut."""
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _author(value: object) -> str | None:
    """Docs' ``UserLightSerializer``: ``{full_name, short_name}`` (``null`` for an anonymous author)."""
    if not isinstance(value, dict):
        return None
    return _text(value.get("full_name")) or _text(value.get("short_name"))


@dataclass(frozen=True)
class Reaction:
    emoji: str
    users: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comment:
    """One comment of a thread: its author's name, its text as inline markdown, its reactions."""

    id: str
    thread_id: str
    author: str | None
    text: str
    created_at: str | None = None
    updated_at: str | None = None
    reactions: tuple[Reaction, ...] = ()
    body: Any = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: object, thread_id: str) -> Comment:
        if not isinstance(data, dict):
            raise ServiceError("Docs answered with a comment that is not an object")
        reactions = []
        for item in data.get("reactions") or []:
            if isinstance(item, dict) and isinstance(item.get("emoji"), str):
                users = tuple(name for name in map(_author, item.get("users") or []) if name)
                reactions.append(Reaction(item["emoji"], users))
        return cls(
            id=_text(data.get("id")) or "",
            thread_id=thread_id,
            author=_author(data.get("user")),
            text=markdown_from_body(data.get("body")),
            created_at=_text(data.get("created_at")),
            updated_at=_text(data.get("updated_at")),
            reactions=tuple(reactions),
            body=data.get("body"),
        )


@dataclass(frozen=True)
class Thread:
    """A comment thread: who opened it, whether it is resolved, its comments in order, and (from the
    live document, see ``DocsSession.threads``) the block and the text it is anchored to."""

    id: str
    resolved: bool
    comments: tuple[Comment, ...]
    creator: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    resolved_at: str | None = None
    resolved_by: str | None = None
    abilities: dict[str, bool] = field(default_factory=dict, repr=False)
    block_id: str | None = None
    anchor_text: str | None = None

    @classmethod
    def from_json(cls, data: object) -> Thread:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise ServiceError("Docs answered with a thread that is not an object with an id")
        thread_id = data["id"]
        abilities = data.get("abilities")
        return cls(
            id=thread_id,
            resolved=data.get("resolved") is True,
            comments=tuple(Comment.from_json(item, thread_id) for item in data.get("comments") or []),
            creator=_author(data.get("creator")),
            created_at=_text(data.get("created_at")),
            updated_at=_text(data.get("updated_at")),
            resolved_at=_text(data.get("resolved_at")),
            resolved_by=_text(data.get("resolved_by")),
            abilities={k: v for k, v in abilities.items() if isinstance(v, bool)}
            if isinstance(abilities, dict)
            else {},
        )

    @property
    def text(self) -> str:
        """The first comment's text (what the thread is about)."""
        return self.comments[0].text if self.comments else ""


class Threads(tuple[Thread, ...]):
    """The threads of a document (a tuple), newest first, with ``to_frame()`` and ``comments()``."""

    def comments(self) -> Iterator[Comment]:
        for thread in self:
            yield from thread.comments

    def get(self, thread_id: str) -> Thread | None:
        return next((thread for thread in self if thread.id == thread_id), None)

    def to_frame(self) -> pandas.DataFrame:
        """One row per comment: thread_id, resolved, block_id, anchor_text, comment_id, author,
        text, created_at, reactions (``emoji count`` pairs, comma-separated)."""
        import pandas

        rows = [
            {
                "thread_id": thread.id,
                "resolved": thread.resolved,
                "block_id": thread.block_id,
                "anchor_text": thread.anchor_text,
                "comment_id": comment.id,
                "author": comment.author,
                "text": comment.text,
                "created_at": comment.created_at,
                "reactions": ", ".join(f"{r.emoji} {len(r.users)}" for r in comment.reactions),
            }
            for thread in self
            for comment in thread.comments
        ]
        columns = [
            "thread_id",
            "resolved",
            "block_id",
            "anchor_text",
            "comment_id",
            "author",
            "text",
            "created_at",
            "reactions",
        ]
        return pandas.DataFrame(rows, columns=columns)


def checked_text(text: object, what: str = "comment") -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"the {what} text is empty")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(f"the {what} text contains unpaired surrogates") from None
    if size > MAX_COMMENT_BYTES:
        raise InvalidInput(
            f"the {what} text is {size} bytes; the limit is {MAX_COMMENT_BYTES}",
            details={"size": size, "limit": MAX_COMMENT_BYTES},
        )
    return text


def _checked_id(value: object, what: str) -> str:
    if not isinstance(value, str) or _UUID.fullmatch(value.lower()) is None:
        raise InvalidInput(f"the {what} id must be a UUID", details={what: str(value)[:64]})
    return value.lower()


def _checked_emoji(emoji: object) -> str:
    if not isinstance(emoji, str) or not 1 <= len(emoji) <= 16 or emoji.isascii():
        raise InvalidInput("a reaction is one emoji")
    return emoji


class DocsThreadsClient:
    """Comment threads of documents on one ``DocsRestClient`` (use ``rest.threads``)."""

    def __init__(self, rest: VersionedApi) -> None:
        self.rest = rest

    def __repr__(self) -> str:
        return f"<DocsThreadsClient instance={self.rest.http.instance!r}>"

    def _path(self, document_id: str, *parts: str) -> str:
        if not is_uuid_v4(document_id):
            raise InvalidInput(
                "the document id must be a UUID v4", details={"document_id": str(document_id)[:64]}
            )
        tail = "".join(f"{part}/" for part in parts)
        return f"{self.rest.http.api_prefix}/documents/{document_id.lower()}/threads/{tail}"

    async def list(self, document_id: str) -> Threads:
        data = await self.rest.http.json(
            "GET", self._path(document_id), "list this document's comment threads"
        )
        if not isinstance(data, list):
            raise ServiceError("Docs answered the thread list with something that is not a list")
        return Threads(Thread.from_json(item) for item in data)

    async def get(self, document_id: str, thread_id: str) -> Thread:
        path = self._path(document_id, _checked_id(thread_id, "thread"))
        return Thread.from_json(await self.rest.http.json("GET", path, "read this comment thread"))

    async def open(self, document_id: str, text: str) -> Thread:
        """A new thread whose first comment is ``text`` (inline markdown)."""
        body = {"body": body_from_markdown(checked_text(text))}
        data = await self.rest.http.json(
            "POST", self._path(document_id), "open a comment thread", json_body=body
        )
        return Thread.from_json(data)

    async def reply(self, document_id: str, thread_id: str, text: str) -> Comment:
        checked_thread = _checked_id(thread_id, "thread")
        body = {"body": body_from_markdown(checked_text(text))}
        path = self._path(document_id, checked_thread, "comments")
        data = await self.rest.http.json("POST", path, "reply to this comment thread", json_body=body)
        return Comment.from_json(data, checked_thread)

    async def resolve(self, document_id: str, thread_id: str, *, resolved: bool = True) -> None:
        action = "resolve" if resolved else "unresolve"
        path = self._path(document_id, _checked_id(thread_id, "thread"), action)
        await self.rest.http.request("POST", path, f"{action} this comment thread")

    async def delete(self, document_id: str, thread_id: str) -> None:
        path = self._path(document_id, _checked_id(thread_id, "thread"))
        await self.rest.http.request("DELETE", path, "delete this comment thread")

    async def react(
        self, document_id: str, thread_id: str, comment_id: str, emoji: str, *, remove: bool = False
    ) -> None:
        path = self._path(
            document_id,
            _checked_id(thread_id, "thread"),
            "comments",
            _checked_id(comment_id, "comment"),
            "reactions",
        )
        body = {"emoji": _checked_emoji(emoji)}
        what = "remove this reaction" if remove else "react to this comment"
        await self.rest.http.request("DELETE" if remove else "POST", path, what, json_body=body)
