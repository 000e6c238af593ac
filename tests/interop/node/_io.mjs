// Shared helpers for the interop scripts: read one JSON document from stdin, write one to stdout.
export async function readJsonFromStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  return text.trim() ? JSON.parse(text) : {};
}

export function writeJson(value) {
  process.stdout.write(JSON.stringify(value));
}

export const toBase64 = (bytes) => Buffer.from(bytes).toString("base64");
export const fromBase64 = (text) => new Uint8Array(Buffer.from(text, "base64"));
