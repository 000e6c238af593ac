// Validity oracle (design note §8.3): apply each Yjs update to a fresh Y.Doc, read it with
// @blocknote/server-util exactly as Docs does, and count the transactions y-prosemirror makes to
// delete invalid content (origin = the y-sync plugin key, "y-sync$"). Input: {"updates": [base64]}.
// Output: {"results": [{blocks, markdown, ysync_transactions}]}.
import { ServerBlockNoteEditor } from "@blocknote/server-util";
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, fromBase64 } from "./_io.mjs";

const input = await readJsonFromStdin();
const editor = ServerBlockNoteEditor.create();
const results = [];
for (const encoded of input.updates) {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, fromBase64(encoded));
  let ysyncTransactions = 0;
  ydoc.on("afterTransaction", (transaction) => {
    const origin = transaction.origin;
    const key = origin && typeof origin === "object" ? origin.key : origin;
    if (key === "y-sync$") ysyncTransactions += 1;
  });
  const blocks = editor.yDocToBlocks(ydoc, "document-store");
  const markdown = await editor.blocksToMarkdownLossy(blocks);
  results.push({ blocks, markdown, ysync_transactions: ysyncTransactions });
}
writeJson({ results });
