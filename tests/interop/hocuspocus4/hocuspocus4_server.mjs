// Forward-compatibility peer: a plain @hocuspocus/server 4.7.0 (no Docs checks) on a free loopback port.
// Usage: node hocuspocus4_server.mjs '{"timeout": ms}'; prints {"port": N} and exits when stdin closes.
// Hocuspocus 4 closes a socket that sent no application message within `timeout` (Close "Connection
// Timeout" + 4408); WebSocket pings do not count (design note §1.9, §6.1).
import { Server } from "@hocuspocus/server";

const config = JSON.parse(process.argv[2] ?? "{}");
const server = new Server({ port: 0, address: "127.0.0.1", quiet: true, timeout: config.timeout ?? 60000 });
await server.listen();
process.stdout.write(JSON.stringify({ port: server.httpServer.address().port }) + "\n");
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
