// A Docs-like collaboration server (design note §2 and §8.2): @hocuspocus/server 3.4.4 behind the
// same checks as the La Suite Docs y-provider v5.4.1, on a free loopback port.
//
// Usage: node hocuspocus_server.mjs '<json config>'; prints one line {"port": N} once listening and
// exits when stdin closes. Config: {"allowed_origins": [...], "backend_url": "http://..." | null}.
//
// Gate (y-provider middlewares.ts): the upgrade is accepted, then closed 4001 "Origin not allowed"
// (Origin missing or not exactly allowlisted) or 4001 "No cookies" (Cookie missing or empty).
// onConnect (hocuspocusServer.ts): documentName must equal ?room=, be a UUID v4, and the backend
// must grant abilities.retrieve; readOnly = !abilities.update. With backend_url the abilities come
// from GET {backend_url}/api/v1.0/documents/{room}/ with the forwarded Cookie and Origin, as Docs
// does; without it they are faked from the cookie: "deny=1" refuses, "readonly=1" gives readonly.
// Routes: POST /collaboration/api/reset-connections/?room= (closeConnections), GET
// /collaboration/api/get-connections/?room= ({count}), GET /ping; anything else 403.
import http from "node:http";
import { WebSocketServer } from "ws";
import { Hocuspocus } from "@hocuspocus/server";

const config = JSON.parse(process.argv[2] ?? "{}");
const allowedOrigins = config.allowed_origins ?? ["http://localhost:3000"];
const backendUrl = config.backend_url ?? null;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

async function abilitiesFor(documentName, headers) {
  if (backendUrl) {
    const response = await fetch(`${backendUrl}/api/v1.0/documents/${documentName}/`, {
      headers: { cookie: headers.cookie ?? "", origin: headers.origin ?? "", "X-Y-Provider-Key": "interop" },
    });
    if (!response.ok) throw new Error(`Backend error: Unauthorized`);
    return (await response.json()).abilities;
  }
  const cookie = headers.cookie ?? "";
  if (cookie.includes("deny=1")) return { retrieve: false, update: false };
  return { retrieve: true, update: !cookie.includes("readonly=1") };
}

const hocuspocus = new Hocuspocus({
  name: "docs-collaboration",
  timeout: 30000,
  quiet: true,
  async onConnect({ requestHeaders, requestParameters, connectionConfig, documentName }) {
    const room = requestParameters.get("room");
    if (documentName !== room) throw new Error("Wrong room name: Unauthorized");
    if (!UUID_V4.test(documentName)) throw new Error("Room is not a UUID v4: Unauthorized");
    const abilities = await abilitiesFor(documentName, requestHeaders);
    if (!abilities.retrieve) throw new Error("Wrong abilities:Unauthorized");
    connectionConfig.readOnly = !abilities.update;
  },
});

function sendJson(response, status, body) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

const httpServer = http.createServer((request, response) => {
  const url = new URL(request.url, "http://localhost");
  if (url.pathname === "/ping") return sendJson(response, 200, { message: "pong" });
  if (url.pathname === "/collaboration/api/reset-connections/" && request.method === "POST") {
    hocuspocus.closeConnections(url.searchParams.get("room") ?? undefined);
    return sendJson(response, 200, { message: "Connections reset" });
  }
  if (url.pathname === "/collaboration/api/get-connections/") {
    const document = hocuspocus.documents.get(url.searchParams.get("room"));
    if (!document) return sendJson(response, 404, { error: "Room not found" });
    return sendJson(response, 200, { count: document.getConnectionsCount(), exists: false });
  }
  return sendJson(response, 403, { error: "Forbidden" });
});

const webSocketServer = new WebSocketServer({ noServer: true });
httpServer.on("upgrade", (request, socket, head) => {
  const url = new URL(request.url, "http://localhost");
  if (url.pathname !== "/collaboration/ws/") {
    socket.destroy();
    return;
  }
  webSocketServer.handleUpgrade(request, socket, head, (ws) => {
    ws.on("error", () => {});
    const origin = request.headers.origin;
    if (!origin || !allowedOrigins.includes(origin)) {
      ws.close(4001, "Origin not allowed");
      return;
    }
    if (!request.headers.cookie) {
      ws.close(4001, "No cookies");
      return;
    }
    hocuspocus.handleConnection(ws, request);
  });
});

httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + "\n");
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
