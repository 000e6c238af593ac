"""Docs credentials held in memory only, and the one instance they may ever be sent to.

Where it sits: the policy edge of ``elynav_nb.docs``. The session, the REST client and the WebSocket
connection ask a ``DocsCredentials`` for the ``Cookie`` header of one origin; it answers only for
the instance it is settled on. No I/O here (``from_env`` only reads ``os.environ``).

How data flows: ``DocsCredentials(session_id, csrf_token, instance=...)`` or ``from_env()``
(``DOCS_SESSION_ID``, ``DOCS_CSRF_TOKEN``, ``DOCS_INSTANCE_URL``). The instance is settled once:
given here, or by the first link opened (``settle``). A later link to another origin raises
``InstanceMismatch`` and no header is produced for it, so a cookie never leaves for another host.

Secrets never show: ``repr``/``str`` say only whether a session is set, pickling is refused, the
values live in private slots (no ``__dict__``), and error messages never carry them.

OIDC (``DocsCredentials.oidc(...)``, ``oidc_token(...)``) gives ``oidc.OidcCredentials`` for Docs'
resource-server API instead; the cookie path stays for live sessions, the sandbox and existing users.

Anonymous mode (no session) opens only documents that are public **and** editable by link
(``link_reach == "public"``, ``link_role == "editor"``): ``check_anonymous_access`` fails fast with
``DOC_NOT_PUBLIC`` or ``DOC_READONLY`` before any WebSocket is opened. The WebSocket gate needs a
non-empty ``Cookie``, so anonymous clients send ``docs_sessionid=anonymous-bot`` as the reference does.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import string
from collections.abc import Mapping, Sequence
from typing import Any, Final

from elynav_nb.docs.addressing import normalize_instance_origin, settle_origin
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.errors import DocNotPublic, DocReadonly, InvalidInput

__all__ = ["ANONYMOUS_COOKIE", "DocsCredentials", "check_anonymous_access"]

ANONYMOUS_COOKIE: Final = "docs_sessionid=anonymous-bot"
_CSRF_ALPHABET: Final = string.ascii_letters + string.digits
_COOKIE_FORBIDDEN: Final = frozenset(";\r\n")


def _checked_secret(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    text = value.strip()
    if not text:
        return None
    if any(character in _COOKIE_FORBIDDEN or character.isspace() for character in text):
        raise InvalidInput(f"{name} contains characters a cookie cannot hold")
    return text


class DocsCredentials:
    """A Docs session (``docs_sessionid`` + ``csrftoken``) bound to one instance; secrets never shown."""

    __slots__ = ("_csrf_token", "_instance", "_session_id")

    def __init__(
        self, session_id: str | None = None, csrf_token: str | None = None, *, instance: str | None = None
    ) -> None:
        self._session_id = _checked_secret(session_id, "docs_sessionid")
        self._csrf_token = _checked_secret(csrf_token, "csrftoken")
        self._instance = normalize_instance_origin(instance) if instance else None

    @classmethod
    def anonymous(cls, instance: str | None = None) -> DocsCredentials:
        """No session: only public documents editable by link can be opened."""
        return cls(None, None, instance=instance)

    @classmethod
    def oidc(
        cls,
        issuer: str,
        client_id: str,
        *,
        client_secret: str | None = None,
        scopes: Sequence[str] = ("openid",),
        instance: str | None = None,
        login_timeout: float = 300.0,
    ) -> OidcCredentials:
        """OIDC sign-in for Docs' resource-server API (``oidc.OidcCredentials``): with a
        ``client_secret``, a service's client credentials; without, a person's login in the
        browser (authorization code + PKCE: ``await credentials.sign_in()``). Tokens stay in
        memory and are refreshed. A token opens no live session: Docs' WebSocket takes cookies."""
        flow = "client_credentials" if client_secret else "authorization_code"
        return OidcCredentials(
            issuer,
            client_id,
            flow=flow,
            client_secret=client_secret,
            scopes=scopes,
            instance=instance,
            login_timeout=login_timeout,
        )

    @classmethod
    def oidc_token(cls, access_token: str, *, instance: str | None = None) -> OidcCredentials:
        """A token obtained elsewhere, used as is (never refreshed: ``AUTH_REQUIRED`` once Docs
        refuses it)."""
        return OidcCredentials(None, None, flow="token", access_token=access_token, instance=instance)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DocsCredentials:
        """``DOCS_SESSION_ID``, ``DOCS_CSRF_TOKEN`` and ``DOCS_INSTANCE_URL`` (all optional)."""
        source = os.environ if environ is None else environ
        return cls(
            source.get("DOCS_SESSION_ID"),
            source.get("DOCS_CSRF_TOKEN"),
            instance=source.get("DOCS_INSTANCE_URL") or None,
        )

    # --- what may be shown -----------------------------------------------------------------------

    @property
    def instance(self) -> str | None:
        """The settled instance origin (``https://host``), or ``None`` before the first link."""
        return self._instance

    @property
    def is_anonymous(self) -> bool:
        return self._session_id is None

    def __repr__(self) -> str:
        session = "anonymous" if self.is_anonymous else "session set"
        return f"DocsCredentials(instance={self._instance!r}, {session})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("Docs credentials are kept in memory only and cannot be pickled")

    def __copy__(self) -> DocsCredentials:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> DocsCredentials:
        return self

    # --- the instance ----------------------------------------------------------------------------

    def settle(self, origin: str) -> str:
        """Settle on ``origin`` if not yet settled; raise ``InstanceMismatch`` for any other origin."""
        self._instance = settle_origin(self._instance, origin)
        return self._instance

    # --- headers (the only place secrets leave this object) --------------------------------------

    def _csrf(self) -> str:
        if self._csrf_token is None:
            # Docs does not bind the token to the session: a client may pick its own (design note §3.1)
            self._csrf_token = "".join(secrets.choice(_CSRF_ALPHABET) for _ in range(32))
        return self._csrf_token

    def identity_key(self) -> str:
        """A stable, non-secret name for whose credentials these are ("anonymous" or a digest of the
        session id): what per-user limits are counted by. The session id cannot be recovered from it."""
        if self._session_id is None:
            return "anonymous"
        return "session-" + hashlib.sha256(self._session_id.encode()).hexdigest()[:16]

    def cookie_header(self, origin: str) -> str:
        """The ``Cookie`` value for requests to ``origin`` (which must be the settled instance)."""
        self.settle(origin)
        if self._session_id is None:
            return ANONYMOUS_COOKIE
        return f"docs_sessionid={self._session_id}; csrftoken={self._csrf()}"

    @property
    def api_prefix(self) -> str:
        return "/api/v1.0"

    @property
    def live_sessions(self) -> bool:
        """True: a session cookie opens Docs' collaboration WebSocket."""
        return True

    def request_headers(self, origin: str, *, write: bool) -> dict[str, str]:
        """The headers of one request to ``origin``: the Cookie, and for a write the CSRF ones."""
        if write:
            return self.write_headers(origin)
        return {"Cookie": self.cookie_header(origin)}

    async def prepare(self) -> None:
        """Nothing to do before a request: a session cookie does not expire on our side."""

    async def renew(self) -> bool:
        """A session cookie cannot be renewed here: copy it again from a signed-in browser."""
        return False

    def write_headers(self, origin: str) -> dict[str, str]:
        """Headers every POST/PUT/PATCH/DELETE carries: Cookie, Content-Type, Origin, Referer, X-CSRFToken."""
        instance = self.settle(origin)
        headers = {
            "Content-Type": "application/json",
            "Origin": instance,
            "Referer": f"{instance}/",
        }
        if self._session_id is None:
            headers["Cookie"] = ANONYMOUS_COOKIE
            return headers
        headers["Cookie"] = self.cookie_header(origin)
        headers["X-CSRFToken"] = self._csrf()
        return headers


def _setting(metadata: Mapping[str, Any], key: str) -> str | None:
    """A link setting as Docs sends it (text); anything else counts as not set."""
    value = metadata.get(key)
    return value[:64] if isinstance(value, str) else None


def check_anonymous_access(metadata: Mapping[str, Any]) -> None:
    """Anonymous sessions open only ``link_reach=public`` + ``link_role=editor`` documents."""
    link_reach = _setting(metadata, "computed_link_reach") or _setting(metadata, "link_reach")
    link_role = _setting(metadata, "computed_link_role") or _setting(metadata, "link_role")
    if link_reach != "public":
        raise DocNotPublic(
            "this document is not public: give Docs credentials (docs_sessionid) to open it",
            details={"link_reach": link_reach},
        )
    if link_role != "editor":
        raise DocReadonly(
            "this public document is read-only by link: give Docs credentials to edit it",
            details={"link_role": link_role},
        )
