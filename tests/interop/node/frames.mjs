// Frame interop with the real Hocuspocus 3.4.4 encoders and decoders, no server needed.
//
// Input {"mode": "produce", "document_name", "token", "stateless", "reason", "awareness_name"}:
//   frames written by a real @hocuspocus/provider (over a fake WebSocket that records what it
//   sends) and by the server's OutgoingMessage. Output {"provider": [base64], "server": {label: base64}}.
// Input {"mode": "consume", "frames": [base64]}:
//   every frame is read with lib0 / @hocuspocus/common exactly as the server reads it, and the
//   server-to-client ones are also fed to a real HocuspocusProvider whose events are recorded.
//   Output {"decoded": [...], "provider_events": [...]}.
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import { OutgoingMessage } from "@hocuspocus/server";
import { readAuthMessage } from "@hocuspocus/common";
import * as decoding from "lib0/decoding";
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, toBase64, fromBase64 } from "./_io.mjs";

const sockets = [];
class RecordingSocket extends EventTarget {
  constructor(url) {
    super();
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    sockets.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.dispatchEvent(new Event("open"));
    }, 0);
  }
  send(data) {
    this.sent.push(Buffer.from(data));
  }
  close() {
    this.readyState = 3;
  }
  receive(bytes) {
    const event = new Event("message");
    event.data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    this.dispatchEvent(event);
  }
}

const settle = (milliseconds = 20) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function newProvider(documentName, token, document = new Y.Doc()) {
  const websocketProvider = new HocuspocusProviderWebsocket({ url: "ws://recording.invalid", WebSocketPolyfill: RecordingSocket });
  const provider = new HocuspocusProvider({ websocketProvider, name: documentName, document, token });
  provider.attach();
  return { provider, document, websocketProvider };
}

async function produce(input) {
  const name = input.document_name;
  const { provider, document } = newProvider(name, input.token);
  await settle();
  provider.setAwarenessField("user", { name: input.awareness_name, color: "#ff0000" });
  document.getXmlFragment("document-store").insert(0, [new Y.XmlText("héllo")]);
  provider.sendStateless(input.stateless);
  await settle();
  const providerFrames = sockets[0].sent.map(toBase64);

  const roomDoc = new Y.Doc();
  roomDoc.getText("t").insert(0, "état");
  const server = {
    authenticated_read_write: new OutgoingMessage(name).writeAuthenticated(false),
    authenticated_readonly: new OutgoingMessage(name).writeAuthenticated(true),
    permission_denied: new OutgoingMessage(name).writePermissionDenied(input.reason),
    token_request: new OutgoingMessage(name).writeTokenSyncRequest(),
    sync_status_applied: new OutgoingMessage(name).writeSyncStatus(true),
    sync_status_rejected: new OutgoingMessage(name).writeSyncStatus(false),
    close_reset: new OutgoingMessage(name).writeCloseMessage("Reset Connection"),
    close_reason: new OutgoingMessage(name).writeCloseMessage(input.reason),
    stateless: new OutgoingMessage(name).writeStateless(input.stateless),
    sync_step_1: new OutgoingMessage(name).createSyncMessage().writeFirstSyncStepFor(roomDoc),
    sync_reply_step_1: new OutgoingMessage(name).createSyncReplyMessage().writeFirstSyncStepFor(roomDoc),
    update: new OutgoingMessage(name).createSyncMessage().writeUpdate(Y.encodeStateAsUpdate(roomDoc)),
    query_awareness: new OutgoingMessage(name).writeQueryAwareness(),
  };
  const serverFrames = {};
  for (const [label, message] of Object.entries(server)) serverFrames[label] = toBase64(message.toUint8Array());
  provider.destroy();
  return {
    provider: providerFrames,
    server: serverFrames,
    room_update: toBase64(Y.encodeStateAsUpdate(roomDoc)),
    room_state_vector: toBase64(Y.encodeStateVector(roomDoc)),
  };
}

function decodeLikeTheServer(bytes) {
  const decoder = decoding.createDecoder(bytes);
  const result = { document_name: decoding.readVarString(decoder), type: decoding.readVarUint(decoder) };
  switch (result.type) {
    case 0:
    case 4:
      result.sync_type = decoding.readVarUint(decoder);
      result.data = toBase64(decoding.readVarUint8Array(decoder));
      break;
    case 1:
      result.data = toBase64(decoding.readVarUint8Array(decoder));
      break;
    case 2: {
      const peek = decoding.createDecoder(bytes.subarray(decoder.pos));
      result.auth_type = decoding.readVarUint(peek);
      if (result.auth_type === 0 && decoding.hasContent(peek)) {
        result.token = decoding.readVarString(peek);
        if (decoding.hasContent(peek)) result.provider_version = decoding.readVarString(peek);
      } else if (result.auth_type !== 0) {
        readAuthMessage(
          decoder,
          () => {},
          (reason) => { result.reason = reason; },
          (scope) => { result.scope = scope; },
        );
      }
      decoder.pos = bytes.length;
      break;
    }
    case 5:
    case 6:
      result.payload = decoding.readVarString(decoder);
      break;
    case 7:
      if (decoding.hasContent(decoder)) result.reason = decoding.readVarString(decoder);
      break;
    case 8:
      result.applied = decoding.readVarUint(decoder);
      break;
    default:
      break;
  }
  result.trailing = bytes.length - decoder.pos;
  return result;
}

async function consume(input) {
  const frames = input.frames.map(fromBase64);
  const decoded = frames.map(decodeLikeTheServer);
  const events = [];
  const feedable = input.feed_to_provider ?? [];
  if (feedable.length) {
    const name = decoded[feedable[0]].document_name;
    sockets.length = 0;
    const { provider, document } = newProvider(name, "");
    provider.on("authenticated", ({ scope }) => events.push({ event: "authenticated", scope }));
    provider.on("authenticationFailed", ({ reason }) => events.push({ event: "authenticationFailed", reason }));
    provider.on("stateless", ({ payload }) => events.push({ event: "stateless", payload }));
    provider.on("close", ({ event }) => events.push({ event: "close", reason: event.reason }));
    provider.on("unsyncedChanges", (value) => events.push({ event: "unsyncedChanges", value: typeof value === "number" ? value : value?.number ?? value }));
    provider.on("synced", ({ state }) => events.push({ event: "synced", state }));
    await settle();
    for (const index of feedable) {
      sockets[0].receive(frames[index]);
      await settle(5);
    }
    events.push({ event: "document", text: document.getText("t").toString() });
    provider.destroy();
  }
  return { decoded, provider_events: events };
}

const input = await readJsonFromStdin();
writeJson(input.mode === "produce" ? await produce(input) : await consume(input));
process.exit(0);
