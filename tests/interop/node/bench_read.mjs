// Benchmark peer: time @blocknote/server-util reading a Yjs document the way Docs does.
// Input {"update": base64, "repeats": n, "markdown"?: true (also return the markdown)}; output {"to_blocks_ms": [...], "to_markdown_ms": [...], "blocks": count,
// "markdown_chars": n, "heap_used_mb": n}. Process start-up and the editor creation are not timed.
import { ServerBlockNoteEditor } from "@blocknote/server-util";
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, fromBase64 } from "./_io.mjs";

const input = await readJsonFromStdin();
const editor = ServerBlockNoteEditor.create();
const update = fromBase64(input.update);
const toBlocks = [];
const toMarkdown = [];
let blocks = [];
let markdown = "";
for (let round = 0; round < (input.repeats ?? 3); round += 1) {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, update);
  let started = process.hrtime.bigint();
  blocks = editor.yDocToBlocks(ydoc, "document-store");
  toBlocks.push(Number(process.hrtime.bigint() - started) / 1e6);
  started = process.hrtime.bigint();
  markdown = await editor.blocksToMarkdownLossy(blocks);
  toMarkdown.push(Number(process.hrtime.bigint() - started) / 1e6);
}
writeJson({
  to_blocks_ms: toBlocks,
  to_markdown_ms: toMarkdown,
  blocks: blocks.length,
  markdown_chars: markdown.length,
  heap_used_mb: process.memoryUsage().heapUsed / 1e6,
  ...(input.markdown ? { markdown } : {}),
});
