// A browser stand-in (design note §8.2): one real @hocuspocus/provider 3.4.4 client, driven by
// JSON-line commands on stdin, one JSON-line answer per command on stdout.
//
// Commands ({"op": ...}):
//   connect {url, room, origin, cookie, user}      -> {ok, scope}   (waits for "synced"; leaves any
//                                                     previous room)
//   xml {}                                          -> {ok, xml}     the document-store fragment as XML
//   wait_for {contains, timeout_ms}                 -> {ok, xml} or {ok: false, xml} on timeout
//   blocks {}                                       -> {ok, blocks, markdown}  (@blocknote/server-util)
//   write_blocks {blocks}                           -> {ok}  BlockNote writes these blocks into the live
//                                                     fragment, as a browser editor would
//   text_insert {block_id, offset, text}            -> {ok}  a person typing in a block
//   wait_synced {timeout_ms}                        -> {ok, unsynced}
//   awareness {}                                    -> {ok, states: [state...]} of other clients
//   cursor_blocks {}                                -> {ok, cursors: [{name, block, index}]}: each other
//                                                     client's cursor resolved as y-prosemirror does
//                                                     (Y.createAbsolutePositionFromRelativePosition)
//   set_cursor {block_id, offset}                   -> {ok}  our cursor in that block's text, as
//                                                     y-prosemirror's cursor plugin writes it
//   bench_inserts {count}                           -> {ok, latencies_ms: [...]}  acked-insert latency
//   bench_markdown {markdown}                       -> {ok, parse_ms, write_ms, total_ms, blocks}  BlockNote
//                                                     parses the markdown (tryParseMarkdownToBlocks), writes
//                                                     the blocks into the live fragment, waits for the ack
//   quit {}                                         -> {ok}, then exit
// Custom headers (Origin, Cookie) need a ws subclass given to a HocuspocusProviderWebsocket we build
// ourselves, and an explicit websocketProvider needs provider.attach() (design note §8.2 traps).
import readline from "node:readline";
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import * as Y from "yjs";
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";

let ydoc = null;
let provider = null;
let scope = null;
let editor = null;

const reply = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const fragment = () => ydoc.getXmlFragment("document-store");

function socketClassWith(headers) {
  return class HeaderWebSocket extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, { headers });
    }
  };
}

async function blockNoteEditor() {
  if (editor === null) {
    const { ServerBlockNoteEditor } = await import("@blocknote/server-util");
    editor = ServerBlockNoteEditor.create();
  }
  return editor;
}

function findContainer(node, blockId) {
  for (const child of node.toArray()) {
    if (child instanceof Y.XmlElement) {
      if (child.nodeName === "blockContainer" && child.getAttribute("id") === blockId) return child;
      const found = findContainer(child, blockId);
      if (found) return found;
    }
  }
  return null;
}

async function connect(command) {
  if (provider) provider.destroy(); // a new room replaces the previous one
  scope = null;
  ydoc = new Y.Doc();
  const websocketProvider = new HocuspocusProviderWebsocket({
    url: `${command.url}?room=${command.room}`,
    WebSocketPolyfill: socketClassWith({ Origin: command.origin, Cookie: command.cookie }),
    maxAttempts: 1,
  });
  provider = new HocuspocusProvider({ websocketProvider, name: command.room, document: ydoc });
  provider.on("authenticated", ({ scope: given }) => { scope = given; });
  const synced = new Promise((resolve, reject) => {
    provider.on("synced", () => resolve());
    provider.on("authenticationFailed", ({ reason }) => reject(new Error(`denied: ${reason}`)));
    setTimeout(() => reject(new Error("no sync within 10 s")), 10000);
  });
  provider.attach();
  if (command.user) provider.setAwarenessField("user", command.user);
  await synced;
  return { ok: true, scope };
}

async function waitFor(command) {
  const deadline = Date.now() + (command.timeout_ms ?? 5000);
  while (Date.now() < deadline) {
    const xml = fragment().toString();
    if (xml.includes(command.contains)) return { ok: true, xml };
    await sleep(10);
  }
  return { ok: false, xml: fragment().toString() };
}

async function waitSynced(command) {
  const deadline = Date.now() + (command.timeout_ms ?? 5000);
  while (provider.unsyncedChanges > 0 && Date.now() < deadline) await sleep(5);
  return { ok: provider.unsyncedChanges === 0, unsynced: provider.unsyncedChanges };
}

