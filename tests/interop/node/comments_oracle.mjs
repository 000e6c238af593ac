// Comment marks, read and written by BlockNote 0.51.4 with its comments extension on (as Docs'
// editor runs it). Input: {"read": [base64 update], "write": {"update": base64, "block_id", "thread_id"}}.
// "read": each update applied to a Y.Doc and opened in the editor through y-prosemirror; output per
//   update: the comment marks ProseMirror sees ({threadId, orphan, text}), the y-sync$ deletion
//   transactions, and the blocks.
// "write": the editor marks the whole text of block_id with a comment mark {orphan:false, threadId}
//   (what Docs' DocsThreadStore.addThreadToDocument does with tiptap's setMark); output: the new
//   full state.
import { ServerBlockNoteEditor } from "@blocknote/server-util";
import { CommentsExtension, DefaultThreadStoreAuth, YjsThreadStore } from "@blocknote/core/comments";
import { prosemirrorToYXmlFragment, yXmlFragmentToProseMirrorRootNode } from "y-prosemirror";
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, fromBase64, toBase64 } from "./_io.mjs";

const input = await readJsonFromStdin();
const threads = new Y.Doc().getMap("threads");
const editor = ServerBlockNoteEditor.create({
  extensions: [
    CommentsExtension({
      threadStore: new YjsThreadStore("agent", threads, new DefaultThreadStoreAuth("agent", "editor")),
      resolveUsers: async (ids) => ids.map((id) => ({ id, username: id, avatarUrl: "" })),
    }),
  ],
});
const schema = editor.editor.pmSchema;

function commentMarks(node) {
  const found = [];
  node.descendants((child) => {
    if (child.isText) {
      for (const mark of child.marks) {
        if (mark.type.name === "comment") {
          found.push({ threadId: mark.attrs.threadId, orphan: mark.attrs.orphan, text: child.text });
        }
      }
    }
  });
  return found;
}

const results = [];
for (const encoded of input.read ?? []) {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, fromBase64(encoded));
  let ysync = 0;
  ydoc.on("afterTransaction", (transaction) => {
    const origin = transaction.origin;
    const key = origin && typeof origin === "object" ? origin.key : origin;
    if (key === "y-sync$") ysync += 1;
  });
  const root = yXmlFragmentToProseMirrorRootNode(ydoc.getXmlFragment("document-store"), schema);
  const blocks = editor.yDocToBlocks(ydoc, "document-store");
  results.push({ marks: commentMarks(root), ysync_transactions: ysync, blocks });
}

let written = null;
if (input.write) {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, fromBase64(input.write.update));
  const fragment = ydoc.getXmlFragment("document-store");
  const root = yXmlFragmentToProseMirrorRootNode(fragment, schema);
  let from = -1;
  let to = -1;
  root.descendants((node, position) => {
    if (node.type.name === "blockContainer" && node.attrs.id === input.write.block_id) {
      from = position + 2; // into blockContainer, then into its content element
      to = position + 2 + node.firstChild.content.size;
    }
  });
  const mark = schema.marks.comment.create({ orphan: false, threadId: input.write.thread_id });
  const { EditorState } = await import("prosemirror-state");
  const state = EditorState.create({ doc: root, schema });
  const marked = state.apply(state.tr.addMark(from, to, mark)).doc;
  const before = Y.encodeStateVector(ydoc);
  ydoc.transact(() => prosemirrorToYXmlFragment(marked, fragment));
  written = { update: toBase64(Y.encodeStateAsUpdate(ydoc)), diff: toBase64(Y.encodeStateAsUpdate(ydoc, before)) };
}
writeJson({ results, written });
