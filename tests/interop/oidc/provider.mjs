// A real OpenID Connect provider for the Docs sign-in tests: panva/node-oidc-provider (OpenID
// Certified), on a free loopback port. argv[2] is a JSON config:
//   {"access_token_ttl": seconds, "refresh_token_ttl": seconds, "clients": {...secrets}}
// First line of output: {"port", "issuer"}. Clients:
//   elynav-person   public, native (loopback redirect on any port), authorization code + PKCE (S256),
//                   refresh tokens (offline_access, always issued)
//   elynav-service  confidential, client_credentials; its tokens carry sub "svc-elynav" (what
//                   Keycloak's service accounts do), so a resource server can map it to a user
//   docs-rs         the resource server (Docs' OIDC_RS_CLIENT_ID): introspection only
// Any login and password are accepted by the development interactions (a person signs in as the
// login typed). stdin closing stops the server.
import Provider from "oidc-provider";

const config = JSON.parse(process.argv[2] ?? "{}");
const secrets = config.clients ?? {};
let provider;

const configuration = {
  clients: [
    {
      client_id: "elynav-person",
      application_type: "native",
      token_endpoint_auth_method: "none",
      redirect_uris: ["http://127.0.0.1/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "openid email profile offline_access docs",
    },
    {
      client_id: "elynav-service",
      client_secret: secrets.service ?? "service-secret",
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      scope: "docs",
    },
    {
      client_id: "docs-rs",
      client_secret: secrets.resource_server ?? "rs-secret",
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ],
  scopes: ["openid", "email", "profile", "offline_access", "docs"],
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
  },
  pkce: { required: () => true },
  ttl: {
    AccessToken: config.access_token_ttl ?? 600,
    ClientCredentials: config.access_token_ttl ?? 600,
    RefreshToken: config.refresh_token_ttl ?? 3600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
  issueRefreshToken: async () => true,
  // revoking an access token ends that token only (the tests revoke to make it "expired");
  // revoking a refresh token ends the sign-in
  revokeGrantPolicy: (ctx) => ctx.oidc.entities.RefreshToken !== undefined,
  extraTokenClaims: async (ctx, token) => (token.kind === "ClientCredentials" ? { sub: "svc-elynav" } : undefined),
  findAccount: async (ctx, sub) => ({
    accountId: sub,
    claims: async () => ({ sub, email: `${sub}@example.org` }),
  }),
  loadExistingGrant: async (ctx) => {
    // the person consents to what the client asks (no consent screen in the tests)
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope("openid email profile offline_access docs");
    await grant.save();
    return grant;
  },
};

const server = (await import("node:http")).createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;
provider = new Provider(`http://127.0.0.1:${port}`, configuration);
provider.proxy = false;
server.on("request", provider.callback());
process.stdout.write(JSON.stringify({ port, issuer: `http://127.0.0.1:${port}` }) + "\n");
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