async function benchInserts(command) {
  const latencies = [];
  let root = fragment().get(0);
  if (!root) {
    ydoc.transact(() => fragment().insert(0, [new Y.XmlElement("blockGroup")]));
    root = fragment().get(0);
  }
  for (let index = 0; index < command.count; index += 1) {
    const started = process.hrtime.bigint();
    const acked = new Promise((resolve) => {
      const listener = ({ number }) => {
        if (number === 0) {
          provider.off("unsyncedChanges", listener);
          resolve();
        }
      };
      provider.on("unsyncedChanges", listener);
    });
    ydoc.transact(() => {
      const container = new Y.XmlElement("blockContainer");
      container.setAttribute("id", randomUUID());
      const paragraph = new Y.XmlElement("paragraph");
      paragraph.setAttribute("backgroundColor", "default");
      paragraph.setAttribute("textColor", "default");
      paragraph.setAttribute("textAlignment", "left");
      const text = new Y.XmlText();
      paragraph.insert(0, [text]);
      container.insert(0, [paragraph]);
      root.insert(0, [container]);
      text.insert(0, `node insert ${index}`, {});
    });
    await acked;
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { ok: true, latencies_ms: latencies };
}

async function benchMarkdown(command) {
  const blockNote = await blockNoteEditor();
  const started = process.hrtime.bigint();
  const blocks = await blockNote.tryParseMarkdownToBlocks(command.markdown);
  const parsed = process.hrtime.bigint();
  const acked = new Promise((resolve) => {
    const listener = ({ number }) => {
      if (number === 0) {
        provider.off("unsyncedChanges", listener);
        resolve();
      }
    };
    provider.on("unsyncedChanges", listener);
  });
  blockNote.blocksToYXmlFragment(blocks, fragment());
  const written = process.hrtime.bigint();
  await acked;
  const done = process.hrtime.bigint();
  const ms = (from, to) => Number(to - from) / 1e6;
  return {
    ok: true,
    parse_ms: ms(started, parsed),
    write_ms: ms(parsed, written),
    total_ms: ms(started, done),
    blocks: blocks.length,
  };
}

async function handle(command) {
  switch (command.op) {
    case "connect":
      return connect(command);
    case "xml":
      return { ok: true, xml: fragment().toString() };
    case "wait_for":
      return waitFor(command);
    case "wait_synced":
      return waitSynced(command);
    case "blocks": {
      const blockNote = await blockNoteEditor();
      const blocks = blockNote.yXmlFragmentToBlocks(fragment());
      return { ok: true, blocks, markdown: await blockNote.blocksToMarkdownLossy(blocks) };
    }
    case "write_blocks": {
      const blockNote = await blockNoteEditor();
      const written = blockNote.blocksToYDoc(command.blocks, "document-store");
      Y.applyUpdate(ydoc, Y.encodeStateAsUpdate(written));
      return { ok: true };
    }
    case "text_insert": {
      const container = findContainer(fragment(), command.block_id);
      if (!container) return { ok: false, error: "no such block" };
      const content = container.get(0);
      let text = content.toArray().find((child) => child instanceof Y.XmlText);
      ydoc.transact(() => {
        if (!text) {
          text = new Y.XmlText();
          content.insert(0, [text]);
        }
        text.insert(command.offset, command.text);
      });
      return { ok: true };
    }
    case "awareness": {
      const states = [];
      provider.awareness.getStates().forEach((state, clientId) => {
        if (clientId !== ydoc.clientID) states.push(state);
      });
      return { ok: true, states };
    }
    case "cursor_blocks": {
      const cursors = [];
      provider.awareness.getStates().forEach((state, clientId) => {
        if (clientId === ydoc.clientID || !state.cursor) return;
        const position = Y.createAbsolutePositionFromRelativePosition(
          Y.createRelativePositionFromJSON(state.cursor.head),
          ydoc,
        );
        let node = position ? position.type : null;
        let block = null;
        while (node) {
          if (node instanceof Y.XmlElement && node.nodeName === "blockContainer") {
            block = node.getAttribute("id");
            break;
          }
          node = node.parent;
        }
        cursors.push({ name: state.user?.name, block, index: position ? position.index : null });
      });
      return { ok: true, cursors };
    }
    case "set_cursor": {
      const container = findContainer(fragment(), command.block_id);
      if (!container) return { ok: false, error: "no such block" };
      const text = container.get(0).toArray().find((child) => child instanceof Y.XmlText);
      const position = Y.createRelativePositionFromTypeIndex(text, command.offset);
      provider.awareness.setLocalStateField("cursor", { anchor: position, head: position });
      return { ok: true };
    }
    case "bench_inserts":
      return benchInserts(command);
    case "bench_markdown":
      return benchMarkdown(command);
    case "quit":
      if (provider) provider.destroy();
      reply({ ok: true });
      process.exit(0);
    default:
      return { ok: false, error: `unknown op ${command.op}` };
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  try {
    reply(await handle(JSON.parse(line)));
  } catch (error) {
    reply({ ok: false, error: String(error && error.message ? error.message : error) });
  }
}
if (provider) provider.destroy();
process.exit(0);
