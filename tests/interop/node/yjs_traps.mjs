// The Yjs side of the notebook notebooks/04_yjs_traps.ipynb: each trap run for real on yjs 13.6.33 and
// @blocknote/server-util 0.51.4 (the Docs v5.4.1 pins). Input on stdin: one JSON object {"op": ...};
// output on stdout: one JSON object. Yjs warnings ("Invalid access ...") are counted, not printed, so
// stdout stays one JSON document.
//
// Ops:
//   detached_nodes {}                         attributes and formatted text set on detached Yjs nodes
//   mark_inheritance {}                       Y.XmlText.insert next to a bold run, with and without marks
//   utf16_offsets {text, insert, indices}     the same insert at JS (UTF-16) indices, after a round trip
//   read {documents: [{steps: [base64]}]}     a reader (BlockNote, as a browser) receives each update in
//                                             turn and reads the document after each one; returns what it
//                                             read, the y-prosemirror deletions it made ("y-sync$"
//                                             transactions) and the document state after reading
//   write_markdown {markdown}                 BlockNote writes markdown as a browser would: the update and
//                                             the raw Yjs marks of every text run
import * as Y from "yjs";
import { readJsonFromStdin, writeJson, toBase64, fromBase64 } from "./_io.mjs";

let yjsWarnings = 0;
console.warn = () => { yjsWarnings += 1; };
console.error = () => { yjsWarnings += 1; };

const FRAGMENT = "document-store";

async function blockNoteEditor() {
  const { ServerBlockNoteEditor } = await import("@blocknote/server-util");
  return ServerBlockNoteEditor.create();
}

function detachedNodes() {
  const heading = new Y.XmlElement("heading");
  heading.setAttribute("level", 2);
  const beforeAttach = {
    get_attribute: heading.getAttribute("level") ?? null,
    get_attribute_type: typeof heading.getAttribute("level"),
    get_attributes: heading.getAttributes(),
    xml: heading.toString(),
    prelim_attrs: Object.fromEntries(heading._prelimAttrs ?? new Map()),
  };
  const copy = heading.clone(); // a copy made while detached (as a builder or an undo step might)

  const text = new Y.XmlText();
  text.insert(0, "bold", { bold: {} }); // a formatted insert into a detached text
  const deltaBeforeAttach = text.toDelta();
  const paragraph = new Y.XmlElement("paragraph");
  paragraph.insert(0, [text]);

  const doc = new Y.Doc();
  const fragment = doc.getXmlFragment(FRAGMENT);
  fragment.insert(0, [heading, copy, paragraph]);
  return {
    before_attach: beforeAttach,
    after_attach: {
      original: { attributes: heading.getAttributes(), xml: heading.toString() },
      clone_made_before_attach: { attributes: copy.getAttributes(), xml: copy.toString() },
      same_object_now_integrated: heading.doc === doc,
    },
    detached_text: { delta_before_attach: deltaBeforeAttach, delta_after_attach: text.toDelta() },
    invalid_access_warnings: yjsWarnings,
  };
}

function markInheritance() {
  const doc = new Y.Doc();
  const fragment = doc.getXmlFragment(FRAGMENT);
  const cases = {};
  const make = () => {
    const text = new Y.XmlText();
    fragment.insert(fragment.length, [text]);
    text.insert(0, "bold", { bold: {} });
    return text;
  };
  let text = make();
  text.insert(4, " and more"); // typed right after the bold run, no marks given
  cases.after_bold_run = text.toDelta();
  text = make();
  text.insert(2, "X"); // inside the bold run
  cases.inside_bold_run = text.toDelta();
  text = make();
  text.insert(0, "so "); // before the bold run
  cases.before_bold_run = text.toDelta();
  text = make();
  text.insert(4, " and more", {}); // explicit empty marks
  cases.after_bold_run_with_empty_marks = text.toDelta();
  return cases;
}

function utf16Offsets({ text, insert, indices }) {
  const results = [];
  for (const index of indices) {
    const doc = new Y.Doc();
    const node = new Y.XmlText();
    doc.getXmlFragment(FRAGMENT).insert(0, [node]);
    node.insert(0, text);
    node.insert(index, insert);
    const copy = new Y.Doc(); // what another peer receives
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
    const received = copy.getXmlFragment(FRAGMENT).get(0).toString();
    results.push({ index, received, length: node.length, has_replacement_character: received.includes("\uFFFD") });
  }
  return { js_length: text.length, results };
}

async function read({ documents }) {
  const editor = await blockNoteEditor();
  const results = [];
  for (const document of documents) {
    const ydoc = new Y.Doc();
    let ysync = 0;
    ydoc.on("afterTransaction", (transaction) => {
      const origin = transaction.origin;
      const key = origin && typeof origin === "object" ? origin.key : origin;
      if (key === "y-sync$") ysync += 1;
    });
    const steps = [];
    let blocks = [];
    for (const step of document.steps) {
      Y.applyUpdate(ydoc, fromBase64(step));
      const before = ysync;
      blocks = editor.yDocToBlocks(ydoc, FRAGMENT);
      steps.push({ ysync_transactions: ysync - before, block_count: blocks.length });
    }
    const headingLevels = blocks
      .filter((block) => block.type === "heading")
      .map((block) => ({ level: block.props.level, type: typeof block.props.level, equals_number_2: block.props.level === 2 }));
    results.push({
      steps,
      ysync_transactions: ysync,
      blocks,
      markdown: await editor.blocksToMarkdownLossy(blocks),
      heading_levels: headingLevels,
      state_after_reading: toBase64(Y.encodeStateAsUpdate(ydoc)),
    });
  }
  return { results };
}

function rawRuns(node, runs) {
  for (const child of node.toArray()) {
    if (child instanceof Y.XmlText) {
      for (const op of child.toDelta()) {
        const attributes = op.attributes ?? {};
        runs.push({ text: op.insert, attributes, bold_is_true: attributes.bold === true, bold_is_truthy: Boolean(attributes.bold) });
      }
    } else if (child instanceof Y.XmlElement) {
      rawRuns(child, runs);
    }
  }
  return runs;
}

async function writeMarkdown({ markdown }) {
  const editor = await blockNoteEditor();
  const blocks = await editor.tryParseMarkdownToBlocks(markdown);
  const ydoc = editor.blocksToYDoc(blocks, FRAGMENT);
  return { update: toBase64(Y.encodeStateAsUpdate(ydoc)), runs: rawRuns(ydoc.getXmlFragment(FRAGMENT), []) };
}

const OPERATIONS = {
  detached_nodes: detachedNodes,
  mark_inheritance: markInheritance,
  utf16_offsets: utf16Offsets,
  read,
  write_markdown: writeMarkdown,
};

const input = await readJsonFromStdin();
const operation = OPERATIONS[input.op];
if (!operation) {
  writeJson({ error: `unknown op ${input.op}` });
  process.exit(2);
}
writeJson(await operation(input));
