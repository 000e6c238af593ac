// BlockNote as a browser writes it: turn markdown (or BlockNote blocks JSON) into the Yjs update
// @blocknote/server-util produces. Input: {"documents": [{"markdown": "..."} | {"blocks": [...]}]}.
// Output: {"results": [{update: base64, blocks}]}.
import { ServerBlockNoteEditor } from "@blocknote/server-util";
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, toBase64 } from "./_io.mjs";

const input = await readJsonFromStdin();
const editor = ServerBlockNoteEditor.create();
const results = [];
for (const document of input.documents) {
  const blocks = document.blocks ?? (await editor.tryParseMarkdownToBlocks(document.markdown));
  const ydoc = editor.blocksToYDoc(blocks, "document-store");
  results.push({ update: toBase64(Y.encodeStateAsUpdate(ydoc)), blocks: editor.yDocToBlocks(ydoc, "document-store") });
}
writeJson({ results });
