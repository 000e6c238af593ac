"""OIDC sign-in for Docs' resource-server API against a real OpenID Connect provider (issue 31).

The provider is panva/node-oidc-provider (OpenID Certified, ``tests/interop/oidc``): Keycloak, what
public bodies run, is not packaged here (a Java server downloaded from outside), and a mock would
test our reading of the protocol against itself. Docs is the sandbox with its resource-server path
(``/external_api/v1.0/``, tokens introspected at that provider, as django-lasuite does).

A person signs in with the authorization code + PKCE flow (the provider's own login pages, driven
as a browser would: its forms, its redirects back to our loopback listener), a service with client
credentials, a script with a token given; an expired token is renewed in the middle of the work, a
refused refresh is typed; no token ever shows in a repr, an error or a log line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from elynav_nb.docs import DocsCredentials, DocsRestClient, DocsSession
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.errors import ElynavError
from elynav_nb.sandbox.docs.resource_server import ResourceServer
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

FORM_ACTION = re.compile(r'action="([^"]+)"')
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


@pytest.fixture
async def docs(oidc_provider: Any) -> AsyncIterator[DocsSandbox]:
    resource_server = ResourceServer(
        oidc_provider.issuer,
        "docs-rs",
        "rs-secret",
        scopes=("openid", "docs"),
        allowed_audiences=("elynav-person", "elynav-service"),
    )
    async with DocsSandbox(oidc=resource_server) as sandbox:
        resource_server.link("alice", sandbox.default_user)  # Docs knows Alice by her OIDC sub
        yield sandbox


async def browse_as(login: str, url: str) -> None:
    """A person in the browser: the provider's pages, each form filled in (the login typed, any
    password, its hidden fields kept) and posted, redirects followed (the last one to our loopback
    listener, whose page has no form)."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=15) as browser:
        page = await browser.get(url)
        for _ in range(4):  # login, then a consent page if the provider shows one
            action = FORM_ACTION.search(page.text)
            if action is None:
                return
            form = dict(HIDDEN_INPUT.findall(page.text))
            if 'name="login"' in page.text:
                form.update(login=login, password="any")
            page = await browser.post(page.url.join(action.group(1)), data=form)


def tokens_of(credentials: OidcCredentials) -> list[str]:
    return [secret for secret in (credentials._access_token, credentials._refresh_token) if secret]


async def test_a_person_signs_in_with_pkce_and_reads_docs(
    docs: DocsSandbox, oidc_provider: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    docs.create_document("Feuille de route")
    credentials = DocsCredentials.oidc(oidc_provider.issuer, "elynav-person", scopes=("openid", "docs"))
    opened: list[str] = []

    async def person(url: str) -> None:
        opened.append(url)
        await browse_as("alice", url)

    await credentials.sign_in(open_browser=person)
    assert "code_challenge_method=S256" in opened[0] and "code_challenge=" in opened[0]
    assert credentials.signed_in and credentials.refreshes == 0
    async with DocsRestClient(docs.url, credentials) as client:
        me = await client.signed_in_user()
        titles = [document.title for document in await client.list_documents()]
        created = await client.create_document("Écrit avec un jeton")
        with pytest.raises(ElynavError) as refused:  # not an external action: Docs says 403
            await client.load_content(created.id)
    assert me["full_name"] == "Alice Martin" and titles == ["Feuille de route"]
    assert refused.value.code == "NOT_ALLOWED"
    secrets = tokens_of(credentials)
    shown = repr(credentials) + str(client) + refused.value.message + str(refused.value.details) + caplog.text
    assert secrets and not any(secret in shown for secret in secrets)


@pytest.mark.access_token_ttl(31)
async def test_an_expiring_token_is_refreshed_mid_session_and_a_refused_refresh_is_typed(
    docs: DocsSandbox, oidc_provider: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    caplog.set_level(logging.DEBUG)
    credentials = DocsCredentials.oidc(oidc_provider.issuer, "elynav-person", scopes=("openid", "docs"))
    await credentials.sign_in(open_browser=lambda url: browse_as("alice", url))
    seen = tokens_of(credentials)
    async with DocsRestClient(docs.url, credentials) as client, httpx.AsyncClient() as provider:
        await client.list_documents()
        assert credentials.refreshes == 0
        await asyncio.sleep(1.5)  # a 31 s token is now within 30 s of its end
        await client.list_documents()  # refreshed before the request, the work goes on
        assert credentials.refreshes == 1 and tokens_of(credentials)[0] != seen[0]
        seen += tokens_of(credentials)
        refresh_token = credentials._refresh_token
        await provider.post(  # the provider ends the sign-in
            f"{oidc_provider.issuer}/token/revocation",
            data={"token": refresh_token, "client_id": "elynav-person"},
        )
        await asyncio.sleep(1.5)
        with pytest.raises(ElynavError) as refused:
            await client.list_documents()
    error = refused.value
    assert error.code == "AUTH_REQUIRED" and error.details["error"] == "invalid_grant"
    shown = error.message + str(error.details) + repr(credentials) + caplog.text
    assert not any(secret in shown for secret in seen)


async def test_a_service_signs_in_with_client_credentials(docs: DocsSandbox, oidc_provider: Any) -> None:
    robot, _ = docs.create_user("Service Elynav")
    assert docs.oidc is not None
    docs.oidc.link("svc-elynav", robot)
    credentials = DocsCredentials.oidc(
        oidc_provider.issuer, "elynav-service", client_secret="service-secret", scopes=("docs",)
    )
    async with DocsRestClient(docs.url, credentials) as client, httpx.AsyncClient() as provider:
        assert (await client.signed_in_user())["full_name"] == "Service Elynav"
        revoked = credentials._access_token  # the token dies at the provider: Docs says 401
        fetched = credentials.refreshes
        await provider.post(
            f"{oidc_provider.issuer}/token/revocation",
            data={"token": revoked},
            auth=("elynav-service", "service-secret"),
        )
        created = await client.create_document("Rapport automatique")  # renewed, then done
        assert credentials.refreshes == fetched + 1 and credentials._access_token != revoked
    assert docs.store.get_document(created.id) is not None
    wrong = DocsCredentials.oidc(
        oidc_provider.issuer, "elynav-service", client_secret="not-it", scopes=("docs",)
    )
    async with DocsRestClient(docs.url, wrong) as client:
        with pytest.raises(ElynavError) as refused:
            await client.list_documents()
    assert refused.value.code == "AUTH_REQUIRED" and "not-it" not in refused.value.message + repr(wrong)


async def test_a_given_token_is_used_until_docs_refuses_it(docs: DocsSandbox, oidc_provider: Any) -> None:
    person = DocsCredentials.oidc(oidc_provider.issuer, "elynav-person", scopes=("openid", "docs"))
    await person.sign_in(open_browser=lambda url: browse_as("alice", url))
    token = person._access_token
    assert token is not None
    given = DocsCredentials.oidc_token(token)
    async with DocsRestClient(docs.url, given) as client, httpx.AsyncClient() as provider:
        assert (await client.signed_in_user())["full_name"] == "Alice Martin"
        await provider.post(
            f"{oidc_provider.issuer}/token/revocation", data={"token": token, "client_id": "elynav-person"}
        )
        with pytest.raises(ElynavError) as refused:
            await client.list_documents()
    assert refused.value.code == "AUTH_REQUIRED" and token not in refused.value.message + repr(given)
    with pytest.raises(ElynavError) as live:  # the collaboration server takes no token
        await DocsSession.open(docs.document_link(docs.create_document("x").id), given)
    assert live.value.code == "NOT_ALLOWED" and "cookie" in live.value.message
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(given)
